"""What the crawl found: WIRE's reports (the paper's section 3; ``wire-info-analysis``) over one collection.

``build_report`` reads a collection (read-only: it may run while a crawl writes) and computes every section
as plain data — tables of numpy columns, plots as series, headline figures (``tables.py``) — one module per
group of sections: ``documents.py``, ``scores.py``, ``sites.py`` (with the bow-tie of ``structure.py``) and
``crawl.py`` (languages, links out of the crawl, harvests, politeness). ``write_report`` writes them:
``index.html`` (one self-contained page, the plots inline as SVG: ``render.py``), ``data/*.csv`` (every table,
WIRE's ``value,documents,fraction`` for histograms) and ``report.json`` (the headline figures). Where the
crawl's archive has an index, the report says how to replay it, and links its top pages there (``replay.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .crawl import (
    harvests_section,
    languages_section,
    outlinks_section,
    politeness_section,
)
from .data import CrawlData
from .documents import documents_section
from .nearduplicates import near_duplicates_section
from .replay import Replay, replay_of
from .scores import scores_section
from .sites import site_table, sites_section, structure_section
from .tables import Section


@dataclass
class Report:
    directory: str
    as_of: float
    summary: dict
    sections: list[Section]
    costs: dict[str, float] = field(default_factory=dict)  # seconds per step, for the benchmark
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds of this process per step
    replay: Replay | None = None  # where the archive replays; None: no archive with an index


def build_report(collection, config, as_of: float | None = None, replay: str = "") -> Report:
    """The report of ``collection``; with ``replay`` (pywb's root of the collection, ``scrapy report
    --replay``), its pages link to their replay when ``WIRE_WARC_DIR`` holds an index."""
    data = CrawlData(collection, config, as_of)
    replayed = replay_of(config.warc_dir, replay)
    costs: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def timed(name: str, compute):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = compute()
        costs[name] = time.perf_counter() - start
        cpu[name] = time.process_time() - start_cpu
        if isinstance(result, Section):
            result.seconds = costs[name]
        return result

    timed("read links", lambda: data.links)
    timed("link scores", lambda: data.scores)
    columns = timed("site figures", lambda: site_table(data))
    sections = [
        timed("documents", lambda: documents_section(data)),
        timed("near-duplicates", lambda: near_duplicates_section(data)),
        timed("scores", lambda: scores_section(data, replayed)),
        timed("sites", lambda: sites_section(data, columns)),
        timed("structure", lambda: structure_section(data, columns)),
        timed("languages", lambda: languages_section(data, columns)),
        timed("outlinks", lambda: outlinks_section(data)),
        timed("harvests", lambda: harvests_section(data)),
        timed("politeness", lambda: politeness_section(data, columns)),
    ]
    return Report(str(data.directory), data.as_of, summary(data, sections), sections, costs, cpu, replayed)


def summary(data: CrawlData, sections: list[Section]) -> dict:
    by_key = {s.key: s.figures for s in sections}
    documents = by_key["documents"]
    harvests = by_key["harvests"]
    code_failed = int((data.fetched & data.real & ~data.ok).sum())
    return {
        "documents": int(data.n_docs),
        "fetched": documents["fetched"],
        "gathered": documents["gathered"],
        "sites": int(data.n_sites),
        "links": int(data.links.nnz),
        "raw_bytes": documents["raw_bytes"],
        "stored_bytes": documents["stored_bytes"],
        "duplicates": documents["duplicates"],
        "fetched_not_ok": code_failed,
        "crawl_first_start_utc": harvests.get("first_start_utc", ""),
        "crawl_last_end_utc": harvests.get("last_end_utc", ""),
        "batches": harvests.get("batches", 0),
        "languages": dict(list(by_key["languages"].items())[:5]),
    }
