"""One manager run over a collection, ``manage(collection, config)``: the manager's reads and writes.

It reads the document and site records and the link counts, has ``planning.plan`` choose the batches
(leaving out the sites' robots.txt documents, fetched on their own schedule, and the pages of sites whose
robots.txt is unreachable), writes each batch as a directory (``batch``), optionally split by site into
parts, marks the pages with their batch number, and stores the scores in the records (documents:
pagerank, wlrank, hub, authority, quality, freshness, profit, batch; sites: siterank, pagerank_sum).
Scores with weight 0 are not computed and their fields keep what they held; OPIC has no field.
``scores.json`` says which link scores the records hold and over which link graph (``scorefile``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wirescrapy.collection.groups import ip_text, server_groups
from wirescrapy.collection.metadata import DocFlag, RobotsState
from wirescrapy.collection.nearduplicates import NearDuplicateFile

from .batch import BatchSite, BatchURL, manager_settings, next_batch_number, pages_out, write_batch
from .nearduplicates import clusters_of
from .planning import Plan, pages_of_closed_sites, plan
from .scorefile import DOCUMENT_SCORES, SITE_SCORES, ScoreStamp, link_digest
from .sections import group_ids, mirror_path, section

if TYPE_CHECKING:
    from wirescrapy.collection.urls import PathArrays
    from wirescrapy.config import WireConfig

logger = logging.getLogger(__name__)


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


@dataclass
class Computed:
    """A manager run's decision, not written yet (``compute``): what ``write`` writes."""

    now: float
    documents: int  # the documents (doc-ids 1..documents) and sites it saw
    sites: int
    plan: Plan
    seconds: (
        float  # what computing it took (``WIRE_PLAN_AHEAD`` starts the next one that long before it is due)
    )
    links_digest: str = ""  # the link graph it read (``scorefile.link_digest``), stamped on the scores


def manage(
    collection,
    config,
    now: float | None = None,
    *,
    batches: int | None = None,
    parts: int = 1,
    dry_run: bool = False,
    rng: np.random.Generator | None = None,
) -> ManagerReport:
    """Run the manager over ``collection`` (open for writing unless ``dry_run``); ``batches`` and
    ``parts`` override ``WIRE_BATCH_COUNT`` and the default of one part."""
    return write(
        collection,
        config,
        compute(collection, config, now, batches=batches, rng=rng)(),
        parts=parts,
        dry_run=dry_run,
    )


def compute(
    collection,
    config,
    now: float | None = None,
    *,
    batches: int | None = None,
    exclude: np.ndarray | None = None,
    rng: np.random.Generator | None = None,
    snapshot: bool = False,
):
    """Read what a manager run needs from ``collection`` now and return a function of no arguments that
    computes the plan from it and returns a ``Computed`` for ``write``. With ``snapshot`` the records are
    copied, so the function touches nothing of the collection and may run in another thread while the
    harvest goes on writing (``WIRE_PLAN_AHEAD``); without, it reads them in place. ``exclude``: doc-ids left
    out besides robots.txt, closed sites and parts out (the pages still queued or in flight in the
    harvest)."""
    now = time.time() if now is None else float(now)
    n = collection.documents.count
    site_count = collection.sites.count
    docs = collection.documents.records[1 : n + 1]
    sites = collection.sites.records[: site_count + 1]
    if snapshot:
        docs, sites = np.array(docs), np.array(sites)
    robots_docs = sites["robots_docid"][1:]
    left_out = np.concatenate(
        [
            robots_docs[robots_docs > 0],
            pages_of_closed_sites(docs, sites, config, now),
            np.asarray(pages_out(collection.dir / "batches", now, config.part_timeout), dtype=np.int64),
            np.asarray(exclude if exclude is not None else [], dtype=np.int64),
        ]
    )
    links = collection.links.to_csr(n_docs=n)
    digest = link_digest(collection.links, n)
    ordered = collection.links.to_csr(n_docs=n, ordered=True) if config.score_weights["wlrank"] > 0 else None
    # The URLs are read only when a manager run needs their groups.
    groups = path_groups(config, collection.urls.path_arrays(1, n)) if group_keys(config) else {}
    sections, mirrors = groups.get("sections"), groups.get("mirrors")
    near = NearDuplicateFile(collection.dir, readonly=True)
    try:
        clusters = clusters_of(near.records, n)
    finally:
        near.close()
    # Sites on one server share its connection (WIRE_POLITENESS_GROUP): the planner counts a group's capacity.
    names = [""] + [collection.urls.site_name(site_id) for site_id in range(1, site_count + 1)]
    servers = server_groups(sites, names, config.politeness_group)

    def run() -> Computed:
        started = time.perf_counter()
        result = plan(
            docs,
            links,
            config,
            now,
            count=batches,
            exclude=left_out,
            links_in_page_order=None if ordered is None else (lambda: ordered),
            sites=site_count,
            rng=rng,
            site_records=sites,
            sections=sections,
            mirrors=mirrors,
            groups=servers,
            clusters=clusters,
        )
        return Computed(now, n, site_count, result, time.perf_counter() - started, digest)

    return run


