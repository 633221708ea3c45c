"""WIRE's manager: long-term scheduling (thesis §7.2.1, paper §2.1).

One run of the manager, ``run_manager(collection, config)``:

1. filters out the pages that may not be fetched now (``profit.eligible``);
2. computes the link scores that ``WIRE_SCORE_WEIGHTS`` asks for (``ranking``: PageRank, HITS, weighted
   link rank, site rank, OPIC) and combines them with the other scores into each page's intrinsic quality
   (``profit.intrinsic_quality``);
3. estimates Pr(fresh) of every downloaded page (``freshness``);
4. computes the profit of downloading each page, quality × (1 − Pr(fresh) × visited);
5. takes the K pages of highest profit, at most ``WIRE_BATCH_SAMESITE`` per site and, by default, no more
   than a share of the batch in proportion to the site's known pages (K // sites with eligible pages
   when sites are alike, ``WIRE_BATCH_SITE_SHARE``),
   ``WIRE_BATCH_COUNT`` times, and writes each set as a batch directory (``batch``), optionally split by
   site into parts;
6. stores the scores in the metadata records (documents: pagerank, wlrank, hub, authority, quality,
   freshness, profit, batch; sites: siterank, pagerank_sum). Scores with weight 0 are not computed and
   their fields keep what they held. OPIC has no field: every run replays the fetches so far, in order of
   first visit, from the seeds (``ranking.opic``, ``crawl_start``, ``fetch_order``).

``plan`` is steps 1–5 on plain arrays, with no collection: the benchmark and the tests drive it directly.
The PageRank of the previous run (in the records) is the starting guess of this one, which saves most of
the iterations when the graph changed little.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix

from wirescrapy.collection.metadata import DocFlag, RobotsState

from . import ranking
from .batch import BatchSite, BatchURL, next_batch_number, read_batch, write_batch
from .freshness import freshness
from .profit import (
    eligible,
    intrinsic_quality,
    pages_to_download,
    profit,
    select_batches,
)
from .sites import site_shares

__all__ = ["ManagerReport", "Plan", "manage", "plan", "read_batch", "run_manager"]

logger = logging.getLogger(__name__)

MANAGER_SETTINGS = (
    "max_depth_static", "max_depth_dynamic", "max_urls_per_site", "batch_size", "batch_samesite",
    "batch_site_share", "batch_site_split", "batch_count", "max_errors_different_batch", "score_weights",
    "score_age_exponent", "score_boost_frontpage", "pagerank_damping", "pagerank_max_error", "hits_max_error",
    "siterank_max_error", "minperiod_unsuccessful", "minperiod_successful_not_ok",
    "minperiod_successful_ok",
)


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
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # pagerank, wlrank, hub, authority, opic; siterank
    iterations: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


def plan(docs: np.ndarray, links: csr_matrix, config, now: float, *, count: int | None = None,
         exclude: np.ndarray | None = None, links_in_page_order: Callable[[], csr_matrix] | None = None,
         sites: int | None = None, rng: np.random.Generator | None = None) -> Plan:
    """Steps 1–5 of a manager run over ``docs`` (the records of doc-ids 1..n) and ``links`` (the link
    counts as ``LinkGraph.to_csr(n)`` gives them). ``links_in_page_order`` returns the links with each
    page's list in page order, for the weighted link rank (default: ``links``). ``sites``: the highest
    site-id (default: the highest in ``docs``)."""
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
    site_weights = batch_site_weights(links, site_of, sites, config)
    lap("site shares")
    scores, iterations, per_page = {}, {}, {}
    q = config.pagerank_damping
    if any(weights[name] > 0 for name in ("pagerank", "hub", "authority", "siterank", "opic")):
        graph = ranking.link_matrix(links)
        del links
        lap("link matrix")
        if weights["pagerank"] > 0 or weights["hub"] > 0 or weights["authority"] > 0:
            back = ranking.transpose(graph)
            lap("transpose")
            if weights["pagerank"] > 0:
                previous = np.zeros(n + 1, dtype=np.float32)
                previous[1:] = docs["pagerank"]
                result = ranking.pagerank(graph, q, config.pagerank_max_error, transposed=back,
                                          start=previous if previous.any() else None)
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
    if weights["queuesize"] > 0:
        per_page["queuesize"] = pages_to_download(docs["siteid"], ok, visited)

    quality = intrinsic_quality(docs, weights, per_page, now=now, age_exponent=config.score_age_exponent,
                                front_page_boost=config.score_boost_frontpage, rng=rng)
    lap("quality")
    fresh = freshness(docs, now)
    lap("freshness")
    profits = profit(quality, fresh, visited)
    chosen = select_batches(profits, docs["siteid"], ok, size=config.batch_size,
                            samesite=config.batch_samesite, count=count or config.batch_count,
                            site_share=config.batch_site_share, site_weights=site_weights)
    lap("selection")
    return Plan(ok, visited, quality, fresh, profits, [ids + 1 for ids in chosen], scores, iterations, timings)


def _returning(value):
    """A function of no arguments that returns ``value`` (which it keeps)."""
    return lambda: value


def batch_site_weights(links: csr_matrix, site_of: np.ndarray, sites: int, config) -> np.ndarray | None:
    """What a batch is shared among sites in proportion to (indexed by site-id; ``WIRE_BATCH_SITE_SPLIT``):
    each site's estimated share of the PageRank, its known pages, or None for an even share."""
    if config.batch_site_share <= 0 or config.batch_site_split == "even" or not site_of[1:].any():
        return None
    if config.batch_site_split == "pages":
        return np.maximum(np.bincount(site_of[1:], minlength=sites + 1), 1).astype(np.float64)
    shares = site_shares(links, site_of, sites, config.pagerank_damping, config.siterank_max_error)
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


