import pytest
from scrapy.settings import BaseSettings

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.config import WireConfig
from wirescrapy.seeder.rules import SeederRules
from wirescrapy.seeder.seedfile import read_seeds, seed


def make_rules(**overrides) -> SeederRules:
    return SeederRules(WireConfig.from_settings(BaseSettings(overrides)))


@pytest.fixture
def collection(tmp_path):
    c = Collection(tmp_path / "collection")
    yield c
    c.close()


SEEDS = """\
\ufeff# start URLs for the .cl crawl
http://www.uchile.cl/

  HTTP://WWW.UCHILE.CL:80/#again
https://dcc.uchile.cl/cursos/index.html   # a comment after the URL
http://www.example.com/
not a url
mailto:webmaster@uchile.cl
http://www.uchile.cl/login.php
http://www.uchile.cl/logo.gif
http://a.cl/one http://a.cl/two
http://www.uchile.cl/noticias.php?id=3&PHPSESSID=abc
"""


def test_seed_file(collection):
    rules = make_rules(WIRE_ACCEPT_DOMAIN_SUFFIXES=[".cl"])
    report = seed(collection, SEEDS.splitlines(keepends=True), rules=rules)
    assert [number for number, _ in report.bad] == [6, 7, 8, 9, 10, 11]
    messages = dict(report.bad)
    assert "domain not accepted" in messages[6]
    assert "not an absolute URL" in messages[7]
    assert "scheme not accepted" in messages[8]
    assert "reject pattern (login)" in messages[9]
    assert "multimedia" in messages[10]
    assert "one URL a line" in messages[11]
    # three distinct seeds; the second line repeats the first; dcc.uchile.cl brings its home page
    assert report.added == 3 and report.known == 1 and report.roots_added == 1
    docs = collection.documents.records
    home = collection.lookup("http://www.uchile.cl/")
    assert docs[home]["depth"] == 0 and docs[home]["flags"] == DocFlag.SEED | DocFlag.FRONT_PAGE
    course = collection.lookup("https://dcc.uchile.cl/cursos/index.html")
    assert docs[course]["flags"] == DocFlag.SEED
    root = collection.lookup("https://dcc.uchile.cl/")
    assert docs[root]["flags"] == DocFlag.FRONT_PAGE and docs[root]["depth"] == 0
    news = collection.lookup("http://www.uchile.cl/noticias.php?id=3")  # session id removed
    assert docs[news]["flags"] == DocFlag.SEED | DocFlag.DYNAMIC
    assert collection.documents.count == 4 and collection.sites.count == 2


def test_seeding_twice_adds_nothing(collection):
    lines = ["http://a.cl/x\n", "http://b.cl/\n"]
    first = seed(collection, lines)
    assert first.added == 2 and first.roots_added == 1
    second = seed(collection, lines)
    assert second.added == 0 and second.known == 2 and second.roots_added == 0


def test_known_link_becomes_a_seed(collection):
    rules = make_rules()
    from wirescrapy.seeder.add import add_links

    add_links(collection, rules, ["http://a.cl/deep"], parent_depth=6)
    seed(collection, ["http://a.cl/deep"], rules=rules)
    doc = collection.documents.records[collection.lookup("http://a.cl/deep")]
    assert doc["depth"] == 0 and doc["flags"] & DocFlag.SEED


def test_add_root_argument_overrides_the_rules(collection):
    report = seed(collection, ["http://a.cl/x"], add_root=False, rules=make_rules(WIRE_ADD_ROOT=True))
    assert report.roots_added == 0 and collection.lookup("http://a.cl/") == 0


def test_over_limit_seeds_are_counted(collection):
    report = seed(
        collection,
        ["http://a.cl/1", "http://a.cl/2", "http://a.cl/3"],
        rules=make_rules(WIRE_MAX_URLS_PER_SITE=2, WIRE_ADD_ROOT=False),
    )
    assert report.added == 2 and report.over_limit == 1


def test_read_seeds_without_a_collection():
    good, bad = read_seeds(["# only comments", "", "   ", "http://a.cl/", "ftp://a.cl/"])
    assert [(n, d.url) for n, d in good] == [(4, "http://a.cl/")]
    assert bad == [(5, "ftp://a.cl/: scheme not accepted (ftp)")]
