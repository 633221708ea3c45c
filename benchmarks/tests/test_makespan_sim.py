"""benchmarks.makespan_sim's crawler policies on a tiny web: every page fetched once, softmin ending batches
early when (and only when) the crawler's rule says it pays, and no crawl under its politeness bound."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import makespan_sim
from wirescrapy.harvester.politeness import PolitenessQueue, Waits

# One straggler of 60 pages among 49 sites of 4: each batch, the small sites end within seconds and the
# straggler alone keeps it open for minutes.
STRAGGLER = np.array([60] + [4] * 49)


def crawled(policy: str, sizes: np.ndarray, *options: str) -> tuple[int, float, np.ndarray]:
    args = makespan_sim.options().parse_args(["--batch", "100", *options])
    return makespan_sim.crawl_as_crawler(policy, sizes, args)


def bound(sizes: np.ndarray, *options: str) -> float:
    args = makespan_sim.options().parse_args(list(options))
    waits = makespan_sim.waits_of(sizes, args)
    return float((sizes * (waits + args.fetch) - waits).max())


@pytest.mark.parametrize("policy", list(makespan_sim.CRAWLER))
def test_every_page_is_fetched_once_and_no_crawl_beats_the_bound(policy):
    sizes = np.random.default_rng(7).zipf(1.6, 50).clip(1, 80)
    _, makespan, done = crawled(policy, sizes, "--manager", "10")
    assert np.array_equal(done, sizes)
    assert makespan >= bound(sizes)
    _, makespan, done = crawled(policy, STRAGGLER, "--manager", "10")
    assert np.array_equal(done, STRAGGLER)
    assert makespan >= bound(STRAGGLER)


@pytest.mark.parametrize("ahead", ["", "+ahead"])
def test_softmin_ends_a_straggler_s_batches_early_when_a_restart_is_cheap(ahead):
    # One harvester of many cycles: the straggler's pages left need far more than twice a restart.
    cheap = ("--manager", "10")
    cycles, _, _ = crawled("crawler" + ahead, STRAGGLER, *cheap)
    assert crawled("crawler+softmin" + ahead, STRAGGLER, *cheap)[0] > cycles
    dear = ("--manager", "1000")  # and here less: softmin lets the batches run to their end
    assert (
        crawled("crawler+softmin" + ahead, STRAGGLER, *dear)[0]
        == crawled("crawler" + ahead, STRAGGLER, *dear)[0]
    )
    # A job a cycle: the straggler is the site the whole crawl waits for, ending its batches early would
    # only hold it up.
    jobs = (*cheap, "--jobs")
    assert (
        crawled("crawler+softmin" + ahead, STRAGGLER, *jobs)[:2]
        == crawled("crawler" + ahead, STRAGGLER, *jobs)[:2]
    )


def harvested(later: np.ndarray, restart: float = 10.0) -> makespan_sim.Harvested:
    # Sites 0 and 1 straggle with 20 pages each; sites 2-9 have one page: once they are done, two sites are
    # active, fewer than WIRE_SOFTMIN (3).
    batch = np.array([20, 20] + [1] * 8)
    waits = np.full(10, 15.0)
    return makespan_sim.harvest_watched(
        batch,
        waits,
        0.5,
        300,
        np.zeros(10),
        softmin=3,
        softmin_time=0.0,
        restart=restart,
        plan_seconds=None,
        later=later,
    )


def test_softmin_ends_a_batch_whose_stragglers_hold_up_the_site_the_crawl_waits_for():
    later = np.zeros(10)
    later[2] = 1000 * 15.0  # site 2 has 1,000 pages for later batches: the stragglers hold it up
    end = harvested(later)
    assert end.dropped_at is not None and end.fetched[:2].max() < 20 and end.seconds < 100
    assert (
        harvested(later, restart=1000.0).dropped_at is None
    )  # a restart dearer than what the stragglers need
    later[1] = 2000 * 15.0  # now a straggler is the one the crawl waits for
    end = harvested(later)
    assert end.dropped_at is None and end.fetched.tolist() == [20, 20] + [1] * 8
    assert harvested(None).dropped_at is not None  # without what is left for later: WIRE's softmin alone


def test_a_batch_ahead_restarts_at_once_unless_softmin_dropped_pages_it_left_out():
    fetched = np.zeros(1, dtype=np.int64)
    assert makespan_sim.Harvested(100.0, fetched, None, None).next_restart(30.0) == 30.0  # not planned ahead
    assert (
        makespan_sim.Harvested(100.0, fetched, None, 60.0).next_restart(30.0) == 0.0
    )  # hidden behind the tail
    assert makespan_sim.Harvested(100.0, fetched, None, 80.0).next_restart(30.0) == 10.0  # partly
    assert (
        makespan_sim.Harvested(100.0, fetched, 90.0, 90.0).next_restart(30.0) == 20.0
    )  # planned after the drop
    assert makespan_sim.Harvested(100.0, fetched, 90.0, 80.0).next_restart(30.0) == 40.0  # before it: again


def test_time_left_is_the_politeness_queue_s():
    queue = PolitenessQueue(Waits(normal=15.0, large_site=5.0, large_site_pages=100))
    for site, pages in enumerate([3, 6, 2]):
        for row in range(pages):
            queue.add(str(site), row)
    assert queue.pop_ready(0.0) == ("0", 0)
    queue.finished("0", 0.5)  # 2 left, ready at 15.5
    assert queue.pop_ready(1.0) == ("1", 0)  # in flight, 5 left
    left = np.array([2, 5, 2])
    not_before = np.array([15.5, 1.5 + 15.0, 0.0])  # site 1's fetch ends at 1.5; site 2 never fetched
    waits = np.full(3, 15.0)
    assert makespan_sim.time_left(1.2, left, not_before, waits) == pytest.approx(queue.time_left(1.2)) == 75.0
    queue.finished("1", 1.5)
    assert makespan_sim.time_left(4.0, left, not_before, waits) == pytest.approx(queue.time_left(4.0)) == 72.5
    assert (
        makespan_sim.time_left(40.0, left, not_before, waits) == pytest.approx(queue.time_left(40.0)) == 60.0
    )


def test_the_lead_gives_the_slowest_site_its_share_with_the_manager_s_own_code():
    """``crawler+softmin+lead`` shares a batch with the planner's ``site_time_limits``, weights given: the
    site of 60 pages leads with its share (13 of 40) where the even time gives it and the site of 30 nine
    each, and it is the batch's critical site, which softmin does not count as a straggler."""
    sizes = np.array([60, 30] + [4] * 20)
    args = makespan_sim.options().parse_args(["--batch", "40"])
    batch, critical = makespan_sim.share_by_lead(sizes.copy(), sizes, makespan_sim.lead_config(args))
    even = makespan_sim.share_by_crawler(sizes.copy(), 40, args.samesite, makespan_sim.waits_of(sizes, args))
    assert (batch[:2].tolist(), even[:2].tolist()) == ([13, 7], [9, 9])
    assert batch.sum() <= 40 and np.flatnonzero(critical).tolist() == [0]
