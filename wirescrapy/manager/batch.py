"""The batch: the manager's list of pages for one harvest, as a closed directory (thesis §7.2.1).

A batch holds everything a harvester needs, so that it can be copied to another machine and fetched
there: the URLs with their doc-ids, and for each of their sites the origin, IP, robots.txt and Crawl-delay.

Layout (all text is UTF-8)::

    <collection>/batches/000042/          batch 42
        batch.json                        what it is (below)
        urls.tsv                          the pages, one a line
        sites.jsonl                       their sites, one JSON object a line

    <collection>/batches/000043/          batch 43, split by site into 3 parts
        batch.json                        the batch: "parts": 3, "part": null, and each part's counts
        part-0/ part-1/ part-2/           each a complete batch as above ("part": k, "parts": 3)

    <collection>/batches/000044.discarded/  batch 44, set aside by ``scrapy manager --discard-batch 44``

``batch.json``
    ``{"format": "wirescrapy-batch", "version": 1, "batch": 42, "part": 0, "parts": 1, "created": <Unix
    seconds>, "created_utc": "…Z", "size": <K asked for>, "urls": <count>, "sites": <count>, "new_pages":
    <never downloaded>, "revisits": <count>, "collection": "<path>", "collection_id": "<the collection's id>",
    "settings": {<the WIRE_* settings the manager used>}, "files": {"urls.tsv": {"bytes": …, "xxh3_64":
    "<hex>"}, …}}``. ``read_batch`` refuses a file whose size or xxh3-64 differs (a truncated copy). A batch
    belongs to the collection whose id it names (``collection/identity.py``): its doc-ids and site-ids are
    that collection's, and ``check_owner`` refuses to harvest it into another one.

``urls.tsv``
    A header line naming the columns,
    ``#docid\\tsiteid\\tdepth\\tdynamic\\tprofit\\tlast_visit\\tredirects\\tetag\\tlast_modified\\turl``, then
    one page a line in decreasing profit: doc-id, site-id, depth (links from a seed), 1 if dynamic else 0,
    profit (``%.6g``), last visit (Unix seconds, 0 never), the redirect hops that led to the URL (they count
    against ``WIRE_MAX_REDIRECTS`` when it redirects again), the ``ETag`` and ``Last-Modified`` of the stored
    page exactly as its server sent them, sent back on the revisit as ``If-None-Match`` and
    ``If-Modified-Since`` (empty: none; latin-1 text with ``%``, tab, CR and LF percent-encoded), and the
    canonical URL (tab, CR and LF percent-encoded, so a line is one URL). Version 1 had the first six columns
    and the URL.

``payload-digests.txt`` (when the collection has its store of ingested payloads,
``<collection>/payload-digests.txt``)
    The payloads a detached harvest of the batch writes revisits against: for each URI of its sites the last
    payload ``scrapy ingest`` brought in, and the record that holds it (``warc/digests.py`` describes the
    format). Listed in ``batch.json``'s ``files`` and checked as the others are; a batch without it is
    harvested storing every payload its WARC directory does not hold.

``sites.jsonl``
    One object a line, by site-id: ``{"siteid", "origin": "scheme://host[:port]", "ip": "" or the
    address, "robots_state": "UNKNOWN" | "VALID" | "MISSING" | "UNREACHABLE", "robots_fetched": <Unix
    seconds, 0 never>, "robots_due": <fetch robots.txt before the pages>, "robots_txt": <base64 of the
    stored body> or null, "crawl_delay": <seconds, 0 none>, "docs": <documents of the site in the
    collection, for the large-site wait>, "urls": <its pages in this batch>, "left": <its pages the manager
    could have chosen, left for later batches: the crawl time the site still needs beyond this batch, which
    ``WIRE_SOFTMIN`` weighs; absent from batches written before it, read as None: not known, which is not 0>,
    and in a batch the slowest site's share timed (the planner's lead, batch.json's ``time_led``)
    ``"critical": true`` on the sites planned to fetch through the whole of it and end together}``.

A part is chosen per server group (``WIRE_POLITENESS_GROUP``, ``collection/groups.py``) by ``site_part``:
xxh3-64 of the group's key modulo the number of parts, so each group, and each site, is in exactly one part
and politeness holds across machines.

A part is **out** while it has no ``harvest.json`` (written when a harvest of the part finishes here, or when
``scrapy ingest`` has brought its WARC files in): it may be being harvested on another machine, so the
manager selects none of its pages (``pages_out``) until it is in, or until ``WIRE_PART_TIMEOUT`` seconds
after the batch was written, when they may go into a new batch.

Crash behaviour: a batch is written into ``batches/.NNNNNN.tmp``, every file and directory fsynced, then
renamed to ``batches/NNNNNN`` and the parent fsynced. A batch directory therefore exists complete or not
at all; a kill leaves at most a ``.tmp`` directory, removed by the next write. The pages' ``batch`` field
in the records is set after the rename: a kill in between leaves a complete batch whose records do not
name it, and the next run may select the same pages again.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from xxhash import xxh3_64_hexdigest, xxh3_64_intdigest

from wirescrapy.collection.groups import group_key
from wirescrapy.collection.metadata import RobotsState
from wirescrapy.collection.writes import fsync_directory
from wirescrapy.warc.digests import FILENAME as DIGESTS_FILE
from wirescrapy.warc.digests import PayloadDigests

FORMAT = "wirescrapy-batch"
VERSION = 2
READS = (1, 2)  # versions read_batch reads: a version 1 batch has no redirects and no validators
URLS_FILE = "urls.tsv"
SITES_FILE = "sites.jsonl"
INFO_FILE = "batch.json"
HARVEST_FILE = "harvest.json"  # a batch or part harvested (harvester/session.py writes it, scrapy ingest too)
URLS_HEADER = "#docid\tsiteid\tdepth\tdynamic\tprofit\tlast_visit\tredirects\tetag\tlast_modified\turl"
_NAME = re.compile(r"^\d{6,}$")
_UNSAFE = {"\t": "%09", "\n": "%0A", "\r": "%0D"}
_SITE_LINE = json.JSONEncoder(ensure_ascii=False)  # one encoder for every line of sites.jsonl

# The settings a batch records in its batch.json, as WIRE_* names.
MANAGER_SETTINGS = (
    "max_depth_static",
    "max_depth_dynamic",
    "max_urls_per_site",
    "batch_size",
    "batch_samesite",
    "batch_site_growth",
    "batch_explore",
    "batch_count",
    "max_errors_different_batch",
    "score_weights",
    "score_age_exponent",
    "score_boost_frontpage",
    "pagerank_damping",
    "pagerank_max_error",
    "hits_max_error",
    "siterank_max_error",
    "minperiod_unsuccessful",
    "minperiod_successful_not_ok",
    "minperiod_successful_ok",
)


class BatchError(Exception):
    """Not a batch, a batch of an unknown version, or a damaged one."""


def discard_hint(number: int) -> str:
    """How to get past damaged batch ``number``, which every later cycle would resume and be refused."""
    return f"to set the batch aside and go on: scrapy manager --discard-batch {number}"


@dataclass(frozen=True)
class BatchURL:
    doc_id: int
    site_id: int
    depth: int
    dynamic: bool
    profit: float
    last_visit: float  # Unix seconds of the last visit, 0 never visited
    url: str
    redirects: int = 0  # redirect hops that led to this URL (document record's ``redirects``)
    etag: bytes = b""  # of the stored page, exactly as sent: the revisit's If-None-Match
    last_modified_header: bytes = b""  # of the stored page, exactly as sent: the revisit's If-Modified-Since


@dataclass(frozen=True)
class BatchSite:
    site_id: int
    origin: str
    ip: str = ""
    robots_state: RobotsState = RobotsState.UNKNOWN
    robots_fetched: float = 0.0
    robots_due: bool = True
    robots_txt: bytes | None = None
    crawl_delay: float = 0.0
    docs: int = 0
    urls: int = 0
    left: int | None = (
        0  # its pages the manager could have chosen but left for later batches (None: not recorded)
    )
    critical: bool = (
        False  # a led batch: planned to fetch through the whole batch, ending with the slowest site
    )


@dataclass
class Batch:
    path: Path
    number: int
    part: int
    parts: int
    info: dict
    urls: list[BatchURL] = field(default_factory=list)
    sites: dict[int, BatchSite] = field(default_factory=dict)


def manager_settings(config) -> dict:
    """The settings a batch records in its batch.json (``MANAGER_SETTINGS``), as WIRE_* names and JSON
    values."""
    return {"WIRE_" + name.upper(): _json_value(getattr(config, name)) for name in MANAGER_SETTINGS}


def _json_value(value):
    """A setting as batch.json holds it: the config's read-only mappings as dicts."""
    return dict(value) if isinstance(value, Mapping) else value


