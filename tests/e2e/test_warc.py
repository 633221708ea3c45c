"""End to end: a crawl split into batch parts, each harvested with no collection into WARC (the detached
harvester, two at a time), brought back with ``scrapy ingest``, gives the collection a local harvest gives.

One seeded collection is copied twice. The first copy is harvested locally for ``CYCLES`` cycles with
``WIRE_WARC_DIR`` set (the ordinary harvester archiving as it crawls). The second goes through the same cycles
the way several machines would: ``scrapy manager --parts 2``, both parts harvested at once by
``scrapy crawl harvester -a batch=PART -a warc=OUTDIR`` in processes that have no collection
(``WIRE_COLLECTION_DIR`` names a directory that does not exist), then ``scrapy ingest`` of both directories.
The two collections must hold the same documents with the same statuses, errors, visits, flags, stored
content, links and duplicates, and the same robots.txt states; only times may differ.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import lxml.html
import pytest
from cdxj_indexer.main import write_cdx_index
from warcio.archiveiterator import ArchiveIterator

from tests.browser import Browser, chromium
from tests.warcfiles import fastwarc_records, warcio_check
from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.manager.batch import read_batch, site_part
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess
from wirescrapy.testing.sampleweb.accesslog import by_host, too_close
from wirescrapy.testing.sampleweb.scripts import scripted_links
from wirescrapy.testing.splash import OwnSplash, SplashMissing
from wirescrapy.url import origin
from wirescrapy.warc.digests import payload_digest
from wirescrapy.warc.index import index_path, not_modified
from wirescrapy.warc.reader import read_fetches, warc_files, warcinfo
from wirescrapy.warc.records import IDENTICAL_PAYLOAD, NOT_MODIFIED

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

WAIT = 0.2  # settings/test.py WIRE_WAIT_NORMAL
CRAWL_DELAY = 0.3  # site1's robots.txt
WEB = {
    "sites": 4,
    "pages_per_site": 14,
    "seed": 5,
    "slow_delay": 0.3,
    "crawl_delay": CRAWL_DELAY,
    "broken_robots": "malformed",
}
CYCLES = 3
SETTINGS = {"WIRE_LARGE_SITE_PAGES": 10_000}


def scrapy(
    *args: str, collection: Path | None = None, settings: dict | None = None, wait: bool = True
) -> subprocess.CompletedProcess | subprocess.Popen:
    values = {**SETTINGS, "WIRE_COLLECTION_DIR": collection or "/nonexistent/collection", **(settings or {})}
    run = run_scrapy(*args, settings=values, env=scrapy_env(), wait=wait)
    if not wait:
        return run
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-4000:]
    return run


def finished(process: subprocess.Popen) -> str:
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0 and "Traceback" not in stderr, stderr[-4000:]
    return stderr


def newest_parts(collection: Path) -> list[Path]:
    batch = max((collection / "batches").iterdir(), key=lambda p: p.name)
    return sorted(batch.glob("part-*"))


@pytest.fixture(scope="module")
def crawls(tmp_path_factory):
    base = tmp_path_factory.mktemp("warc")
    with SampleWebProcess(workdir=base / "web", **WEB) as web:
        seeds = base / "seeds.txt"
        seeds.write_text("\n".join(web.seeds) + "\n")
        seeded = base / "seeded"
        scrapy("seed", str(seeds), collection=seeded)
        local, parts = base / "local", base / "parts"
        shutil.copytree(seeded, local)
        shutil.copytree(seeded, parts)

        scrapy(
            "crawl",
            "harvester",
            "-a",
            f"cycles={CYCLES}",
            collection=local,
            settings={"WIRE_WARC_DIR": base / "local-warc"},
        )
        local_done = time.time()

        cycles, snapshots = [], {}
        for cycle in range(1, CYCLES + 1):
            scrapy("manager", "--parts", "2", collection=parts)
            outdirs = [base / f"warc-{cycle}-{n}" for n in range(2)]
            started = time.time()
            jobs = [
                scrapy("crawl", "harvester", "-a", f"batch={part}", "-a", f"warc={outdir}", wait=False)
                for part, outdir in zip(newest_parts(parts), outdirs, strict=True)
            ]
            logs = [finished(job) for job in jobs]
            harvested = time.time()
            if cycle == 1:
                snapshots["before"] = shutil.copytree(parts, base / "before-ingest-1")
                # the parts are out: the manager selects none of their pages, unless they have been out too
                # long
                out = [
                    scrapy("manager", "--dry-run", collection=parts, settings=timeout).stdout
                    for timeout in ({}, {"WIRE_PART_TIMEOUT": 0})
                ]
            scrapy("ingest", *map(str, outdirs), collection=parts)
            if cycle == 1:
                snapshots["after"] = shutil.copytree(parts, base / "after-ingest-1")
            cycles.append(
                SimpleNamespace(
                    outdirs=outdirs,
                    started=started,
                    harvested=harvested,
                    logs=logs,
                    out=out if cycle == 1 else None,
                )
            )
        before_again = snapshot(parts)
        again = scrapy("ingest", *map(str, cycles[-1].outdirs), collection=parts)
        yield SimpleNamespace(
            web=web,
            base=base,
            local=local,
            parts=parts,
            cycles=cycles,
            local_done=local_done,
            snapshots=snapshots,
            before_again=before_again,
            again=again,
            access_log=web.access_log(),
        )


def snapshot(directory: Path) -> dict:
    """What must be equal between two collections: by URL (doc-ids depend on the order URLs were found)."""
    with Collection(directory, readonly=True) as collection:
        records = collection.documents.records
        docs, duplicates = {}, set()
        for doc_id in range(1, collection.documents.count + 1):
            record = records[doc_id]
            url = collection.url(doc_id)
            flags = int(record["flags"])
            if flags & DocFlag.DUPLICATE:  # which of two equal pages is the original depends on the order
                duplicates.add(frozenset((url, collection.url(int(record["duplicate_of"])))))
            docs[url] = (
                int(record["status"]),
                int(record["error"]),
                int(record["visits"]),
                int(record["errors"]),
                flags & ~DocFlag.DUPLICATE,
                int(record["depth"]),
                int(record["content_hash"]),
                # bytes received before a download was stopped at its limit: as many as the last
                # chunk brought, a matter of timing
                0 if flags & DocFlag.TRUNCATED else int(record["raw_length"]),
                bytes(record["mime"]),
                tuple(collection.url(int(t)) for t in collection.links.links(doc_id)),
            )
        sites = {}
        for site_id in range(1, collection.sites.count + 1):
            site = collection.sites.records[site_id]
            robots = collection.url(int(site["robots_docid"])) if site["robots_docid"] else ""
            sites[robots] = (
                int(site["robots_state"]),
                float(site["crawl_delay"]),
                int(site["fetched"]),
                int(site["ok"]),
                int(site["errors"]),
            )
        return {"docs": docs, "duplicates": duplicates, "sites": sites}


def test_parts_harvested_apart_and_ingested_equal_a_local_harvest(crawls):
    local, parts = snapshot(crawls.local), snapshot(crawls.parts)
    assert sum(1 for d in local["docs"].values() if d[2]) > 30  # pages fetched, over several cycles
    assert local["duplicates"] and any(d[0] == 404 for d in local["docs"].values())
    differ = {
        url: (local["docs"].get(url), parts["docs"].get(url))
        for url in local["docs"].keys() | parts["docs"].keys()
        if local["docs"].get(url) != parts["docs"].get(url)
    }
    assert not differ, sorted(differ.items())[:5]
    assert local["duplicates"] == parts["duplicates"]
    assert local["sites"] == parts["sites"]
    for cycle in crawls.cycles:  # each part's batch is in: harvest.json for the parts and the batch
        batch = json.loads((newest_parts(crawls.parts)[0].parent / "harvest.json").read_text())
        assert batch["parts"] == 2


def test_the_pages_of_parts_out_are_not_selected_again_until_ingested_or_too_long_out(crawls):
    held, let_go = crawls.cycles[0].out
    assert "0 eligible now" in held and "no page to fetch" in held
    assert f"{WEB['sites']} eligible now" in let_go
    # once ingested, the next cycle's manager planned a batch of new pages
    assert (
        sum(1 for d in crawls.cycles[1].outdirs for f in warc_files(d) for _ in read_fetches(f))
        > WEB["sites"]
    )


def test_ingesting_a_part_again_changes_nothing(crawls):
    assert snapshot(crawls.parts) == crawls.before_again
    assert "harvested already, nothing to ingest" in crawls.again.stderr


def test_a_part_is_not_ingested_into_another_collection(crawls, tmp_path):
    """Another collection of the same sites, with a batch 1 in two parts of its own: the same batch numbers
    and paths, but not the id of the collection the part was harvested for. Refused in one line, nothing
    written."""
    other = tmp_path / "other"
    scrapy("seed", str(crawls.base / "seeds.txt"), collection=other)
    scrapy("manager", "--parts", "2", collection=other)
    before = snapshot(other)
    with pytest.raises(
        AssertionError, match=r": error: .*warc-1-0 holds batch 1 part 0 of the collection"
    ) as refused:
        scrapy("ingest", str(crawls.cycles[0].outdirs[0]), collection=other)
    assert "Traceback" not in str(refused.value)
    assert snapshot(other) == before


def test_an_ingest_killed_half_way_goes_on_where_it_stopped(crawls, tmp_path):
    """The state a kill leaves (some fetches of a part in, no harvest.json) is made by ingesting a copy of a
    part's WARC cut after half of its fetches; the whole part ingested after it gives the one-shot ingest."""
    resumed = shutil.copytree(crawls.snapshots["before"], tmp_path / "resumed")
    first = crawls.cycles[0].outdirs
    cut = tmp_path / "cut"
    shutil.copytree(first[0], cut)
    (cut / "harvest.json").unlink()  # a harvest still running, or copied before it ended
    file = max(warc_files(cut), key=lambda p: p.stat().st_size)
    total = len(list(read_fetches(file)))
    file.write_bytes(file.read_bytes()[: _end_of_fetch(file, total // 2)])
    half = scrapy("ingest", str(cut), collection=resumed)
    assert f"Ingested {total // 2} fetches (0 already" in half.stderr and "has not finished" in half.stderr
    assert not (resumed / "batches" / "000001" / "part-0" / "harvest.json").exists()
    rest = scrapy("ingest", *map(str, first), collection=resumed)
    assert f"({total // 2} already in the collection)" in rest.stderr
    assert snapshot(resumed) == snapshot(crawls.snapshots["after"])


def _end_of_fetch(file: Path, count: int) -> int:
    """The byte offset where the ``count``-th fetch's records end in ``file``."""
    seen = 0
    with open(file, "rb") as stream:
        records = ArchiveIterator(stream)
        for record in records:
            if record.rec_type == "metadata" or record.rec_headers.get_header("WIRE-Fetch"):
                seen += 1
            if seen == count:
                records.read_to_end(record)
                return records.get_record_offset() + records.get_record_length()
    raise AssertionError(f"{file} has fewer than {count} fetches")


def test_detached_harvests_need_no_collection_and_keep_each_site_to_one_part(crawls):
    assert not Path("/nonexistent/collection").exists()
    for cycle in crawls.cycles:
        sites = []
        for n, outdir in enumerate(cycle.outdirs):
            files = warc_files(outdir)
            assert warcinfo(files[0])["wirescrapy-part"] == str(n)
            urls = [a.fields["url"] for f in files for a in read_fetches(f)]
            assert all(site_part(origin(url), 2) == n for url in urls), urls
            sites.append({origin(url) for url in urls})
        assert not sites[0] & sites[1]


def test_detached_harvests_are_polite_and_obey_robots_txt(crawls):
    web, truth = crawls.web, crawls.web.truth
    detached = [r for r in crawls.access_log if r["start"] > crawls.local_done]
    requested = {web.url(r["host"], r["path"]) for r in detached}
    assert truth.disallowed and not truth.disallowed & requested
    assert any(r["path"] == "/robots.txt" for r in detached)
    for cycle in crawls.cycles:
        window = [r for r in detached if cycle.started <= r["start"] <= cycle.harvested]
        hosts = by_host(window)
        assert len(hosts) == WEB["sites"]
        for host, records in hosts.items():
            wait = CRAWL_DELAY if truth.robots[host] == "crawl-delay" else WAIT
            assert not too_close(records, wait), (host, too_close(records, wait)[:5])


def test_every_warc_passes_warcio_check_and_reads_with_fastwarc(crawls):
    local_files = warc_files(crawls.base / "local-warc")
    part_files = [f for cycle in crawls.cycles for outdir in cycle.outdirs for f in warc_files(outdir)]
    assert local_files and len(part_files) >= 2 * CYCLES
    warcio_check(*local_files, *part_files)
    kinds = {}
    for file in local_files + part_files:
        for kind, _, headers in fastwarc_records(file):
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == "metadata" and headers.get("WIRE-Fetch-Error"):
                kinds["failure"] = kinds.get("failure", 0) + 1
    assert kinds["warcinfo"] == len(local_files) + len(part_files)
    assert kinds["request"] == kinds["response"]  # a revisit has none
    # A fetch's group ends with its metadata record or its revisit; a failure with no response has no request.
    assert kinds["metadata"] > kinds["request"] and kinds["failure"]
    # The sample web's exact duplicates: revisits, where the harvest has a collection and in detached parts.
    for files in (local_files, part_files):
        revisits = [h for f in files for kind, _, h in fastwarc_records(f) if kind == "revisit"]
        assert any(h["WARC-Profile"] == IDENTICAL_PAYLOAD for h in revisits)
    # WIRE_WARC_DIR: the local harvest archived every fetch it recorded (a refused one has no visit, but a
    # time)
    with Collection(crawls.local, readonly=True) as collection:
        archived = {
            a.fields["url"] for f in local_files for a in read_fetches(f) if a.fields["kind"] != "sitemap"
        }
        records = collection.documents.records
        visited = {
            collection.url(d) for d in range(1, collection.documents.count + 1) if records[d]["visits"]
        }
        tried = {
            collection.url(d) for d in range(1, collection.documents.count + 1) if records[d]["last_visit"]
        }
        assert visited <= archived <= tried


def test_a_killed_detached_harvest_run_again_fetches_only_what_its_warc_files_lack(crawls, tmp_path):
    collection = shutil.copytree(crawls.snapshots["after"], tmp_path / "collection")
    scrapy("manager", collection=collection)  # cycle 2's pages, in one part
    batch = max((collection / "batches").iterdir(), key=lambda p: p.name)
    outdir = tmp_path / "warc"
    slow = {"WIRE_WAIT_NORMAL": 0.5}
    job = scrapy(
        "crawl", "harvester", "-a", f"batch={batch}", "-a", f"warc={outdir}", settings=slow, wait=False
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if outdir.is_dir() and len(_pages(outdir)) >= 8:
            break
        time.sleep(0.2)
    job.kill()
    job.communicate()
    first = {a.fields["url"] for a in _pages(outdir)}
    assert len(first) >= 8 and not (outdir / "harvest.json").exists()
    warcio_check(*warc_files(outdir))  # the kill left every record whole
    again_at = time.time()
    scrapy("crawl", "harvester", "-a", f"batch={batch}", "-a", f"warc={outdir}", settings=slow)
    assert (outdir / "harvest.json").exists()
    requested = {
        crawls.web.url(r["host"], r["path"]) for r in crawls.web.access_log() if r["start"] >= again_at
    }
    pages = {url.url for url in read_batch(batch).urls}
    assert not first & requested  # fetched before the kill: not again
    archived = [a.fields["url"] for a in _pages(outdir) if a.fields["doc_id"]]
    assert set(archived) == pages and len(archived) == len(pages)


def _pages(outdir: Path) -> list:
    """The pages fetched into ``outdir``; a revisit's payload may be in an earlier part's directory."""
    return [
        a for f in warc_files(outdir) for a in read_fetches(f, bodies=False) if a.fields["kind"] == "page"
    ]


class _Gzipped(BaseHTTPRequestHandler):
    """Every page gzip-encoded, as servers send to a client that accepts it; robots.txt absent."""

    def do_GET(self):
        if self.path == "/robots.txt":
            self.send_error(404)
            return
        body = gzip.compress(GZIP_PAGE, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


GZIP_PAGE = b"<html><head><title>gz</title></head><body><p>" + b"compressed " * 400 + b"</p></body></html>"


def test_a_compressed_body_is_archived_as_received_and_ingested_as_a_local_harvest_stores_it(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Gzipped)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/"
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(url + "\n")
        local, parts = tmp_path / "local", tmp_path / "parts"
        scrapy("seed", str(seeds), collection=local)
        scrapy("manager", collection=local)
        shutil.copytree(local, parts)
        scrapy("crawl", "harvester", "-a", f"batch={local / 'batches' / '000001'}", collection=local)
        outdir = tmp_path / "warc"
        scrapy("crawl", "harvester", "-a", f"batch={parts / 'batches' / '000001'}", "-a", f"warc={outdir}")
        scrapy("ingest", str(outdir), collection=parts)
    finally:
        server.shutdown()
    [page] = [a for f in warc_files(outdir) for a in read_fetches(f) if a.fields["kind"] == "page"]
    assert page.body == gzip.compress(GZIP_PAGE, mtime=0) and ("Content-Encoding", "gzip") in page.headers
    assert page.fields["decoded"] and page.fields["body_length"] == len(GZIP_PAGE)
    warcio_check(*warc_files(outdir))
    with Collection(local, readonly=True) as a, Collection(parts, readonly=True) as b:
        stored = a.load_page(a.lookup(url))
        assert stored and b"compressed" in stored and stored == b.load_page(b.lookup(url))
    assert snapshot(local)["docs"] == snapshot(parts)["docs"]


REVISIT_ALL = {
    "WIRE_MINPERIOD_SUCCESSFUL_OK": 0,
    "WIRE_MINPERIOD_SUCCESSFUL_NOT_OK": 0,
    "WIRE_MINPERIOD_UNSUCCESSFUL": 0,
}


@pytest.fixture(scope="module")
def recrawl(tmp_path_factory):
    """``WIRE_WARC_DIR`` over two jobs: a crawl of three cycles, then a cycle revisiting every page fetched.
    The sample web never changes and answers a conditional request with a 304."""
    base = tmp_path_factory.mktemp("recrawl")
    archive, collection = base / "warc", base / "collection"
    with SampleWebProcess(workdir=base / "web", sites=2, pages_per_site=8, seed=3) as web:
        seeds = base / "seeds.txt"
        seeds.write_text("\n".join(web.seeds) + "\n")
        settings = {"WIRE_WARC_DIR": archive, "WIRE_WAIT_NORMAL": 0, "WIRE_WAIT_LARGE_SITE": 0}
        scrapy(
            "crawl",
            "harvester",
            "-a",
            f"seeds={seeds}",
            "-a",
            "cycles=3",
            collection=collection,
            settings=settings,
        )
        first = warc_files(archive)
        scrapy("crawl", "harvester", collection=collection, settings={**settings, **REVISIT_ALL})
    return SimpleNamespace(
        base=base, archive=archive, collection=collection, first=first, settings=settings, seeds=web.seeds
    )


def test_a_recrawl_of_unchanged_pages_archives_revisits_not_their_bytes(recrawl, caplog):
    archive, first = recrawl.archive, recrawl.first
    second = [f for f in warc_files(archive) if f not in first]
    assert second
    warcio_check(*first, *second)

    def responses(files):
        out = []
        for f in files:
            with open(f, "rb") as stream:
                for record in ArchiveIterator(stream):
                    if record.rec_type in ("response", "revisit"):
                        out.append(
                            (record.rec_type, record.rec_headers, record.http_headers.get_statuscode())
                        )
        return out

    stored = {h.get_header("WARC-Payload-Digest") for kind, h, _ in responses(first) if kind == "response"}
    dated = {(h.get_header("WARC-Target-URI"), h.get_header("WARC-Date")) for _, h, _ in responses(first)}
    again = responses(second)
    named = [h for kind, h, status in again if status == "304" and h.get_header("WARC-Refers-To-Date")]
    assert len(named) >= 10
    for kind, headers, status in again:
        digest = headers.get_header("WARC-Payload-Digest")
        if status == "304":
            assert kind == "revisit" and headers.get_header("WARC-Profile") == NOT_MODIFIED
            # The date alone of the record that holds the page whole, at this URL, in the first job. A page
            # cut at the size limit has none.
            assert not digest and not headers.get_header("WARC-Refers-To-Target-URI")
            if headers.get_header("WARC-Refers-To-Date"):
                refers_to = (headers.get_header("WARC-Target-URI"), headers.get_header("WARC-Refers-To-Date"))
                assert refers_to in dated
        elif (
            kind == "response" and digest != payload_digest(b"") and not headers.get_header("WARC-Truncated")
        ):
            assert digest not in stored  # no whole payload of the first job is stored again
        else:
            assert headers.get_header("WARC-Profile") == IDENTICAL_PAYLOAD and digest in stored
    # Read back, every revisit has its page: nothing is an error.
    with caplog.at_level("ERROR"):
        pages = [a for f in first + second for a in read_fetches(f) if a.fields["kind"] == "page"]
    assert pages and not [r for r in caplog.records if r.levelname == "ERROR"]


@pytest.fixture(scope="module")
def detached_recrawl(tmp_path_factory):
    """Three cycles of a batch in two parts harvested detached at once, each revisiting every page fetched
    before, each ingested before the manager writes the next: each part ships its sites' payloads."""
    base = tmp_path_factory.mktemp("detached-recrawl")
    collection = base / "collection"
    settings = {**REVISIT_ALL, "WIRE_WAIT_NORMAL": 0, "WIRE_WAIT_LARGE_SITE": 0}
    with SampleWebProcess(workdir=base / "web", sites=4, pages_per_site=8, seed=3) as web:
        seeds = base / "seeds.txt"
        seeds.write_text("\n".join(web.seeds) + "\n")
        scrapy("seed", str(seeds), collection=collection, settings=settings)
        cycles, ingests = [], []
        for cycle in range(3):
            scrapy("manager", "--parts", "2", collection=collection, settings=settings)
            parts = newest_parts(collection)
            outdirs = [base / f"warc-{cycle}-{n}" for n in range(2)]
            jobs = [
                scrapy("crawl", "harvester", "-a", f"batch={part}", "-a", f"warc={outdir}", wait=False)
                for part, outdir in zip(parts, outdirs, strict=True)
            ]
            for job in jobs:
                finished(job)
            ingests.append(scrapy("ingest", *map(str, outdirs), collection=collection, settings=settings))
            cycles.append(SimpleNamespace(parts=parts, outdirs=outdirs))
    return SimpleNamespace(collection=collection, cycles=cycles, ingests=ingests, seeds=web.seeds)


def test_detached_parts_recrawling_unchanged_pages_write_revisits_that_ingest_takes(detached_recrawl):
    cycles = detached_recrawl.cycles
    stored: dict[str, set[str]] = {}  # URL: the whole payloads stored for it, in the cycles before
    records: dict[tuple[str, str], str] = {}  # (URI, date) of each response and revisit: its digest
    profiles = {IDENTICAL_PAYLOAD: 0, NOT_MODIFIED: 0}
    for number, cycle in enumerate(cycles):
        shipped = [part / "payload-digests.txt" for part in cycle.parts]
        assert all(file.exists() for file in shipped) == (number > 0)  # once the collection has some
        files = [file for outdir in cycle.outdirs for file in warc_files(outdir)]
        warcio_check(*files)
        new = []
        for file in files:
            for kind, uri, headers, _ in _records(file):
                digest = headers.get_header("WARC-Payload-Digest")
                if kind == "response" and not headers.get_header("WARC-Truncated"):
                    assert digest not in stored.get(uri, ()), uri  # stored again though the part knew it
                    new.append((uri, digest))
                if kind in ("response", "revisit"):
                    records[(uri, headers.get_header("WARC-Date"))] = digest
                if kind == "revisit":
                    profiles[headers.get_header("WARC-Profile")] += 1
                    refers_to = (
                        headers.get_header("WARC-Refers-To-Target-URI"),
                        headers.get_header("WARC-Refers-To-Date"),
                    )
                    if refers_to[0] or headers.get_header("WARC-Profile") == IDENTICAL_PAYLOAD:
                        assert records.get(refers_to) == digest  # a record of this part or an earlier one
                    elif refers_to[1]:  # server-not-modified: a record of the same URI
                        assert (uri, refers_to[1]) in records
        for uri, digest in new:
            stored.setdefault(uri, set()).add(digest)
    assert profiles[NOT_MODIFIED] >= 20 and profiles[IDENTICAL_PAYLOAD] >= 1, profiles
    # scrapy ingest found every revisit's payload and read every fetch.
    for cycle, ingest in zip(cycles, detached_recrawl.ingests, strict=True):
        assert "ERROR" not in ingest.stderr, ingest.stderr[-3000:]
        files = [f for outdir in cycle.outdirs for f in warc_files(outdir)]
        fetches = sum(  # a group ends with its metadata record, or a revisit holding the fetch's fields
            kind == "metadata" or (kind == "revisit" and bool(headers.get_header("WIRE-Fetch")))
            for f in files
            for kind, _, headers, _ in _records(f)
        )
        said = re.search(r"Ingested (\d+) fetches \((\d+) already", ingest.stderr)
        ingested, skipped = map(int, said.groups())
        assert ingested + skipped == fetches and ingested > 0
    assert (detached_recrawl.collection / "payload-digests.txt").exists()


def test_every_file_has_its_cdxj_index_and_export_writes_one_index_and_a_valid_wacz(recrawl):
    files = warc_files(recrawl.archive)
    for file in files:
        out = io.StringIO()
        write_cdx_index(out, [str(file)], {"sort": True, "records": "response,revisit,resource"})
        expected = [line for line in out.getvalue().splitlines(True) if not not_modified(line)]
        assert index_path(file).read_text() == "".join(expected)
    settings = {**recrawl.settings, "WIRE_COLLECTION_DIR": recrawl.collection}
    whole = recrawl.base / "archive.cdxj"
    scrapy("export", "--cdxj", str(whole), collection=recrawl.collection, settings=settings)
    lines = whole.read_text().splitlines()
    assert lines == sorted(lines) and len(lines) == sum(
        len(index_path(f).read_text().splitlines()) for f in files
    )
    assert not any('"mime": "application/warc-fields"' in line for line in lines)  # pages, never our metadata
    wacz = recrawl.base / "crawl.wacz"
    scrapy("export", "--wacz", str(wacz), collection=recrawl.collection, settings=settings)
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from wacz.main import main; sys.exit(main())",
            "validate",
            "-f",
            str(wacz),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0 and "Validation succeeded" in run.stdout, run.stdout[-2000:]
    with zipfile.ZipFile(wacz) as archive:
        names = set(archive.namelist())
        assert {f"archive/{f.name}" for f in files} <= names and "pages/pages.jsonl" in names
        listed = [json.loads(line) for line in archive.read("pages/pages.jsonl").splitlines()[1:]]
    assert set(recrawl.seeds) <= {page["url"] for page in listed}


def pywb_venv() -> Path:
    """pywb's own virtualenv (``wirescrapy/testing/pywb/install.sh``, which ``.ci/run`` runs). The test skips
    without it, or fails when ``WIRE_PYWB_VENV`` names a virtualenv that lacks it."""
    venv = Path(os.environ.get("WIRE_PYWB_VENV", "/opt/pywb-venv"))
    if not (venv / "bin" / "wayback").exists():
        if os.environ.get("WIRE_PYWB_VENV"):
            pytest.fail(f"pywb is not installed in {venv} (.ci/run runs wirescrapy/testing/pywb/install.sh)")
        pytest.skip(f"pywb is not installed in {venv}: bash wirescrapy/testing/pywb/install.sh {venv}")
    return venv


@contextlib.contextmanager
def wayback(venv: Path, directory: Path):
    """pywb's server on 127.0.0.1, serving the collections in ``directory``; its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(directory / "wayback.log", "wb")
    server = subprocess.Popen(
        [str(venv / "bin" / "wayback"), "-p", str(port), "-b", "127.0.0.1"],
        cwd=directory,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, (
                    directory / "wayback.log"
                ).read_text()
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_a_real_pywb_replays_the_pages_the_crawl_archived(recrawl):
    """The archive's WARC files and the index ``scrapy export --cdxj`` writes, as a pywb collection; three
    pages opened in headless Chromium through pywb have the text and links of the responses the crawl
    archived, and no console errors."""
    venv, browser = pywb_venv(), chromium()
    collection = recrawl.base / "pywb" / "collections" / "crawl"
    (collection / "archive").mkdir(parents=True)
    (collection / "indexes").mkdir()
    files = warc_files(recrawl.archive)
    for file in files:
        (collection / "archive" / file.name).symlink_to(file)
    settings = {**recrawl.settings, "WIRE_COLLECTION_DIR": recrawl.collection}
    index = collection / "indexes" / "index.cdxj"
    scrapy("export", "--cdxj", str(index), collection=recrawl.collection, settings=settings)
    captures = {}  # URL: timestamp of an HTML page with status 200
    for line in index.read_text().splitlines():
        _, timestamp, data = line.split(" ", 2)
        entry = json.loads(data)
        if entry.get("mime") == "text/html" and entry.get("status") == "200":
            captures.setdefault(entry["url"], timestamp)
    archived = {
        a.fields["url"]: a
        for f in files
        for a in read_fetches(f)
        if a.fields["url"] in captures and a.status == 200
    }
    pages = sorted(url for url in archived if url.endswith(".html"))[:2] + sorted(recrawl.seeds)[:1]
    assert len(pages) == 3
    with wayback(venv, recrawl.base / "pywb") as base, Browser(browser) as chrome:
        for url in pages:
            html = archived[url].body
            if any(name.lower() == "content-encoding" for name, _ in archived[url].headers):
                html = gzip.decompress(html)
            expected = lxml.html.fromstring(html, base_url=url)
            expected.make_links_absolute(url)
            chrome.open(f"{base}/crawl/{captures[url]}mp_/{url}")
            frame = "document.querySelector('iframe').contentDocument"  # the page, under pywb's banner
            assert chrome.evaluate(f"{frame}.readyState") == "complete", url  # the top's load waits for it
            assert chrome.evaluate(f"{frame}.contentType") == "text/html", url  # the page, not our metadata
            assert chrome.evaluate(f"{frame}.title") == expected.findtext(".//title"), url
            text = chrome.evaluate(f"{frame}.body.innerText")
            assert text.split() == expected.body.text_content().split(), url
            links = chrome.evaluate(f"Array.from({frame}.querySelectorAll('a')).map(a => a.href)")
            assert links == [a.get("href") for a in expected.iter("a")], url  # wombat shows the original URLs
            assert not chrome.console_errors(), (url, chrome.console_errors())


def test_a_page_splash_rendered_replays_as_the_crawler_saw_it(tmp_path):
    """A script-built page of the sample web, harvested with ``WIRE_RENDER_JS``: the archive holds the DOM
    Splash rendered (a ``resource`` record), and pywb replays it with the link only its script makes."""
    venv, browser = pywb_venv(), chromium()
    try:
        splash = OwnSplash(tmp_path)
    except SplashMissing as missing:
        if os.environ.get("WIRE_REQUIRE_SPLASH") == "1":
            pytest.fail(str(missing))
        pytest.skip(str(missing))
    archive, collection = tmp_path / "warc", tmp_path / "collection"
    web = {"sites": 6, "pages_per_site": 4, "crawl_delay": 0, "slow_delay": 0.05, "js": "on"}
    with splash, SampleWebProcess(workdir=tmp_path / "web", **web) as sample:
        seeds = tmp_path / "seeds.txt"
        url = f"http://site5.wire.test:{sample.port}/js/insert.html"
        seeds.write_text(f"http://site5.wire.test:{sample.port}/js/\n")
        settings = {
            "WIRE_WARC_DIR": archive,
            "SPLASH_URL": splash.url,
            "WIRE_RENDER_JS": "site5.wire.test",
            "WIRE_RENDER_WAIT": 0.2,
            "WIRE_WAIT_NORMAL": 0,
            "WIRE_WAIT_LARGE_SITE": 0,
        }
        scrapy(
            "crawl",
            "harvester",
            "-a",
            f"seeds={seeds}",
            "-a",
            "cycles=2",
            collection=collection,
            settings=settings,
        )
    [inserted] = scripted_links("insert.html")
    files = warc_files(archive)
    renders = [
        (headers, block)
        for f in files
        for kind, uri, headers, block in _records(f)
        if kind == "resource" and uri == url
    ]
    assert renders, "no render of the script page was archived"
    headers, dom = renders[-1]
    assert headers.get_header("Content-Type") == "text/html; charset=utf-8" and inserted.encode() in dom
    pywb = tmp_path / "pywb" / "collections" / "crawl"
    (pywb / "archive").mkdir(parents=True)
    (pywb / "indexes").mkdir()
    for file in files:
        (pywb / "archive" / file.name).symlink_to(file)
    scrapy("export", "--cdxj", str(pywb / "indexes" / "index.cdxj"), collection=collection, settings=settings)
    with wayback(venv, tmp_path / "pywb") as base, Browser(browser) as chrome:
        chrome.open(f"{base}/crawl/mp_/{url}")
        frame = "document.querySelector('iframe').contentDocument"
        hrefs = chrome.evaluate(f"Array.from({frame}.querySelectorAll('a')).map(a => a.getAttribute('href'))")
    assert any(href and href.endswith(inserted) for href in hrefs), hrefs


def _records(file: Path):
    """(type, target URI, WARC headers, block) of each record of ``file``."""
    with open(file, "rb") as stream:
        for record in ArchiveIterator(stream):
            yield (
                record.rec_type,
                record.rec_headers.get_header("WARC-Target-URI"),
                record.rec_headers,
                (record.content_stream().read()),
            )
