"""What one manager run decides, on plain arrays: no collection, no file (thesis §7.2.1, paper §2.1).

``plan`` takes the document records and the link counts and

1. filters out the pages that may not be fetched now (``profit.eligible``);
2. computes the link scores that ``WIRE_SCORE_WEIGHTS`` asks for (``ranking``: PageRank, HITS, weighted
   link rank, site rank, OPIC; ``sections``: links from other sections, the PageRank of a page's copies in
   other sections) and combines them with the other scores into each page's intrinsic quality
   (``profit.intrinsic_quality``);
3. estimates Pr(fresh) of every downloaded page (``freshness``);
4. computes the profit of downloading each page, quality × (1 − Pr(fresh) × visited);
5. takes the K pages of highest profit, at most ``WIRE_BATCH_SAMESITE`` per site and, by default, no more
   than a share of the batch in proportion to the site's estimated share of the PageRank
   (``WIRE_BATCH_SITE_SHARE``, ``WIRE_BATCH_SITE_SPLIT``, ``sites``), ``WIRE_BATCH_COUNT`` times.

``run.manage`` feeds it from a collection and writes what it chose. The PageRank of the previous run (in the
records) is the starting guess of this one, which saves most of the iterations when the graph changed
little. OPIC keeps no state between runs: every run replays the fetches so far, in order of first visit,
from the seeds (``ranking.opic``, ``crawl_start``, ``fetch_order``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix

from wirescrapy.collection.metadata import DocFlag, RobotsState

from . import ranking
from .freshness import freshness
from .profit import (
    eligible,
    intrinsic_quality,
    pages_to_download,
    profit,
    select_batches,
    site_catchup,
    site_growth,
)
from .sections import cross_section_links, mirrored
from .sites import SiteLinks, pages_left, site_links, site_shares
from .timeshare import site_time_limits


@dataclass
class Plan:
    """What one manager run decided. Per-page arrays are aligned with ``docs`` (position i = doc-id i + 1);
    link scores are indexed by doc-id (site rank by site-id)."""

    eligible: np.ndarray
    visited: np.ndarray
    quality: np.ndarray
    freshness: np.ndarray
    profit: np.ndarray
    batches: list[np.ndarray]  # doc-ids, in decreasing profit
    scores: dict[str, np.ndarray] = field(
        default_factory=dict
    )  # pagerank, wlrank, hub, authority, opic; siterank
    iterations: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    site_left: np.ndarray | None = (
        None  # WIRE_BATCH_TIME_LEAD: each site's pages left as estimated (by site-id)
    )
    critical: np.ndarray | None = (
        None  # in a led batch, the sites planned to fetch through it (bool, by site-id)
    )

    @property
    def time_led(self) -> bool:
        """WIRE_BATCH_TIME_LEAD: the slowest site's share set the batch's time."""
        return self.critical is not None


def plan(
    docs: np.ndarray,
    links: csr_matrix,
    config,
    now: float,
    *,
    count: int | None = None,
    exclude: np.ndarray | None = None,
    links_in_page_order: Callable[[], csr_matrix] | None = None,
    sites: int | None = None,
    rng: np.random.Generator | None = None,
    site_records: np.ndarray | None = None,
    sections: np.ndarray | None = None,
    mirrors: np.ndarray | None = None,
    kinds: np.ndarray | None = None,
) -> Plan:
    """Steps 1–5 of a manager run over ``docs`` (the records of doc-ids 1..n) and ``links`` (the link
    counts as ``LinkGraph.to_csr(n)`` gives them). ``links_in_page_order`` returns the links with each
    page's list in page order, for the weighted link rank (default: ``links``). ``sites``: the highest
    site-id (default: the highest in ``docs``). ``site_records``: the site records (indexed by site-id), for
    each site's wait (``WIRE_BATCH_TIME_SHARE``; without them every site has the normal wait). ``sections``:
    each page's section (aligned with ``docs``, ``sections.section_ids``), needed when "crosslinks" has a
    weight; with ``WIRE_BATCH_SITE_UNSEEN = sections`` each site's size is estimated section by section
    (without them, each site is one section). ``mirrors``: each page's group of copies in its site's sections
    (aligned with ``docs``, ``sections.mirror_ids``), needed when "mirrors" has a weight. ``kinds``: each
    page's kind (aligned with ``docs``, ``sections.group_ids`` with ``sections.kind``), which
    ``WIRE_BATCH_SITE_UNSEEN = kinds`` estimates each site's size by (without them, each site is one stratum,
    as `found`)."""
    n = len(docs)
    if links.shape != (n + 1, n + 1):
        raise ValueError(f"links must be ({n + 1}, {n + 1}) for {n} documents, got {links.shape}")
    weights = config.score_weights
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now_clock = time.perf_counter()
        timings[name] = now_clock - clock
        clock = now_clock

    ok = eligible(docs, config, now, exclude=exclude)
    visited = (docs["visits"] > 0) & (docs["last_visit"] > 0)
    lap("filters")

    # The weighted link rank reads the links in page order; the other scores need the counts only until
    # ``link_matrix`` has turned them into the graph, so they are let go then (the largest input).
    page_order = links_in_page_order
    if page_order is None and weights["wlrank"] > 0:
        page_order = _returning(links)
    site_of = np.zeros(n + 1, dtype=np.uint32)
    site_of[1:] = docs["siteid"]
    sites = max(int(sites or 0), int(docs["siteid"].max(initial=0)))
    section_of = None
    if sections is not None:
        section_of = np.zeros(n + 1, dtype=np.int64)
        section_of[1:] = sections
    strata_of = section_of
    if config.batch_site_unseen == "kinds":
        strata_of = None
        if kinds is not None:
            strata_of = np.zeros(n + 1, dtype=np.int64)
            strata_of[1:] = kinds
    # WIRE_BATCH_TIME_LEAD estimates each site's pages left from the same pass over the links as its share.
    lead = config.batch_time_share and config.batch_time_lead
    read = site_links(links, site_of, sites) if lead and config.batch_site_split == "pagerank" else None
    site_weights = batch_site_weights(links, site_of, sites, config, visited, strata_of, read)
    if site_weights is not None and config.batch_site_catchup:
        site_weights = site_catchup(
            site_weights,
            docs["siteid"],
            visited,
            ok & ~visited,
            config.batch_size * (count or config.batch_count),
        )
    site_left = None
    if lead and site_weights is not None:
        site_left = pages_left(links, site_of, visited, sites, strata_of, read)
    del read
    lap("site shares")
    scores, iterations, per_page = {}, {}, {}
    if weights["crosslinks"] > 0:
        if section_of is None:
            raise ValueError('score "crosslinks" has a weight but no sections were given')
        per_page["crosslinks"] = cross_section_links(links, section_of)[1:]
        lap("crosslinks")
    q = config.pagerank_damping
    if weights["mirrors"] > 0 and mirrors is None:
        raise ValueError('score "mirrors" has a weight but no mirror groups were given')
    if any(weights[name] > 0 for name in ("pagerank", "hub", "authority", "siterank", "opic", "mirrors")):
        graph = ranking.link_matrix(links)
        del links
        lap("link matrix")
        if any(weights[name] > 0 for name in ("pagerank", "hub", "authority", "mirrors")):
            back = ranking.transpose(graph)
            lap("transpose")
            if weights["pagerank"] > 0 or weights["mirrors"] > 0:
                previous = np.zeros(n + 1, dtype=np.float32)
                previous[1:] = docs["pagerank"]
                result = ranking.pagerank(
                    graph,
                    q,
                    config.pagerank_max_error,
                    transposed=back,
                    start=previous if previous.any() else None,
                )
                scores["pagerank"], iterations["pagerank"] = result.scores, result.iterations
                lap("pagerank")
            if weights["hub"] > 0 or weights["authority"] > 0:
                result = ranking.hits(graph, config.hits_max_error, transposed=back)
                scores["hub"], scores["authority"] = result.hub, result.authority
                iterations["hits"] = result.iterations
                lap("hits")
            del back
        if weights["siterank"] > 0:
            result = ranking.siterank(graph, site_of, q, config.siterank_max_error, sites=sites)
            scores["siterank"], iterations["siterank"] = result.scores, result.iterations
            per_page["siterank"] = result.scores[site_of[1:]]
            lap("siterank")
        if weights["opic"] > 0:
            result = ranking.opic(graph, fetch_order(docs), np.concatenate([[False], crawl_start(docs)]))
            scores["opic"], iterations["opic"] = result.scores, result.steps
            lap("opic")
        del graph
    if weights["wlrank"] > 0:
        ordered = page_order()
        result = ranking.wlrank(ordered, site_of, q, config.pagerank_max_error)
        scores["wlrank"], iterations["wlrank"] = result.scores, result.iterations
        del ordered
        lap("wlrank")
    for name in ("pagerank", "wlrank", "hub", "authority", "opic"):
        if name in scores:
            per_page[name] = scores[name][1:]
    if weights["mirrors"] > 0:
        mirror_of = np.zeros(n + 1, dtype=np.int64)
        mirror_of[1:] = mirrors
        per_page["mirrors"] = mirrored(scores["pagerank"], mirror_of)[1:]
        lap("mirrors")
    if weights["queuesize"] > 0:
        per_page["queuesize"] = pages_to_download(docs["siteid"], ok, visited)

    quality = intrinsic_quality(
        docs,
        weights,
        per_page,
        now=now,
        age_exponent=config.score_age_exponent,
        front_page_boost=config.score_boost_frontpage,
        rng=rng,
    )
    lap("quality")
    fresh = freshness(docs, now)
    lap("freshness")
    profits = profit(quality, fresh, visited)
    site_limits = site_growth(
        docs["siteid"], visited, config.batch_site_growth, sites, start=docs["depth"] == 0
    )
    shared = site_time_limits(
        docs["siteid"],
        ok,
        site_records,
        config,
        sites,
        weights=site_weights,
        limits=site_limits,
        left=site_left,
    )
    if shared is not None:
        site_limits = _smaller(site_limits, shared.limits)
        if shared.critical.any():  # WIRE_BATCH_TIME_LEAD: the critical sites take their whole limit
            site_weights = np.where(shared.critical, np.inf, site_weights)
    chosen = select_batches(
        profits,
        docs["siteid"],
        ok,
        size=config.batch_size,
        samesite=config.batch_samesite,
        count=count or config.batch_count,
        site_share=config.batch_site_share,
        site_weights=site_weights,
        site_limits=site_limits,
    )
    lap("selection")
    return Plan(
        ok,
        visited,
        quality,
        fresh,
        profits,
        [ids + 1 for ids in chosen],
        scores,
        iterations,
        timings,
        site_left,
        shared.critical if shared is not None and shared.led else None,
    )


def _smaller(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """The smaller of two per-site limits (None: no limit)."""
    return b if a is None else a if b is None else np.minimum(a, b)


def _returning(value):
    """A function of no arguments that returns ``value`` (which it keeps)."""
    return lambda: value


def batch_site_weights(
    links: csr_matrix,
    site_of: np.ndarray,
    sites: int,
    config,
    visited: np.ndarray | None = None,
    section_of: np.ndarray | None = None,
    read: SiteLinks | None = None,
) -> np.ndarray | None:
    """What a batch is shared among sites in proportion to (indexed by site-id; ``WIRE_BATCH_SITE_SPLIT``):
    each site's estimated share of the PageRank, its known pages, or None for an even share. ``visited``
    (aligned with the pages, doc-id order): the pages fetched, which ``WIRE_BATCH_SITE_UNSEEN`` `found`
    `sections` and `kinds` need (without, Chao's estimate whole); ``section_of`` (indexed by doc-id): each
    page's section, or its kind for `kinds`, which those estimate each site by (without, each site is one
    section, as `found`). ``read``: ``site_links``' pass over ``links``, when the caller has it already."""
    if config.batch_site_share <= 0 or config.batch_site_split == "even" or not site_of[1:].any():
        return None
    if config.batch_site_split == "pages":
        return np.maximum(np.bincount(site_of[1:], minlength=sites + 1), 1).astype(np.float64)
    fetched = strata = None
    if visited is not None and config.batch_site_unseen in ("found", "sections", "kinds"):
        fetched = np.concatenate([[False], visited])
    if config.batch_site_unseen in ("sections", "kinds"):
        # Without the pages' URLs (a caller of plan() that has only the records), each site is one section:
        # the estimate is then `found`'s.
        strata = site_of if section_of is None else section_of
    shares = site_shares(
        links, site_of, sites, config.pagerank_damping, config.siterank_max_error, fetched, strata, read
    )
    return np.maximum(shares, np.finfo(np.float64).tiny)