def site_part(origin: str, parts: int, group: str = "") -> int:
    """The part a site belongs to: its server group's (``group``, its key by
    :func:`~wirescrapy.collection.groups.group_key`; its host's when not given), so that no two machines fetch
    from one server at once. The same on every machine and every run."""
    if parts < 1:
        raise ValueError("parts must be >= 1")
    key = group or group_key("host", origin)
    return xxh3_64_intdigest(key.encode("utf-8")) % parts


def batch_numbers(batches_dir: str | os.PathLike) -> list[int]:
    """Numbers of the complete batches in ``batches_dir``, increasing."""
    path = Path(batches_dir)
    if not path.is_dir():
        return []
    return sorted(int(p.name) for p in path.iterdir() if _NAME.match(p.name) and p.is_dir())


def discard_batch(batches_dir: str | os.PathLike, number: int) -> Path:
    """Set batch ``number`` aside, as ``NNNNNN.discarded`` beside the others; its new path.

    A damaged batch that is the last one would otherwise be resumed, and refused, by every harvest. Set
    aside, it is no batch for ``batch_numbers``: the next harvest resumes the batch before it if that one is
    unfinished, else asks the manager for a new one, which selects the discarded batch's pages again like
    any page not fetched. Kept, not
    deleted, for a person to look at."""
    path = Path(batches_dir) / f"{number:06d}"
    if not path.is_dir():
        raise BatchError(f"{path}: no such batch")
    target, copy = path.with_name(f"{path.name}.discarded"), 1
    while target.exists():
        copy += 1
        target = path.with_name(f"{path.name}.discarded-{copy}")
    path.rename(target)
    fsync_directory(path.parent)
    return target


