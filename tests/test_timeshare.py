"""A site's part of a batch from what it can fetch in the batch's time (wirescrapy/manager/timeshare.py), and
the pure rules of a batch's end (wirescrapy/harvester/batchend.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scrapy.settings import Settings

from tests.test_sites import two_site_crawl
from wirescrapy.collection.metadata import SITE_DTYPE
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.harvester.batchend import (
    PLAN_LEAST,
    critical_idle,
    plan_due,
    softmin_due,
    softmin_gain,
)
from wirescrapy.harvester.politeness import PolitenessQueue, Waits
from wirescrapy.manager import plan
from wirescrapy.manager.timeshare import (
    PACE_SLACK,
    batch_time,
    critical_sites,
    even_time,
    site_time_limits,
    site_waits,
    time_limits,
)


def config(**overrides) -> WireConfig:
    settings = Settings(default_settings())
    settings.set("WIRE_SCORE_WEIGHTS", {"pagerank": 4, "depth": 1})  # these graphs have no paths for mirrors
    settings.setdict(overrides, priority="cmdline")
    return WireConfig.from_settings(settings)


def test_site_waits_follow_the_harvester_s_politeness():
    waits = site_waits(np.array([0, 100, 101, 5000]), np.array([0.0, 0.0, 0.0, 9.0]), 15.0, 5.0, 100)
    assert waits.tolist() == [
        15.0,
        15.0,
        5.0,
        9.0,
    ]  # the large-site wait above 100 pages; Crawl-delay never cut


def test_the_even_time_lets_every_site_end_together():
    # Two sites at 1 s and one at 4 s a page, K = 9: in 4 s the first two fetch 5 each, the last 2 (12 > 9);
    # in 3 s, 4 + 4 + 1 = 9.
    t = even_time(np.array([100, 100, 100]), np.array([1.0, 1.0, 4.0]), 9)
    assert 3.0 <= t < 4.0
    assert even_time(np.array([2, 3]), np.array([1.0, 1.0]), 9) == math.inf  # everything fits
    assert (
        even_time(np.array([5, 5, 5]), np.array([1.0, 1.0, 1.0]), 2) == 0.0
    )  # one page each is already too many
    assert (
        even_time(np.array([50, 50]), np.array([0.0, 1.0]), 60) >= 9.0
    )  # a site without a wait takes its 50


def test_a_site_s_part_is_what_it_fetches_in_the_batch_s_time():
    # Four sites of 5 pages at 1 s, K = 8: they need 3 batches at least, the pace is 4 s / 3; the even time
    # (2 pages each, under 2 s) is longer and decides.
    assert time_limits(np.array([5, 5, 5, 5]), np.array([1.0, 1.0, 1.0, 1.0]), 8).tolist() == [2, 2, 2, 2]
    # The site with 4 times the wait, and 3 pages, gets 1: the pace of the 1-s sites (99 s over the 23
    # batches their candidates need and half as many again, 35: 2.8 s a batch) is shorter than the even time
    # (4 pages of each 1-s site and 1 of the other fill the 9, in just under 4 s), which is the batch's time.
    assert time_limits(np.array([100, 100, 3]), np.array([1.0, 1.0, 4.0]), 9).tolist() == [4, 4, 1]
    # The slowest site (1,000 pages at 1 s, the others 30 each) sets the pace: its 999 s over the 11
    # batches its candidates need at least (1,060 / 100) and half as many again (PACE_SLACK), 16: 62.4 s a
    # batch, so 63 of its pages, and the others are not limited below their 30.
    assert PACE_SLACK == 0.5
    limits = time_limits(np.array([1000, 30, 30]), np.array([1.0, 1.0, 1.0]), 100)
    assert limits.tolist() == [63, 30, 30]
    # A site without a wait, or without candidates, keeps its count; everything fitting: no limit.
    assert time_limits(np.array([30, 0, 7]), np.array([0.0, 1.0, 2.0]), 10).tolist()[:2] == [30, 0]
    assert time_limits(np.array([3, 4]), np.array([1.0, 1.0]), 10).tolist() == [3, 4]
    assert time_limits(np.array([0, 0]), np.array([1.0, 1.0]), 10).tolist() == [0, 0]
    with pytest.raises(ValueError, match="waits"):
        time_limits(np.array([1]), np.array([-1.0]), 10)
    with pytest.raises(ValueError, match="size"):
        time_limits(np.array([1]), np.array([1.0]), 0)


@pytest.mark.parametrize("seed", range(5))
def test_no_site_keeps_the_batch_open_longer_than_the_pace_or_the_even_time(seed):
    rng = np.random.default_rng(seed)
    candidates = rng.integers(0, 400, 30)
    waits = rng.choice([0.05, 0.2, 1.0], 30)
    size = 200
    limits = time_limits(candidates, waits, size)
    assert np.all(limits <= candidates) and np.all(limits[candidates > 0] >= 1)
    pace = ((candidates - 1).clip(0) * waits).max() / math.ceil(candidates.sum() / size * (1 + PACE_SLACK))
    t = max(even_time(candidates, waits, size), pace)
    assert np.all((limits - 1) * waits <= t + 1e-9)  # every site's part fits in the batch's time ...
    slowest = np.argmax((candidates - 1).clip(0) * waits)
    assert limits[slowest] == min(
        candidates[slowest], 1 + math.floor(t / waits[slowest])
    )  # ... the slowest fills it


def test_the_manager_limits_sites_by_their_waits():
    """Site 1 has 25 documents (the large-site wait, 1 s), site 2 13 (the normal wait, 4 s): in a batch of 12
    site 2 gets a quarter of site 1's time's worth."""
    docs, links = two_site_crawl()
    sites = np.zeros(3, SITE_DTYPE)
    sites["docs"][1:] = [25, 13]
    settings = {
        "WIRE_BATCH_SIZE": 12,
        "WIRE_BATCH_SITE_GROWTH": 0,
        "WIRE_WAIT_NORMAL": 4.0,
        "WIRE_WAIT_LARGE_SITE": 1.0,
        "WIRE_LARGE_SITE_PAGES": 20,
    }
    waits = site_waits(sites["docs"], sites["crawl_delay"], 4.0, 1.0, 20)
    assert waits.tolist() == [4.0, 1.0, 4.0]
    limits = site_time_limits(docs["siteid"], np.ones(len(docs), bool), waits, size=12, samesite=500).limits
    timed = plan(docs, links, config(**settings), 2000.0, count=1, site_records=sites)
    per_site = np.bincount(docs["siteid"][timed.batches[0] - 1], minlength=3)
    assert 1 <= per_site[2] <= limits[2] < per_site[1] <= limits[1]
    assert (per_site[2] - 1) * 4.0 <= (limits[1] - 1) * 1.0  # site 2 is not the one the batch waits for


def test_a_batch_s_time_is_the_even_time_or_the_slowest_site_s_pace():
    candidates, waits = np.array([100, 100]), np.array([1.0, 1.0])
    assert 9.0 <= batch_time(candidates, waits, 20) < 10.0  # the even time: 10 pages each
    # Sites of 1,000 and 10 pages, K = 20: the even time is 10 s (11 + 10 pages), but the large site's 999 s
    # paced over the 76 batches its candidates need and half as many again take 13.1 s each.
    assert batch_time(np.array([1000, 10]), waits, 20) == pytest.approx(999 / 76)


def test_critical_sites_are_the_leader_and_those_near_the_slowest_fitted_in_the_batch():
    left, waits = np.array([0, 100, 90, 10]), np.array([1.0, 1.0, 1.0, 1.0])  # time left 99, 89, 9 s
    whole = np.array([0, 16, 16, 10])

    def critical(t, size=40, leader=1):
        found, fitted = critical_sites(left, waits, t, whole, size, leader)
        return found.tolist(), fitted

    assert critical(15.0) == ([False, True, True, False], 15.0)
    assert critical(5.0) == ([False, True, False, False], 5.0)
    assert critical(5.0, leader=3) == ([False, True, False, True], 5.0)  # the leader, by its estimate
    # 42 > 40: the time shrinks until all three fit (15 + 15 + 10 pages), rather than one being dropped.
    found, fitted = critical(95.0)
    assert found == [False, True, True, True] and 14.0 <= fitted < 15.0
    found, fitted = critical(15.0, size=20)  # two sites of 16 in a batch of 20: 10 pages each
    assert found == [False, True, True, False] and 9.0 <= fitted < 10.0
    assert critical(math.inf) == ([False] * 4, math.inf)  # everything fits: no limit to fill


def test_the_slowest_site_leads_with_its_share_and_the_others_take_its_time():
    """Site 1 (25 documents, 23 to fetch) has the most time left: 47 s, its pages left as estimated (48), at
    the large-site wait of 1 s. Site 2 (13 documents, 9 to fetch, also a large site here) has 8 s. In a batch
    of 12, the even time gives each 6 pages. The slowest site leads: site 1's PageRank share (11) sets the
    batch's time (10 s): it keeps more than site 2's time left and a fifth of its own (8 + 5 s) for the
    crawl's end, and it is given all of that time. Site 2, whose known time left (8 s) is more than 10 s
    short of the longest (site 1's 22 s), has slack: it takes its share of what is left."""
    docs, links = two_site_crawl()
    sites = np.zeros(3, SITE_DTYPE)
    sites["docs"][1:] = [25, 13]
    settings = {
        "WIRE_BATCH_SIZE": 12,
        "WIRE_BATCH_SITE_GROWTH": 0,
        "WIRE_WAIT_NORMAL": 4.0,
        "WIRE_WAIT_LARGE_SITE": 1.0,
        "WIRE_LARGE_SITE_PAGES": 10,
    }

    def per_site(**more):
        result = plan(docs, links, config(**{**settings, **more}), 2000.0, count=1, site_records=sites)
        counts = np.bincount(docs["siteid"][result.batches[0] - 1], minlength=3).tolist()
        return counts, result.site_left, result.time_led

    candidates = docs["visits"] == 0
    waits = site_waits(sites["docs"], sites["crawl_delay"], 4.0, 1.0, 10)
    even = site_time_limits(docs["siteid"], candidates, waits, size=12, samesite=500)
    assert even.limits.tolist() == [1, 6, 6] and not even.led  # no weights: no lead
    counts, left, led = per_site()
    assert counts == [0, 11, 1] and led
    assert left.tolist() == [0.0, 48.0, 9.0]  # site 1: 25 known, 2 fetched, estimated at the guard's 50
    # The batch names the sites planned to fetch through it (sites.jsonl's "critical", which softmin reads).
    assert plan(docs, links, config(**settings), 2000.0, count=1, site_records=sites).critical.tolist() == [
        False,
        True,
        False,
    ]
    assert per_site(WIRE_BATCH_SIZE=6)[::2] == ([0, 5, 1], True)  # even: 3 / 3
    # Site 2 at the normal wait of 4.5 s has 36 s left: site 1's 47 s less its reserve (36 + 5 s) leave 6 s,
    # no more than the batch's time without the lead: the batch is not led. Its time is the pace of site 2,
    # slowest by its known pages (36 s over 4 batches: 10 and 3 pages); both sites are fetched through it,
    # and in 12 they fit only at their even time: 9 and 2.
    slow = {"WIRE_LARGE_SITE_PAGES": 20, "WIRE_WAIT_NORMAL": 4.5}
    waits = site_waits(sites["docs"], sites["crawl_delay"], 4.5, 1.0, 20)
    assert site_time_limits(docs["siteid"], candidates, waits, size=12, samesite=500).limits.tolist() == [
        1,
        10,
        3,
    ]
    assert per_site(**slow)[::2] == ([0, 9, 2], False)


def test_the_slowest_site_keeps_its_reserve_while_other_sites_have_pages_in_queued_jobs():
    """Everything fits in a batch of 100: site 1 (100 documents, 40 to fetch, 39 s at 1 s) and site 2 (30
    documents, 5 to fetch, 4 s). While site 2 has pages, what they link to may come yet, so when jobs are
    queued on the collection (WIRE_COLLECTION_WAIT: the next batch follows at once) site 1 takes only what is
    beyond its reserve (a fifth of its 100 documents' time, 20 s): 20 pages in 19 s. A single job, or a cron
    recrawl's, fetches everything that fits: all 40, as it does once site 2 has nothing left."""
    site_ids = np.array([1] * 100 + [2] * 30)
    fetched = np.ones(len(site_ids), bool)
    fetched[60:100] = fetched[100:105] = False
    waits = site_waits(np.array([0, 100, 30]), np.zeros(3), 4.0, 1.0, 20)
    assert waits.tolist() == [4.0, 1.0, 1.0]
    weights = np.array([0.0, 0.5, 0.5])

    def limits(candidates, **more):
        shared = site_time_limits(site_ids, candidates, waits, size=100, samesite=500, **more)
        return shared.limits.tolist(), shared.led

    everything = ~fetched
    assert limits(everything, weights=weights, queued=True) == ([1, 20, 5], False)
    assert limits(everything, weights=weights) == ([1, 40, 5], False)
    assert limits(everything) == ([1, 40, 5], False)
    assert limits(everything & (site_ids == 1), weights=weights, queued=True) == ([1, 40, 1], False)


def test_softmin_ends_a_batch_with_few_sites_left_when_it_pays():
    due = {"began_with": 10, "time_left": 5.0, "restart": 0.3}
    assert softmin_due(active_sites=2, pages_left=40, elapsed=61.0, softmin=3, softmin_time=60.0, **due)
    assert not softmin_due(2, 40, 59.0, 3, 60.0, **due)  # too early
    assert not softmin_due(3, 40, 61.0, 3, 60.0, **due)  # enough sites still active
    assert not softmin_due(1, 0, 61.0, 3, 60.0, **due)  # nothing left to hand over
    assert not softmin_due(1, 40, 1e9, 0, 0.0, **due)  # off
    assert softmin_due(2, 40, 0.0, 3, 0.0, **due)  # no minimum time (the default)
    # A batch of few sites from the start: its breadth did not collapse, a new batch would be as narrow.
    assert softmin_due(2, 40, 0.0, 3, 0.0, **{**due, "began_with": 3})
    assert not softmin_due(2, 40, 0.0, 3, 0.0, **{**due, "began_with": 2})
    # The stragglers' pages must need at least twice what a new batch costs: a manager run, or a new job's
    # start for a job's only batch; with waits of 0 they need no time at all.
    assert softmin_due(2, 40, 0.0, 3, 0.0, **{**due, "time_left": 0.61})
    assert not softmin_due(2, 40, 0.0, 3, 0.0, **{**due, "time_left": 0.6})
    assert not softmin_due(2, 40, 0.0, 3, 0.0, **{**due, "restart": 2.5})
    assert not softmin_due(2, 40, 0.0, 3, 0.0, **{**due, "time_left": 0.0, "restart": 0.0})


def test_softmin_weighs_the_time_the_stragglers_keep_the_slowest_site_idle():
    # "big" needs the most crawl time: 3 s queued, 100 s for later batches.
    later = {"big": 100.0, "small": 0.0, "idle": 20.0}
    assert critical_idle({"big": 3.0, "small": 4.0}, later) == pytest.approx(
        1.0
    )  # "small" outlasts it by 1 s
    assert critical_idle({"big": 5.0, "small": 4.0}, later) < 0  # it ends the batch itself
    assert critical_idle({"small": 4.0}, later) == 4.0  # done with its part: it waits for "small"
    # An idle site needs the longest: the stragglers hold it up as long as they run.
    assert critical_idle({"big": 3.0, "small": 4.0}, {"big": 1.0, "idle": 50.0}) == 4.0
    # Nothing left for later batches: the next batch would hold the same stragglers, nothing is gained.
    assert critical_idle({"big": 3.0, "small": 4.0}, {}) < 0
    assert critical_idle({}, later) == 0.0 and critical_idle({}, {}) == 0.0


def test_the_sites_a_led_batch_planned_to_end_together_are_no_stragglers_of_one_another():
    """A led batch (the real-document web as queued jobs, batch 5): apache 185 pages and postgresql 196 at
    0.05 s, both critical, the eleven other sites one page each and done in a quarter of a second.
    postgresql's queue outlasting apache's by 0.55 s is no reason to end the batch and plan it again; a site
    not planned to end with them still is."""
    active = {"apache": 184 * 0.05, "postgresql": 195 * 0.05}
    later = {"apache": 1583 * 0.05, "postgresql": 859 * 0.05, "sqlite": 816 * 0.05}
    assert critical_idle(active, later) == pytest.approx(0.55)
    together = frozenset({"apache", "postgresql"})
    assert critical_idle(active, later, together) < 0
    assert critical_idle({**active, "sqlite": 12.0}, later, together) == pytest.approx(12.0 - 184 * 0.05)
    # Whether the slowest site is one of them decides: when it is not, they straggle as any site does.
    assert critical_idle(active, later, frozenset({"postgresql", "sqlite"})) == pytest.approx(0.55)
    assert softmin_gain(active, later, last_cycle=True, together=together) < 0
    assert softmin_gain(active, later, last_cycle=True) == pytest.approx(0.55)


def test_softmin_weighs_a_batch_that_does_not_say_what_is_left_as_an_earlier_cycle():
    active = {"big": 3.0, "small": 4.0}
    assert softmin_gain(active, {"big": 100.0}, last_cycle=True) == pytest.approx(1.0)  # critical_idle
    assert softmin_gain(active, {}, last_cycle=True) < 0  # nothing left for later: nothing gained
    # A batch written before its sites' pages left were recorded: not known is not nothing left.
    assert softmin_gain(active, None, last_cycle=True) == 4.0
    assert softmin_gain(active, {"big": 100.0}, last_cycle=False) == softmin_gain(active, None, False) == 4.0
    assert softmin_gain({}, None, last_cycle=True) == 0.0


def test_the_process_started_before_this_test():
    import time

    from wirescrapy.harvester.batchend import process_started

    started = process_started()
    assert started < time.monotonic() - 0.1  # pytest's own start took longer than that


def test_the_next_batch_is_planned_when_the_pages_left_take_about_a_manager_run():
    assert plan_due(time_left=3.0, last_plan_seconds=2.0)
    assert not plan_due(5.0, 2.0)
    assert plan_due(PLAN_LEAST, 0.0) and not plan_due(PLAN_LEAST + 0.1, 0.0)


def test_dropping_a_batch_s_rows_keeps_robots_txt_follow_ups_and_the_last_fetch():
    q = PolitenessQueue(Waits(2.0, 1.0, 100))
    for row in (1, 2, 3):
        q.add("a", row)
    q.add("b", 4)
    q.add("c", 5)
    q.add("c", "robots.txt request", front=True)
    q.add("c", "redirect follow-up")
    assert q.pop_ready(0.0) == ("a", 1)
    assert sorted(q.drop_rows()) == [2, 3, 4, 5]  # a's 2 and 3, b's 4, c's 5
    assert len(q) == 2 and q.queued("a") == 0 and q.queued("b") == 0 and q.queued("c") == 2
    counts = q.counts(0.0)
    assert (counts.fetching, counts.ready + counts.waiting, counts.urls) == (1, 1, 2)
    q.finished("a", 10.0)
    assert q.pop_ready(10.0) == ("c", "robots.txt request")
    assert q.pop_ready(10.0) is None  # a and b are done; c waits for its wait
    q.add("a", 6)  # a's next page still waits a's wait from its last fetch
    assert q.pop_ready(11.9) is None and q.pop_ready(12.0) == ("a", 6)
