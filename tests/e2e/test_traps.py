"""End to end: traps that would add sites forever, bounded. A redirect chain to ever-new host names, followed
over many cycles, ends at ``WIRE_MAX_REDIRECTS`` hops from the page that was linked; a page linking to
thousands of new hosts adds at most ``WIRE_NEW_SITES_PER_PAGE`` of them, and the rest are counted on its site.

The trap web is ``wirescrapy.testing.trapweb`` (``benchmarks.traps`` measures the same traps over more cycles
and hosts).
"""

from __future__ import annotations

import pytest

from tests.e2e.test_harvester import harvest, served
from wirescrapy.collection import Collection
from wirescrapy.items import FetchError
from wirescrapy.testing.trapweb import TrapWeb

CYCLES = 8
FAST = {"WIRE_WAIT_NORMAL": 0, "WIRE_WAIT_LARGE_SITE": 0}


@pytest.fixture
def trap_web():
    yield from served(TrapWeb())


@pytest.mark.timeout(180)
def test_a_redirect_chain_to_ever_new_hosts_ends_at_the_hop_limit(trap_web, tmp_path):
    web = trap_web
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(web.url("h0") + "\n")
    collection = tmp_path / "collection"
    harvest(
        collection,
        "-a",
        f"seeds={seeds}",
        "-a",
        f"cycles={CYCLES}",
        settings={**FAST, "WIRE_MAX_REDIRECTS": 3},
    )
    chain = sorted(h for h in web.hosts if h.startswith("h"))
    assert chain == ["h0", "h1", "h2", "h3"]  # three hops from the seed, whatever the number of cycles
    with Collection(collection, readonly=True) as stored:
        assert stored.sites.count == 4
        records = {host: stored.documents.records[stored.lookup(web.url(host))] for host in chain}
        # Each hop one more redirect and one deeper: the chain is bounded by the depth limit too.
        assert {host: (int(r["redirects"]), int(r["depth"])) for host, r in records.items()} == {
            "h0": (0, 0),
            "h1": (1, 1),
            "h2": (2, 2),
            "h3": (3, 3),
        }
        assert int(records["h3"]["error"]) == FetchError.TOO_MANY_REDIRECTS
        assert not stored.lookup(web.url("h4"))


@pytest.mark.timeout(180)
def test_a_site_linking_to_thousands_of_new_hosts_adds_its_bound(trap_web, tmp_path):
    web = trap_web  # fan.wire.test/ and its /more.html each link to 3,000 new hosts
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(web.url("fan") + "\n")
    collection = tmp_path / "collection"
    bounds = {"WIRE_NEW_SITES_PER_PAGE": 50, "WIRE_NEW_SITES_PER_SITE": 80}
    run = harvest(collection, "-a", f"seeds={seeds}", "-a", "cycles=3", settings={**FAST, **bounds})
    with Collection(collection, readonly=True) as stored:
        assert stored.sites.count == 1 + 80  # 50 from the first page, 30 from the second
        site = stored.sites.records[int(stored.documents.records[stored.lookup(web.url("fan"))]["siteid"])]
        assert (site["new_sites"], site["new_sites_refused"]) == (80, (3000 - 50) + (3000 - 30))
    assert len(web.hosts) == 1 + 80  # only the sites added were ever asked for anything
    assert "links 2950 new sites past the bounds on new sites (50 added" in run.stderr
    assert "New sites: 80 added, 5920 more refused by the bounds on new sites" in run.stderr
