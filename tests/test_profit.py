"""Filters, intrinsic quality, profit and the choice of the batch (paper §2.1, Figure 3)."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
from scrapy.settings import Settings

from wirescrapy.collection.metadata import DOCUMENT_DTYPE, DocFlag
from wirescrapy.config import DAY, WireConfig, default_settings
from wirescrapy.items import FetchError
from wirescrapy.manager.planner import select_batches
from wirescrapy.manager.profit import (
    eligible,
    intrinsic_quality,
    log_scale,
    pages_to_download,
    profit,
    too_recent,
    within_site_limit,
)

NOW = 1_700_000_000.0


def config(**settings):
    return WireConfig.from_settings(Settings({**default_settings(), **settings}))


def docs_of(count, **fields):
    docs = np.zeros(count, dtype=DOCUMENT_DTYPE)
    docs["siteid"] = 1
    for name, values in fields.items():
        docs[name] = values
    return docs


# -- Figure 3 --------------------------------------------------------------------------------------------


def test_figure_3_of_the_paper():
    quality = np.array([0.4, 0.7, 0.6])
    fresh = np.array([0.1, 0.9, 0.0])
    visited = np.array([True, True, False])
    profits = profit(quality, fresh, visited)
    np.testing.assert_allclose(profits, [0.36, 0.07, 0.6], rtol=1e-6)
    (batch,) = select_batches(profits, np.array([1, 2, 3]), np.ones(3, bool), size=2, samesite=500)
    assert batch.tolist() == [2, 0]  # P3 then P1


# -- filters ---------------------------------------------------------------------------------------------


def test_minimum_revisit_periods_by_outcome():
    cfg = config(
        WIRE_MINPERIOD_UNSUCCESSFUL=DAY,
        WIRE_MINPERIOD_SUCCESSFUL_NOT_OK=3 * DAY,
        WIRE_MINPERIOD_SUCCESSFUL_OK=7 * DAY,
    )
    status = [200, 200, 404, 404, 0, 0, 0, 0, 0, 301, 301, 200, 200]
    error = [
        0,
        0,
        0,
        0,
        FetchError.TIMEOUT,
        FetchError.TIMEOUT,
        0,
        0,
        0,
        FetchError.TOO_MANY_REDIRECTS,
        FetchError.TOO_MANY_REDIRECTS,
        FetchError.BAD_STATUS,
        FetchError.BAD_STATUS,
    ]
    ago = [6, 8, 2, 4, 0.5, 2, 0.5, 2, None, 0.5, 2, 0.5, 2]
    docs = docs_of(
        13, status=status, error=error, last_visit=[NOW - a * DAY if a is not None else 0 for a in ago]
    )
    assert too_recent(docs, cfg, NOW).tolist() == [
        True,
        False,
        True,
        False,
        True,
        False,
        True,
        False,
        False,
        True,
        False,
        True,
        False,
    ]  # a status with an error: failed


def test_a_page_refused_as_a_blocked_address_is_selected_again_at_once():
    # The refusal is our WIRE_BLOCKED_IPS's, not the site's failure: no minimum period, so a changed setting
    # fetches the page in the next cycle; a failure of the site still waits WIRE_MINPERIOD_UNSUCCESSFUL.
    cfg = config(WIRE_MINPERIOD_UNSUCCESSFUL=DAY)
    docs = docs_of(2, error=[FetchError.BLOCKED_IP, FetchError.REFUSED], last_visit=NOW - 1)
    assert too_recent(docs, cfg, NOW).tolist() == [False, True]
    assert eligible(docs, cfg, NOW).tolist() == [True, False]


def test_filters():
    cfg = config(
        WIRE_MAX_DEPTH_STATIC=3,
        WIRE_MAX_DEPTH_DYNAMIC=1,
        WIRE_MAX_ERRORS_DIFFERENT_BATCH=2,
        WIRE_MAX_URLS_PER_SITE=100,
    )
    flags = [
        0,
        DocFlag.DUPLICATE,
        DocFlag.MULTIMEDIA,
        DocFlag.ROBOTS_DISALLOWED,
        0,
        DocFlag.DYNAMIC,
        DocFlag.DYNAMIC,
        0,
        0,
        DocFlag.FRONT_PAGE | DocFlag.SEED,
    ]
    depth = [0, 0, 0, 0, 4, 1, 2, 3, 0, 0]
    errors = [0, 0, 0, 0, 0, 0, 0, 0, 2, 1]
    docs = docs_of(10, flags=flags, depth=depth, errors=errors)
    ok = eligible(docs, cfg, NOW)
    assert ok.tolist() == [True, False, False, False, False, True, False, True, False, True]
    assert eligible(docs, cfg, NOW, exclude=np.array([1, 10, 99])).tolist()[0] is False


def test_max_urls_per_site_keeps_the_first_discovered():
    sites = np.array([1, 2, 1, 1, 2, 3, 1, 2])
    assert within_site_limit(sites, 2).tolist() == [True, True, True, False, True, True, False, False]
    assert within_site_limit(sites, 10).all()


# -- quality ---------------------------------------------------------------------------------------------


def test_log_scale():
    scaled = log_scale(np.array([0, 1e-7, 1e-6, 1e-3, 1e-3]))
    assert scaled[0] == 0
    assert scaled[-1] == pytest.approx(1)
    assert 0 < scaled[1] < scaled[2] < scaled[3]
    assert log_scale(np.zeros(3)).tolist() == [0, 0, 0]


def test_queuesize_counts_pages_left_in_the_site():
    sites = np.array([1, 1, 1, 2, 2, 3])
    ok = np.array([True, True, False, True, True, True])
    visited = np.array([False, True, False, False, False, True])
    assert pages_to_download(sites, ok, visited).tolist() == [1, 1, 1, 2, 2, 0]


def test_quality_combines_normalised_scores():
    docs = docs_of(4, depth=[0, 1, 3, 0], flags=[0, DocFlag.DYNAMIC, 0, DocFlag.FRONT_PAGE])
    pagerank = np.array([0.1, 0.4, 0.0, 0.5])
    weights = {"pagerank": 1, "depth": 1, "static": 2, "hub": 0}
    quality = intrinsic_quality(docs, weights, {"pagerank": pagerank}, now=NOW, front_page_boost=2.0)
    expected = (log_scale(pagerank) + 1 / (1 + docs["depth"]) + 2 * np.array([1, 0, 1, 1])) / 4
    expected[3] *= 2
    np.testing.assert_allclose(quality, expected, rtol=1e-6)
    assert quality.dtype == np.float32
    with pytest.raises(ValueError, match="authority"):
        intrinsic_quality(docs, {"authority": 1}, {}, now=NOW)


def test_default_weights_let_depth_decide_near_ties_of_pagerank_only():
    # PageRank from 1e-6 to 1e-2: a 5 % gap is a near-tie, a 3× gap is not.
    docs = docs_of(5, depth=[1, 1, 2, 4, 5])
    pagerank = np.array([1e-6, 1e-2, 1e-4, 1.05e-4, 3e-4])
    weights = config().score_weights
    quality = intrinsic_quality(
        docs, weights, {"pagerank": pagerank, "mirrors": np.zeros(5)}, now=NOW
    )  # no copies
    shallow, deeper_near_tie, deep_but_linked = quality[2:]
    assert shallow > deeper_near_tie  # depth breaks the near-tie
    assert deep_but_linked > shallow  # but does not outweigh three times the PageRank


def test_quality_age_and_random():
    docs = docs_of(3, last_visit=[NOW - 10 * DAY, NOW - 5 * DAY, 0])
    quality = intrinsic_quality(docs, {"static": 1}, {}, now=NOW, age_exponent=1.0)
    np.testing.assert_allclose(quality, [1, 0.5, 1])
    one = intrinsic_quality(docs, {"random": 1}, {}, now=NOW, rng=np.random.default_rng(1))
    two = intrinsic_quality(docs, {"random": 1}, {}, now=NOW, rng=np.random.default_rng(1))
    assert one.tolist() == two.tolist() and ((0 <= one) & (one < 1)).all()


# -- the batch -------------------------------------------------------------------------------------------


def greedy(profits, sites, candidates, size, samesite, count):
    """Reference: walk the pages by decreasing profit, taking those whose site is not full yet; a site is
    full at the largest cap c such that the sites with pages left would give at most size pages,
    Σ min(c, pages left), at least 1, and never more than samesite."""
    order = sorted(np.flatnonzero(candidates), key=lambda i: (-profits[i], i))
    taken, batches = set(), []
    for _ in range(count):
        left = Counter(sites[i] for i in order if i not in taken).values()
        fits = [c for c in range(1, samesite + 1) if sum(min(c, n) for n in left) <= size]
        cap = max(fits, default=1)
        per_site, batch = {}, []
        for i in order:
            if i in taken or per_site.get(sites[i], 0) >= cap:
                continue
            per_site[sites[i]] = per_site.get(sites[i], 0) + 1
            batch.append(i)
            if len(batch) == size:
                break
        if not batch:
            break
        taken.update(batch)
        batches.append(batch)
    return batches


@pytest.mark.parametrize("seed", range(10))
def test_selection_equals_the_greedy_reference(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    profits = np.round(rng.random(n), 2).astype(np.float32)  # rounded: many ties
    sites = rng.integers(1, 40, size=n).astype(np.uint32)
    candidates = rng.random(n) < 0.8
    size, samesite, count = int(rng.integers(1, 300)), int(rng.integers(1, 30)), int(rng.integers(1, 6))
    got = select_batches(profits, sites, candidates, size=size, samesite=samesite, count=count)
    assert [b.tolist() for b in got] == greedy(profits, sites, candidates, size, samesite, count)


def test_the_batch_spreads_over_the_sites():
    # Site 1 has the ten best pages; a batch of 6 from 3 sites takes 2 of each, not 6 of site 1.
    profits = np.concatenate([np.linspace(1, 0.9, 10), [0.5, 0.4, 0.3, 0.2]]).astype(np.float32)
    sites = np.array([1] * 10 + [2, 2, 3, 3])
    first, second = select_batches(profits, sites, np.ones(14, bool), size=6, samesite=500, count=2)
    assert first.tolist() == [0, 1, 10, 11, 12, 13]
    assert second.tolist() == [2, 3, 4, 5, 6, 7]  # one site left: the whole batch may be its pages


def test_a_larger_site_gets_more_of_the_batch():
    profits = np.linspace(1, 0.5, 16).astype(np.float32)
    sites = np.array([1] * 8 + [2] * 8)
    (batch,) = select_batches(
        profits, sites, np.ones(16, bool), size=8, samesite=500, site_weights=np.array([0, 10, 30.0])
    )  # indexed by site-id: known pages
    assert batch.tolist() == [0, 1, 8, 9, 10, 11, 12, 13]


def test_selection_caps_sites_and_runs_out():
    profits = np.array([0.9, 0.8, 0.7, 0.6, 0.5], dtype=np.float32)
    sites = np.array([1, 1, 1, 2, 2])
    batches = select_batches(profits, sites, np.ones(5, bool), size=10, samesite=2, count=3)
    assert [b.tolist() for b in batches] == [[0, 1, 3, 4], [2]]
    assert select_batches(profits, sites, np.zeros(5, bool), size=3, samesite=2) == []


def test_pages_of_a_site_whose_robots_txt_is_unreachable_wait_for_its_retry():
    from wirescrapy.collection.metadata import DOCUMENT_DTYPE, SITE_DTYPE, RobotsState
    from wirescrapy.manager import pages_of_closed_sites

    docs = np.zeros(5, DOCUMENT_DTYPE)
    docs["siteid"] = [1, 2, 2, 3, 2]
    sites = np.zeros(4, SITE_DTYPE)
    sites["robots_state"][1:] = [RobotsState.VALID, RobotsState.UNREACHABLE, RobotsState.UNREACHABLE]
    sites["robots_fetched"][1:] = [1000.0, 1000.0, 1000.0 - 86_400]
    config = SimpleNamespace(robots_txt_invalid_period=86_400)
    assert pages_of_closed_sites(docs, sites, config, now=2000.0).tolist() == [2, 3, 5]  # site 3: due again
    sites["robots_state"][2] = RobotsState.MISSING
    assert pages_of_closed_sites(docs, sites, config, now=2000.0).tolist() == []
