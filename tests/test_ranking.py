"""Link analysis against networkx: PageRank, HITS, weighted link rank, site rank."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy.sparse import csr_matrix

from wirescrapy.manager.ranking import (
    hits,
    link_matrix,
    link_weights,
    pagerank,
    site_graph,
    siterank,
    transpose,
    wlrank,
)

Q = 0.15


def counts_matrix(n: int, edges) -> csr_matrix:
    """Link counts indexed by doc-id 1..n, as LinkGraph.to_csr gives them (repeats summed)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    matrix = csr_matrix((np.ones(len(edges), np.float32), (edges[:, 0], edges[:, 1])), shape=(n + 1, n + 1))
    matrix.sum_duplicates()
    return matrix


def digraph(n: int, edges, multi=False, self_loops=True):
    graph = nx.MultiDiGraph() if multi else nx.DiGraph()
    graph.add_nodes_from(range(1, n + 1))
    graph.add_edges_from((int(a), int(b)) for a, b in edges if self_loops or a != b)
    return graph


def as_array(n: int, scores: dict) -> np.ndarray:
    out = np.zeros(n + 1)
    for node, value in scores.items():
        out[node] = value
    return out


def random_edges(n, m, seed):
    return np.random.default_rng(seed).integers(1, n + 1, size=(m, 2))


def graphs():
    rng = np.random.default_rng(7)
    dangling = random_edges(300, 900, 2)
    dangling = dangling[dangling[:, 0] % 3 != 0]  # a third of the pages have no links
    loops = np.concatenate([random_edges(100, 400, 3), [[5, 5], [6, 6], [6, 6], [7, 8], [7, 8], [7, 8]]])
    # Two components of different sizes and isolated pages (91..100).
    small = rng.integers(61, 91, size=(60, 2))
    large = rng.integers(1, 61, size=(300, 2))
    return {
        "random": (200, random_edges(200, 1500, 1)),
        "dangling": (300, dangling),
        "self-loops and repeats": (100, loops),
        "disconnected": (100, np.concatenate([large, small])),
    }