def crawl_start(docs: np.ndarray) -> np.ndarray:
    """Whether each page is where the crawl started, and OPIC's cash with it: the seeds and, with
    ``WIRE_ADD_ROOT``, their sites' home pages (depth 0; the gatherer files robots.txt at depth 0 too,
    which is neither)."""
    flags = docs["flags"]
    return ((flags & DocFlag.SEED) != 0) | ((docs["depth"] == 0) & ((flags & DocFlag.FRONT_PAGE) != 0))


def fetch_order(docs: np.ndarray) -> np.ndarray:
    """Doc-ids of the pages fetched at least once, in the order of their first visit (OPIC replays
    them so; equal times, which a crawl does not produce, in no set order)."""
    first_visit = docs["first_visit"]
    fetched = np.flatnonzero((docs["visits"] > 0) & (first_visit > 0))
    return fetched[np.argsort(first_visit[fetched])] + 1


def pages_of_closed_sites(docs: np.ndarray, sites: np.ndarray, config, now: float) -> np.ndarray:
    """Doc-ids of the pages of sites whose robots.txt was unreachable at its last fetch and is not due
    again yet (RFC 9309 §2.3.1.4: nothing is fetched from such a site until it answers); ``sites`` is the
    site records indexed by site-id."""
    closed = (sites["robots_state"] == RobotsState.UNREACHABLE) & (
        now < sites["robots_fetched"] + config.robots_txt_invalid_period
    )
    if not closed.any():
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(closed[docs["siteid"]]) + 1