def pages_out(batches_dir: str | os.PathLike, now: float, timeout: float) -> list[int]:
    """Doc-ids of the pages of the parts that are out (see the module docstring): parts of split batches
    written less than ``timeout`` seconds before ``now`` that have no ``harvest.json``."""
    doc_ids: list[int] = []
    for number in reversed(batch_numbers(batches_dir)):
        path = Path(batches_dir) / f"{number:06d}"
        try:
            info = json.loads((path / INFO_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a damaged batch: the harvester says so, and how to set it aside
        if now - float(info.get("created", 0)) >= timeout:
            break  # batches are numbered in the order they were written: the older ones are too old as well
        if info.get("part") is not None or (path / HARVEST_FILE).exists():
            continue
        for part in info.get("part_dirs", []):
            directory = path / part["dir"]
            if (directory / HARVEST_FILE).exists():
                continue
            try:
                lines = (directory / URLS_FILE).read_text(encoding="utf-8").splitlines()
            except OSError:
                continue
            doc_ids += [int(line.split("\t", 1)[0]) for line in lines if line and not line.startswith("#")]
    return doc_ids


def next_batch_number(batches_dir: str | os.PathLike, at_least: int = 1) -> int:
    numbers = batch_numbers(batches_dir)
    return max([at_least - 1, *numbers]) + 1


# -- writing ---------------------------------------------------------------------------------------------


def write_batch(
    batches_dir: str | os.PathLike,
    number: int,
    urls: list[BatchURL],
    sites: list[BatchSite],
    *,
    parts: int = 1,
    info: dict | None = None,
    created: float | None = None,
    group_mode: str = "host",
) -> list[Path]:
    """Write batch ``number`` atomically; returns the directories a harvester reads: the batch, or its
    parts. ``urls`` in the order they should be listed (decreasing profit); ``sites`` at least those of
    the urls; ``info`` goes into ``batch.json``; ``created`` is the manager's clock (default: now);
    ``group_mode``: ``WIRE_POLITENESS_GROUP``, the server groups parts split by."""
    if parts < 1:
        raise ValueError("parts must be >= 1")
    batches_dir = Path(batches_dir)
    batches_dir.mkdir(parents=True, exist_ok=True)
    name = f"{number:06d}"
    final = batches_dir / name
    if final.exists():
        raise BatchError(f"{final} already exists")
    for stale in batches_dir.glob(".*.tmp"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = batches_dir / f".{name}.tmp"
    tmp.mkdir()
    created = time.time() if created is None else created
    common = {
        "format": FORMAT,
        "version": VERSION,
        "batch": number,
        "created": created,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created)),
        **(info or {}),
    }
    by_site = {site.site_id: site for site in sites}
    missing = {url.site_id for url in urls} - by_site.keys()
    if missing:
        raise ValueError(f"urls of sites without a BatchSite: {sorted(missing)[:5]}")
    # The collection's ingested payloads (beside its batches directory), of which each part gets its sites'.
    digests = None
    if (batches_dir.parent / DIGESTS_FILE).exists():
        digests = PayloadDigests(batches_dir.parent)
    if parts == 1:
        _write_part(tmp, urls, by_site, {**common, "part": 0, "parts": 1}, digests)
        subdirs = [final]
    else:
        part_of = {
            site_id: site_part(site.origin, parts, group_key(group_mode, site.origin, site.ip))
            for site_id, site in by_site.items()
        }
        summary = []
        for part in range(parts):
            part_urls = [url for url in urls if part_of[url.site_id] == part]
            part_sites = {s: site for s, site in by_site.items() if part_of[s] == part}
            counts = _write_part(
                tmp / f"part-{part}",
                part_urls,
                part_sites,
                {**common, "part": part, "parts": parts},
                digests,
            )
            summary.append({"dir": f"part-{part}", **counts})
        _write_json(
            tmp / INFO_FILE,
            {
                **common,
                "part": None,
                "parts": parts,
                "urls": len(urls),
                "sites": len(by_site),
                "part_dirs": summary,
            },
        )
        fsync_directory(tmp)
        subdirs = [final / f"part-{part}" for part in range(parts)]
    os.rename(tmp, final)
    fsync_directory(batches_dir)
    return subdirs


def _write_part(
    directory: Path,
    urls: list[BatchURL],
    sites: dict[int, BatchSite],
    info: dict,
    digests: PayloadDigests | None = None,
) -> dict:
    directory.mkdir(exist_ok=True)
    counts = {url.site_id: 0 for url in urls}
    lines = [URLS_HEADER]
    for url in urls:
        counts[url.site_id] += 1
        lines.append(
            f"{url.doc_id}\t{url.site_id}\t{url.depth}\t{int(url.dynamic)}\t{url.profit:.6g}\t"
            f"{url.last_visit:.0f}\t{url.redirects}\t{_header_text(url.etag)}\t"
            f"{_header_text(url.last_modified_header)}\t{_safe(url.url)}"
        )
    files = {URLS_FILE: _write_file(directory / URLS_FILE, ("\n".join(lines) + "\n").encode("utf-8"))}
    site_lines = []
    for site_id in sorted(counts):
        site = sites[site_id]
        site_lines.append(
            _SITE_LINE.encode(
                {
                    "siteid": site.site_id,
                    "origin": site.origin,
                    "ip": site.ip,
                    "robots_state": RobotsState(site.robots_state).name,
                    "robots_fetched": site.robots_fetched,
                    "robots_due": bool(site.robots_due),
                    "robots_txt": None
                    if site.robots_txt is None
                    else base64.b64encode(site.robots_txt).decode("ascii"),
                    "crawl_delay": site.crawl_delay,
                    "docs": site.docs,
                    "urls": counts[site_id],
                    "left": site.left,
                    **({"critical": True} if site.critical else {}),
                }
            )
        )
    files[SITES_FILE] = _write_file(
        directory / SITES_FILE, "".join(line + "\n" for line in site_lines).encode("utf-8")
    )
    if digests is not None:
        origins = {sites[site_id].origin for site_id in counts}
        files[DIGESTS_FILE] = _write_file(directory / DIGESTS_FILE, digests.for_sites(origins))
    new_pages = sum(1 for url in urls if url.last_visit <= 0)
    counts_info = {
        "urls": len(urls),
        "sites": len(counts),
        "new_pages": new_pages,
        "revisits": len(urls) - new_pages,
    }
    _write_json(directory / INFO_FILE, {**info, **counts_info, "files": files})
    fsync_directory(directory)
    return counts_info


def _safe(url: str) -> str:
    if "\t" in url or "\n" in url or "\r" in url:
        for c, code in _UNSAFE.items():
            url = url.replace(c, code)
    return url


def _header_text(value: bytes) -> str:
    """A header value as one TSV field; ``_header_value`` gives the bytes back."""
    if not value:  # most pages have none
        return ""
    return _safe(value.decode("latin-1").replace("%", "%25"))


_ESCAPED = re.compile("%(25|09|0A|0D)")


def _header_value(text: str) -> bytes:
    if "%" in text:
        text = _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)
    return text.encode("latin-1")


