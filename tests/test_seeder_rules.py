import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scrapy.settings import BaseSettings

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.collection.urls import MAX_PATH
from wirescrapy.config import WireConfig
from wirescrapy.seeder.add import add_links, add_listed
from wirescrapy.seeder.rules import (
    Reason,
    SeederRules,
    Verdict,
    extension,
    remove_session_ids,
    within_site_limit,
)
from wirescrapy.url import host_of


def make_rules(**overrides) -> SeederRules:
    return SeederRules(WireConfig.from_settings(BaseSettings(overrides)))


@pytest.fixture(scope="module")
def rules():
    return make_rules()


@pytest.fixture
def collection(tmp_path):
    from wirescrapy.collection import Collection

    c = Collection(tmp_path / "collection")
    yield c
    c.close()


# -- schemes and bad URLs ------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["mailto:a@b.cl", "javascript:void(0)", "ftp://a.cl/x", "tel:+56", "data:,x"])
def test_other_schemes_are_rejected(rules, url):
    decision = rules.classify(url, 0)
    assert decision.verdict is Verdict.REJECT and decision.reason is Reason.BAD_SCHEME


@pytest.mark.parametrize("url", ["", "/relative", "http://", "http://a..cl/", "http://a.cl:99999/"])
def test_bad_urls_are_rejected(rules, url):
    decision = rules.classify(url, 0)
    assert decision.verdict is Verdict.REJECT and decision.reason is Reason.BAD_URL and decision.detail


def test_accepted_protocols_are_a_setting():
    https_only = make_rules(WIRE_ACCEPT_PROTOCOLS=["https"])
    assert https_only.classify("http://a.cl/").reason is Reason.BAD_SCHEME
    assert https_only.classify("https://a.cl/").verdict is Verdict.STATIC


def test_protocols_the_collection_cannot_store_are_dropped(caplog):
    rules = make_rules(WIRE_ACCEPT_PROTOCOLS=["http", "ftp"])
    assert rules.protocols == {"http"} and "ftp" in caplog.text
    assert rules.classify("ftp://a.cl/").reason is Reason.BAD_SCHEME


# -- domains -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, accepted",
    [
        ("uchile.cl", True),
        ("www.uchile.cl", True),
        ("a.b.c.cl", True),
        ("cl", True),
        ("WWW.UCHILE.CL", True),
        ("evilcl.com", False),
        ("www.cl.com", False),
        ("uchile.cl.evil.com", False),
        ("uchilecl", False),
    ],
)
def test_domain_suffixes(host, accepted):
    rules = make_rules(WIRE_ACCEPT_DOMAIN_SUFFIXES=[".cl"])
    decision = rules.classify(f"http://{host}/")
    assert (decision.verdict is Verdict.STATIC) == accepted
    if not accepted:
        assert decision.reason is Reason.DOMAIN


def test_domain_suffix_without_dot_and_with_port():
    rules = make_rules(WIRE_ACCEPT_DOMAIN_SUFFIXES=["uchile.cl", ".Ñandú.org"])
    assert rules.classify("http://uchile.cl:8080/").fetch
    assert rules.classify("http://dcc.uchile.cl/").fetch
    assert not rules.classify("http://notuchile.cl/").fetch
    assert rules.classify("http://www.ñandú.org/").fetch  # suffixes are compared in punycode


def test_no_suffixes_accepts_every_host(rules):
    assert rules.domain_suffixes == ()
    assert rules.classify("http://anything.example/").fetch
    assert rules.classify("http://10.0.0.1:8080/").fetch


# -- reject patterns -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, pattern",
    [
        ("http://a.cl/LOGIN.html", "login"),
        ("http://a.cl/x?action=Logout", "logout"),
        ("http://a.cl/user/register/", "register"),
        ("http://a.cl/shop/cart?id=1", "cart"),
        ("http://a.cl/%6Cogin", "login"),  # matched on the canonical form
    ],
)
def test_reject_patterns(rules, url, pattern):
    decision = rules.classify(url, 1)
    assert decision.verdict is Verdict.REJECT and decision.reason is Reason.PATTERN
    assert decision.detail == pattern


def test_a_path_longer_than_the_url_store_keeps_is_rejected(rules):
    longest = "/" + "a" * (MAX_PATH - 1)
    assert rules.classify("http://a.cl" + longest).fetch
    decision = rules.classify("http://a.cl" + longest + "a")
    assert decision.verdict is Verdict.REJECT and decision.reason is Reason.TOO_LONG


def test_reject_patterns_ignore_the_host():
    rules = make_rules(WIRE_REJECT_PATTERNS=["login", ""])
    assert rules.classify("http://login.a.cl/").fetch
    assert rules.reject_patterns == ("login",)  # an empty pattern would reject everything


