"""How large each site is and how much of the PageRank it holds, estimated from a partial crawl; the
manager's planner shares a batch among sites by the second (``planner.py``, rule 1).

Why sites need an estimate of their own
    The pages of a batch should be the ones that will turn out most important, and most of that is a
    question of sites: the Web's sites differ in size by orders of magnitude and a site's share of the
    PageRank grows with its pages and with the links other sites send it, so the best order takes many
    pages from a few sites. Page scores computed on the graph crawled so far cannot tell that early: a site
    only shows its pages as they are fetched, so PageRank or OPIC on the partial graph favour the sites
    crawled most, while an even split of the batch starves the large sites. So the manager estimates, for
    each site, its share of the final PageRank, and a batch gives each site a share in proportion
    (``planner.py``); page scores decide which pages of a site are taken. How close each split comes
    to the best order is measured by ``benchmarks/crawl_order.py`` and ``crawl_order_sim.py``.

Pages of a site (``site_sizes``)
    Counting the pages known of a site underestimates a large site most: the links found so far point
    again and again to its popular pages, while most of its pages have not been seen yet. How many have
    not is the species-richness question of ecology — how many species live where a sample found D of
    them — and the answer used here is Chao's lower-bound estimator (A. Chao, "Nonparametric estimation
    of the number of classes in a population", Scand. J. Statistics 11, 1984), in its bias-corrected
    form: N = D + f1 (f1 − 1) / (2 (f2 + 1)), where f1 and f2 are the pages linked from exactly one and
    exactly two fetched pages of their own site (each fetched page is a sample of the site's link
    targets). Many pages seen once and few seen twice mean that many remain unseen; a site whose links
    keep pointing to pages already known is nearly all known. Links from other sites are left out (they
    land mostly on home pages and say little of a site's depth); D is every page known of the site,
    however it was found. Capture–recapture estimates of this kind have sized the Web itself (Lawrence &
    Giles, "Searching the World Wide Web", Science 1998; Bharat & Broder, WWW7 1998).

A site's share of the PageRank (``site_pagerank``)
    PageRank's random surfer, followed at the level of sites: a walk over sites that leaves site s for
    site t with the probability that a link found on s's fetched pages points into t (links inside the
    site included: they keep the surfer there, usually most of the time), and that jumps, with
    probability q, to a site chosen in proportion to its estimated pages (the page-level jump picks a
    page uniformly, so a site receives it in proportion to its pages). A site none of whose pages has
    links yet passes its rank on as a jump does. This is the "lumped" chain of the page-level walk: its
    stationary distribution is exactly each site's total PageRank when every page of a site sends its
    links into the sites alike (a lumpable chain; tests/test_sites.py checks it against networkx on such a
    web), and an approximation otherwise (a site's popular pages send more of its rank than the sample of
    its links says). Kamvar, Haveliwala, Manning & Golub ("Exploiting the block structure of the Web for
    computing PageRank", 2003) aggregate PageRank over hosts in a similar way (BlockRank). It differs from
    ``ranking.siterank`` (WIRE's site rank, a score: PageRank on the graph of sites with uniform jumps and
    no links inside a site), which ranks a small site with many in-links above a large one.

``site_links`` reads the link counts once, in C, a chunk of rows at a time. Its memory beyond the inputs is
a vector of one entry per page and 8 bytes for each link between two sites (its time in a manager run: the
"site shares" line of ``benchmarks/manager.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_matrix

from . import _product
from .ranking import pagerank

CHUNK_LINKS = 1 << 23  # links read at a time


class SiteLinks(NamedTuple):
    """What the estimates need from the link counts, read in one pass (``site_links``)."""

    captures: np.ndarray  # per doc-id: the fetched pages of its own site linking to it (int32)
    graph: csr_matrix  # (s, t): links from pages of site s to pages of site t, inside a site too


def site_links(links: csr_matrix, site_of: np.ndarray, sites: int | None = None) -> SiteLinks:
    """Read ``links`` (link counts indexed by doc-id, as ``LinkGraph.to_csr`` gives them: row and column
    0 no document, rows of pages not fetched empty) once, in chunks of rows: every pair of linked pages
    counts once, a page's links to itself not at all. ``site_of``: the site-id of each doc-id (entry 0
    unused); ``sites``: the highest site-id (default: the highest in ``site_of``).

    The pass is the C kernel's (``_product.site_pass``): the captures and the links inside each site are
    counted in place, and each link across sites is kept as one key, source × (sites + 1) + target, whose
    sort then sums the repeats into the graph of sites."""
    site_of = np.asarray(site_of)
    size = links.shape[0]
    if links.shape != (size, size) or site_of.shape != (size,):
        raise ValueError(
            f"links must be square and site_of must have one entry per row; got {links.shape} "
            f"and {site_of.shape}"
        )
    if sites is None:
        sites = int(site_of[1:].max(initial=0))
    stride = sites + 1
    if site_of.min(initial=0) < 0 or int(site_of.max(initial=0)) > sites or stride >= 1 << 31:
        raise ValueError(f"site-ids must lie in 0..{sites}, below 2^31")
    indptr, indices = links.indptr, links.indices
    if indices.dtype != indptr.dtype:
        index_type = np.result_type(indptr, indices)
        indptr, indices = indptr.astype(index_type), indices.astype(index_type)
    if len(indices) and (indices.min() < 0 or indices.max() >= size):
        raise ValueError(f"the link counts have column indices outside 0..{size - 1}")
    keep = None if not len(links.data) or links.data.min() > 0 else (links.data > 0).view(np.uint8)
    pages = site_of.astype(np.int32)
    captures = np.zeros(size, dtype=np.int32)
    inside = np.zeros(stride)  # links inside each site: the diagonal, most of the links
    across = []
    buffer = np.empty(0, dtype=np.int64)
    for start, stop in _chunks(links):
        wanted = int(indptr[stop] - indptr[start])
        if len(buffer) < wanted:
            buffer = np.empty(wanted, dtype=np.int64)
        written = _product.site_pass(
            indptr, indices, keep, pages, start, stop, stride, captures, inside, buffer
        )
        across.append(buffer[:written].copy())
    del buffer, pages
    keys = np.concatenate(across) if across else np.zeros(0, dtype=np.int64)
    del across
    keys.sort()
    first = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, len(keys))).astype(np.float64)
    keys = keys[starts]
    # The diagonal's keys lie between the keys across sites (no key across is one): merged in order.
    diagonal = np.flatnonzero(inside)
    at = np.searchsorted(keys, diagonal * (stride + 1))
    keys = np.insert(keys, at, diagonal * (stride + 1))
    counts = np.insert(counts, at, inside[diagonal])
    rows, columns = np.divmod(keys, stride)
    indptr = np.zeros(stride + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=stride), out=indptr[1:])
    index_type = np.int32 if len(keys) < 1 << 31 else np.int64
    graph = csr_matrix(
        (counts, columns.astype(index_type), indptr.astype(index_type)), shape=(stride, stride)
    )
    graph.has_sorted_indices = True
    return SiteLinks(captures, graph)


def _chunks(links: csr_matrix):
    """(first row, stop row) of row ranges of about ``CHUNK_LINKS`` links, from row 1 (row 0 is no page)."""
    indptr = links.indptr
    rows = links.shape[0]
    start = 1
    while start < rows:
        stop = int(np.searchsorted(indptr, indptr[start] + CHUNK_LINKS, side="right")) - 1
        stop = min(max(stop, start + 1), rows)
        yield start, stop
        start = stop


def site_sizes(
    site_of: np.ndarray,
    captures: np.ndarray,
    sites: int | None = None,
    fetched: np.ndarray | None = None,
) -> np.ndarray:
    """Estimated pages of each site (float64, indexed by site-id, entry 0 = 0): Chao's bias-corrected
    estimator (module docstring) from ``captures`` (``SiteLinks.captures``); every doc-id of ``site_of``
    (entry 0 unused) is a page known of its site. With ``fetched`` (per doc-id, entry 0 unused: whether
    the page was fetched), the pages not seen yet are only those the site's known pages still to fetch
    are expected to reveal (``unseen_found``).
    """
    known, once, twice, samples = _site_counts(site_of, captures, sites, fetched)
    return _chao(known, once, twice, samples)


def _site_counts(site_of, captures, sites: int | None, fetched) -> tuple[np.ndarray, ...]:
    """Per site (float64, indexed by site-id): its pages known, those captured once, twice, and fetched
    (None without ``fetched``), each counted as integers."""
    site_ids = np.asarray(site_of)[1:].astype(np.intp)
    if sites is None:
        sites = int(site_ids.max(initial=0))
    captures = np.asarray(captures)[1:]

    def pages(which=None) -> np.ndarray:
        chosen = site_ids if which is None else site_ids[which]
        return np.bincount(chosen, minlength=sites + 1).astype(np.float64)

    samples = None if fetched is None else pages(np.asarray(fetched, dtype=bool)[1:])
    return pages(), pages(captures == 1), pages(captures == 2), samples


def _chao(known: np.ndarray, once: np.ndarray, twice: np.ndarray, samples: np.ndarray | None) -> np.ndarray:
    """``site_sizes`` from ``_site_counts``."""
    unseen = once * np.maximum(once - 1, 0) / (2 * (twice + 1))
    if samples is not None:
        unseen = unseen_found(unseen, once, samples, np.maximum(known - samples, 0))
    estimate = known + unseen
    estimate[0] = 0
    return estimate


def unseen_found(unseen: np.ndarray, once: np.ndarray, samples: np.ndarray, more: np.ndarray) -> np.ndarray:
    """Of ``unseen`` pages (Chao's f0 estimate) of each site, those ``more`` samples beyond the ``samples``
    taken are expected to find: f0 [1 − (1 − f1 / (n f0 + f1))^m] (Shen, Chao & Lin, "Predicting the
    number of new species in further taxonomic sampling", Ecology 84, 2003), f1 = ``once``, n =
    ``samples``, m = ``more``.

    Why: Chao's f0 is what endless sampling would find, but a crawl samples a site's links only through
    the pages it knows and has not fetched yet. A small site whose pages are all fetched has nothing
    left to reveal, however many of its pages were linked once (a reference manual's pages each linked
    from one index page): taken as it is, f0 keeps such a site at several times its size, and its share of
    every batch with it (benchmarks/crawl_order.py --web real)."""
    unseen = np.asarray(unseen, dtype=np.float64)
    out = np.zeros(len(unseen))
    some = unseen > 0
    n = np.maximum(np.asarray(samples, dtype=np.float64)[some], 1)
    f0, f1 = unseen[some], np.asarray(once, dtype=np.float64)[some]
    out[some] = f0 * (1 - np.power(1 - f1 / (n * f0 + f1), np.asarray(more, dtype=np.float64)[some]))
    return out


def site_pagerank(
    graph: csr_matrix, sizes: np.ndarray, q: float = 0.15, max_error: float = 1e-6
) -> np.ndarray:
    """Each site's estimated share of the PageRank (float64, indexed by site-id, entry 0 = 0, the rest
    summing to 1): the walk over sites of the module docstring along ``graph`` (``SiteLinks.graph``),
    jumping in proportion to ``sizes`` (``site_sizes``): ``ranking.pagerank`` with that jump vector, in
    float64, until the L1 change of an iteration is below ``max_error``."""
    sizes = np.asarray(sizes, dtype=np.float64)
    if not 0 < q <= 1:
        raise ValueError(f"q must be in (0, 1], got {q}")
    if graph.shape != (len(sizes), len(sizes)):
        raise ValueError(f"graph must be {len(sizes)} x {len(sizes)}, got {graph.shape}")
    if (sizes < 0).any() or sizes[1:].sum() <= 0:
        raise ValueError("sizes must be >= 0 with a positive total")
    return pagerank(graph, q, max_error, jump=sizes, dtype=np.float64).scores


LEFT_GUARD = 2.0  # ``pages_left``: a site is estimated at most this many times the pages known of it


def pages_left(
    links: csr_matrix,
    site_of: np.ndarray,
    visited: np.ndarray,
    sites: int | None = None,
    read: SiteLinks | None = None,
) -> np.ndarray:
    """Each site's pages left to fetch as estimated now (float64, indexed by site-id): ``site_sizes`` (with
    what its known pages still to fetch are expected to reveal) less its pages
    ``visited`` (aligned with the pages, doc-id order), the estimate at most ``LEFT_GUARD`` times the pages
    known of the site. Why the guard: Chao's estimator leaps when a site shows many pages linked once and few
    twice, as when a new section of it was just found, and such a leap would make a small site the crawl's
    slowest.
    ``read``: ``site_links``' pass over ``links``, when the caller has it already."""
    site_of = np.asarray(site_of)
    if read is None:
        read = site_links(links, site_of, sites)
    count = read.graph.shape[0] - 1
    fetched = np.concatenate([[False], np.asarray(visited, dtype=bool)])
    known, once, twice, done = _site_counts(site_of, read.captures, count, fetched)
    sizes = _chao(known, once, twice, done)[: count + 1]
    return np.maximum(np.minimum(sizes, LEFT_GUARD * known[: count + 1]) - done[: count + 1], 0.0)


def site_shares(
    links: csr_matrix,
    site_of: np.ndarray,
    sites: int | None = None,
    q: float = 0.15,
    max_error: float = 1e-6,
    fetched: np.ndarray | None = None,
    read: SiteLinks | None = None,
) -> np.ndarray:
    """``site_pagerank`` with ``site_sizes`` (``fetched`` passed on), from one pass over
    ``links`` (``read``: that pass's ``site_links``, when the caller has it already)."""
    if read is None:
        read = site_links(links, site_of, sites)
    sizes = site_sizes(site_of, read.captures, read.graph.shape[0] - 1, fetched)
    return site_pagerank(read.graph, sizes, q, max_error)
