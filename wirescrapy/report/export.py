"""What ``scrapy export`` writes (WIRE's ``wire-info-extract``): the collection as rows, streamed.

Each export is a generator of rows (dicts of JSON-ready values) over a read-only collection: ``documents``
(URL, metadata and optionally the stored content, selected by ``Selection``; or the near-duplicates with
their clusters, ``nearduplicates.py``), ``links`` (the link graph as an edge list), ``sites`` and ``seeds``.
Documents are read in chunks of ``CHUNK`` doc-ids — a copy of that many records and one sequential read of
their URLs — so memory stays bounded whatever the collection's size.
``RowWriter`` writes rows as JSON Lines or CSV. A new kind of export is one more generator in ``EXPORTS``.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag, RobotsState
from wirescrapy.items import FetchError

from .nearduplicates import near_duplicate_rows

CHUNK = 1 << 16
FORMATS = ("jsonl", "csv")
CONTENTS = ("none", "document", "text")

DOCUMENT_COLUMNS = [
    "docid",
    "url",
    "siteid",
    "depth",
    "status",
    "error",
    "mime",
    "flags",
    "language",
    "raw_length",
    "stored_length",
    "first_visit",
    "last_visit",
    "last_modified",
    "visits",
    "duplicate_of",
    "pagerank",
    "wlrank",
    "hub",
    "authority",
]
_SCORES = ("pagerank", "wlrank", "hub", "authority")
_TIMES = ("first_visit", "last_visit", "last_modified")
_ERRORS = {kind.value: kind.label for kind in FetchError}


@dataclass
class Selection:
    """Which documents: doc-ids ``first``..``last``, URLs matching ``pattern`` (a regular expression,
    searched), of the ``sites`` named (origins), at depth ``min_depth``..``max_depth``; ``content`` adds
    the stored cleaned document or its text."""

    first: int = 1
    last: int | None = None
    pattern: str = ""
    sites: tuple[str, ...] = ()
    min_depth: int = 0
    max_depth: int | None = None
    content: str = "none"
    fetched_only: bool = False
    near_duplicates: bool = False  # only the near-duplicates, not their clusters' representatives


def flag_names(flags: int) -> str:
    return "|".join(flag.name.lower() for flag in DocFlag if flags & flag)


def documents(collection: Collection, selection: Selection) -> Iterator[dict]:
    if selection.near_duplicates:
        yield from near_duplicate_rows(collection, selection)
        return
    count = min(collection.documents.count, collection.urls.count)
    last = count if selection.last is None else min(selection.last, count)
    pattern = re.compile(selection.pattern) if selection.pattern else None
    site_ids = {collection.urls.site_id(name.rstrip("/")) for name in selection.sites}
    if selection.sites and site_ids == {0}:
        return
    parser = _parser() if selection.content == "text" else None
    for start in range(max(selection.first, 1), last + 1, CHUNK):
        end = min(start + CHUNK - 1, last)
        records = np.array(collection.documents.records[start : end + 1])
        keep = np.ones(len(records), dtype=bool)
        if site_ids:
            keep &= np.isin(records["siteid"], list(site_ids))
        keep &= records["depth"] >= selection.min_depth
        if selection.max_depth is not None:
            keep &= records["depth"] <= selection.max_depth
        if selection.fetched_only:
            keep &= records["visits"] > 0
        if not keep.any():
            continue
        columns = {name: records[name].tolist() for name in DOCUMENT_COLUMNS if name != "url"}
        for doc_id, site_id, path in collection.urls.iter_urls(start, end):
            i = doc_id - start
            if not keep[i]:
                continue
            url = collection.urls.site_name(site_id) + path.decode("utf-8", "surrogateescape")
            if pattern is not None and not pattern.search(url):
                continue
            row = {name: columns[name][i] for name in DOCUMENT_COLUMNS if name != "url"}
            row["url"] = url
            row["error"] = _ERRORS.get(row["error"], str(row["error"])) if row["error"] else ""
            row["mime"] = row["mime"].decode("ascii", "replace")
            row["language"] = row["language"].decode("ascii", "replace")
            row["flags"] = flag_names(row["flags"])
            for name in _SCORES:
                row[name] = float(f"{row[name]:.7g}")
            for name in _TIMES:
                row[name] = round(row[name], 3)
            if selection.content != "none":
                row["content"] = _content(collection, doc_id, parser)
            yield {
                name: row[name] for name in [*DOCUMENT_COLUMNS, *(["content"] if "content" in row else [])]
            }


def _parser():
    from wirescrapy.gatherer import Parser

    return Parser()


def _content(collection: Collection, doc_id: int, parser) -> str:
    data = collection.load_page(doc_id)
    if data is None:
        return ""
    if parser is None:
        return data.decode("utf-8", "replace")
    return parser.parse(data, collection.url(doc_id), "text/html; charset=utf-8").text


def links(collection: Collection, selection: Selection | None = None) -> Iterator[dict]:
    """The link graph, one row per stored link (source, target doc-ids, in page order)."""
    selection = selection or Selection()
    graph = collection.links
    ids = graph.extents.index().ids
    ids = ids[(ids >= selection.first) & ((ids <= selection.last) if selection.last is not None else True)]
    for source in ids.tolist():
        for target in graph.links(source).tolist():
            yield {"source": source, "target": target}


def sites(collection: Collection, selection: Selection | None = None) -> Iterator[dict]:
    count = min(collection.sites.count, collection.urls.site_count)
    for start in range(1, count + 1, CHUNK):
        records = np.array(collection.sites.records[start : min(start + CHUNK, count + 1)])
        for i, record in enumerate(records.tolist()):
            row = dict(zip(records.dtype.names, record))
            site_id = start + i
            yield {
                "siteid": site_id,
                "site": collection.urls.site_name(site_id),
                "docs": row["docs"],
                "fetched": row["fetched"],
                "ok": row["ok"],
                "errors": row["errors"],
                "static": row["static"],
                "dynamic": row["dynamic"],
                "multimedia": row["multimedia"],
                "robots_state": RobotsState(row["robots_state"]).name.lower()
                if row["robots_state"] in RobotsState._value2member_map_
                else str(row["robots_state"]),
                "crawl_delay": float(row["crawl_delay"]),
                "last_visit": row["last_visit"],
                "siterank": float(f"{row['siterank']:.7g}"),
                "pagerank_sum": float(f"{row['pagerank_sum']:.7g}"),
                "new_sites": row["new_sites"],
                "new_sites_refused": row["new_sites_refused"],
            }


def seeds(collection: Collection, selection: Selection | None = None) -> Iterator[dict]:
    """The documents given as start URLs (flag SEED)."""
    count = min(collection.documents.count, collection.urls.count)
    for start in range(1, count + 1, CHUNK):
        end = min(start + CHUNK - 1, count)
        flags = np.array(collection.documents.records["flags"][start : end + 1])
        chosen = np.flatnonzero(flags & DocFlag.SEED)
        for i in chosen.tolist():
            yield {"docid": start + i, "url": collection.url(start + i)}


EXPORTS = {"documents": documents, "links": links, "sites": sites, "seeds": seeds}


class RowWriter:
    """Rows to a text stream as JSON Lines or CSV (a header from the first row's keys)."""

    def __init__(self, stream, fmt: str):
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        self.stream, self.format = stream, fmt
        self._csv = None
        self.rows = 0

    def write(self, row: dict) -> None:
        if self.format == "jsonl":
            self.stream.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            if self._csv is None:
                self._csv = csv.DictWriter(self.stream, fieldnames=list(row), lineterminator="\n")
                self._csv.writeheader()
            self._csv.writerow(row)
        self.rows += 1