# -- extensions and dynamic pages ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, verdict, dynamic",
    [
        ("http://a.cl/", Verdict.STATIC, False),
        ("http://a.cl/dir/", Verdict.STATIC, False),
        ("http://a.cl/page", Verdict.STATIC, False),
        ("http://a.cl/Page.HTML", Verdict.STATIC, False),
        ("http://a.cl/a.htm", Verdict.STATIC, False),
        ("http://a.cl/a.txt", Verdict.STATIC, False),
        ("http://a.cl/v1.2", Verdict.STATIC, False),  # all-digit: not an extension
        ("http://a.cl/a.html?x=1", Verdict.DYNAMIC, True),
        ("http://a.cl/?x", Verdict.DYNAMIC, True),
        ("http://a.cl/index.php", Verdict.DYNAMIC, True),
        ("http://a.cl/a.ASP", Verdict.DYNAMIC, True),
        ("http://a.cl/a.jsp;x=1", Verdict.DYNAMIC, True),
        ("http://a.cl/cgi/a.pl", Verdict.DYNAMIC, True),
        ("http://a.cl/a.cgi", Verdict.DYNAMIC, True),
        ("http://a.cl/a.cfm", Verdict.DYNAMIC, True),
        ("http://a.cl/photo.JPG", Verdict.LOG, False),
        ("http://a.cl/doc.pdf", Verdict.LOG, False),
        ("http://a.cl/img.png?v=2", Verdict.LOG, True),
        ("http://a.cl/style.css", Verdict.IGNORE, False),
        ("http://a.cl/app.js?v=1", Verdict.IGNORE, True),
        ("http://a.cl/feed.xml", Verdict.IGNORE, False),  # in no group
    ],
)
def test_extension_groups(rules, url, verdict, dynamic):
    decision = rules.classify(url, 0)
    assert decision.verdict is verdict and decision.dynamic == dynamic
    assert decision.fetch == (verdict in (Verdict.STATIC, Verdict.DYNAMIC))


def test_ignore_reasons(rules):
    assert rules.classify("http://a.cl/s.css").reason is Reason.IGNORED_EXTENSION
    assert rules.classify("http://a.cl/f.xml").reason is Reason.UNKNOWN_EXTENSION
    assert rules.classify("http://a.cl/f.xml").detail == ".xml"


def test_first_group_wins():
    rules = make_rules(WIRE_EXTENSIONS_STATIC=["", ".html", ".pdf"], WIRE_EXTENSIONS_LOG=[".pdf"])
    assert rules.classify("http://a.cl/a.pdf").verdict is Verdict.LOG


@pytest.mark.parametrize(
    "path, ext",
    [
        ("/", ""),
        ("/a", ""),
        ("/a.b/c", ""),
        ("/a/b.HTML", ".html"),
        ("/a.tar.gz", ".gz"),
        ("/a.php;s=1", ".php"),
        ("/2004.10.01", ""),
        ("/.htaccess", ".htaccess"),
        ("/a.", "."),
    ],
)
def test_extension(path, ext):
    assert extension(path) == ext


# -- session ids ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, expected",
    [
        ("http://a.cl/x?PHPSESSID=abc", "http://a.cl/x"),
        ("http://a.cl/x?a=1&phpsessid=abc&b=2", "http://a.cl/x?a=1&b=2"),
        ("http://a.cl/x?JSessionId=1&sid=2&Sid=3", "http://a.cl/x"),
        ("http://a.cl/x.jsp;jsessionid=ABC123?a=1", "http://a.cl/x.jsp?a=1"),
        ("http://a.cl/d;JSESSIONID=1/x;v=2;sid=3", "http://a.cl/d/x;v=2"),
        ("http://a.cl/x?sidebar=1&osCsid=9", "http://a.cl/x?sidebar=1"),  # names, not substrings
        ("http://a.cl/x?%73id=1", "http://a.cl/x"),  # escaped names too
        ("http://a.cl/x?cfid=1&cftoken=2#top", "http://a.cl/x"),
    ],
)
def test_session_ids_are_removed(rules, url, expected):
    assert rules.classify(url).url == expected


def test_session_id_removal_leaves_a_static_page(rules):
    decision = rules.classify("http://a.cl/page.html?PHPSESSID=1")
    assert decision.verdict is Verdict.STATIC and not decision.dynamic


def test_remove_session_ids_function():
    assert remove_session_ids("http://a.cl/p;s=1?s=2&t=3", ["S"]) == "http://a.cl/p?t=3"
    assert remove_session_ids("http://a.cl/p?t=3", []) == "http://a.cl/p?t=3"


def test_no_session_ids():
    rules = make_rules(WIRE_SESSION_IDS=[])
    assert rules.classify("http://a.cl/x?sid=1").url == "http://a.cl/x?sid=1"


# -- depth ---------------------------------------------------------------------------------------------