# -- a run over a collection -----------------------------------------------------------------------------

@dataclass
class ManagerReport:
    now: float
    documents: int
    eligible: int
    plan: Plan
    numbers: list[int]  # batch numbers written (or that would be)
    paths: list[Path]  # directories a harvester reads: batches, or their parts
    sites: int  # sites in the batches
    top: list[tuple[float, str]]  # the best pages of the first batch: (profit, URL)


def run_manager(collection, config, now: float | None = None, **options) -> list[Path]:
    """One manager run over ``collection``; returns the directories written (see ``manage``)."""
    return manage(collection, config, now, **options).paths


def manage(collection, config, now: float | None = None, *, batches: int | None = None, parts: int = 1,
           dry_run: bool = False, rng: np.random.Generator | None = None) -> ManagerReport:
    """Run the manager over ``collection`` (open for writing unless ``dry_run``); ``batches`` and
    ``parts`` override ``WIRE_BATCH_COUNT`` and the default of one part."""
    now = time.time() if now is None else float(now)
    n = collection.documents.count
    site_count = collection.sites.count
    docs = collection.documents.records[1 : n + 1]
    sites = collection.sites.records[: site_count + 1]
    robots_docs = sites["robots_docid"][1:]
    result = plan(
        docs, collection.links.to_csr(n_docs=n), config, now, count=batches,
        exclude=np.concatenate([robots_docs[robots_docs > 0], pages_of_closed_sites(docs, sites, config, now)]),
        links_in_page_order=lambda: collection.links.to_csr(n_docs=n, ordered=True),
        sites=site_count, rng=rng,
    )
    batches_dir = collection.dir / "batches"
    first = next_batch_number(batches_dir, at_least=int(docs["batch"].max(initial=0)) + 1)
    numbers, paths, batch_sites = [], [], set()
    info = {
        "collection": str(collection.dir.resolve()), "size": config.batch_size,
        "settings": {"WIRE_" + name.upper(): getattr(config, name) for name in MANAGER_SETTINGS},
    }
    for number, doc_ids in enumerate(result.batches, start=first):
        numbers.append(number)
        batch_sites.update(np.unique(docs["siteid"][doc_ids - 1]).tolist())
        if dry_run:
            continue
        urls, site_list = _resolve(collection, config, docs, sites, doc_ids, result.profit, now)
        paths += write_batch(batches_dir, number, urls, site_list, parts=parts, info=info, created=now)
        docs["batch"][doc_ids - 1] = number
        logger.info("manager: batch %(number)06d, %(urls)d URLs of %(sites)d sites, in %(path)s",
                    {"number": number, "urls": len(urls), "sites": len(site_list), "path": batches_dir})
    if not dry_run:
        _store_scores(docs, sites, result)
        collection.documents.flush()
        collection.sites.flush()
    top = []
    if result.batches:
        top = [(float(result.profit[d - 1]), collection.url(int(d))) for d in result.batches[0][:5]]
    return ManagerReport(now, n, int(result.eligible.sum()), result, numbers, paths, len(batch_sites), top)


