"""Link analysis for the manager: PageRank, HITS, weighted link rank and site rank (thesis §7.2.1, §7.3.4).

Graphs are scipy CSR matrices indexed by doc-id (or by site-id for the graph of sites), as
``LinkGraph.to_csr`` returns them: entry (i, j) is the weight of the links from i to j, and row and column 0
are no document. Every score vector has one entry per index, entry 0 always 0, and the N = size − 1 real
nodes share the scores.

What the graph holds
    ``link_matrix`` turns the link store's counts into the graph PageRank and HITS use: a link repeated in
    a page counts once (Γ⁺(p) in Algorithm 1 is a set of pages; networkx's ``DiGraph`` collapses repeats
    the same way) and a page's links to itself are dropped (a "top of page" or "home" link on the home page
    is navigation, not a vote). The score functions take any non-negative weights: given a matrix of
    counts they compute what networkx computes on a ``MultiDiGraph``, whose repeated edges add up.

PageRank (``pagerank``)
    Algorithm 1 of the thesis: forward links only, q the probability of a random jump (WIRE's dampening,
    networkx's ``alpha = 1 − q``):  PR(p) = q/N + (1 − q) Σ_{r → p} PR(r) w(r, p) / W(r), with W(r) the
    weight of r's links. The rank of a page without links (dangling: most are pages not downloaded yet) is
    spread over all pages, as networkx does; Algorithm 1 lets it leak away, but spreading keeps Σ PR = 1, so
    the scores of two cycles are comparable. Iterations stop when the L1 change of one is below
    ``max_error`` (networkx stops at N × tol, which at ten million pages is no test at all). With a
    ``jump`` vector (personalized PageRank, networkx's ``personalization`` and ``dangling``), the random
    jump and the rank of dangling nodes go to the nodes in proportion to it instead of evenly: the walk
    over sites of ``sites.site_pagerank`` jumps so.

HITS (``hits``)
    Kleinberg's hubs and authorities by power iteration from uniform hubs: a = Aᵀh, h = A a, each
    normalised to sum 1 (networkx's normalisation) at every step; stops when the L1 change of hubs plus
    authorities is below ``max_error``. networkx finds the same vectors as the top singular vectors of A,
    so the two agree whenever the top singular value is simple (if it is not, HITS itself is ambiguous).

Weighted link rank (``wlrank``, Baeza-Yates & Davis 2004)
    PageRank where a link's vote is weighted by its attributes, W(j, i) = c + T(j, i) + AL(j, i) +
    RP(j, i). The link store keeps targets only, in page order, so here: c = 1; T, which in the paper
    depends on the tag around the link, is 1 for a link to another site and 0 inside the site (a link
    across sites is a recommendation, one inside is mostly navigation); RP = 0.5 × (1 − k/m) for the k-th
    of m links of the page (0-based: links earlier in the page weigh more); AL = anchor length / 10 when
    the caller has anchor lengths (``anchor_length``, one per link). A repeated link counts with the
    weights of all its occurrences; self-links weigh 0.

Site rank (``siterank``)
    PageRank on the graph of sites: site s links to site t when any page of s links to a page of t
    (repeats collapse, links inside a site are dropped).

OPIC, a score that replays the crawl instead of iterating, is in ``opic.py``.

Speed: each iteration is one CSR × vector product over the *transposed* graph (a gather: y[i] sums over
i's back-links), which is built once (``transpose``) and shared by PageRank and HITS. The products run on
every core, in C (``_product.c``): the rows are split among threads, and the vector passes that close an
iteration (the spread of what the votes did not carry, the L1 change, the next input) are one pass each.
The graph of ``link_matrix`` costs no values: every entry is 1, and PageRank folds 1/W(r) and (1 − q) into
the vector it multiplies instead of into the matrix. Vectors are float32 by default (``dtype``): the scores
order pages, and float32 keeps one iteration at the memory traffic of the matrix; each row is summed in
float64 and rounded once, and sums that matter (the mass to spread, the L1 change) are float64 too.
"""