def test_depth_of_seeds_and_links(rules):
    assert rules.classify("http://a.cl/").depth == 0
    assert rules.classify("http://a.cl/", parent_depth=0).depth == 1
    assert rules.classify("http://a.cl/", parent_depth=7).depth == 8


def test_depth_limits_static_and_dynamic():
    rules = make_rules(WIRE_MAX_DEPTH_STATIC=3, WIRE_MAX_DEPTH_DYNAMIC=1)
    assert rules.classify("http://a.cl/a.html", 2).verdict is Verdict.STATIC
    too_deep = rules.classify("http://a.cl/a.html", 3)
    assert too_deep.verdict is Verdict.REJECT and too_deep.reason is Reason.TOO_DEEP and too_deep.depth == 4
    assert rules.classify("http://a.cl/a.php", 0).verdict is Verdict.DYNAMIC
    assert rules.classify("http://a.cl/a.php", 1).reason is Reason.TOO_DEEP
    assert rules.classify("http://a.cl/a.html?x", 1).reason is Reason.TOO_DEEP
    assert rules.classify("http://a.cl/a.pdf", 10).verdict is Verdict.LOG  # never fetched: no limit


def test_max_depth_zero_allows_only_seeds():
    rules = make_rules(WIRE_MAX_DEPTH_STATIC=0)
    assert rules.classify("http://a.cl/").fetch
    assert not rules.classify("http://a.cl/", 0).fetch


# -- site limit, root, flags ---------------------------------------------------------------------------


def test_within_site_limit():
    assert within_site_limit(0, 1) and within_site_limit(24_999, 25_000)
    assert not within_site_limit(25_000, 25_000) and not within_site_limit(30_000, 25_000)
    assert make_rules(WIRE_MAX_URLS_PER_SITE=2).within_site_limit(1)


def test_decision_flags(rules):
    assert rules.classify("http://a.cl/").flags == DocFlag.FRONT_PAGE
    assert rules.classify("http://a.cl/?x=1").flags == DocFlag.DYNAMIC
    assert rules.classify("http://a.cl/i.gif").flags == DocFlag.MULTIMEDIA
    assert rules.classify("mailto:x").flags == 0
    assert "reject pattern: login" in str(rules.classify("http://a.cl/login"))


def test_default_rules_are_wires():
    rules = SeederRules.default()
    assert rules.max_depth_static == 15 and rules.max_depth_dynamic == 5 and rules.max_urls_per_site == 25_000


# -- property ------------------------------------------------------------------------------------------

_PROPERTY_RULES = make_rules(WIRE_ACCEPT_DOMAIN_SUFFIXES=[".cl"])

_LINKS = st.one_of(
    st.text(max_size=30),
    st.builds(
        lambda scheme, host, path, query: f"{scheme}{host}{path}{query}",
        st.sampled_from(["http://", "https://", "HTTP://", "mailto:", "ftp://", "", "javascript:"]),
        st.sampled_from(["a.cl", "WWW.A.CL", "ñ.cl", "evil.com", "[::1]", "a.cl:80", "a..cl", ""]),
        st.lists(
            st.sampled_from(
                [
                    "/",
                    "x",
                    ".php",
                    ".html",
                    ".JPG",
                    ".css",
                    ";jsessionid=1",
                    "..",
                    "%2e",
                    "login",
                    " ",
                    "%",
                    "é",
                    "\\",
                    ".9",
                ]
            ),
            max_size=8,
        ).map("".join),
        st.sampled_from(["", "?", "?sid=1", "?a=1&PHPSESSID=2", "?q=#f", "#frag"]),
    ),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINKS, st.one_of(st.none(), st.integers(0, 30)))
def test_classify_never_crashes(url, parent_depth):
    rules = _PROPERTY_RULES
    decision = rules.classify(url, parent_depth)
    assert decision.depth == (0 if parent_depth is None else parent_depth + 1)
    assert (decision.reason is None) == decision.kept
    if decision.kept:
        assert rules.classify(decision.url, parent_depth) == decision  # decisions are stable
        assert host_of(decision.url).endswith("cl")
        assert "sid=" not in decision.url.lower() and "#" not in decision.url


# -- adding to a collection ----------------------------------------------------------------------------


