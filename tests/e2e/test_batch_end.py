"""End to end: a batch ended early by WIRE's softmin (``WIRE_SOFTMIN``, ``WIRE_SOFTMIN_TIME``) leaves the
pages it did not fetch to the next batches, the next batch planned while one finishes (``WIRE_PLAN_AHEAD``)
starts at once, and politeness holds across every batch boundary and from one harvester process to the next
(the sample web's access log)."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from tests.e2e.test_harvester import WAIT, harvest
from wirescrapy.collection import Collection
from wirescrapy.manager.batch import read_batch
from wirescrapy.testing.sampleweb import SampleWebProcess
from wirescrapy.testing.sampleweb.accesslog import by_host, too_close

WEB = {"sites": 3, "pages_per_site": 30, "seed": 5, "crawl_delay": 0.2, "slow_delay": 0.3}
# Every site stays small (the normal wait, 0.5 s here): site0's 30 pages take 15 s and more, the others' one
# page each much less; softmin ends the batch once site0 is the only site left, after 1.5 s, as its pages left
# need far more than twice the harvester's start (the batch is the process's first). No limit on a site's
# part of a batch but its time: every page known fits in a batch (WIRE_BATCH_SITE_GROWTH would give site0 4 x
# its few pages fetched, and the pages found on them could take the place of a seed left over).
SETTINGS = {
    "WIRE_LARGE_SITE_PAGES": 10_000,
    "WIRE_SOFTMIN": 2,
    "WIRE_SOFTMIN_TIME": 1.5,
    "WIRE_WAIT_NORMAL": 0.5,
    "WIRE_BATCH_SITE_GROWTH": 0,
    "WIRE_PLAN_AHEAD": True,
}


@pytest.mark.timeout(240)
def test_a_batch_ended_by_softmin_leaves_its_pages_to_the_next_and_stays_polite(tmp_path):
    with SampleWebProcess(workdir=tmp_path / "web", **WEB) as web:
        site0 = sorted(url for url in web.truth.pages if "//site0." in url)
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(
            "\n".join([*site0, *web.seeds]) + "\n"
        )  # the first batch: all of site0, the others' home
        collection = tmp_path / "collection"
        # Two cycles: softmin ends the first batch by what its stragglers' pages need (in a harvester's last
        # cycle it weighs only what they keep the crawl's slowest site idle, here site0 itself).
        first = harvest(collection, "-a", f"seeds={seeds}", "-a", "cycles=2", settings=SETTINGS)
        assert "Batch 000001: 1 sites still active (WIRE_SOFTMIN 2)" in first.stderr, first.stderr[-3000:]
        assert "pages left for the next batches" in first.stderr
        batches = collection / "batches"
        one = json.loads((batches / "000001" / "harvest.json").read_text())
        first_urls = {url.url for url in read_batch(batches / "000001").urls}
        assert set(site0) <= first_urls
        assert 0 < one["fetched"] < len(first_urls)  # ended with pages left
        # The next batch, planned while the first finished (WIRE_PLAN_AHEAD), holds site0's pages the first
        # did not fetch; the one after it was written at the end of this harvester, for the next to resume.
        assert "The next batch is written" in first.stderr
        with Collection(collection, readonly=True) as stored:
            records = {url: stored.documents.records[stored.lookup(url)] for url in site0}
        left = {
            url
            for url, record in records.items()
            if record["visits"] == 0 or record["first_visit"] > one["finished"]
        }
        assert left
        second_urls = {url.url for url in read_batch(batches / "000002").urls}
        missing = {
            url: (int(records[url]["status"]), int(records[url]["error"]), int(records[url]["errors"]))
            for url in left - second_urls
        }
        assert not missing, (missing, first.stderr[-3000:])
        # The rest of the crawl without softmin (with it, each batch would end after 1.5 s with one site
        # left).
        rest = harvest(collection, "-a", "cycles=30", settings={**SETTINGS, "WIRE_SOFTMIN": 0})
        assert "Resuming the unfinished batch" in rest.stderr
        assert "nothing more to fetch" in rest.stderr or "no page to fetch" in rest.stderr
        log = web.access_log()
        with Collection(collection, readonly=True) as stored:
            for url in web.truth.pages - {web.url(1, "/odd/after-big.html")}:  # past WIRE_MAX_FILE_SIZE's cut
                doc = stored.lookup(url)
                assert doc and stored.documents.records[doc]["visits"] >= 1, url
    # No page is requested twice (a redirect's target included: one fetched in an earlier batch than its
    # redirect, within its revisit period, is not followed again), but the pages that failed.
    requests: dict[tuple[str, str], int] = {}
    for records in by_host(log).values():
        for record in records:
            requests[record["host"], record["path"]] = requests.get((record["host"], record["path"]), 0) + 1
    retried = ("/robots.txt", "/error.html", "/drop.html")  # a 500 and a cut page: tried again in their batch
    assert not {key: n for key, n in requests.items() if n > 1 and key[1] not in retried}
    for host, records in by_host(log).items():  # across batches and processes
        assert not too_close(records, WAIT), (host, too_close(records, WAIT)[:5])


@pytest.mark.timeout(120)
def test_a_site_found_large_in_the_middle_of_its_batch_gets_the_large_site_wait_at_once(tmp_path):
    # One batch of site0's first 8 pages: 8 documents known when it starts, a small site's wait (1 s). Its
    # pages link to the site's other pages, so its known documents pass WIRE_LARGE_SITE_PAGES (10) a page or
    # two into the batch, and its next requests come at the large-site wait (0.05 s).
    with SampleWebProcess(workdir=tmp_path / "web", sites=1, pages_per_site=40, seed=5) as web:
        pages = [web.url(0, f"/page/{n}.html") for n in range(1, 9)]
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(pages) + "\n")
        harvest(
            tmp_path / "collection",
            "-a",
            f"seeds={seeds}",
            settings={"WIRE_LARGE_SITE_PAGES": 10, "WIRE_WAIT_NORMAL": 1.0, "WIRE_WAIT_LARGE_SITE": 0.05},
        )
        [records] = by_host(web.access_log()).values()
    fetched = [r for r in records if r["path"] != "/robots.txt"]  # the seeds, and the site's root
    assert {f"/page/{n}.html" for n in range(1, 9)} <= {r["path"] for r in fetched}
    gaps = [after["start"] - before["end"] for before, after in pairwise(fetched)]
    assert sum(gap < 0.5 for gap in gaps) >= len(gaps) - 2, (
        gaps
    )  # large from its first pages on, in the same batch
    assert not too_close(records, 0.05)