from __future__ import annotations

import logging
import os
from typing import NamedTuple

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix

from wirescrapy.manager import _product

logger = logging.getLogger(__name__)

MAX_ITERATIONS = 1000
THREADS = len(os.sched_getaffinity(0))  # the cores this process may run on: the products use them all

# Weighted link rank (Baeza-Yates & Davis 2004): W = BASE + OTHER_SITE·[other site] + POSITION·(1 − k/m)
# + anchor length / ANCHOR_UNIT.
WL_BASE = 1.0
WL_OTHER_SITE = 1.0
WL_POSITION = 0.5
WL_ANCHOR_UNIT = 10.0


class Ranking(NamedTuple):
    scores: np.ndarray  # one per index, sum 1 over the real nodes, entry 0 is 0
    iterations: int
    change: float  # L1 change of the last iteration


class HubsAuthorities(NamedTuple):
    hub: np.ndarray
    authority: np.ndarray
    iterations: int
    change: float


def index_dtype(nnz: int, size: int):
    return np.int32 if max(nnz, size) < (1 << 31) else np.int64


def _rows(matrix: csr_matrix) -> np.ndarray:
    """The row of every stored entry."""
    index_type = index_dtype(matrix.nnz, matrix.shape[0])
    return np.repeat(np.arange(matrix.shape[0], dtype=index_type), np.diff(matrix.indptr))


def link_matrix(counts: csr_matrix) -> csr_matrix:
    """The graph PageRank and HITS use, from link counts: each linked pair once (float32 1.0), self-links
    dropped."""
    counts = csr_matrix(counts)
    if not counts.has_canonical_format:  # repeated (row, column) entries: merge them (to_csr already has)
        counts = counts.copy()
        counts.sum_duplicates()
    size = counts.shape[0]
    index_type = index_dtype(counts.nnz, size)
    indices = counts.indices.astype(index_type, copy=False)
    indptr = counts.indptr.astype(index_type, copy=False)
    if indptr[0] != 0 or indptr[-1] != len(indices) or (np.diff(indptr) < 0).any():
        raise ValueError("the link counts have broken row pointers")
    # The self-links are dropped in one pass of the C kernel (``_product.without_diagonal``).
    kept_indptr = np.empty(size + 1, dtype=index_type)
    kept = np.empty(len(indices), dtype=index_type)
    kept = kept[: _product.without_diagonal(indptr, indices, kept_indptr, kept)]
    if len(kept) == len(indices):
        kept = indices  # no self-link: the counts' own array, as no copy is needed
    return csr_matrix((np.ones(len(kept), dtype=np.float32), kept, kept_indptr), shape=counts.shape)


def transpose(matrix: csr_matrix) -> csr_matrix:
    """The transposed graph as CSR (row i lists i's back-links, in increasing order): one counting sort,
    O(links). A graph whose entries are all 1 (``link_matrix``'s) is sorted as its pattern alone, in C
    (``_product.transpose``), and the transpose shares its array of ones."""
    matrix = csr_matrix(matrix)
    data = matrix.data
    if not len(data) or data.min() != 1 or data.max() != 1:
        return matrix.T.tocsr()
    index_type = np.result_type(matrix.indptr, matrix.indices, np.int32)
    indptr = matrix.indptr.astype(index_type, copy=False)
    indices = matrix.indices.astype(index_type, copy=False)
    rows, columns = matrix.shape
    if indptr[0] != 0 or (np.diff(indptr) < 0).any() or indices.min() < 0 or indices.max() >= columns:
        raise ValueError("the link matrix has broken row pointers or column indices")
    back_indptr = np.empty(columns + 1, dtype=index_type)
    back_indices = np.empty(len(indices), dtype=index_type)
    _product.transpose(indptr, indices, back_indptr, back_indices)
    return csr_matrix((data, back_indices, back_indptr), shape=(columns, rows), copy=False)


