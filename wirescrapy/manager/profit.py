"""Which pages to fetch next: filters, intrinsic quality, profit and the batch (thesis §7.2.1, paper §2.1).

Every function works on whole arrays: ``docs`` is the document records of doc-ids 1..n
(``collection.documents.records[1:n + 1]``) and per-page arrays are aligned with it (position i is doc-id
i + 1); ``sites`` is the site records indexed by site-id (``collection.sites.records``, record 0 unused).

Filters (``eligible``)
    A page is left out of this cycle when it is a duplicate, a multimedia link (never fetched), forbidden
    by robots.txt, deeper than ``WIRE_MAX_DEPTH_STATIC`` / ``_DYNAMIC``, has failed
    ``WIRE_MAX_ERRORS_DIFFERENT_BATCH`` times in a row, is past the first ``WIRE_MAX_URLS_PER_SITE`` pages
    of its site (in doc-id order, i.e. order of discovery), or was visited more recently than its minimum
    revisit period: ``WIRE_MINPERIOD_UNSUCCESSFUL`` after a failed fetch (an ``error`` in the record, or no
    status after a visit), ``_SUCCESSFUL_NOT_OK`` after a status other than 200, ``_SUCCESSFUL_OK`` after a
    200 or a 304 (a conditional revisit that found the stored 200 unchanged).

Intrinsic quality (``intrinsic_quality``)
    Σ wₖ sₖ / Σ wₖ over the score functions of ``WIRE_SCORE_WEIGHTS`` with a weight > 0, each score first
    mapped onto [0, 1]:

    =========================================  =================================================
    score                                      on [0, 1]
    =========================================  =================================================
    pagerank, wlrank, hub, authority, opic,    ``log_scale``: log(1 + s/m) / log(1 + M/m), m and M
    siterank (the page's site's),              the smallest and largest s > 0; 0 for s = 0
    queuesize (pages of the site still to get),
    crosslinks, mirrors (``sections.py``)
    static                                     1 static, 0 dynamic
    depth                                      1 / (1 + depth): the first levels matter most
    random                                     uniform on [0, 1)
    =========================================  =================================================

    Link scores are heavy-tailed: PageRank spans five or six orders of magnitude, so dividing by the
    largest would leave nearly every page at 0 and let the other scores decide alone; the logarithm keeps
    the order and spreads the values over [0, 1]. "hub" tells nothing about pages not fetched yet: they
    have no links, so their hub score is 0 (alone, it orders them by doc-id: breadth-first). "opic" is a
    page's OPIC cash plus history: for a page not fetched yet, the cash its fetched in-links handed it.
    "queuesize" is the number of eligible pages of the page's site not downloaded yet, so larger sites go
    first (Castillo et al., "Scheduling algorithms for Web crawling", 2004). The result is multiplied by
    the age factor (a/A)^e, a the time since the page's last visit (never visited: the largest), A the
    largest, e = ``WIRE_SCORE_AGE_EXPONENT`` (0: factor 1), and for site front pages by
    ``WIRE_SCORE_BOOST_FRONTPAGE``; so quality lies in [0, boost].

Profit (``profit``, α = β = γ = 1)
    The value of a page in the collection is quality × Pr(fresh) × representational quality (1 if the page
    was downloaded, else 0); downloading it now makes it quality × 1 × 1. The profit is the difference.

The batch (``select_batches``)
    The K pages of highest profit, at most ``WIRE_BATCH_SAMESITE`` of a site and, with
    ``WIRE_BATCH_SITE_SHARE`` s > 0, at most s times a share of the batch among the sites with eligible
    pages in proportion to each site's estimated share of the PageRank (``WIRE_BATCH_SITE_SPLIT``,
    ``sites.py``; ``site_caps``), fewer if fewer are eligible — by default in proportion to what each site
    is behind that share of all the pages fetched so far, plus a quarter of the share itself
    (``WIRE_BATCH_SITE_CATCHUP``, ``site_catchup``), and no more than ``WIRE_BATCH_SITE_GROWTH`` times the
    pages fetched from it (``site_growth``); further batches of the same run take the next best, disjoint
    from the earlier ones. (``batch.py`` writes them, split by site into parts if asked.)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.items import FetchError

NEVER_FETCHED = DocFlag.DUPLICATE | DocFlag.MULTIMEDIA | DocFlag.ROBOTS_DISALLOWED
CATCHUP_BASE = (
    0.25  # site_catchup: the part of a site's plain share of a batch it keeps, whatever its shortfall
)
LOG_SCALED = (
    "pagerank",
    "wlrank",
    "hub",
    "authority",
    "siterank",
    "opic",
    "queuesize",
    "crosslinks",
    "mirrors",
)


# -- filters ---------------------------------------------------------------------------------------------


def eligible(docs: np.ndarray, config, now: float, *, exclude: np.ndarray | None = None) -> np.ndarray:
    """Which pages may go into a batch now (bool array); ``exclude`` lists doc-ids to leave out (the
    sites' robots.txt documents, fetched on their own schedule)."""
    flags = docs["flags"]
    ok = (flags & NEVER_FETCHED) == 0
    dynamic = (flags & DocFlag.DYNAMIC) != 0
    ok &= docs["depth"] <= np.where(dynamic, config.max_depth_dynamic, config.max_depth_static)
    ok &= docs["errors"] < config.max_errors_different_batch
    ok &= ~too_recent(docs, config, now)
    ok &= within_site_limit(docs["siteid"], config.max_urls_per_site)
    if exclude is not None:
        exclude = np.asarray(exclude, dtype=np.int64)
        exclude = exclude[(exclude >= 1) & (exclude <= len(docs))]
        ok[exclude - 1] = False
    return ok


def too_recent(docs: np.ndarray, config, now: float) -> np.ndarray:
    """Pages visited more recently than their minimum revisit period (WIRE's manager/minperiod)."""
    answered = (docs["status"] > 0) & (docs["error"] == 0)  # a status with an error (a redirect loop): failed
    last_visit = docs["last_visit"]
    period = np.where(
        answered & ((docs["status"] == 200) | (docs["status"] == 304)),  # a 304: the stored 200 still holds
        config.minperiod_successful_ok,
        np.where(answered, config.minperiod_successful_not_ok, config.minperiod_unsuccessful),
    )
    refused = docs["error"] == FetchError.BLOCKED_IP  # no visit made: due as soon as the setting allows it
    return (last_visit > 0) & (now - last_visit < period) & ~refused


def within_site_limit(site_ids: np.ndarray, limit: int) -> np.ndarray:
    """Whether each page is among the first ``limit`` pages (by doc-id) of its site."""
    ok = np.ones(len(site_ids), dtype=bool)
    counts = np.bincount(site_ids)
    big = np.flatnonzero(counts > limit)
    if len(big) == 0:
        return ok
    members = np.flatnonzero(np.isin(site_ids, big))  # doc-id order
    order = np.argsort(site_ids[members], kind="stable")
    ranks = _rank_in_group(site_ids[members][order])
    ok[members[order[ranks >= limit]]] = False
    return ok


def _rank_in_group(sorted_keys: np.ndarray) -> np.ndarray:
    """0, 1, 2 … within each run of equal keys of a sorted array."""
    positions = np.arange(len(sorted_keys))
    starts = np.ones(len(sorted_keys), dtype=bool)
    starts[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return positions - np.maximum.accumulate(np.where(starts, positions, 0))


# -- quality ---------------------------------------------------------------------------------------------


def log_scale(score: np.ndarray) -> np.ndarray:
    """A non-negative heavy-tailed score on [0, 1]: log(1 + s/m) / log(1 + M/m) (float32)."""
    score = np.asarray(score)
    out = np.zeros(len(score), dtype=np.float32)
    positive = score > 0
    if not positive.any():
        return out
    values = score[positive].astype(np.float64)
    low, high = values.min(), values.max()
    values = np.log1p(values / low) / np.log1p(high / low)
    out[positive] = values
    return out


def pages_to_download(site_ids: np.ndarray, eligible_pages: np.ndarray, visited: np.ndarray) -> np.ndarray:
    """For each page, how many eligible pages of its site have never been downloaded ("queuesize")."""
    waiting = np.bincount(site_ids[eligible_pages & ~visited])
    counts = np.zeros(int(site_ids.max(initial=0)) + 1, dtype=np.int64)
    counts[: len(waiting)] = waiting
    return counts[site_ids]


def intrinsic_quality(
    docs: np.ndarray,
    weights: Mapping[str, float],
    scores: Mapping[str, np.ndarray],
    *,
    now: float,
    age_exponent: float = 0.0,
    front_page_boost: float = 1.0,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The weighted combination described in the module docstring (float32, aligned with ``docs``).

    ``scores`` holds the raw per-page arrays of the link scores with a weight > 0 ("pagerank", "wlrank",
    "hub", "authority", "opic", "siterank": the page's site's) and of "queuesize", "crosslinks" and
    "mirrors"; "static", "depth" and "random" are computed here.
    """
    used = {name: float(w) for name, w in weights.items() if w > 0}
    quality = np.zeros(len(docs), dtype=np.float32)
    total = sum(used.values())
    for name, weight in used.items():
        quality += np.float32(weight / total) * _term(name, docs, scores, rng)
    if age_exponent > 0:
        quality *= _age(docs, now) ** np.float32(age_exponent)
    if front_page_boost != 1:
        quality[(docs["flags"] & DocFlag.FRONT_PAGE) != 0] *= np.float32(front_page_boost)
    return quality


def _term(name: str, docs: np.ndarray, scores: Mapping[str, np.ndarray], rng) -> np.ndarray:
    if name in LOG_SCALED:
        if name not in scores:
            raise ValueError(f"score {name!r} has a weight but was not computed")
        return log_scale(scores[name])
    if name == "static":
        return ((docs["flags"] & DocFlag.DYNAMIC) == 0).astype(np.float32)
    if name == "depth":
        return (1.0 / (1.0 + docs["depth"].astype(np.float32))).astype(np.float32)
    if name == "random":
        return (rng or np.random.default_rng()).random(len(docs), dtype=np.float32)
    raise ValueError(f"unknown score {name!r}")


def _age(docs: np.ndarray, now: float) -> np.ndarray:
    last_visit = docs["last_visit"]
    age = np.maximum(now - last_visit, 0.0)
    never = last_visit <= 0
    oldest = age[~never].max(initial=0.0)
    if oldest <= 0:
        return np.ones(len(docs), dtype=np.float32)
    age[never] = oldest
    return (age / oldest).astype(np.float32)


# -- profit ----------------------------------------------------------------------------------------------


def profit(quality: np.ndarray, fresh: np.ndarray, visited: np.ndarray) -> np.ndarray:
    """Value after downloading (quality) minus value now (quality × Pr(fresh) × visited), float32."""
    quality = np.asarray(quality, dtype=np.float32)
    current = quality * np.asarray(fresh, dtype=np.float32) * np.asarray(visited, dtype=np.float32)
    return quality - current


# -- the batch -------------------------------------------------------------------------------------------


def site_cap(size: int, samesite: int, counts: np.ndarray, share: float = 1.0) -> int:
    """Most pages of one site in a batch of ``size`` drawn from sites with ``counts`` candidates each: the
    largest c <= ``samesite`` such that Σ min(c, count) <= ``share`` × size, at least 1 (see
    ``select_batches``); ``share`` 0: ``samesite``."""
    if share <= 0:
        return samesite
    budget = share * size
    counts = np.minimum(counts, samesite)

    def taken(cap: int) -> int:
        return int(np.minimum(counts, cap).sum())

    if taken(samesite) <= budget:
        return samesite
    low, high = 1, samesite  # the answer is in [low, high): taken(high) > budget
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if taken(middle) <= budget else (low, middle)
    return low


def site_caps(
    size: int, samesite: int, counts: np.ndarray, share: float = 1.0, weights: np.ndarray | None = None
) -> np.ndarray:
    """Most pages of each site in a batch of ``size`` (int64 array aligned with ``counts``, the candidates
    of each site), the cap of ``select_batches``: with ``weights`` w (> 0, ``inf`` allowed) site s may
    get max(1, floor(c × w_s)) pages, never more than ``samesite``, for the largest c with
    Σ_s min(max(1, floor(c × w_s)), counts_s, samesite) <= ``share`` × size (water-filling on c);
    ``weights`` None or all equal: ``site_cap`` for every site. ``share`` 0: ``samesite``."""
    counts = np.asarray(counts, dtype=np.int64)
    if weights is None or share <= 0 or len(counts) == 0 or np.all(weights == weights[0]):
        return np.full(len(counts), site_cap(size, samesite, counts, share), dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    if np.any(~(weights > 0)):
        raise ValueError("site weights must be > 0")
    full = np.minimum(counts, samesite)
    budget = share * size
    unbounded = np.isinf(weights)
    finite = np.where(unbounded, 1.0, weights)

    def caps(c: float) -> np.ndarray:
        pages = np.where(unbounded, full, np.minimum(np.floor(c * finite), full))
        return np.maximum(np.minimum(pages, full), np.minimum(full, 1)).astype(np.int64)

    if full.sum() <= budget:
        return full
    # caps(c) is a non-decreasing step function of c, constant on [b, b') between two breakpoints m / w_s
    # and all at ``full`` from ``high`` on: bisect for the last c with Σ caps(c) <= budget.
    low, high = 0.0, float((full[~unbounded] / finite[~unbounded]).max(initial=0.0)) + 1.0
    if caps(low).sum() > budget:
        return caps(low)
    for _ in range(64):
        middle = (low + high) / 2
        if middle <= low or middle >= high:
            break
        low, high = (middle, high) if caps(middle).sum() <= budget else (low, middle)
    return caps(low)


def site_growth(
    site_ids: np.ndarray, visited: np.ndarray, growth: float, sites: int, start: np.ndarray | None = None
) -> np.ndarray | None:
    """Most pages of each site in a batch (indexed by site-id): ``growth`` times the pages fetched from it
    so far, at least 1 and at least its pages not fetched yet among ``start`` (where the crawl was told to
    start: seeds, pages added at depth 0, which a person asked for and a first harvest is expected to
    fetch); None when ``growth`` is 0 (no limit).

    Why: what the manager knows of a site — its pages, its links, its share of the PageRank — comes from
    the pages fetched from it. After its home page alone, a small site whose home page lists every page
    looks as large as a large one whose home page lists ten sections, and a batch that filled itself from
    what it sees would stake most of itself on the first kind. Letting each site's part of a batch grow
    geometrically with what was fetched from it (TCP's slow start, applied to a site) keeps the early
    batches short, so the next manager run decides with more of each site seen; a batch of 100,000 over
    thousands of sites is not limited after its first few cycles."""
    if growth <= 0:
        return None
    site_ids = np.asarray(site_ids, dtype=np.int64)
    fetched = np.bincount(site_ids, weights=visited, minlength=sites + 1)
    limits = np.maximum(np.floor(growth * fetched), 1).astype(np.int64)
    if start is not None:
        waiting = np.bincount(
            site_ids,
            weights=np.asarray(start, dtype=bool) & ~np.asarray(visited, dtype=bool),
            minlength=sites + 1,
        )
        limits = np.maximum(limits, waiting.astype(np.int64))
    return limits


def site_catchup(
    weights: np.ndarray,
    site_ids: np.ndarray,
    visited: np.ndarray,
    waiting: np.ndarray,
    size: int,
    base: float = CATCHUP_BASE,
) -> np.ndarray:
    """Weights for a batch of ``size`` (indexed by site-id, like ``weights``: each site's estimated share
    of the PageRank or of the pages, ``WIRE_BATCH_SITE_SPLIT``) that make up for the earlier batches: each
    site's shortfall w_s × (F + ``size``) − f_s (w normalised to sum 1, f_s the pages fetched from the site
    so far — ``visited`` — and F their total), at least 0 and at most its pages ``waiting`` (eligible, never
    fetched), plus ``base`` × w_s × ``size`` (``WIRE_BATCH_SITE_CATCHUP``).

    Why: the estimates are worst when the batches that decide most of a crawl's start are chosen — a
    site's pages and links show only as it is fetched, so a large site whose home page lists few pages
    (a manual found language by language) looks small for a few cycles, and a small one whose home page
    lists them all looks large. Splitting each batch by the current estimate alone never returns what
    those early batches gave the wrong sites; splitting by the shortfall steers the pages fetched so far,
    taken together, towards the current estimate (the "deficit" rule of proportional apportionment). The
    shortfall counts only pages there are to fetch, and the ``base`` share stays, so a crawl whose sites
    have all been fetched (revisits only) is split by the estimate as without catch-up."""
    weights = np.asarray(weights, dtype=np.float64)
    share = np.zeros(len(weights))
    share[1:] = weights[1:] / weights[1:].sum()
    site_ids = np.asarray(site_ids, dtype=np.int64)
    fetched = np.bincount(site_ids, weights=np.asarray(visited, dtype=np.float64), minlength=len(weights))
    left = np.bincount(site_ids, weights=np.asarray(waiting, dtype=np.float64), minlength=len(weights))
    fetched, left = fetched[: len(weights)], left[: len(weights)]
    shortfall = np.clip(share * (fetched.sum() + size) - fetched, 0, left)
    out = np.zeros(len(weights))
    out[1:] = np.maximum(shortfall[1:] + base * share[1:] * size, np.finfo(np.float64).tiny)
    return out


def select_batches(
    profits: np.ndarray,
    site_ids: np.ndarray,
    candidates: np.ndarray,
    *,
    size: int,
    samesite: int,
    count: int = 1,
    site_share: float = 1.0,
    site_weights: np.ndarray | None = None,
    site_limits: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Up to ``count`` disjoint batches of indices into ``profits``, each the ``size`` candidates of highest
    profit with at most ``site_caps`` of one site, in decreasing profit; a batch is smaller, and batches are
    fewer, when candidates run out (no empty batch is returned). Ties go to the lower index.

    The cap is a share of the batch among the S sites that still have candidates. Without
    ``site_weights`` (or with equal ones), an even share: ``size`` // S — or, as sites with fewer
    candidates than that leave their slots to the others, the largest cap c with
    Σ_sites min(c, candidates) <= ``size`` (water-filling) — times ``site_share`` (0: none), and never
    more than ``samesite``. With ``site_weights`` w (indexed by site-id; the manager passes each site's
    estimated share of the PageRank, or its known pages: ``WIRE_BATCH_SITE_SPLIT``), site s may get
    floor(c × w_s) pages (at least 1), c the largest with
    Σ_sites min(floor(c × w_s), candidates) <= ``site_share`` × ``size``.

    Why the cap follows the batch: PageRank on the partial graph favours the sites crawled most (their
    rank flows to their own unfetched pages, whose deep pages then outrank other sites' first levels),
    so a batch picked by profit alone piles onto a few sites. ``samesite`` (WIRE's 500) is meant for
    batches of 100,000; an even share keeps every site with candidates in each batch whatever K is,
    which also spreads the harvest's politeness waits. The cap is rounded down, so a batch can come out up
    to S − 1 pages short of ``size``.

    Why in proportion to site size: a web's PageRank, and the value of a site's pages, grow with the
    site (every page receives the random jump), and site sizes are heavy-tailed, so an even count of
    pages starves the large sites. In proportion to the pages known of each site (Baeza-Yates et al.
    2005's "larger sites first", as an allocation) helps; in proportion to the sites' estimated share of
    the PageRank (``sites.py``), which also sees the pages of a large site not found yet, more. Rounding
    down is coarser with unequal shares: a batch can come out shorter. What each split and the cap itself
    are worth is measured by ``benchmarks/crawl_order.py`` and ``crawl_order_sim.py``.

    ``site_limits`` (indexed by site-id, >= 1): most pages of each site in any one batch, on top of the
    cap; a site's unused share goes to the others only up to their limits, so a batch may come out
    short (the manager passes a multiple of the documents fetched from each site with WIRE_BATCH_SITE_GROWTH:
    ``site_growth``)."""
    if size < 1 or samesite < 1 or count < 1:
        raise ValueError("size, samesite and count must be >= 1")
    pool = np.flatnonzero(candidates)
    # Sort once by (site, profit descending, index): for profits >= 0 the float32 bits order as the values.
    bits = np.maximum(np.asarray(profits, dtype=np.float32)[pool], 0).view(np.uint32)
    key = (site_ids[pool].astype(np.uint64) << np.uint64(32)) | (np.uint32(0xFFFFFFFF) - bits).astype(
        np.uint64
    )
    pool = pool[np.argsort(key, kind="stable")]
    del key, bits
    batches = []
    for _ in range(count):
        ranks = _rank_in_group(site_ids[pool])
        starts = np.flatnonzero(ranks == 0)
        counts = np.diff(np.append(starts, len(pool))).astype(np.int64)  # candidates per site
        runs = counts
        if site_limits is not None:
            counts = np.minimum(counts, np.asarray(site_limits)[site_ids[pool[starts]]])
        weights = None if site_weights is None else np.asarray(site_weights)[site_ids[pool[starts]]]
        caps = site_caps(size, samesite, counts, site_share, weights)
        if site_limits is not None:
            caps = np.minimum(caps, counts)
        capped = pool[ranks < np.repeat(caps, runs)]
        if len(capped) > size:
            # Highest profit first, lower index on ties: sort by (−profit, index).
            top = np.argpartition(-profits[capped], size - 1)[:size]
            threshold = profits[capped[top]].min()
            above = capped[profits[capped] > threshold]
            at = np.sort(capped[profits[capped] == threshold])[: size - len(above)]
            capped = np.concatenate([above, at])
        if len(capped) == 0:
            break
        chosen = capped[np.lexsort((capped, -profits[capped]))]
        batches.append(chosen)
        taken = np.zeros(len(profits), dtype=bool)
        taken[chosen] = True
        pool = pool[~taken[pool]]
    return batches
