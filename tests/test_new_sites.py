"""The bounds on new sites (``seeder/add.py``): the rule alone, then a page's links, a sitemap, a redirect and
seeds through the gatherer's pipelines into a collection, with what the linking site's record counts."""

from __future__ import annotations

import logging

import pytest

from tests.components import T0, Bench
from wirescrapy.collection import refused as refused_module
from wirescrapy.collection.refused import PER_SITE, RefusedSites
from wirescrapy.seeder.add import NewSites, new_site_allowed
from wirescrapy.seeder.rules import new_sites_allowed

SITE = "http://site1.wire.test"


def hosts(n: int, prefix: str = "n") -> list[str]:
    return [f"http://{prefix}{i}.wire.test/" for i in range(n)]


def page(*links: str) -> bytes:
    return ("<html><body>" + "".join(f'<a href="{u}">x</a>' for u in links) + "</body></html>").encode()


# -- the rule ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("added_by_site", "sites", "allowed"),
    [
        (0, 10, 100),  # the page's own bound
        (950, 10, 50),  # what its site may still add
        (1000, 10, 0),
        (1200, 10, 0),  # never below 0
        (0, 99_970, 30),  # the room left in the collection
        (0, 100_000, 0),
    ],
)
def test_a_page_adds_at_most_its_bound_within_its_site_s_and_the_collection_s(added_by_site, sites, allowed):
    assert new_sites_allowed(added_by_site, sites, per_page=100, per_site=1000, max_sites=100_000) == allowed


def test_a_budget_counts_what_it_added_and_each_refused_site_once():
    budget = NewSites(site_id=1, left=2)
    assert [budget.take(s) for s in ("a", "b", "c", "c", "d")] == [True, True, False, False, False]
    assert (budget.added, budget.refused) == (2, {"c", "d"})


# -- through the pipelines -----------------------------------------------------------------------------------


@pytest.fixture
def bench(tmp_path):
    with Bench(
        tmp_path, WIRE_NEW_SITES_PER_PAGE=10, WIRE_NEW_SITES_PER_SITE=25, WIRE_MAX_SITES=1000
    ) as bench:
        yield bench


def test_a_page_linking_to_many_new_sites_adds_its_bound_and_its_site_counts_the_rest(bench, caplog):
    bench.seed(SITE + "/a.html", SITE + "/b.html")
    sites = bench.collection.sites.count
    links = [*hosts(40), *hosts(40), SITE + "/c.html"]  # each new host twice: refused once
    with caplog.at_level(logging.INFO, logger="wirescrapy.gatherer.pipelines.linkgraph"):
        bench.gather(bench.page(SITE + "/a.html", 200, page(*links)))
    assert bench.collection.sites.count == sites + 10
    assert [bool(bench.collection.lookup(u)) for u in hosts(12)] == [True] * 10 + [False] * 2
    assert bench.collection.lookup(SITE + "/c.html")  # a known site's links are not bounded
    assert bench.links(SITE + "/a.html") == [*hosts(10), SITE + "/c.html"]
    site = bench.site(SITE + "/a.html")
    assert (site["new_sites"], site["new_sites_refused"]) == (10, 30)
    assert bench.stats["gatherer/new_sites/added"] == 10 and bench.stats["gatherer/new_sites/refused"] == 30
    assert "links 30 new sites past the bounds" in caplog.text
    # Its site's second page adds its own 10; a revisit of the first, what the site may still add (25 over the
    # crawl); then no page of the site adds any. The sites the revisits refuse again were counted already.
    bench.gather(bench.page(SITE + "/b.html", 200, page(*hosts(40, "m"))))
    assert bench.collection.sites.count == sites + 20
    bench.gather(bench.page(SITE + "/a.html", 200, page(*links), at=T0 + 100))
    assert bench.collection.sites.count == sites + 25
    assert (site["new_sites"], site["new_sites_refused"]) == (25, 30 + 30)
    bench.gather(bench.page(SITE + "/b.html", 200, page(*hosts(40, "m")), at=T0 + 100))
    assert bench.collection.sites.count == sites + 25
    assert site["new_sites_refused"] == 30 + 30 and bench.stats["gatherer/new_sites/refused"] == 30 + 30