def _out_weights(matrix: csr_matrix) -> np.ndarray:
    degree = np.diff(matrix.indptr)
    if not len(matrix.data) or matrix.data.min() == matrix.data.max() == 1:  # the pattern: W(r) = degree
        return degree.astype(np.float64)
    weights = np.zeros(matrix.shape[0], dtype=np.float64)
    linked = degree > 0
    if linked.any():
        weights[linked] = np.add.reduceat(matrix.data, matrix.indptr[:-1][linked], dtype=np.float64)
    return weights


class _Product:
    """y = A x for one CSR matrix A, by the C kernel on ``THREADS`` threads, with vectors of ``dtype``.

    The matrix is checked once here, as the kernel trusts it: row pointers from 0 to the number of links,
    never decreasing, and column indices within the columns. A matrix whose entries are all 1 is kept as
    its pattern alone; other values are kept in ``dtype``."""

    def __init__(self, matrix: csr_matrix, dtype):
        columns = matrix.shape[1]
        # The kernel takes both int32 or both int64, as scipy keeps them; a copy only if they differ.
        index_type = np.result_type(matrix.indptr, matrix.indices, np.int32)
        self.indptr = matrix.indptr.astype(index_type, copy=False)
        self.indices = matrix.indices.astype(index_type, copy=False)
        if self.indptr[0] != 0 or self.indptr[-1] != len(self.indices) or (np.diff(self.indptr) < 0).any():
            raise ValueError("the link matrix has broken row pointers")
        if len(self.indices) and (self.indices.min() < 0 or self.indices.max() >= columns):
            raise ValueError(f"the link matrix has column indices outside 0..{columns - 1}")
        data = matrix.data
        pattern = not len(data) or data.min() == data.max() == 1
        self.data = None if pattern else data.astype(dtype, copy=False)

    def __call__(self, x: np.ndarray, out: np.ndarray) -> float:
        """Writes A x into ``out``; returns Σ out (float64)."""
        return _product.product(self.indptr, self.indices, self.data, x, out, THREADS)


class _Stall:
    """Whether an iteration has stopped improving: its L1 change has set no new low for ``PATIENCE``
    iterations. Power iteration shrinks the change geometrically until rounding (float32: about 1e-7
    of the total) is all that is left; a ``max_error`` below that would never be met."""

    PATIENCE = 20

    def __init__(self, name: str, max_error: float):
        self.name, self.max_error = name, max_error
        self.best, self.since = float("inf"), 0

    def __call__(self, change: float) -> bool:
        if change < self.best:
            self.best, self.since = change, 0
            return False
        self.since += 1
        if self.since < self.PATIENCE:
            return False
        logger.info(
            "%(name)s: L1 change stuck at %(change).3g, at rounding level; max error %(max_error).3g "
            "needs float64",
            {"name": self.name, "change": self.best, "max_error": self.max_error},
        )
        return True


def _uniform(size: int, dtype) -> np.ndarray:
    vector = np.full(size, 1.0 / max(size - 1, 1), dtype=dtype)
    vector[0] = 0
    return vector


