"""Every fetch of a harvest into WARC, as the harvester handed it over (item pipeline, first of all).

On when the harvest has a ``warc_dir`` (the harvest comes with the ``harvest_opened`` signal,
``wirescrapy/signals.py``): ``scrapy crawl harvester -a batch=DIR -a warc=OUTDIR`` (the detached harvester: no
collection, this pipeline is the only one that acts) or ``WIRE_WARC_DIR`` (the ordinary harvester archives as
it crawls; the gatherer's pipelines come after this one). It runs before the gatherer,
so a fetch is written as the harvester concluded it, and a gatherer's failure on it cannot change what is
archived. Files are rotated at ``WIRE_WARC_MAX_SIZE`` bytes and named after the batch and part being
harvested (:mod:`~wirescrapy.warc.writer`); a new batch begins a new file. Stats under ``warc/``.

A 304 to a conditional request is a ``revisit`` record in every harvest. A harvest also writes a ``revisit``
for a payload its archive directory holds already, from this harvest or an earlier one
(:mod:`~wirescrapy.warc.digests`): a recrawl of unchanged pages does not store their bytes again. A detached
harvest knows too, read-only, the payloads its batch ships (``payload-digests.txt`` in the batch's directory:
the last payload of each URI of its sites that the collection ingested), held in the WARC directories of
earlier parts, where ``scrapy ingest`` finds them.

The writer runs in a process of its own (:mod:`~wirescrapy.warc.process`); a fetch goes on to the gatherer
once its records are in the file.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from twisted.internet import defer

from wirescrapy.config import WireConfig
from wirescrapy.items import Fetch, Kind
from wirescrapy.signals import harvest_opened
from wirescrapy.warc.digests import FILENAME as DIGESTS_FILE
from wirescrapy.warc.process import WarcProcess

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class WarcPipeline:
    def __init__(self, crawler: Crawler, max_size: int):
        self.crawler = crawler
        self.stats = crawler.stats
        self.max_size = max_size
        self.harvest = None  # the harvest being archived (harvester/session.py's Harvest), if any
        self.writer: WarcProcess | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pipeline = cls(crawler, WireConfig.from_crawler(crawler).warc_max_size)
        crawler.signals.connect(pipeline.open, signal=harvest_opened)
        crawler.signals.connect(pipeline.close, signal=signals.spider_closed)
        return pipeline

    def open(self, harvest) -> None:
        """A harvest with a batch begins its first file at once: a part with nothing to fetch still leaves a
        file whose warcinfo says which part it was, for ``scrapy ingest``."""
        if not harvest.warc_dir:
            return
        self.harvest = harvest
        if harvest.batch is not None:
            self.writer = self._writer(batch_info(harvest.batch), open_now=True)

    def process_item(self, item, spider: Spider):
        harvest = self.harvest
        if harvest is None or not isinstance(item, Fetch):
            return item
        if self.writer is None:
            self.writer = self._writer({}, open_now=False)  # a harvest with no batch when it began
        self.writer.begin(batch_info(harvest.batch))
        written = self.writer.write(item)
        written.addCallback(self._written, item)
        return written

    def _written(self, answer: tuple[int, str], item: Fetch) -> Fetch:
        size, profile = answer
        stats = self.stats
        stats.inc_value("warc/bytes", size)
        stats.inc_value(f"warc/fetched/{item.kind.value}")
        if profile:
            stats.inc_value(f"warc/revisits/{profile.rsplit('/', 1)[-1]}")
        if item.error is not None:
            stats.inc_value(f"warc/errors/{item.error.label}")
        elif item.kind is Kind.PAGE:
            stats.inc_value(f"warc/status/{item.status}")
        return item

    def _writer(self, info: dict, open_now: bool) -> WarcProcess:
        shipped = None
        harvest = self.harvest
        if harvest.detached and harvest.batch is not None:
            shipped = harvest.batch.path / DIGESTS_FILE
            shipped = shipped if shipped.exists() else None
        from twisted.internet import reactor  # Scrapy's, installed by the time a harvest opens

        writer = WarcProcess(harvest.warc_dir, self.max_size, info, shipped, open_now)
        return writer.spawn(reactor)

    def close(self, spider: Spider) -> defer.Deferred | None:
        """The harvest's end: the writer's process closes its file; Scrapy waits for it."""
        if self.writer is None:
            return None
        return self.writer.close().addCallback(self._closed)

    def _closed(self, _) -> None:
        fetches, size, files, cpu = self.writer.summary
        self.stats.set_value("warc/process_cpu", cpu)
        logger.info(
            "WARC: %(fetches)d fetches, %(bytes)d bytes in %(files)d file(s) in %(dir)s",
            {"fetches": fetches, "bytes": size, "files": len(files), "dir": self.harvest.warc_dir},
        )


def batch_info(batch) -> dict:
    """What a file's warcinfo says of the batch being harvested (a ``manager.batch.Batch``, or None)."""
    if batch is None:
        return {}
    return {
        "batch": batch.number,
        "part": batch.part,
        "parts": batch.parts,
        "collection": batch.info.get("collection", ""),
        "collection-id": batch.info.get("collection_id", ""),
        "batch-created": batch.info.get("created", 0),
    }