def _write_file(path: Path, data: bytes) -> dict:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return {"bytes": len(data), "xxh3_64": xxh3_64_hexdigest(data)}


def _write_json(path: Path, value: dict) -> None:
    _write_file(path, (json.dumps(value, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))


# -- reading ---------------------------------------------------------------------------------------------


def check_owner(batch: Batch, collection_dir: str | os.PathLike, collection_id: str) -> None:
    """Refuse (``BatchError``) to harvest ``batch`` into a collection that did not write it: the batch's ids
    would name other documents and sites there, and its pages would be written over theirs.

    A batch written before collections had ids names only a path: it is taken when it lies inside the
    collection's ``batches/`` or names the collection's directory."""
    owner = batch.info.get("collection_id")
    where = batch.info.get("collection") or "another collection"
    directory = Path(collection_dir).resolve()
    if owner:
        if owner != collection_id:
            raise BatchError(
                f"{batch.path}: batch {batch.number:06d} belongs to the collection {where} "
                f"(id {owner}), not to {directory}{f' (id {collection_id})' if collection_id else ''}"
            )
        return
    inside = directory / "batches" in Path(batch.path).resolve().parents
    if not inside and Path(where).resolve() != directory:
        raise BatchError(
            f"{batch.path}: batch {batch.number:06d} was written for the collection {where}, not {directory}"
        )


def read_batch(path: str | os.PathLike) -> Batch:
    """The batch (or batch part) in directory ``path``, checked against its ``batch.json``."""
    path = Path(path)
    try:
        info = json.loads((path / INFO_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BatchError(f"{path}: no {INFO_FILE}, not a batch") from None
    except ValueError as exc:
        raise BatchError(f"{path / INFO_FILE}: not JSON ({exc})") from None
    if info.get("format") != FORMAT:
        raise BatchError(f"{path}: not a {FORMAT} directory")
    version = info.get("version")
    if version not in READS:
        raise BatchError(
            f"{path}: batch format version {version}, this reader knows {', '.join(map(str, READS))}"
        )
    if info.get("part") is None:
        dirs = ", ".join(part["dir"] for part in info.get("part_dirs", []))
        raise BatchError(f"{path}: batch split into {info.get('parts')} parts; read one of them ({dirs})")
    data = {}
    for name in (URLS_FILE, SITES_FILE, *({DIGESTS_FILE} & info["files"].keys())):
        try:
            data[name] = (path / name).read_bytes()
        except FileNotFoundError:
            raise BatchError(f"{path}: {name} is missing") from None
        expected = info["files"][name]
        if len(data[name]) != expected["bytes"] or xxh3_64_hexdigest(data[name]) != expected["xxh3_64"]:
            raise BatchError(
                f"{path / name}: size or checksum differs from {INFO_FILE} (damaged or truncated)"
            )
    urls = []
    for line in data[URLS_FILE].decode("utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        if version == 1:
            doc_id, site_id, depth, dynamic, profit, last_visit, url = line.split("\t", 6)
            redirects, etag, last_modified = "0", "", ""
        else:
            doc_id, site_id, depth, dynamic, profit, last_visit, redirects, etag, last_modified, url = (
                line.split("\t", 9)
            )
        urls.append(
            BatchURL(
                int(doc_id),
                int(site_id),
                int(depth),
                dynamic == "1",
                float(profit),
                float(last_visit),
                url,
                int(redirects),
                _header_value(etag),
                _header_value(last_modified),
            )
        )
    sites = {}
    for line in data[SITES_FILE].decode("utf-8").splitlines():
        record = json.loads(line)
        body = record["robots_txt"]
        sites[record["siteid"]] = BatchSite(
            site_id=record["siteid"],
            origin=record["origin"],
            ip=record["ip"],
            robots_state=RobotsState[record["robots_state"]],
            robots_fetched=record["robots_fetched"],
            robots_due=record["robots_due"],
            robots_txt=None if body is None else base64.b64decode(body),
            crawl_delay=record["crawl_delay"],
            docs=record["docs"],
            urls=record["urls"],
            left=record.get("left"),
            critical=bool(record.get("critical", False)),
        )
    return Batch(path, info["batch"], info["part"], info["parts"], info, urls, sites)