def pagerank(
    links: csr_matrix,
    q: float = 0.15,
    max_error: float = 1e-6,
    *,
    transposed: csr_matrix | None = None,
    start: np.ndarray | None = None,
    jump: np.ndarray | None = None,
    max_iterations: int = MAX_ITERATIONS,
    dtype=np.float32,
) -> Ranking:
    """PageRank of every node of ``links`` (see the module docstring).

    ``transposed`` is ``transpose(links)`` if the caller already has it. ``start`` is a first guess (e.g.
    the previous cycle's scores): the result is the same, reached in fewer iterations. ``jump`` (one per
    node, >= 0 with a positive total; entry 0 ignored) is where the random jump and dangling nodes lead, in
    proportion; without it, to every node alike. Without ``start``, iterations start from the jump.
    """
    size = links.shape[0]
    if links.shape != (size, size):
        raise ValueError(f"the link matrix must be square, got {links.shape}")
    if not 0 <= q <= 1:
        raise ValueError(f"q must be in [0, 1], got {q}")
    nodes = size - 1
    if nodes < 1:
        return Ranking(np.zeros(size, dtype=dtype), 0, 0.0)
    back = transposed if transposed is not None else transpose(links)
    vote = _Product(back, dtype)
    # Fold 1/W(r) and (1 − q) into the vector each product takes (``scaled``), so that an iteration is one
    # product over the links and one pass over the pages.
    out = _out_weights(links)
    scale = np.zeros(size, dtype=dtype)
    np.divide(1.0 - q, out, out=scale, where=out > 0, casting="unsafe")
    del out

    if jump is not None:  # each node's share of the jump (entry 0 is no node)
        jump = np.array(jump, dtype=np.float64)
        jump[0] = 0
        jump = (jump / jump.sum()).astype(dtype, copy=False)
    x = jump.copy() if jump is not None and start is None else _start(start, size, dtype)
    scaled = x * scale
    y = np.empty(size, dtype=dtype)
    stalled = _Stall("PageRank", max_error)
    change = float("inf")
    iteration = 0
    while iteration < max_iterations:
        iteration += 1
        total = vote(scaled, y) - float(y[0])
        # What the votes did not carry — the random jump q and the rank of dangling pages — is spread
        # evenly, or by the jump vector; with Σ x = 1 that is 1 − Σ y, which also keeps rounding from
        # drifting the total. ``spread`` writes the new scores into x and returns the L1 change.
        add = (1.0 - total) / nodes if jump is None else 1.0 - total
        change = _product.spread(y, x, scaled, scale, add, jump, THREADS)
        if change < max_error or stalled(change):
            break
    else:
        logger.warning(
            "PageRank: no convergence in %(iterations)d iterations (L1 change %(change).3g)",
            {"iterations": iteration, "change": change},
        )
    return Ranking(x, iteration, change)


def _start(start, size: int, dtype) -> np.ndarray:
    if start is None:
        return _uniform(size, dtype)
    x = np.array(start, dtype=dtype)
    if x.shape != (size,):
        raise ValueError(f"start must have {size} entries, got {x.shape}")
    x[0] = 0
    x[~(x > 0)] = 0
    total = x.sum(dtype=np.float64)
    if total <= 0:
        return _uniform(size, dtype)
    # Pages new since the guess get the smallest score it has: they are at worst as good as the least.
    x[1:][x[1:] == 0] = x[x > 0].min()
    x /= x.sum(dtype=np.float64)
    return x


def hits(
    links: csr_matrix,
    max_error: float = 1e-6,
    *,
    transposed: csr_matrix | None = None,
    max_iterations: int = MAX_ITERATIONS,
    dtype=np.float32,
) -> HubsAuthorities:
    """Hub and authority scores (Kleinberg), each summing to 1; all 0 if the graph has no links."""
    size = links.shape[0]
    if links.shape != (size, size):
        raise ValueError(f"the link matrix must be square, got {links.shape}")
    if size < 2 or links.nnz == 0:
        zeros = np.zeros(size, dtype=dtype)
        return HubsAuthorities(zeros, zeros.copy(), 0, 0.0)
    forward = _Product(links, dtype)
    backward = _Product(transposed if transposed is not None else transpose(links), dtype)
    hub = _uniform(size, dtype)
    authority = np.zeros(size, dtype=dtype)
    new_hub, new_authority = np.empty_like(hub), np.empty_like(authority)
    stalled = _Stall("HITS", max_error)
    change = float("inf")
    iteration = 0
    while iteration < max_iterations:
        iteration += 1
        # Each new vector is normalised to sum 1 in the pass that measures its change.
        total = backward(hub, new_authority)
        if total <= 0:  # every link weighs 0: no hubs, no authorities
            zeros = np.zeros(size, dtype=dtype)
            return HubsAuthorities(zeros, zeros.copy(), iteration, 0.0)
        change = _product.rescale(new_authority, authority, 1.0 / total, THREADS)
        total = forward(new_authority, new_hub)
        change += _product.rescale(new_hub, hub, 1.0 / total, THREADS)
        hub, new_hub = new_hub, hub
        authority, new_authority = new_authority, authority
        if change < max_error or stalled(change):
            break
    else:
        logger.warning(
            "HITS: no convergence in %(iterations)d iterations (L1 change %(change).3g)",
            {"iterations": iteration, "change": change},
        )
    return HubsAuthorities(hub, authority, iteration, change)


