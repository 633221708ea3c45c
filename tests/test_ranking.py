"""Link analysis against networkx: PageRank, HITS, weighted link rank, site rank."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy.sparse import csr_matrix

from wirescrapy.manager import _product, ranking
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


def test_link_matrix_and_its_transpose_equal_scipys():
    rng = np.random.default_rng(4)
    pages, links = 3000, 40_000
    edges = rng.integers(1, pages + 1, size=(links, 2))
    edges[::50, 1] = edges[::50, 0]  # self-links
    counts = counts_matrix(pages, edges)
    graph = link_matrix(counts)
    rows = np.repeat(np.arange(pages + 1), np.diff(counts.indptr))
    kept = counts.indices != rows
    expected = csr_matrix(
        (np.ones(kept.sum(), np.float32), (rows[kept], counts.indices[kept])), shape=counts.shape
    )
    assert np.array_equal(graph.indptr, expected.indptr) and np.array_equal(graph.indices, expected.indices)
    assert (graph.data == 1).all()
    back, reference = transpose(graph), graph.T.tocsr()
    assert back.shape == reference.shape and back.indices.dtype == reference.indices.dtype
    assert np.array_equal(back.indptr, reference.indptr) and np.array_equal(back.indices, reference.indices)
    assert (back.data == 1).all() and len(back.data) == back.nnz
    # The kernels with 64-bit indices, which only graphs of 2^31 links get from link_matrix.
    wide = counts.indptr.astype(np.int64), counts.indices.astype(np.int64)
    indptr, indices = np.empty(pages + 2, np.int64), np.empty(counts.nnz, np.int64)
    assert _product.without_diagonal(*wide, indptr, indices) == graph.nnz
    assert np.array_equal(indptr, graph.indptr) and np.array_equal(indices[: graph.nnz], graph.indices)
    back_indptr, back_indices = np.empty_like(indptr), np.empty(graph.nnz, np.int64)
    _product.transpose(indptr, indices[: graph.nnz].copy(), back_indptr, back_indices)
    assert np.array_equal(back_indptr, back.indptr) and np.array_equal(back_indices, back.indices)
    # A weighted matrix is transposed with its values (by scipy).
    weighted = csr_matrix((rng.random(graph.nnz), graph.indices, graph.indptr), shape=graph.shape)
    assert (transpose(weighted).toarray() == weighted.toarray().T).all()
    # Without a single link, and with nothing but self-links.
    assert transpose(link_matrix(counts_matrix(5, []))).nnz == 0
    assert link_matrix(counts_matrix(3, [[1, 1], [2, 2]])).nnz == 0


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


def large_graph(pages=40_000, links=400_000, seed=8) -> csr_matrix:
    """A graph big enough that the products split their rows among threads, with a few heavy rows."""
    rng = np.random.default_rng(seed)
    sources = rng.integers(1, pages + 1, links)
    targets = np.minimum(np.floor(np.exp(rng.random(links) * np.log(pages))).astype(np.int64), pages)
    targets[: links // 10] = 7  # one page linked from everywhere: a long row of the transposed graph
    return link_matrix(counts_matrix(pages, np.stack([sources, targets], axis=1)))


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_product_equals_scipy(index_type, dtype, weighted):
    back = transpose(large_graph())
    data = np.random.default_rng(9).random(back.nnz).astype(dtype) if weighted else None
    x = np.random.default_rng(10).random(back.shape[0]).astype(dtype)
    reference = csr_matrix(
        (back.data.astype(dtype) if data is None else data, back.indices, back.indptr), shape=back.shape
    ) @ x.astype(np.float64)
    indptr, indices = back.indptr.astype(index_type), back.indices.astype(index_type)
    results, totals = [], []
    for threads in (1, 2, 3):
        y = np.full(back.shape[0], np.nan, dtype=dtype)
        totals.append(_product.product(indptr, indices, data, x, y, threads))
        assert totals[-1] == pytest.approx(y.sum(dtype=np.float64), rel=1e-12)
        results.append(y)
    # The chunks the threads claim depend on the matrix alone: nothing depends on the number of threads.
    assert (results[0] == results[1]).all() and (results[0] == results[2]).all()
    assert totals[0] == totals[1] == totals[2]
    np.testing.assert_allclose(results[0], reference, rtol=1e-6 if dtype is np.float32 else 1e-13)


def test_product_refuses_mismatched_arrays():
    back = transpose(large_graph(100, 300))
    x = np.ones(back.shape[0], np.float32)
    with pytest.raises(TypeError, match="x: expected a contiguous 1-d array of float32"):
        _product.product(back.indptr, back.indices, None, x.astype(np.float64), np.empty_like(x), 1)
    with pytest.raises(TypeError, match="indices: expected a contiguous 1-d array of int32"):
        _product.product(back.indptr, back.indices.astype(np.int64), None, x, np.empty_like(x), 1)
    with pytest.raises(ValueError, match="data: expected"):
        _product.product(back.indptr, back.indices, x, x, np.empty_like(x), 1)


def test_broken_matrix_is_refused():
    graph = large_graph(100, 300)
    back = transpose(graph)
    back.indices[5] = 101
    with pytest.raises(ValueError, match="column indices outside 0..100"):
        pagerank(graph, Q, transposed=back)
    graph = large_graph(100, 300)
    graph.indptr[3] = graph.indptr[4] + 1
    with pytest.raises(ValueError, match="broken row pointers"):
        hits(graph, transposed=transpose(large_graph(100, 300)))


def scipy_pagerank(links: csr_matrix, iterations: int, dtype) -> np.ndarray:
    """PageRank as one scipy product per iteration with the weights in the matrix: the reference for the
    threaded kernel."""
    size = links.shape[0]
    back = transpose(links)
    out = np.asarray(links.sum(axis=1), dtype=np.float64).ravel()
    scale = np.divide(1 - Q, out, out=np.zeros(size), where=out > 0)
    vote = csr_matrix((scale[back.indices] * back.data, back.indices, back.indptr), shape=back.shape)
    x = np.full(size, 1 / (size - 1), dtype=dtype)
    x[0] = 0
    for _ in range(iterations):
        y = (vote @ x).astype(dtype)
        y[0] = 0
        y[1:] += (1 - y.sum(dtype=np.float64)) / (size - 1)
        x = y
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
def test_threaded_pagerank_and_hits_equal_scipy(dtype, threads, monkeypatch):
    monkeypatch.setattr(ranking, "THREADS", threads)
    graph = large_graph()
    ours = pagerank(graph, Q, 0.0, max_iterations=30, dtype=dtype)
    assert ours.iterations == 30 and ours.scores.dtype == dtype
    np.testing.assert_allclose(ours.scores, scipy_pagerank(graph, 30, dtype), rtol=0, atol=1e-8)
    weighted = graph.copy()
    weighted.data = np.random.default_rng(11).random(graph.nnz).astype(np.float32) + 0.5
    np.testing.assert_allclose(
        pagerank(weighted, Q, 0.0, max_iterations=30, dtype=dtype).scores,
        scipy_pagerank(weighted, 30, dtype),
        rtol=0,
        atol=1e-8,
    )
    hub = np.full(graph.shape[0], 1 / (graph.shape[0] - 1))
    hub[0] = 0
    back = transpose(graph)
    for _ in range(10):
        authority = back @ hub
        authority /= authority.sum()
        hub = graph @ authority
        hub /= hub.sum()
    result = hits(graph, 0.0, max_iterations=10, dtype=dtype)
    np.testing.assert_allclose(result.hub, hub, rtol=0, atol=1e-8)
    np.testing.assert_allclose(result.authority, authority, rtol=0, atol=1e-8)