def pages_of_closed_sites(docs: np.ndarray, sites: np.ndarray, config, now: float) -> np.ndarray:
    """Doc-ids of the pages of sites whose robots.txt was unreachable at its last fetch and is not due
    again yet (RFC 9309 §2.3.1.4: nothing is fetched from such a site until it answers)."""
    closed = ((sites["robots_state"] == RobotsState.UNREACHABLE)
              & (now < sites["robots_fetched"] + config.robots_txt_invalid_period))
    if not closed.any():
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(closed[docs["siteid"]]) + 1


def _store_scores(docs: np.ndarray, sites: np.ndarray, result: Plan) -> None:
    for name in ("pagerank", "wlrank", "hub", "authority"):
        if name in result.scores:
            docs[name] = result.scores[name][1:]
    docs["quality"] = result.quality
    docs["freshness"] = result.freshness
    docs["profit"] = result.profit
    if "siterank" in result.scores:
        sites["siterank"][1:] = result.scores["siterank"][1 : len(sites)]
    if "pagerank" in result.scores:
        sums = np.bincount(docs["siteid"], weights=result.scores["pagerank"][1:], minlength=len(sites))
        sites["pagerank_sum"][1:] = sums[1 : len(sites)]


def _resolve(collection, config, docs, sites, doc_ids, profits, now) -> tuple[list[BatchURL], list[BatchSite]]:
    """The batch's rows: URLs from the URL store, sites' origins, IPs and robots.txt."""
    rows = docs[doc_ids - 1]
    urls = [
        BatchURL(int(d), int(r["siteid"]), int(r["depth"]), bool(r["flags"] & DocFlag.DYNAMIC),
                 float(profits[d - 1]), float(r["last_visit"]), collection.url(int(d)))
        for d, r in zip(doc_ids.tolist(), rows)
    ]
    site_list = []
    for site_id in np.unique(rows["siteid"]).tolist():
        record = sites[site_id]
        state = RobotsState(int(record["robots_state"]))
        body = None
        if state is RobotsState.VALID and record["robots_docid"]:
            body = collection.load_page(int(record["robots_docid"]))
        fetched = float(record["robots_fetched"])
        period = (config.robots_txt_invalid_period if state is RobotsState.UNREACHABLE
                  else config.robots_txt_valid_period)
        site_list.append(BatchSite(
            site_id=site_id, origin=collection.urls.site_name(site_id), ip=_ip_text(record["ip"]),
            robots_state=state, robots_fetched=fetched,
            robots_due=state is RobotsState.UNKNOWN or now >= fetched + period, robots_txt=body,
            crawl_delay=float(record["crawl_delay"]), docs=int(record["docs"]),
        ))
    return urls, site_list


def _ip_text(raw) -> str:
    """The record's 16-byte address as text; IPv4-mapped addresses as dotted quads, "" if unknown."""
    data = bytes(raw).ljust(16, b"\0")  # numpy drops trailing NUL bytes of an S16 value
    if not any(data):
        return ""
    address = ipaddress.IPv6Address(data)
    return str(address.ipv4_mapped or address)