def test_a_refused_site_counts_once_on_its_linking_site_across_pages_and_later_harvests(tmp_path):
    """``new_sites_refused``: the distinct sites a site's pages linked that the bounds refused. Another page
    of the site linking the same sites, or a revisit in a later harvest (the collection closed and opened
    again), counts none of them again; another site linking them counts them on its own record."""
    settings = {"WIRE_NEW_SITES_PER_PAGE": 2, "WIRE_NEW_SITES_PER_SITE": 25, "WIRE_MAX_SITES": 1000}
    with Bench(tmp_path, **settings) as bench:
        bench.seed(SITE + "/a.html", SITE + "/b.html", "http://other.wire.test/")
        bench.gather(bench.page(SITE + "/a.html", 200, page(*hosts(5))))  # n0, n1 added; n2-n4 refused
        bench.gather(bench.page(SITE + "/b.html", 200, page(*hosts(5)[2:], *hosts(1, "m"))))  # n2, n3 added
        assert bench.site(SITE + "/a.html")["new_sites_refused"] == 4  # n2, n3, n4 (a), m0 (b); n4 once
        assert bench.stats["gatherer/new_sites/refused"] == 4
    with Bench(tmp_path, **settings) as bench:
        bench.gather(
            bench.page(SITE + "/a.html", 200, page(*hosts(5, "k"), *hosts(5)), at=T0 + 100)
        )  # k0, k1
        bench.gather(bench.page(SITE + "/b.html", 200, page(*hosts(5, "k"), *hosts(1, "m")), at=T0 + 100))
        assert bench.site(SITE + "/a.html")["new_sites_refused"] == 4 + 3  # k2, k3, k4; not n4 nor m0 again
        assert bench.stats["gatherer/new_sites/refused"] == 3
        bench.gather(
            bench.page("http://other.wire.test/", 200, page(*hosts(3, "q"), *hosts(1, "m"), hosts(5, "k")[4]))
        )
        assert bench.site("http://other.wire.test/")["new_sites_refused"] == 3  # q2, and m0 and k4 for it too


def test_the_refused_sites_remembered_are_bounded_per_site_and_in_all(tmp_path, monkeypatch):
    refused = RefusedSites(tmp_path)
    counted = 0
    for name in [*hosts(PER_SITE + 10), *hosts(PER_SITE)]:
        counted += refused.first(1, name, counted)
    assert counted == PER_SITE and len(refused.index) == PER_SITE  # the site's counter stops: "at least"
    assert refused.first(2, hosts(1)[0], 0)  # another site's own count
    refused.close()
    assert not RefusedSites(tmp_path).first(2, hosts(1)[0], 1) and RefusedSites(tmp_path).first(
        2, hosts(2)[1], 1
    )
    monkeypatch.setattr(refused_module, "MAX_PAIRS", PER_SITE + 2)
    assert [refused.first(3, name, 0) for name in hosts(2)] == [True, False]  # full: not counted, never twice


def test_a_new_site_s_own_links_have_their_own_budget(bench):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 200, page(*hosts(5))))
    bench.gather(bench.page(hosts(1)[0], 200, page(*hosts(15, "m"))))
    assert sum(bool(bench.collection.lookup(u)) for u in hosts(15, "m")) == 10
    assert bench.site(hosts(1)[0])["new_sites"] == 10


def test_a_sitemap_and_a_redirect_are_bounded_as_pages_of_their_site(bench):
    bench.seed(SITE + "/a.html", SITE + "/b.html")
    bench.sitemap(SITE, [(u, None) for u in hosts(30)])
    assert sum(bool(bench.collection.lookup(u)) for u in hosts(30)) == 10
    assert bench.site(SITE + "/a.html")["new_sites"] == 10
    bench.gather(bench.page(SITE + "/b.html", 200, page(*hosts(30, "m"))))
    assert bench.site(SITE + "/a.html")["new_sites"] == 20
    bench.gather(bench.page(SITE + "/a.html", 200, page(*hosts(5, "k"))))
    site = bench.site(SITE + "/a.html")
    assert site["new_sites"] == 25
    collection, rules = bench.collection, bench.harvest.rules
    # The site may add no more: the harvester does not follow its redirect to a new site, and the gatherer
    # records the redirect without adding its target (one more site refused).
    assert not new_site_allowed(collection, rules, SITE, "http://z.wire.test")
    assert new_site_allowed(collection, rules, SITE, "http://n0.wire.test")  # a known site: always
    bench.gather(bench.page(SITE + "/a.html", 301, b"", redirect="http://z.wire.test/", at=T0 + 10))
    assert not bench.collection.lookup("http://z.wire.test/") and bench.links(SITE + "/a.html") == []
    assert site["new_sites_refused"] == 20 + 20 + 1


def test_the_collection_holds_at_most_max_sites_whoever_adds_them(tmp_path):
    with Bench(tmp_path, WIRE_MAX_SITES=3) as bench:
        report = bench.harvest.seed([*hosts(5), SITE + "/"])
        assert bench.collection.sites.count == 3 and report.added == 3
        bench.gather(bench.page(hosts(1)[0], 200, page(*hosts(5, "m"), hosts(2)[0])))
        assert bench.collection.sites.count == 3 and bench.links(hosts(1)[0]) == [hosts(2)[0]]
        assert bench.site(hosts(1)[0])["new_sites_refused"] == 5


def test_a_page_s_links_to_new_sites_are_counted_for_the_harvest(bench):
    """WIRE's harvest figures: links to known pages, to new pages, and to new sites (a link whose site the
    collection did not have: the first of each new site)."""
    bench.seed(SITE + "/a.html", SITE + "/b.html")
    links = [SITE + "/b.html", SITE + "/c.html", *hosts(3), hosts(1)[0] + "x.html"]
    bench.gather(bench.page(SITE + "/a.html", 200, page(*links)))
    stats = bench.stats
    assert stats["gatherer/links/known"] == 1  # b
    assert stats["gatherer/links/new_sites"] == 3  # n0, n1, n2; n0/x.html is a new page of a site new by then
    assert stats["gatherer/links/new"] >= 5