def write(
    collection,
    config,
    computed: Computed,
    *,
    parts: int = 1,
    dry_run: bool = False,
    created: float | None = None,
    ahead: bool = False,
) -> ManagerReport:
    """Write what ``compute`` decided into ``collection``: the batches, each page's batch number and the
    scores of the documents and sites it saw (those added since keep theirs). ``created``: the batches'
    time, from which a page's visit counts as done in them (default: the time the plan was computed for);
    ``ahead``: planned while a harvest went on (``WIRE_PLAN_AHEAD``), said so in batch.json."""
    now, n, result = computed.now, computed.documents, computed.plan
    docs = collection.documents.records[1 : n + 1]
    sites = collection.sites.records[: computed.sites + 1]
    batches_dir = collection.dir / "batches"
    first = next_batch_number(batches_dir, at_least=int(docs["batch"].max(initial=0)) + 1)
    numbers, paths, batch_sites = [], [], set()
    info = {
        "collection": str(collection.dir.resolve()),
        "collection_id": collection.id,
        "size": config.batch_size,
        "settings": manager_settings(config),
        "planning_seconds": round(computed.seconds, 3),
        **({"planned_ahead": True} if ahead else {}),
        **({"time_led": True} if result.time_led else {}),
    }
    # Each site's pages the manager could have chosen and left for later batches, batch by batch.
    left = np.bincount(docs["siteid"][result.eligible], minlength=len(sites)).astype(np.int64)
    if result.site_left is not None:  # the pages the manager expects to find count too
        known = min(len(left), len(result.site_left))
        left[:known] = np.maximum(left[:known], np.round(result.site_left[:known]).astype(np.int64))
    for number, doc_ids in enumerate(result.batches, start=first):
        numbers.append(number)
        batch_sites.update(np.unique(docs["siteid"][doc_ids - 1]).tolist())
        left -= np.bincount(docs["siteid"][doc_ids - 1], minlength=len(left))[: len(left)]
        if dry_run:
            continue
        urls, site_list = _batch_rows(
            collection, config, docs, sites, doc_ids, result.profit, now, left, result.critical
        )
        paths += write_batch(
            batches_dir,
            number,
            urls,
            site_list,
            parts=parts,
            info=info,
            created=now if created is None else created,
            group_mode=config.politeness_group,
        )
        docs["batch"][doc_ids - 1] = number
        logger.info(
            "manager: batch %(number)06d, %(urls)d URLs of %(sites)d sites, in %(path)s",
            {"number": number, "urls": len(urls), "sites": len(site_list), "path": batches_dir},
        )
    if not dry_run:
        store_scores(docs, sites, result)
        collection.documents.flush()
        collection.sites.flush()
        stamp_scores(collection.dir, config, computed)
    top = []
    if result.batches:
        top = [(float(result.profit[d - 1]), collection.url(int(d))) for d in result.batches[0][:5]]
    return ManagerReport(now, n, int(result.eligible.sum()), result, numbers, paths, len(batch_sites), top)


