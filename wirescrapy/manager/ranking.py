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

OPIC (``opic``, Abiteboul, Preda & Cobena 2003, "Adaptive on-line page importance computation", WWW'03)
    On-line page importance: every page holds *cash*; visiting a page adds its cash to its *history*
    H and hands it out evenly over its links (the cash C of the page becomes 0); a page's importance is
    (H + C) / (G + 1), G the cash handed out so far. As every page is visited again and again, this
    converges to the importance the link matrix defines (PageRank's fixpoint), with no matrix iteration;
    a crawler that fetches the page holding the most cash (the paper's Greedy policy) goes for the
    important pages first. The manager keeps no cash between runs, so ``opic`` replays the crawl so far:
    the pages fetched, in the order of their first visit, each visited once. The cash starts at the
    pages of ``start``, shared evenly (the manager's: the seeds and their sites' home pages, where the
    crawl started; by default every page, the paper's 1/n). A page never fetched keeps all the cash it
    received: that is its priority for the frontier. A page fetched keeps what reached it after its
    visit (it would hand it out at its next one).

    The virtual page Ω (the paper's fix for a graph that is not strongly connected): every page links to
    Ω and Ω to every page. A visited page of d links hands 1/(d + 1) of its cash to each link and
    1/(d + 1) to Ω (a page without links, one not fetched successfully, all of it); Ω is visited once, at
    the end (the manager run), and spreads its cash evenly over the N pages, which changes no order among
    pages never fetched and keeps Σ C = 1: cash is conserved. (In the paper's steady state, the cash
    flowing through Ω plays the part of PageRank's random jump.)

    Replaying page by page in Python would take minutes at ten million pages, so the replay runs in
    rounds of ``OPIC_ROUND`` consecutive fetches, in matrix form. In one round, every page of the round
    hands out its cash at once, and the cash that reaches a page of the same round fetched *later* is
    handed out again, in further steps, until none is left in flight (a page can only pass cash to pages
    after it, so this ends in at most ``OPIC_ROUND`` steps, usually a few). By linearity that is the
    page-by-page replay exactly (up to rounding): the round size sets the speed, not the result.
    Cash for a page fetched earlier, or never, stays with it; a page of a later round hands it out in its
    round (its time in a manager run: ``benchmarks/manager.py --all-scores``).

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
OPIC_ROUND = 1 << 16  # fetches replayed together by ``opic``: speed only, not the result

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


class Cash(NamedTuple):
    scores: np.ndarray  # (H + C), one per index, sum 1 over the real nodes, entry 0 is 0
    cash: np.ndarray  # C at the end (float64), Ω's share spread in: what each page holds now
    history: np.ndarray  # H (float64): the cash each fetched page handed out at its visit
    virtual: float  # the cash Ω received (and spread at the end)
    steps: int  # hand-outs in matrix form: one per round, more when cash moves on within a round


class HubsAuthorities(NamedTuple):
    hub: np.ndarray
    authority: np.ndarray
    iterations: int
    change: float


def _index_type(nnz: int, size: int):
    return np.int32 if max(nnz, size) < (1 << 31) else np.int64


def _rows(matrix: csr_matrix) -> np.ndarray:
    """The row of every stored entry."""
    index_type = _index_type(matrix.nnz, matrix.shape[0])
    return np.repeat(np.arange(matrix.shape[0], dtype=index_type), np.diff(matrix.indptr))


def link_matrix(counts: csr_matrix) -> csr_matrix:
    """The graph PageRank and HITS use, from link counts: each linked pair once (float32 1.0), self-links
    dropped."""
    counts = csr_matrix(counts)
    if not counts.has_canonical_format:  # repeated (row, column) entries: merge them (to_csr already has)
        counts = counts.copy()
        counts.sum_duplicates()
    size = counts.shape[0]
    index_type = _index_type(counts.nnz, size)
    indices = counts.indices.astype(index_type, copy=False)
    indptr = counts.indptr.astype(index_type, copy=False)
    rows = _rows(counts)
    self_link = indices == rows
    if self_link.any():
        removed = np.zeros(size + 1, dtype=index_type)
        np.cumsum(np.bincount(rows[self_link], minlength=size), out=removed[1:])
        indices = indices[~self_link]
        indptr = indptr - removed
    del rows, self_link
    return csr_matrix((np.ones(len(indices), dtype=np.float32), indices, indptr), shape=counts.shape)


def transpose(matrix: csr_matrix) -> csr_matrix:
    """The transposed graph as CSR (row i lists i's back-links): one counting sort, O(links)."""
    return csr_matrix(matrix).T.tocsr()


def _out_weights(matrix: csr_matrix) -> np.ndarray:
    degree = np.diff(matrix.indptr)
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


def opic(
    links: csr_matrix,
    order: np.ndarray,
    start: np.ndarray | None = None,
    *,
    round_size: int = OPIC_ROUND,
    dtype=np.float32,
) -> Cash:
    """OPIC cash and history after replaying the visits of the pages ``order`` lists (doc-ids, each once,
    in the order they were first fetched) over ``links`` (its links, each counted once: ``link_matrix``);
    see the module docstring. ``start`` weighs the pages that hold the cash at first (one entry per
    index; default, or all zero: every page alike)."""
    size = links.shape[0]
    if links.shape != (size, size):
        raise ValueError(f"the link matrix must be square, got {links.shape}")
    if round_size < 1:
        raise ValueError(f"round_size must be >= 1, got {round_size}")
    order = np.asarray(order, dtype=_index_type(0, size))
    if size < 2:
        return Cash(np.zeros(size, dtype=dtype), np.zeros(size), np.zeros(size), 0.0, 0)
    cash = _initial_cash(start, size)
    history = np.zeros(size)
    # Fetch position of every page; pages never fetched come after every round.
    position = np.full(size, len(order), dtype=order.dtype)
    position[order] = np.arange(len(order), dtype=order.dtype)
    virtual, steps = 0.0, 0
    for first in range(0, len(order), round_size):
        pages = order[first : first + round_size]
        given, done = _replay_round(links, position, pages, first, cash, history)
        virtual += given
        steps += done
    cash[1:] += virtual / (size - 1)
    estimate = history + cash
    estimate[0] = 0
    estimate /= estimate.sum()
    return Cash(estimate.astype(dtype), cash, history, virtual, steps)


def _initial_cash(start, size: int) -> np.ndarray:
    """The cash at first: ``start`` normalised to sum 1 over the real nodes, or 1/N each."""
    cash = np.zeros(size)
    if start is not None:
        if np.shape(start) != (size,) or (np.asarray(start) < 0).any():
            raise ValueError(f"start must have {size} entries >= 0")
        cash[1:] = start[1:]
    total = cash.sum()
    if total > 0:
        cash /= total
    else:
        cash[1:] = 1.0 / (size - 1)
    return cash


def _replay_round(
    links: csr_matrix,
    position: np.ndarray,
    pages: np.ndarray,
    first: int,
    cash: np.ndarray,
    history: np.ndarray,
) -> tuple[float, int]:
    """Visit ``pages``, the fetches at positions ``first``, ``first + 1`` …, passing on in further steps the
    cash they hand to each other forwards; returns the cash handed to Ω and the steps taken. Updates
    ``cash`` and ``history``."""
    giving = pages[cash[pages] > 0]
    amount = cash[giving]
    cash[giving] = 0  # what reaches them from now on came after their visit, unless passed on below
    virtual, steps = 0.0, 0
    while len(giving):
        steps += 1
        history[giving] += amount
        rows = links[giving]
        degree = np.diff(rows.indptr)
        share = amount / (degree + 1)  # each link and Ω get one share
        virtual += float(share.sum())
        targets = rows.indices
        shares = np.repeat(share, degree)
        # A page of this round fetched after the page paying it hands the cash on in the next step.
        slot = np.take(position, targets) - first
        onward = (slot < len(pages)) & (slot > np.repeat(np.take(position, giving) - first, degree))
        kept = ~onward
        np.add.at(cash, targets[kept], shares[kept])
        received = np.bincount(slot[onward], weights=shares[onward], minlength=len(pages))
        slots = np.flatnonzero(received)
        giving, amount = pages[slots], received[slots]
    return virtual, steps


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
    index_type = _index_type(0, sites + 1)
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
