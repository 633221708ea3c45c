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

``site_links`` reads the link counts once, in chunks of rows, so its memory beyond the inputs is a vector
of one entry per page, the links between sites and one chunk of links (its time in a manager run: the
"site shares" line of ``benchmarks/manager.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix

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
    unused); ``sites``: the highest site-id (default: the highest in ``site_of``)."""
    site_of = np.asarray(site_of)
    size = links.shape[0]
    if links.shape != (size, size) or site_of.shape != (size,):
        raise ValueError(
            f"links must be square and site_of must have one entry per row; got {links.shape} "
            f"and {site_of.shape}"
        )
    if sites is None:
        sites = int(site_of[1:].max(initial=0))
    captures = np.zeros(size, dtype=np.int64)
    inside = np.zeros(sites + 1)  # links inside each site: the diagonal, most of the links
    across_sources, across_targets = [], []
    for start, stop in _chunks(links):
        block = links.indptr[start : stop + 1]
        targets = links.indices[block[0] : block[-1]]
        lengths = np.diff(block)
        keep = targets != np.repeat(np.arange(start, stop, dtype=targets.dtype), lengths)
        keep &= links.data[block[0] : block[-1]] > 0
        targets = targets[keep]
        source_sites = np.repeat(site_of[start:stop], lengths)[keep]
        target_sites = site_of[targets]
        same = source_sites == target_sites
        captures += np.bincount(targets[same], minlength=size)
        inside += np.bincount(source_sites[same], minlength=sites + 1)
        same = ~same
        across_sources.append(source_sites[same])
        across_targets.append(target_sites[same])
    diagonal = np.arange(sites + 1)
    sources = np.concatenate([*across_sources, diagonal])
    targets = np.concatenate([*across_targets, diagonal])
    counts = np.concatenate([np.ones(len(sources) - len(diagonal)), inside])
    graph = coo_matrix((counts, (sources, targets)), shape=(sites + 1, sites + 1)).tocsr()  # repeats summed
    graph.eliminate_zeros()
    return SiteLinks(captures.astype(np.int32), graph)


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
    site_ids = np.asarray(site_of)[1:].astype(np.int64)
    if sites is None:
        sites = int(site_ids.max(initial=0))
    captures = np.asarray(captures)[1:]
    known = np.bincount(site_ids, minlength=sites + 1).astype(np.float64)
    once = np.bincount(site_ids, weights=captures == 1, minlength=sites + 1)
    twice = np.bincount(site_ids, weights=captures == 2, minlength=sites + 1)
    unseen = once * np.maximum(once - 1, 0) / (2 * (twice + 1))
    if fetched is not None:
        samples = np.bincount(site_ids, weights=np.asarray(fetched, dtype=bool)[1:], minlength=sites + 1)
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
    sizes = site_sizes(site_of, read.captures, count, fetched)
    site_ids = site_of[1:].astype(np.int64)
    known = np.bincount(site_ids, minlength=count + 1)[: count + 1]
    done = np.bincount(site_ids, weights=fetched[1:], minlength=count + 1)[: count + 1]
    return np.maximum(np.minimum(sizes[: count + 1], LEFT_GUARD * known) - done, 0.0)


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
