"""The batch planner on small hand-made situations, one for each of its rules (manager/planner.py)."""

from __future__ import annotations

import numpy as np

from wirescrapy.manager.planner import SiteState, explore_share, plan_batches


class Web:
    """Pages of a few sites: ``pages`` per site-id (site 0 unused), the first ``fetched`` of each visited."""

    def __init__(self, pages: list[int], fetched: list[int]):
        self.site_ids = np.repeat(np.arange(1, len(pages) + 1), pages)
        first = np.concatenate([[0], np.cumsum(pages)[:-1]])
        position = np.arange(len(self.site_ids)) - np.repeat(first, pages)
        self.visited = position < np.repeat(fetched, pages)
        self.candidates = ~self.visited
        # Profits fall with the page's place in its site, so the planner's share, not profit, decides.
        self.profits = (1.0 / (1 + position)).astype(np.float32)

    def counts(self, batch: np.ndarray) -> list[int]:
        return np.bincount(self.site_ids[batch], minlength=self.site_ids.max() + 1)[1:].tolist()


def plan(web: Web, value, waits, size, **options):
    state = SiteState(
        np.array([0.0, *value]),
        options.pop("left", None),
        np.array([0.0, *waits]),
        options.pop("groups", None),
    )
    options.setdefault("samesite", 500)
    return plan_batches(web.profits, web.site_ids, web.candidates, web.visited, state, size=size, **options)


def test_a_large_site_whose_links_are_not_seen_yet_gets_enough_of_the_batch_to_learn_what_it_holds():
    # Site 1: 5 pages fetched, 150 known pages waiting behind them, estimated at 1 % of the value (its links
    # are not seen yet). Site 2: estimated at 99 %, 200 pages waiting.
    web = Web([155, 220], [5, 20])
    waits = [0.0, 0.0]
    exploit = plan(web, [0.01, 0.99], waits, 50, growth=4)
    explore = plan(web, [0.01, 0.99], waits, 50, growth=4, explore=0.2)
    assert web.counts(exploit.batches[0]) == [1, 49]  # by value alone it would stay starved
    starved, rich = web.counts(explore.batches[0])
    assert starved >= 4 and starved + rich == 50  # a part of the batch learns what it holds
    # Slow start bounds the exploration too: 5 pages fetched, at most 4 x 5 in one batch.
    assert web.counts(plan(web, [0.01, 0.99], waits, 200, growth=4, explore=1).batches[0])[0] == 20


def test_the_site_that_sets_the_bound_is_never_idle_in_a_batch():
    # Site 1 is large (a short wait, but the most time left: 900 x 0.05 = 45 s); sites 2-5 are small at
    # 0.2 s. Site 1's estimated value is low: by value alone it would be done early in the batch and idle.
    web = Web([900, 40, 40, 40, 40], [0, 0, 0, 0, 0])
    waits = [0.05, 0.2, 0.2, 0.2, 0.2]
    result = plan(web, [0.04, 0.24, 0.24, 0.24, 0.24], waits, 100)
    counts = web.counts(result.batches[0])
    busy = [(n - 1) * wait for n, wait in zip(counts, waits)]
    # The bound site is fetched for the whole batch: no other site keeps the batch open while it waits.
    assert busy[0] >= max(busy[1:])
    assert sum(counts) <= 100 and counts[0] >= 20


def test_everything_that_fits_is_fetched_in_one_batch():
    web = Web([80, 10, 5], [2, 0, 1])
    waits = [0.05, 0.2, 0.2]
    result = plan(web, [0.6, 0.3, 0.1], waits, 200)
    assert len(result.batches) == 1 and len(result.batches[0]) == web.candidates.sum()
    # Jobs queued on the collection: the next batch follows at once, so the bound site keeps a reserve of
    # its last pages for what the others' last pages will link to; a lone job fetches all it can.
    queued = web.counts(plan(web, [0.6, 0.3, 0.1], waits, 200, queued=True).batches[0])
    assert queued[1:] == [10, 4] and 10 < queued[0] < 78


def test_a_site_whose_known_pages_all_failed_gets_no_part_of_the_batch():
    # Site 1's 60 known pages were all tried and are dead links (visited, no longer candidates): the
    # batch goes to the others, in full, exploration included.
    web = Web([60, 100, 100], [0, 0, 0])
    web.visited[:60] = True
    web.candidates[:60] = False
    result = plan(web, [0.5, 0.25, 0.25], [0.0, 0.0, 0.0], 40, explore=0.2)
    assert web.counts(result.batches[0]) == [0, 20, 20]
    weights = explore_share(np.array([0.0, 0.5, 0.25, 0.25]), web.site_ids, web.candidates, 0.2)
    assert weights[1] < 0.5  # its value share is kept, its frontier share is none


def test_a_site_just_found_is_fetched_in_the_next_batch():
    # Site 3 was just found: one known page, nothing fetched, a tiny estimated value.
    web = Web([300, 300, 1], [10, 10, 0])
    result = plan(web, [0.5, 0.5, 1e-9], [0.0, 0.0, 0.0], 40, growth=4)
    assert web.counts(result.batches[0])[2] == 1


def test_further_batches_of_one_run_take_the_next_pages():
    web = Web([50, 50], [0, 0])
    first, second = plan(web, [0.5, 0.5], [0.0, 0.0], 20, count=2).batches
    assert not set(first.tolist()) & set(second.tolist())
    assert len(first) == len(second) == 20


def test_sites_on_one_server_share_its_capacity():
    # Ten sites of 30 pages on one server (one group) against one site of 100 pages alone, all at 0.2 s.
    web = Web([100] + [30] * 10, [0] * 11)
    value = [0.5] + [0.05] * 10
    waits = [0.2] * 11
    apart = web.counts(plan(web, value, waits, 200).batches[0])
    groups = np.array([0, 0] + [1] * 10)
    together = web.counts(plan(web, value, waits, 200, groups=groups).batches[0])
    # Apart, the ten sites fetch beside each other; on one server they take turns on one connection, so
    # together they get no more of the batch's time than the site alone does.
    assert sum(apart[1:]) > apart[0]
    assert sum(together[1:]) <= together[0] + 1
    # WIRE_MAX_SITES_PER_GROUP: at most three of the ten in the batch.
    few = web.counts(plan(web, value, waits, 200, groups=groups, max_sites_per_group=3).batches[0])
    assert sum(1 for n in few[1:] if n) == 3
