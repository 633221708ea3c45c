"""What one manager run decides, on plain arrays: no collection, no file (thesis §7.2.1, paper §2.1).

``plan`` takes the document records and the link counts and

1. filters out the pages that may not be fetched now (``profit.eligible``);
2. computes the link scores that ``WIRE_SCORE_WEIGHTS`` asks for (``ranking``: PageRank, HITS, weighted
   link rank, site rank, OPIC; ``sections``: links from other sections, the PageRank of a page's copies in
   other sections) and combines them with the other scores into each page's intrinsic quality
   (``profit.intrinsic_quality``);
3. estimates Pr(fresh) of every downloaded page (``freshness``);
4. computes the profit of downloading each page, quality × (1 − Pr(fresh) × visited);
5. estimates each site's share of the final PageRank and its pages left (``sites``), and has the planner
   choose the batch from the profits (``planner.plan_batches``), ``WIRE_BATCH_COUNT`` times.

``run.manage`` feeds it from a collection and writes what it chose. The PageRank of the previous run (in the
records) is the starting guess of this one, which saves most of the iterations when the graph changed
little. OPIC keeps no state between runs: every run replays the fetches so far, in order of first visit,
from the seeds (``opic.opic``, ``crawl_start``, ``fetch_order``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix

from wirescrapy.collection.metadata import DocFlag, RobotsState

from . import opic, ranking
from .freshness import freshness
from .nearduplicates import without_represented
from .planner import SiteState, plan_batches
from .profit import eligible, intrinsic_quality, pages_to_download, profit
from .sections import cross_section_links, mirrored
from .sites import SiteLinks, pages_left, site_links, site_shares
from .timeshare import site_waits


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
    site_left: np.ndarray | None = None  # each site's pages left as estimated (by site-id)
    critical: np.ndarray | None = None  # in a led batch, the sites planned to fetch through it (by site-id)

    @property
    def time_led(self) -> bool:
        """The slowest site's share set the batch's time (``planner``, rule 5)."""
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
    groups: np.ndarray | None = None,
    clusters: np.ndarray | None = None,
) -> Plan:
    """Steps 1–5 of a manager run over ``docs`` (the records of doc-ids 1..n) and ``links`` (the link
    counts as ``LinkGraph.to_csr(n)`` gives them). ``links_in_page_order`` returns the links with each
    page's list in page order, for the weighted link rank (default: ``links``). ``sites``: the highest
    site-id (default: the highest in ``docs``). ``site_records``: the site records (indexed by site-id), for
    each site's wait (without them every site has the normal wait). ``sections``: each page's section
    (aligned with ``docs``, ``sections.section_ids``), needed when "crosslinks" has a weight. ``mirrors``:
    each page's group of copies in its site's sections (aligned with ``docs``, ``sections.mirror_ids``),
    needed when "mirrors" has a weight. ``groups``: each site's server group (indexed by site-id,
    ``collection.groups.server_groups``), whose one connection its sites share (default: each its own).
    ``clusters``: each page's near-duplicate cluster (aligned with ``docs``, ``nearduplicates.clusters_of``):
    no profit in fetching more of a cluster whose representative is stored."""
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
    # The planner's estimates of each site come from one pass over the links.
    read = site_links(links, site_of, sites)
    site_values = batch_site_weights(links, site_of, sites, config, visited, read)
    site_left = pages_left(links, site_of, visited, sites, read=read)
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
            result = opic.opic(graph, fetch_order(docs), np.concatenate([[False], crawl_start(docs)]))
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
    if clusters is not None:
        profits = without_represented(profits, clusters, docs["content_hash"] != 0)
    waits = np.full(sites + 1, config.wait_normal)
    if site_records is not None:
        known = min(len(site_records), sites + 1)
        pages = np.zeros(sites + 1, dtype=np.int64)
        delays = np.zeros(sites + 1)
        pages[:known] = site_records["docs"][:known]
        delays[:known] = site_records["crawl_delay"][:known]
        waits = site_waits(pages, delays, config.wait_normal, config.wait_large_site, config.large_site_pages)
    chosen = plan_batches(
        profits,
        docs["siteid"],
        ok,
        visited,
        SiteState(site_values, site_left, waits, groups),
        size=config.batch_size,
        samesite=config.batch_samesite,
        count=count or config.batch_count,
        explore=config.batch_explore,
        growth=config.batch_site_growth,
        start=docs["depth"] == 0,
        queued=config.collection_wait > 0,
        max_sites_per_group=config.max_sites_per_group,
    )
    lap("selection")
    return Plan(
        ok,
        visited,
        quality,
        fresh,
        profits,
        [ids + 1 for ids in chosen.batches],
        scores,
        iterations,
        timings,
        site_left,
        chosen.critical,
    )


def _returning(value):
    """A function of no arguments that returns ``value`` (which it keeps)."""
    return lambda: value


def batch_site_weights(
    links: csr_matrix,
    site_of: np.ndarray,
    sites: int,
    config,
    visited: np.ndarray | None = None,
    read: SiteLinks | None = None,
) -> np.ndarray:
    """Each site's estimated share of the final PageRank (indexed by site-id, > 0 for every site; entry 0
    unused), the value the planner shares a batch by (``sites.site_shares``). ``visited`` (aligned with the
    pages, doc-id order): the pages fetched, so that a site's unseen pages are those its known pages left can
    reveal (without, Chao's estimate whole). ``read``: ``site_links``' pass over ``links``, when the caller
    has it already."""
    if not site_of[1:].any():
        return np.ones(sites + 1)
    fetched = None if visited is None else np.concatenate([[False], visited])
    shares = site_shares(
        links, site_of, sites, config.pagerank_damping, config.siterank_max_error, fetched, read=read
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
