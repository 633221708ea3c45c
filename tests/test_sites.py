"""Site-level estimates of the manager: pages per site (Chao1) and each site's share of the PageRank."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scrapy.settings import Settings

import wirescrapy.manager.sites as site_estimates
from tests.test_ranking import Q, counts_matrix
from wirescrapy.collection.metadata import DOCUMENT_DTYPE
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.manager import batch_site_weights, plan
from wirescrapy.manager.planner import SiteState, plan_batches, select_batches, site_catchup, site_growth
from wirescrapy.manager.sites import (
    LEFT_GUARD,
    pages_left,
    site_links,
    site_pagerank,
    site_shares,
    site_sizes,
    unseen_found,
)


def test_chao1_counts_pages_linked_once_and_twice_from_their_own_site():
    # Site 1: pages 1..8, 1 and 2 fetched. Site 2: pages 9..10, 9 fetched.
    site_of = np.array([0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2])
    edges = [
        (1, 3),
        (1, 4),
        (1, 5),
        (1, 6),
        (2, 3),
        (2, 4),
        (2, 7),  # 3, 4 twice; 5, 6, 7 once
        (1, 1),
        (2, 2),
        (1, 1),  # links to itself: no capture
        (1, 9),
        (2, 10),
        (9, 10),
        (9, 3),
        (9, 3),
    ]  # across sites: not counted for either
    links = counts_matrix(10, edges)
    captures = site_links(links, site_of).captures
    assert captures.tolist() == [0, 0, 0, 2, 2, 1, 1, 1, 0, 0, 1]
    sizes = site_sizes(site_of, captures)
    # Site 1: D = 8 known, f1 = 3 (5, 6, 7), f2 = 2 (3, 4): 8 + 3 * 2 / (2 * 3) = 9.
    # Site 2: D = 2, f1 = 1 (10 from 9), f2 = 0: 2 + 1 * 0 / 2 = 2.
    assert sizes.tolist() == [0.0, 9.0, 2.0]
    assert site_sizes(site_of, captures, sites=4).tolist() == [0.0, 9.0, 2.0, 0.0, 0.0]


def test_chao1_sees_a_large_site_behind_few_known_pages():
    # Two sites with 12 known pages each after fetching 4: the links of the first keep pointing to the
    # same pages (nearly all of it is known), those of the second each to a new page (much is unseen).
    site_of = np.array([0] + [1] * 12 + [2] * 12)
    small = [(page, target) for page in (1, 2, 3, 4) for target in range(5, 13)]
    large = [(13 + k, 17 + 2 * k + j) for k in range(4) for j in range(2)]
    sizes = site_sizes(site_of, site_links(counts_matrix(24, small + large), site_of).captures)
    assert sizes[1] == 12  # f1 = 0
    assert sizes[2] == 12 + 8 * 7 / 2  # f1 = 8, f2 = 0


def test_estimates_do_not_depend_on_how_the_links_are_chunked(monkeypatch):
    rng = np.random.default_rng(3)
    n = 400
    site_of = np.concatenate([[0], np.sort(rng.integers(1, 9, size=n))])
    links = counts_matrix(n, rng.integers(1, n + 1, size=(3000, 2)))
    whole = site_links(links, site_of)
    monkeypatch.setattr(site_estimates, "CHUNK_LINKS", 37)
    chunked = site_links(links, site_of)
    assert np.array_equal(whole.captures, chunked.captures)
    assert np.array_equal(whole.graph.toarray(), chunked.graph.toarray())
    assert whole.graph.sum() == (links.nnz - (links.diagonal() > 0).sum())  # every link but self-links, once
    rows, columns = links.nonzero()
    expected = np.zeros((9, 9))
    np.add.at(expected, (site_of[rows[rows != columns]], site_of[columns[rows != columns]]), 1)
    assert np.array_equal(whole.graph.toarray(), expected)


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_site_links_skip_counts_of_zero_and_read_either_index_width(index_type):
    rng = np.random.default_rng(5)
    n = 500
    site_of = np.concatenate([[0], rng.integers(1, 12, size=n)])  # sites not in doc-id order
    links = counts_matrix(n, rng.integers(1, n + 1, size=(4000, 2)))
    links.data[::7] = 0  # stored counts of 0: no link
    links.indptr, links.indices = links.indptr.astype(index_type), links.indices.astype(index_type)
    read = site_links(links, site_of, 13)
    rows, columns = links.nonzero()
    linked = rows != columns
    rows, columns = rows[linked], columns[linked]
    expected = np.zeros((14, 14))
    np.add.at(expected, (site_of[rows], site_of[columns]), 1)
    assert np.array_equal(read.graph.toarray(), expected)
    assert read.graph.has_canonical_format and (read.graph.data > 0).all()
    inside = site_of[rows] == site_of[columns]
    assert np.array_equal(read.captures, np.bincount(columns[inside], minlength=n + 1))
    with pytest.raises(ValueError, match="site-ids must lie in 0..5"):
        site_links(links, site_of, 5)


def lumpable_web(seed: int):
    """A web where every page of a site has the same number of links into each site (targets drawn
    at random), so the walk over sites is exactly the page-level walk summed per site."""
    rng = np.random.default_rng(seed)
    sizes = [30, 5, 12, 60, 8]
    per_site_links = rng.integers(0, 4, size=(len(sizes), len(sizes)))
    np.fill_diagonal(per_site_links, rng.integers(2, 6, size=len(sizes)))
    first = np.concatenate([[1], 1 + np.cumsum(sizes)])
    site_of = np.zeros(first[-1], dtype=np.int64)
    edges = []
    for s, size in enumerate(sizes):
        site_of[first[s] : first[s + 1]] = s + 1
        for page in range(first[s], first[s + 1]):
            for t, count in enumerate(per_site_links[s]):
                choices = [p for p in range(first[t], first[t + 1]) if p != page]
                edges += [(page, int(target)) for target in rng.choice(choices, size=count, replace=False)]
    return first[-1] - 1, site_of, np.array(edges), np.array([0, *sizes], dtype=np.float64)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_site_pagerank_is_the_page_rank_summed_per_site_on_a_lumpable_web(seed):
    n, site_of, edges, sizes = lumpable_web(seed)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(1, n + 1))
    graph.add_edges_from(map(tuple, edges.tolist()))
    page_rank = nx.pagerank(graph, alpha=1 - Q, tol=1e-13, max_iter=1000)
    per_site = np.zeros(len(sizes))
    for page, value in page_rank.items():
        per_site[site_of[page]] += value
    shares = site_pagerank(site_links(counts_matrix(n, edges), site_of).graph, sizes, Q, max_error=1e-13)
    assert shares[0] == 0
    assert shares.sum() == pytest.approx(1.0, abs=1e-12)
    assert shares == pytest.approx(per_site, abs=1e-9)


def test_site_pagerank_against_a_dense_solution_with_a_site_without_links():
    rng = np.random.default_rng(11)
    n = 200
    site_of = np.concatenate([[0], rng.integers(1, 7, size=n)])
    edges = rng.integers(1, n + 1, size=(900, 2))
    edges = edges[site_of[edges[:, 0]] != 6]  # site 6 has no fetched page with links
    sizes = np.array([0, 10, 50, 20, 5, 40, 25.0])
    shares = site_pagerank(site_links(counts_matrix(n, edges), site_of, 6).graph, sizes, Q, max_error=1e-14)
    # Dense: x = Q j + (1 - Q) (Pᵀ x + (x of sites without links) j), Σ x = 1; P from pairs of pages.
    links = counts_matrix(n, edges)
    counts = np.zeros((7, 7))
    for a in range(1, n + 1):
        for b in links.indices[links.indptr[a] : links.indptr[a + 1]]:
            if a != b:
                counts[site_of[a], site_of[b]] += 1
    out = counts.sum(axis=1)
    jump = sizes / sizes.sum()
    transition = np.where(out[:, None] > 0, counts / np.maximum(out[:, None], 1), jump[None, :])
    transition[0] = jump  # site 0 holds nothing anyway
    system = np.eye(7) - (1 - Q) * transition.T
    dense = np.linalg.solve(system[1:, 1:], Q * jump[1:])
    assert shares[1:] == pytest.approx(dense / dense.sum(), abs=1e-10)
    assert shares[6] > 0


def test_site_estimates_check_their_inputs():
    links = counts_matrix(3, [(1, 2)])
    site_of = np.array([0, 1, 1, 2])
    graph = site_links(links, site_of).graph
    with pytest.raises(ValueError, match="q must be"):
        site_pagerank(graph, np.array([0, 1, 1.0]), q=0)
    with pytest.raises(ValueError, match="sizes"):
        site_pagerank(graph, np.array([0, 0, 0.0]))
    with pytest.raises(ValueError, match="graph must be"):
        site_pagerank(graph, np.array([0, 1, 1, 1.0]))
    with pytest.raises(ValueError, match="site_of"):
        site_links(links, np.array([0, 1]))
    assert site_shares(links, site_of).sum() == pytest.approx(1.0)


# The batch's split among sites is what these tests are about: the weights without the score that needs the
# URLs' paths (mirrors), which these graphs have none of.
SPLIT_WEIGHTS = {"pagerank": 4, "depth": 1}


def config(**settings) -> WireConfig:
    return WireConfig.from_settings(
        Settings({**default_settings(), "WIRE_SCORE_WEIGHTS": SPLIT_WEIGHTS, **settings})
    )


def two_site_crawl():
    """Site 1: a home page and one more page fetched, whose 12 links each point to new pages (a large
    site, mostly unseen); site 2: a home page and 12 pages that all link to each other (all of it seen)."""
    docs = np.zeros(38, DOCUMENT_DTYPE)
    docs["docid"] = np.arange(1, 39)
    docs["siteid"] = [1] * 25 + [2] * 13
    docs["depth"] = [0] + [1] * 12 + [2] * 12 + [0] + [1] * 12
    fetched = [1, 2, 26, 27, 28, 29]
    docs["visits"][np.array(fetched) - 1] = 1
    docs["status"][np.array(fetched) - 1] = 200
    docs["first_visit"][np.array(fetched) - 1] = docs["last_visit"][np.array(fetched) - 1] = 1000.0
    edges = [(1, page) for page in range(2, 14)] + [(2, page) for page in range(14, 26)]
    edges += [(source, target) for source in (26, 27, 28, 29) for target in range(27, 39) if target != source]
    return docs, counts_matrix(38, edges)


def test_a_site_is_valued_by_its_estimated_share_of_the_pagerank():
    docs, links = two_site_crawl()
    site_of = np.concatenate([[0], docs["siteid"]])
    values = batch_site_weights(links, site_of, 2, config())
    assert values[1] > values[2] > 0  # Chao1: site 1 has 24 pages seen once; site 2 none once
    assert values[1:].sum() == pytest.approx(1.0)
    # No page known yet: every site alike, so the planner always has a value to share a batch by.
    assert batch_site_weights(csr_matrix((1, 1)), np.zeros(1, np.int64), 2, config()).tolist() == [1.0] * 3


def test_found_unseen_pages_are_those_the_known_pages_left_can_reveal():
    # Site 1: 24 pages linked once (f0 = 24 * 23 / 2 = 276 unseen under Chao) and 23 known pages left to
    # fetch, expected to reveal 276 (1 - (1 - 24 / (2 * 276 + 24))^23) = 172 of them; site 2 has no page
    # linked once: its estimate is the same either way, so site 1's share is smaller with the pages fetched.
    docs, links = two_site_crawl()
    site_of = np.concatenate([[0], docs["siteid"]])
    visited = docs["visits"] > 0
    chao = batch_site_weights(links, site_of, 2, config())
    found = batch_site_weights(links, site_of, 2, config(), visited)
    assert found[1] / found[2] < chao[1] / chao[2]
    assert found[1] > found[2]
    sizes = site_estimates.site_sizes(
        site_of, site_estimates.site_links(links, site_of).captures, 2, np.concatenate([[False], visited])
    )
    assert sizes[1] == pytest.approx(25 + 276 * (1 - (1 - 24 / (2 * 276 + 24)) ** 23))
    assert sizes[2] == 13


def test_a_batch_goes_mostly_to_the_site_estimated_larger():
    docs, links = two_site_crawl()
    # The split alone: with both sites at one wait, the time share would give each what it fetches in the
    # batch's time (test_timeshare.py); at a wait of 0 no site is limited by time.
    result = plan(
        docs,
        links,
        config(WIRE_BATCH_SIZE=10, WIRE_BATCH_SITE_GROWTH=0, WIRE_WAIT_NORMAL=0, WIRE_WAIT_LARGE_SITE=0),
        2000.0,
        count=1,
    )
    batch = result.batches[0]
    per_site = np.bincount(docs["siteid"][batch - 1], minlength=3)
    assert per_site[1] > per_site[2] >= 1
    assert per_site.sum() == 10
    assert "site shares" in result.timings


def test_the_explore_setting_shares_a_batch_by_the_sites_known_pages_left():
    """WIRE_BATCH_EXPLORE 1: the whole batch by the sites' known pages not fetched yet (23 and 9), whatever
    their value; 0: by value alone, where site 1 is estimated larger and behind its share."""
    docs, links = two_site_crawl()

    def per_site(explore):
        cfg = config(
            WIRE_BATCH_SIZE=10,
            WIRE_BATCH_SITE_GROWTH=0,
            WIRE_WAIT_NORMAL=0,
            WIRE_WAIT_LARGE_SITE=0,
            WIRE_BATCH_EXPLORE=explore,
        )
        return np.bincount(
            docs["siteid"][plan(docs, links, cfg, 2000.0, count=1).batches[0] - 1], minlength=3
        )

    assert per_site(0).tolist() == [0, 9, 1]
    assert per_site(1).tolist() == [0, 7, 3]


def test_a_site_gets_no_more_of_a_batch_than_its_fetched_pages_allow():
    """WIRE_BATCH_SITE_GROWTH 2: site 1 (2 pages fetched) gets at most 4, site 2 (4 fetched) at most 8,
    and the slots neither may take stay empty: the batch comes out short."""
    docs, links = two_site_crawl()
    result = plan(docs, links, config(WIRE_BATCH_SIZE=30, WIRE_BATCH_SITE_GROWTH=2), 2000.0, count=1)
    per_site = np.bincount(docs["siteid"][result.batches[0] - 1], minlength=3)
    assert per_site.tolist() == [0, 4, 8]
    unlimited = plan(docs, links, config(WIRE_BATCH_SIZE=30, WIRE_BATCH_SITE_GROWTH=0), 2000.0, count=1)
    assert len(unlimited.batches[0]) == 30


def test_an_empty_collection_plans_no_batch():
    docs = np.zeros(0, DOCUMENT_DTYPE)
    assert plan(docs, csr_matrix((1, 1), dtype=np.float32), config(), 2000.0, count=1).batches == []


def test_catchup_weights_are_each_site_s_shortfall_plus_a_quarter_of_its_share():
    # Shares 0.5 / 0.3 / 0.2 (weights need not sum to 1); fetched 60, 20, 20 of 100; batch of 20: targets
    # 60, 36, 24 of 120, shortfalls 0 (site 1 is at its part), 16 (site 2, but only 10 pages left to
    # fetch) and 4; plus a quarter of each share of the batch: 2.5, 1.5, 1.
    site_ids = np.array([1] * 70 + [2] * 30 + [3] * 30)
    visited = np.array([True] * 60 + [False] * 10 + [True] * 20 + [False] * 10 + [True] * 20 + [False] * 10)
    weights = site_catchup(np.array([0.0, 5.0, 3.0, 2.0]), site_ids, visited, ~visited, 20)
    assert weights.tolist() == pytest.approx([0.0, 2.5, 11.5, 5.0])
    # Nothing fetched yet: the shortfall is the share of the batch itself, the split unchanged.
    fresh = site_catchup(
        np.array([0.0, 5.0, 3.0, 2.0]), site_ids, np.zeros(130, dtype=bool), np.ones(130, bool), 20
    )
    assert fresh[1:] == pytest.approx([12.5, 7.5, 5.0])
    # Every page fetched (revisits only): nothing to catch up, the split by the share.
    done = site_catchup(np.array([0.0, 5.0, 3.0, 2.0]), site_ids, np.ones(130, bool), np.zeros(130, bool), 20)
    assert done[1:] == pytest.approx([2.5, 1.5, 1.0])


def test_catchup_gives_a_batch_to_the_site_the_earlier_batches_shortchanged():
    """Two sites valued by their known pages (25 and 13); site 1 got 2 pages so far, site 2 four. Shared by
    the values alone, a batch of 6 goes 4 / 2; caught up, mostly to site 1."""
    docs, _ = two_site_crawl()
    site_ids = docs["siteid"].astype(np.int64)
    visited = docs["visits"] > 0
    profits = np.ones(len(docs), dtype=np.float32)
    values = np.array([0.0, 25.0, 13.0])

    def per_site(batch):
        return np.bincount(site_ids[batch], minlength=3).tolist()

    (plain,) = select_batches(profits, site_ids, ~visited, size=6, samesite=500, site_weights=values)
    assert per_site(plain) == [0, 4, 2]
    # Fetched 2 and 4 of 6, 12 after the batch: targets 7.9 and 4.1, shortfalls 5.9 and 0.1, plus a quarter
    # of each share of the batch (1.0, 0.5). No wait: the sites' time does not limit them.
    state = SiteState(values, None, np.zeros(3))
    caught = plan_batches(profits, site_ids, ~visited, visited, state, size=6, samesite=500)
    assert per_site(caught.batches[0]) == [0, 5, 1]
    assert caught.critical is None


def test_the_growth_limit_lets_a_site_s_start_pages_into_its_first_batch():
    """A site with nothing fetched gets 1 page a batch, or all its pages the crawl was told to start from
    (seeds, pages added at depth 0) not fetched yet: a seed list of many pages of one site is harvested in
    one batch."""
    site_ids = np.array([1, 1, 1, 1, 2, 2, 2])
    visited = np.array([False, False, False, False, True, False, False])
    start = np.array([True, True, True, False, True, False, False])
    assert site_growth(site_ids, visited, 4, 2).tolist() == [1, 1, 4]
    assert site_growth(site_ids, visited, 4, 2, start=start).tolist() == [1, 3, 4]
    assert site_growth(site_ids, visited, 0, 2, start=start) is None


def test_unseen_found_is_none_once_a_site_has_no_known_page_left_to_fetch():
    # Site 1 as in the Chao test: f0 = 1 unseen (f1 = 3, f2 = 2), 2 of its 8 known pages fetched.
    unseen = np.array([0.0, 1.0, 4.0])
    once, samples = np.array([0, 3, 3]), np.array([0, 2, 5])
    assert unseen_found(unseen, once, samples, np.array([0, 0, 0])).tolist() == [0.0, 0.0, 0.0]
    # m more samples: f0 (1 - (1 - f1 / (n f0 + f1))^m) (Shen, Chao & Lin 2003).
    found = unseen_found(unseen, once, samples, np.array([0, 6, 1]))
    assert found[1] == pytest.approx(1 - (1 - 3 / (2 + 3)) ** 6)
    assert found[2] == pytest.approx(4 * (3 / (20 + 3)))
    assert unseen_found(unseen, once, samples, np.array([0, 10_000, 10_000])) == pytest.approx(
        [0.0, 1.0, 4.0]
    )


def test_site_sizes_with_fetched_pages_count_only_what_the_pages_left_can_reveal():
    # Site 1 (pages 1..8, 1 and 2 fetched; f1 = 3, f2 = 2): 6 known pages left; site 2 (9, 10): all fetched.
    site_of = np.array([0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2])
    edges = [(1, 3), (1, 4), (1, 5), (1, 6), (2, 3), (2, 4), (2, 7), (9, 10), (10, 9), (9, 3)]
    captures = site_links(counts_matrix(10, edges), site_of).captures
    fetched = np.array([False, True, True, False, False, False, False, False, False, True, True])
    sizes = site_sizes(site_of, captures, fetched=fetched)
    assert sizes[1] == pytest.approx(8 + 1 * (1 - (1 - 3 / (2 * 1 + 3)) ** 6))
    assert sizes[2] == 2  # nothing left to fetch, nothing more to find
    # Without: Chao's f0 whole, and site 2 (both pages linked once: f1 = 2, f2 = 0) looks half as large again.
    assert site_sizes(site_of, captures).tolist() == [0.0, 9.0, 3.0]


def test_pages_left_are_the_estimate_less_what_was_fetched_never_more_than_the_guard_allows():
    # Site 1 (pages 1..12, 1..4 fetched, linking 5..12 twice each: all seen): 8 left. Site 2 (13..36, 13..16
    # fetched, each linking five pages once): Chao's estimate leaps to 101 pages, the guard holds it at 48.
    site_of = np.array([0] + [1] * 12 + [2] * 24)
    edges = [(page, target) for page in (1, 2) for target in range(5, 13)]
    edges += [(12 + k, 16 + 5 * (k - 1) + j) for k in range(1, 5) for j in range(5)]
    links = counts_matrix(36, edges)
    visited = np.zeros(36, bool)
    visited[[0, 1, 2, 3, 12, 13, 14, 15]] = True
    captures = site_links(links, site_of).captures
    fetched = np.concatenate([[False], visited])
    assert site_sizes(site_of, captures, fetched=fetched)[2] > LEFT_GUARD * 24
    assert pages_left(links, site_of, visited).tolist() == [0.0, 8.0, LEFT_GUARD * 24 - 4]
    # The manager hands over the pass over the links its site shares read: the same estimate.
    assert pages_left(links, site_of, visited, read=site_links(links, site_of)).tolist() == [0.0, 8.0, 44.0]