def store_scores(docs: np.ndarray, sites: np.ndarray, result: Plan) -> None:
    """The plan's scores into the document records ``docs`` (doc-ids 1..n) and the site records ``sites``
    (indexed by site-id)."""
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


def stamp_scores(directory: Path, config, computed: Computed) -> None:
    """Write ``scores.json`` (``scorefile``): the link scores now stored and the graph they are over. Those
    this run computed, and those an earlier run stored over the same graph, which the records keep."""
    if not computed.links_digest:
        return
    stamp = ScoreStamp(computed.documents, computed.sites, computed.links_digest, config.pagerank_damping)
    previous = ScoreStamp.read(directory)
    names = set(previous.stored(stamp) if previous is not None else ())
    names.update(name for name in DOCUMENT_SCORES + SITE_SCORES if name in computed.plan.scores)
    replace(stamp, scores=tuple(sorted(names))).write(directory)


def _batch_rows(
    collection,
    config,
    docs,
    sites,
    doc_ids,
    profits,
    now,
    left: np.ndarray,
    critical: np.ndarray | None = None,
) -> tuple[list[BatchURL], list[BatchSite]]:
    """The batch's rows: URLs from the URL store (with the redirect hops that led to them and their stored
    page's validators), sites' origins, IPs, robots.txt, pages ``left`` for later batches and whether the
    batch was planned for the site to fetch through it (``critical``; both by site-id)."""
    rows = docs[doc_ids - 1]
    # Each field read as a column of Python values: a field of one record is a slow read.
    urls = [
        BatchURL(d, site, depth, dynamic, profit, last, collection.url(d), redirects, etag, modified)
        for d, site, depth, dynamic, profit, last, redirects, etag, modified in zip(
            doc_ids.tolist(),
            rows["siteid"].tolist(),
            rows["depth"].tolist(),
            ((rows["flags"] & DocFlag.DYNAMIC) != 0).tolist(),
            np.asarray(profits)[doc_ids - 1].astype(np.float64).tolist(),
            rows["last_visit"].astype(np.float64).tolist(),
            rows["redirects"].tolist(),
            rows["etag"].tolist(),
            rows["last_modified_header"].tolist(),
        )
    ]
    site_list = []
    for site_id in np.unique(rows["siteid"]).tolist():
        record = sites[site_id]
        state = RobotsState(int(record["robots_state"]))
        body = None
        if state is RobotsState.VALID and record["robots_docid"]:
            body = collection.load_page(int(record["robots_docid"]))
        fetched = float(record["robots_fetched"])
        period = (
            config.robots_txt_invalid_period
            if state is RobotsState.UNREACHABLE
            else config.robots_txt_valid_period
        )
        site_list.append(
            BatchSite(
                site_id=site_id,
                origin=collection.urls.site_name(site_id),
                ip=ip_text(record["ip"]),
                robots_state=state,
                robots_fetched=fetched,
                robots_due=state is RobotsState.UNKNOWN or now >= fetched + period,
                robots_txt=body,
                crawl_delay=float(record["crawl_delay"]),
                docs=int(record["docs"]),
                left=max(int(left[site_id]), 0) if site_id < len(left) else 0,
                critical=critical is not None and site_id < len(critical) and bool(critical[site_id]),
            )
        )
    return urls, site_list


def path_groups(config: WireConfig, urls: PathArrays | Iterable[tuple[int, bytes]]) -> dict[str, np.ndarray]:
    """The groups of URL paths a manager run with ``config`` needs (``sections``, ``mirrors``: each page's,
    aligned with the documents), from the URL store's arrays (``URLStore.path_arrays``) or (site-id,
    path) pairs, read once (``sections.group_ids``)."""
    keys = group_keys(config)
    return dict(zip(keys, group_ids(urls, *keys.values()))) if keys else {}


def group_keys(config: WireConfig) -> dict:
    """The path groups a manager run with ``config`` needs, by name, with the key function of each."""
    keys = {}
    if config.score_weights["crosslinks"] > 0:
        keys["sections"] = section
    if config.score_weights["mirrors"] > 0:
        keys["mirrors"] = mirror_path
    return keys