GRAPHS = graphs()


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pagerank_equals_networkx(name, dtype):
    n, edges = GRAPHS[name]
    reference = nx.pagerank(digraph(n, edges, self_loops=False), alpha=1 - Q, tol=1e-14, max_iter=10_000)
    result = pagerank(
        link_matrix(counts_matrix(n, edges)), Q, 1e-9 if dtype is np.float64 else 1e-7, dtype=dtype
    )
    assert result.scores.dtype == dtype
    assert result.scores[0] == 0
    assert result.scores.sum() == pytest.approx(1, abs=1e-6)
    np.testing.assert_allclose(result.scores, as_array(n, reference), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", GRAPHS)
def test_pagerank_of_counts_equals_multidigraph(name):
    """Given counts (repeats add, self-links kept) the core computes what networkx does on a MultiDiGraph."""
    n, edges = GRAPHS[name]
    reference = nx.pagerank(digraph(n, edges, multi=True), alpha=1 - Q, tol=1e-14, max_iter=10_000)
    result = pagerank(counts_matrix(n, edges), Q, 1e-10, dtype=np.float64)
    np.testing.assert_allclose(result.scores, as_array(n, reference), rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", GRAPHS)
def test_pagerank_with_a_jump_vector_equals_personalized_networkx(name):
    """The random jump and the rank of dangling pages go where ``jump`` says (networkx's personalization and
    dangling), as the walk over sites jumps (``sites.site_pagerank``)."""
    n, edges = GRAPHS[name]
    jump = np.random.default_rng(4).random(n + 1)
    jump[np.random.default_rng(5).random(n + 1) < 0.2] = 0  # some pages are never jumped to
    weights = {page: float(jump[page]) for page in range(1, n + 1)}
    reference = nx.pagerank(
        digraph(n, edges, multi=True),
        alpha=1 - Q,
        personalization=weights,
        dangling=weights,
        tol=1e-14,
        max_iter=10_000,
    )
    result = pagerank(counts_matrix(n, edges), Q, 1e-12, jump=jump, dtype=np.float64)
    assert result.scores[0] == 0 and result.scores.sum() == pytest.approx(1, abs=1e-12)
    np.testing.assert_allclose(result.scores, as_array(n, reference), rtol=0, atol=1e-9)
    uniform = pagerank(counts_matrix(n, edges), Q, 1e-12, dtype=np.float64).scores
    assert pagerank(counts_matrix(n, edges), Q, 1e-12, jump=np.ones(n + 1), dtype=np.float64).scores == (
        pytest.approx(uniform, abs=1e-11)
    )


def test_link_matrix_collapses_repeats_and_drops_self_links():
    matrix = link_matrix(counts_matrix(4, [[1, 2], [1, 2], [1, 1], [2, 3], [3, 3], [4, 1]]))
    assert matrix.dtype == np.float32
    assert sorted(zip(*matrix.nonzero())) == [(1, 2), (2, 3), (4, 1)]
    assert set(matrix.data) == {1.0}
    assert np.diff(matrix.indptr).tolist() == [0, 1, 1, 0, 1]
    # Lists as stored (repeats not merged yet) give the same graph.
    stored = csr_matrix(
        (np.ones(4, np.float32), np.array([2, 2, 1, 3]), np.array([0, 0, 3, 4, 4])), shape=(4, 4)
    )
    assert sorted(zip(*link_matrix(stored).nonzero())) == [(1, 2), (2, 3)]


def test_pagerank_warm_start_and_stall():
    n, edges = GRAPHS["random"]
    graph = link_matrix(counts_matrix(n, edges))
    cold = pagerank(graph, Q, 1e-7)
    start = cold.scores.copy()
    start[-5:] = 0  # pages new since the last run
    warm = pagerank(graph, Q, 1e-7, start=start)
    assert warm.iterations < cold.iterations
    np.testing.assert_allclose(warm.scores, cold.scores, atol=1e-6)
    # float32 cannot reach 1e-15: the iteration stops once the change stays at rounding level.
    stalled = pagerank(graph, Q, 1e-15)
    assert stalled.iterations < 200
    np.testing.assert_allclose(stalled.scores, cold.scores, atol=1e-6)


def test_pagerank_without_links_is_uniform():
    result = pagerank(counts_matrix(5, []), Q)
    np.testing.assert_allclose(result.scores, [0, 0.2, 0.2, 0.2, 0.2, 0.2], atol=1e-7)
    assert pagerank(csr_matrix((1, 1), dtype=np.float32)).scores.tolist() == [0]


@pytest.mark.parametrize("name", GRAPHS)
def test_hits_equals_networkx(name):
    n, edges = GRAPHS[name]
    hubs, authorities = nx.hits(digraph(n, edges, self_loops=False), max_iter=100_000, tol=1e-14)
    graph = link_matrix(counts_matrix(n, edges))
    for dtype, max_error in ((np.float64, 1e-12), (np.float32, 1e-7)):
        result = hits(graph, max_error, transposed=transpose(graph), dtype=dtype)
        assert result.hub.sum() == pytest.approx(1, abs=1e-6)
        assert result.authority.sum() == pytest.approx(1, abs=1e-6)
        np.testing.assert_allclose(result.hub, as_array(n, hubs), rtol=0, atol=1e-6)
        np.testing.assert_allclose(result.authority, as_array(n, authorities), rtol=0, atol=1e-6)


def test_hits_without_links():
    result = hits(counts_matrix(3, []))
    assert result.hub.tolist() == result.authority.tolist() == [0, 0, 0, 0]


def test_link_weights_follow_site_and_position():
    # Page 1 (site 1) links to 2 (site 1), 3 (site 2), 1 (itself), in that order.
    links = csr_matrix((np.ones(3, np.float32), np.array([2, 3, 1]), np.array([0, 0, 3, 3, 3])), shape=(4, 4))
    site_of = np.array([0, 1, 1, 2])
    weights = link_weights(links, site_of)
    np.testing.assert_allclose(weights, [1 + 0.5, 1 + 1 + 0.5 * (2 / 3), 0])
    with_anchor = link_weights(links, site_of, anchor_length=np.array([20, 0, 5]))
    np.testing.assert_allclose(with_anchor, [1 + 0.5 + 2, 1 + 1 + 0.5 * (2 / 3), 0])


def test_wlrank_equals_weighted_networkx():
    n, edges = GRAPHS["dangling"]
    order = np.random.default_rng(5).permutation(len(edges))
    edges = edges[order]
    sources = edges[:, 0]
    # Page order: the rows keep the edges' order within each source (a stable sort by source).
    edges = edges[np.argsort(sources, kind="stable")]
    indptr = np.zeros(n + 2, dtype=np.int64)
    np.cumsum(np.bincount(edges[:, 0], minlength=n + 1), out=indptr[1:])
    links = csr_matrix((np.ones(len(edges), np.float32), edges[:, 1], indptr), shape=(n + 1, n + 1))
    site_of = np.concatenate([[0], np.arange(n) // 10 + 1])
    weights = link_weights(links, site_of)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(1, n + 1))
    for (a, b), w in zip(edges, weights):
        if graph.has_edge(a, b):
            graph[a][b]["weight"] += float(w)
        else:
            graph.add_edge(int(a), int(b), weight=float(w))
    reference = nx.pagerank(graph, alpha=1 - Q, tol=1e-14, max_iter=10_000, weight="weight")
    result = wlrank(links, site_of, Q, 1e-10, dtype=np.float64)
    np.testing.assert_allclose(result.scores, as_array(n, reference), rtol=0, atol=1e-9)
    assert not np.allclose(result.scores, pagerank(links, Q, 1e-10, dtype=np.float64).scores, atol=1e-4)


def test_site_graph_and_siterank():
    # Sites: 1 = docs 1-2, 2 = docs 3-4, 3 = doc 5.
    site_of = np.array([0, 1, 1, 2, 2, 3])
    links = counts_matrix(5, [[1, 2], [1, 3], [2, 4], [3, 1], [4, 4], [5, 1], [5, 2]])
    sites = site_graph(links, site_of)
    assert sites.shape == (4, 4)
    assert sorted(zip(*sites.nonzero())) == [(1, 2), (2, 1), (3, 1)]
    assert set(sites.data) == {1.0}
    reference = nx.pagerank(digraph(3, [(1, 2), (2, 1), (3, 1)]), alpha=1 - Q, tol=1e-14, max_iter=10_000)
    result = siterank(links, site_of, Q, 1e-10, dtype=np.float64)
    np.testing.assert_allclose(result.scores, as_array(3, reference), atol=1e-9)