def test_add_links_adds_pages_with_depth_and_flags(collection):
    rules = make_rules(WIRE_ACCEPT_DOMAIN_SUFFIXES=[".cl"])
    report = add_links(
        collection,
        rules,
        [
            "http://a.cl/x.html",
            "http://a.cl/x.html#top",
            "http://a.cl/p.php?id=1",
            "http://a.cl/i.jpg",
            "http://a.cl/s.css",
            "http://evil.com/",
            "mailto:x@a.cl",
            "/relative",
            "http://a.cl/login",
        ],
        parent_depth=2,
    )
    # x.html, p.php and i.jpg are new, and a.cl's home page comes with the first one
    assert report.added == 3 and report.roots_added == 1 and report.known == 1 and report.multimedia == 1
    assert report.skipped == {
        Reason.IGNORED_EXTENSION: 1,
        Reason.DOMAIN: 1,
        Reason.BAD_SCHEME: 1,
        Reason.BAD_URL: 1,
        Reason.PATTERN: 1,
    }
    x, php, jpg, root = (
        collection.lookup(u)
        for u in ("http://a.cl/x.html", "http://a.cl/p.php?id=1", "http://a.cl/i.jpg", "http://a.cl/")
    )
    assert report.targets == [x, php]  # pages only, once each
    docs = collection.documents.records
    assert docs[x]["depth"] == 3 and docs[x]["flags"] == 0
    assert docs[php]["flags"] == DocFlag.DYNAMIC
    assert docs[jpg]["flags"] == DocFlag.MULTIMEDIA
    assert docs[root]["flags"] == DocFlag.FRONT_PAGE and docs[root]["depth"] == 3
    site = collection.sites.records[docs[x]["siteid"]]
    assert site["multimedia"] == 1 and site["docs"] == 4


def test_collection_keeps_the_smallest_depth(collection):
    rules = make_rules()
    add_links(collection, rules, ["http://a.cl/x"], parent_depth=5)
    report = add_links(collection, rules, ["http://a.cl/x"], parent_depth=1)
    assert report.known == 1 and report.added == 0
    assert collection.documents.records[collection.lookup("http://a.cl/x")]["depth"] == 2
    add_links(collection, rules, ["http://a.cl/x"], parent_depth=9)
    assert collection.documents.records[collection.lookup("http://a.cl/x")]["depth"] == 2


def test_max_urls_per_site_counts_the_rest(collection):
    rules = make_rules(WIRE_MAX_URLS_PER_SITE=3, WIRE_ADD_ROOT=False)
    report = add_links(collection, rules, [f"http://a.cl/{i}" for i in range(5)] + ["http://b.cl/"], 0)
    assert report.added == 4 and report.over_limit == 2  # three on a.cl, one on b.cl
    site_a = collection.documents.records[collection.lookup("http://a.cl/0")]["siteid"]
    assert collection.sites.records[site_a]["docs"] == 3
    assert collection.sites.records[site_a]["docs_over_limit"] == 2
    again = add_links(collection, rules, ["http://a.cl/0", "http://a.cl/9"], 0)
    assert again.known == 1 and again.over_limit == 1  # known URLs are still updated


def test_add_root_off(collection):
    report = add_links(collection, make_rules(WIRE_ADD_ROOT=False), ["http://a.cl/x"], None)
    assert report.roots_added == 0 and collection.lookup("http://a.cl/") == 0


def test_root_only_for_new_sites(collection):
    rules = make_rules()
    add_links(collection, rules, ["http://a.cl/x"], 0)
    report = add_links(collection, rules, ["http://a.cl/y", "http://a.cl/"], 0)
    assert report.roots_added == 0 and report.added == 1 and report.known == 1


def test_add_listed_keeps_the_latest_modification(collection):
    rules = make_rules()
    entries = [("/a", 1000.0), ("/b", None)]
    report = add_listed(collection, rules, entries, 0, base_url="http://a.cl/robots.rdf")
    assert report.added == 2
    a = collection.lookup("http://a.cl/a")
    assert collection.documents.records[a]["last_modified"] == 1000.0
    add_listed(collection, rules, [("http://a.cl/a", 500.0)], 0)
    assert collection.documents.records[a]["last_modified"] == 1000.0
    add_listed(collection, rules, [("http://a.cl/a", 2000.0)], 0)
    assert collection.documents.records[a]["last_modified"] == 2000.0


def test_depth_beyond_the_record_is_clipped(collection):
    add_links(collection, make_rules(), ["http://a.cl/i.gif"], parent_depth=70_000)
    assert collection.documents.records[collection.lookup("http://a.cl/i.gif")]["depth"] == 0xFFFF


# -- decisions as parse workers send them back ------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://www.uchile.cl/a/b.html?x=1",
        "http://www.uchile.cl/f.pdf",
        "http://elsewhere.org/",
        "http://www.uchile.cl/a.exe",
        "not a url",
    ],
)
def test_a_decision_survives_pickling_whole(url):
    import pickle

    decision = make_rules(WIRE_ACCEPT_DOMAIN_SUFFIXES=".cl").classify(url, 2)
    copy = pickle.loads(pickle.dumps(decision, pickle.HIGHEST_PROTOCOL))
    assert copy == decision
    assert (copy.verdict, copy.reason, copy.site, copy.target, copy.flags) == (
        decision.verdict,
        decision.reason,
        decision.site,
        decision.target,
        decision.flags,
    )
