"""``scrapy ingest OUTDIR…``: batch parts harvested elsewhere into WARC, brought into the collection.

Each ``OUTDIR`` is what a detached harvester wrote (``scrapy crawl harvester -a batch=PART -a warc=OUTDIR``):
WARC files whose warcinfo names the batch and part, and ``harvest.json`` once that harvest finished. Their
fetches go, in the order they were written, through the same item pipelines a local harvest uses (the
gatherer: document, parse, content-seen and page store, link graph, metadata, new URLs through the seeder's
rules), in a crawl of the :class:`IngestSpider`, which holds the collection's :class:`Harvest` and announces
it to the pipelines (the ``harvest_opened`` signal) as the harvester's spider does, and tells the harvest's
robots.txt owner of each robots.txt fetch as the harvester's spider did. A body the harvester received
compressed is decoded by Scrapy's own ``HttpCompressionMiddleware``, as it was in the harvest. A ``revisit``
record of either WARC/1.1 profile stands for its response (``warc/reader.py``): a 304 of the
server-not-modified profile, and the payload of the identical-payload-digest profile found in any file of the
directories given or, for a revisit against the payloads the batch shipped, of the parts ingested before (the
WARC directory each part's ``harvest.json`` names). A record that is bad (a payload that does not match its
digest, a revisit to a payload none of the files holds) is one line naming its file and offset, and its fetch
is left for a later batch.

Each whole payload read (a response's, or a revisit's of the identical-payload-digest profile) goes into the
collection's payload digests (``payload-digests.txt`` in its directory, :mod:`~wirescrapy.warc.digests`) with
the record that holds it, once each WARC file is read: the manager ships each batch its sites' part of them,
against which a detached harvest writes revisits.

* The part must be the collection's: ``batches/NNNNNN/part-K`` of the batch the WARC names.
* A fetch already in the collection is passed over: its document's record has a ``last_visit`` not before
  the fetch ended (the metadata pipeline writes exactly the fetch's end). So ingesting a part twice changes
  nothing, and an ingest killed half way, run again, goes on where it stopped.
* When every fetch of a finished harvest is in, the part gets its ``harvest.json`` in the collection, as a
  part harvested locally does: the manager stops holding its pages back (``WIRE_PART_TIMEOUT``), and once
  every part of a batch has one, the batch has its own too.
* A write to the collection that fails (a full disk: the ``write_failed`` signal) stops the ingest, saying so
  in one line, as it stops a harvest. What is stored stays and no part gets its ``harvest.json``: run again
  once there is room, the ingest goes on where it stopped.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import scrapy
from scrapy import signals
from scrapy.commands import ScrapyCommand
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.exceptions import UsageError
from scrapy.http import Headers, Response

from wirescrapy.collection.writes import is_write_failure
from wirescrapy.commands.base import InputError, WireCommand
from wirescrapy.config import WireConfig
from wirescrapy.harvester.robots import fetch_origin
from wirescrapy.harvester.session import CLOSED_WITHOUT_CHECKPOINTS, HARVEST_FILE, Harvest
from wirescrapy.items import Kind
from wirescrapy.manager.batch import BatchError, read_batch
from wirescrapy.signals import harvest_opened, write_failed
from wirescrapy.url import robots_txt_url
from wirescrapy.warc.digests import PayloadDigests
from wirescrapy.warc.reader import Payloads, WarcError, read_fetches, warc_files, warcinfo
from wirescrapy.warc.records import fetch_of, warc_date

logger = logging.getLogger(__name__)


class Command(WireCommand, ScrapyCommand):
    quiet = False

    def syntax(self):
        return "OUTDIR [OUTDIR ...]"

    def short_desc(self):
        return "Bring batch parts harvested into WARC (crawl harvester -a warc=OUTDIR) into the collection"

    def run(self, args, opts):
        if not args:
            raise UsageError("give the WARC directories of the harvested parts")
        for directory in args:
            if not Path(directory).is_dir():
                raise InputError(f"{directory}: no such directory")
        # Pages parsed in this thread, whatever WIRE_PARSE_WORKERS says: the fetches are items of the start
        # generator, not of responses, and Scrapy closes the spider without waiting for such items' pipelines
        # (a page still with a parse worker would be lost); and each fetch's `_applied` reads what the
        # fetches before it wrote.
        self.settings.set("WIRE_PARSE_WORKERS", 0, priority="cmdline")
        self.crawl(IngestSpider, dirs=args)


class IngestSpider(scrapy.Spider):
    name = "ingest"
    # No requests, only items: Scrapy's scheduler, and its LogStats line ("scraped N items") for the progress,
    # in place of the harvest's, which reads the harvester's scheduler.
    custom_settings: ClassVar[dict] = {
        "SCHEDULER": "scrapy.core.scheduler.Scheduler",
        "EXTENSIONS": {"wirescrapy.extensions.WireSettingsCheck": 0},
    }

    def __init__(self, dirs: list[str] | str = (), **kwargs):
        super().__init__(**kwargs)
        self.dirs = [Path(d) for d in ([dirs] if isinstance(dirs, str) else dirs)]
        self.harvest: Harvest | None = None
        self.parts: list[tuple[Path, Path, dict]] = []  # (WARC directory, the part's directory, warcinfo)
        self.ingested = self.skipped = 0
        self.complete: list[tuple[Path, Path]] = []  # parts every fetch of a finished harvest is in

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.config = WireConfig.from_crawler(crawler)
        spider.decoder = HttpCompressionMiddleware.from_crawler(crawler)
        spider.harvest = Harvest.open(spider.config, crawler.settings.get("USER_AGENT") or "")
        try:
            spider.parts = [spider._part(directory) for directory in spider.dirs]
        except BaseException:
            spider.harvest.close()
            raise
        crawler.signals.connect(spider._opened, signal=signals.spider_opened)
        crawler.signals.connect(spider._closed, signal=signals.spider_closed)
        crawler.signals.connect(spider._write_failed, signal=write_failed)
        return spider

    def _opened(self) -> None:
        self.crawler.signals.send_catch_log(harvest_opened, harvest=self.harvest)

    def _part(self, directory: Path) -> tuple[Path, Path, dict]:
        """The collection's directory of the part whose WARC files are in ``directory``."""
        files = warc_files(directory)
        if not files:
            raise InputError(f"{directory}: no WARC files (*.warc.gz)")
        try:
            info = warcinfo(files[0])
        except WarcError as exc:
            raise InputError(str(exc)) from None
        if "wirescrapy-batch" not in info:
            raise InputError(f"{files[0]}: not written by a harvest of a batch (no wirescrapy-batch)")
        number, part, parts = (
            int(info.get(f"wirescrapy-{key}", 0) or 0) for key in ("batch", "part", "parts")
        )
        collection = self.harvest.collection
        owner = info.get("wirescrapy-collection-id", "")
        if owner and owner != collection.id:
            raise BatchError(
                f"{directory} holds batch {number} part {part} of the collection "
                f"{info.get('wirescrapy-collection') or '?'} (id {owner}), not of {collection.dir} "
                f"(id {collection.id})"
            )
        path = self.harvest.batches_dir / f"{number:06d}"
        if parts > 1:
            path /= f"part-{part}"
        try:
            batch = read_batch(path)
        except BatchError as exc:
            raise BatchError(
                f"{directory} holds batch {number} part {part}, which this collection "
                f"({self.harvest.collection.dir}) did not write: {exc}"
            ) from None
        if float(batch.info.get("created", 0)) != float(info.get("wirescrapy-batch-created", 0) or 0):
            raise BatchError(
                f"{directory} holds a batch {number} written at another time than this collection's: "
                f"another collection's batch"
            )
        return directory, path, info

    async def start(self):
        try:
            async for fetch in self._fetches():
                yield fetch
        except OSError as exc:  # the batch's or robots.txt's own files, on a full disk
            if not is_write_failure(exc):
                raise
            self._write_failed(exc)

    async def _fetches(self):
        # A revisit's payload may be in any file of the directories given, or of the parts ingested before.
        payloads = Payloads(
            [file for directory in self.dirs for file in warc_files(directory)], self._earlier_files()
        )
        digests = PayloadDigests(self.harvest.collection.dir)
        for directory, part_dir, _ in self.parts:
            harvest = self.harvest
            if (part_dir / HARVEST_FILE).exists():
                logger.info(
                    "%(dir)s: %(part)s is harvested already, nothing to ingest",
                    {"dir": directory, "part": part_dir},
                )
                continue
            harvest.open_batch(part_dir)
            for file in warc_files(directory):
                for archived in read_fetches(file, payloads):
                    if harvest.stopped:
                        return
                    if archived.digest:
                        digests.archived(
                            archived.digest, archived.fields["url"], warc_date(archived.fields["started"])
                        )
                    fetch = fetch_of(archived.fields, self._body(archived))
                    if fetch.kind is Kind.ROBOTS:  # what the harvester's spider told the owner, in order
                        if fetch.error is not None:
                            harvest.robots.failed(fetch)
                        elif not fetch.followed:
                            harvest.robots.fetched(fetch)
                    if self._applied(fetch) or self._not_followed(fetch):
                        self.skipped += 1
                        continue
                    self.ingested += 1
                    yield fetch
                digests.commit()
            if (directory / HARVEST_FILE).exists():
                self.complete.append((directory, part_dir))
            else:
                logger.warning(
                    "%(dir)s: its harvest has not finished (no %(file)s): what it fetched so far is "
                    "ingested; ingest it again when it has",
                    {"dir": directory, "file": HARVEST_FILE},
                )

    def _earlier_files(self) -> Iterator[Path]:
        """The WARC files of the parts ingested before (each part's ``harvest.json`` names its directory),
        newest batch first: where a revisit against a payload the batch shipped finds it."""
        given = {directory.resolve() for directory in self.dirs}
        batches = self.harvest.batches_dir
        records = [*batches.glob(f"*/{HARVEST_FILE}"), *batches.glob(f"*/part-*/{HARVEST_FILE}")]
        for record in sorted(records, reverse=True):
            try:
                directory = Path(json.loads(record.read_text(encoding="utf-8")).get("warc") or "")
            except (OSError, ValueError):
                continue
            if directory.name and directory.resolve() not in given and directory.is_dir():
                yield from warc_files(directory)

    def _body(self, archived) -> bytes:
        """The body the harvester handed on: the one received, decoded as Scrapy decoded it in the harvest."""
        if not archived.fields["decoded"] or archived.headers is None:
            return archived.body
        url = archived.fields["url"]
        request = scrapy.Request(url)
        response = Response(
            url,
            status=archived.status,
            headers=Headers(archived.headers),
            body=archived.body,
            request=request,
        )
        return self.decoder.process_response(request, response, self).body

    def _applied(self, fetch) -> bool:
        """Whether the collection has ``fetch`` already (a record written at its end or later)."""
        if fetch.kind is Kind.SITEMAP:
            return False  # no record of its own: its URLs are added once whatever happens
        collection = self.harvest.collection
        doc_id = fetch.doc_id
        if not doc_id:
            doc_id = collection.lookup(
                robots_txt_url(fetch_origin(fetch)) if fetch.kind is Kind.ROBOTS else fetch.url
            )
        if not 0 < doc_id <= collection.documents.count:
            return False
        return float(collection.documents.records[doc_id]["last_visit"]) >= fetch.ended

    def _not_followed(self, fetch) -> bool:
        """Whether ``fetch`` is a redirect's target that a harvest with the collection would not have
        followed: visited within its minimum revisit period (``Harvest.redirect_target_done``). A detached
        harvest cannot tell, so it fetched the page again; ingesting that fetch would count a second visit a
        local harvest does not make."""
        return fetch.kind is Kind.PAGE and fetch.hops > 0 and self.harvest.redirect_target_done(fetch.url)

    def _write_failed(self, exc: OSError) -> None:
        """A write to the collection failed (``collection/writes.py``: a full disk): stop, once, and say so
        in one line. From then on the item pipelines pass each fetch on unrecorded (``harvest.stopped``), and
        no more are read. The ``harvester/stopped`` stat makes the command exit non-zero, as for a harvest."""
        message = self.harvest.stop_writing(exc)
        if message is None:
            return
        self.logger.error(
            "%(message)s%(file)s: the ingest stops; what is stored is kept, and an ingest run again once "
            "there is room goes on where it stopped",
            {"message": message, "file": f" (writing {exc.filename})" if exc.filename else ""},
        )
        self.crawler.stats.set_value("harvester/stopped", message)

    def _closed(self, reason: str) -> None:
        harvest = self.harvest
        try:
            if reason == "finished" and not harvest.stopped:
                for directory, part_dir in self.complete:
                    self._finish(directory, part_dir)
            logger.info(
                "Ingested %(n)d fetches (%(skipped)d already in the collection) from %(dirs)d WARC "
                "directories into %(collection)s",
                {
                    "n": self.ingested,
                    "skipped": self.skipped,
                    "dirs": len(self.dirs),
                    "collection": harvest.collection.dir,
                },
            )
        finally:
            self._close(harvest)

    def _close(self, harvest: Harvest) -> None:
        if message := harvest.close_after_failure():
            self.logger.info(CLOSED_WITHOUT_CHECKPOINTS, {"message": message})

    def _finish(self, directory: Path, part_dir: Path) -> None:
        """The part is in: its harvest.json (the WARC harvest's, with when it was ingested), then the batch's
        when every part has one."""
        record = json.loads((directory / HARVEST_FILE).read_text(encoding="utf-8"))
        _write_json(
            part_dir / HARVEST_FILE, {**record, "ingested": time.time(), "warc": str(directory.resolve())}
        )
        batch_dir = part_dir.parent
        parts = sorted(batch_dir.glob("part-*")) if batch_dir != self.harvest.batches_dir else []
        if parts and all((p / HARVEST_FILE).exists() for p in parts):
            _write_json(
                batch_dir / HARVEST_FILE,
                {"batch": int(batch_dir.name), "part": None, "parts": len(parts), "finished": time.time()},
            )
        self.harvest.collection.checkpoint()


def _write_json(path: Path, value: dict) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")
    os.replace(temporary, path)