def link_weights(
    links: csr_matrix, site_of: np.ndarray, anchor_length: np.ndarray | None = None
) -> np.ndarray:
    """Baeza-Yates & Davis weights (see the module docstring), one float32 per stored link of ``links``,
    whose rows must list each page's links in page order (with repeats), as the link store keeps them."""
    size = links.shape[0]
    site_of = np.asarray(site_of)
    if site_of.shape != (size,):
        raise ValueError(f"site_of must have {size} entries (one per doc-id), got {site_of.shape}")
    degree = np.diff(links.indptr)
    rows = _rows(links)
    # RP: position k of m, earlier links weigh more.
    position = np.arange(links.nnz, dtype=rows.dtype)
    position -= np.repeat(links.indptr[:-1].astype(rows.dtype, copy=False), degree)
    weights = position.astype(np.float32)
    del position
    weights /= np.repeat(np.maximum(degree, 1).astype(np.float32), degree)
    np.subtract(1.0, weights, out=weights)
    weights *= WL_POSITION
    weights += WL_BASE
    weights += WL_OTHER_SITE * (site_of[rows] != site_of[links.indices])
    if anchor_length is not None:
        anchor_length = np.asarray(anchor_length)
        if anchor_length.shape != (links.nnz,):
            raise ValueError(
                f"anchor_length must have one entry per link ({links.nnz}), got {anchor_length.shape}"
            )
        weights += anchor_length.astype(np.float32) / WL_ANCHOR_UNIT
    weights[links.indices == rows] = 0
    return weights.astype(np.float32, copy=False)


def wlrank(
    links: csr_matrix, site_of: np.ndarray, q: float = 0.15, max_error: float = 1e-6, *, dtype=np.float32
) -> Ranking:
    """Weighted link rank: PageRank over ``links`` (in page order) weighted by ``link_weights``."""
    weighted = csr_matrix((link_weights(links, site_of), links.indices, links.indptr), shape=links.shape)
    return pagerank(weighted, q, max_error, dtype=dtype)


def site_graph(links: csr_matrix, site_of: np.ndarray, sites: int | None = None) -> csr_matrix:
    """The graph of sites, indexed by site-id: (s, t) is 1.0 when a page of s links to a page of t ≠ s."""
    site_of = np.asarray(site_of)
    if site_of.shape != (links.shape[0],):
        raise ValueError(f"site_of must have {links.shape[0]} entries (one per doc-id), got {site_of.shape}")
    if sites is None:
        sites = int(site_of.max()) if len(site_of) else 0
    index_type = index_dtype(0, sites + 1)
    site_of = site_of.astype(index_type, copy=False)
    source = np.repeat(site_of, np.diff(links.indptr))
    target = site_of[links.indices]
    across = source != target
    pairs = coo_matrix(
        (np.ones(int(across.sum()), dtype=np.float32), (source[across], target[across])),
        shape=(sites + 1, sites + 1),
    ).tocsr()
    pairs.sum_duplicates()
    pairs.data[:] = 1
    return pairs


def siterank(
    links: csr_matrix,
    site_of: np.ndarray,
    q: float = 0.15,
    max_error: float = 1e-6,
    *,
    sites: int | None = None,
    dtype=np.float32,
) -> Ranking:
    """PageRank on the graph of sites; scores indexed by site-id."""
    return pagerank(site_graph(links, site_of, sites), q, max_error, dtype=dtype)
