"""What the gatherer's pipelines share: built from the crawler, acting on ``Fetch`` items of a harvest.

Each step keeps the harvest the ``harvest_opened`` signal brings (``wirescrapy/signals.py``); until one
opens, it passes every item by. A failed write to the collection (a full disk, ``collection/writes.py``) is
no failure of one fetch: the step sends the ``write_failed`` signal, the harvester's spider stops the
harvest, and from then on no step writes anything.

Any other failure of a step on a fetch (any exception but ``DropItem``) is logged and becomes the fetch's
error, ``FetchError.GATHERER``: the steps after it leave the fetch alone, so that a half-gathered page changes
nothing more (its links, its stored content stay as they were), except the metadata step, which records the
error on the page (``records_failures``). A page is never lost to a bug or to what a server sent, and the
items after it go on. Only a fetch with no document to record it under (its URL has none and gets none) is
dropped.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import DropItem

from wirescrapy.collection.writes import is_write_failure
from wirescrapy.config import WireConfig
from wirescrapy.items import Fetch, FetchError, Kind
from wirescrapy.signals import harvest_opened, write_failed

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

    from wirescrapy.harvester.session import Harvest

logger = logging.getLogger(__name__)


class GathererStep:
    """A gatherer pipeline: acts on the ``Fetch`` items of a harvest; passes others."""

    records_failures = False  # whether it acts on a fetch an earlier step failed on

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = WireConfig.from_crawler(crawler)
        self.harvest: Harvest | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        step = cls(crawler)
        crawler.signals.connect(step.harvest_opened, signal=harvest_opened)
        return step

    def harvest_opened(self, harvest: Harvest) -> None:
        self.harvest = harvest

    def process_item(self, item, spider: Spider):
        harvest = self.harvest
        if harvest is None or harvest.collection is None or not isinstance(item, Fetch):
            return item  # not a harvest's fetch, or a detached harvest's: WARC is its only output
        if (
            harvest.stopped
        ):  # a write failed (a full disk): nothing more is recorded, and the last step counts it
            if self.records_failures:
                self.stats.inc_value("gatherer/not_recorded_after_stop")
            return item
        if item.error is FetchError.GATHERER and not self.records_failures:
            return item
        try:
            self.process(item, harvest)
        except DropItem:
            raise
        except Exception as exc:
            if is_write_failure(exc):
                self.crawler.signals.send_catch_log(write_failed, exc=exc)
                return item
            logger.exception("%(step)s failed on %(url)s", {"step": type(self).__name__, "url": item.url})
            self.stats.inc_value(f"gatherer/failed/{type(self).__name__}")
            self.failed(item, harvest, exc)
        return item

    def failed(self, fetch: Fetch, harvest: Harvest, exc: Exception) -> None:
        """``process`` raised ``exc`` on ``fetch``: it goes on as a gatherer error, for the metadata step to
        record. A page or robots.txt with no document cannot be recorded: dropped."""
        if not fetch.doc_id and fetch.kind is not Kind.SITEMAP:
            raise DropItem(f"{type(self).__name__} failed on {fetch.url}: {exc!r}") from exc
        was = f" (after {fetch.error.label}: {fetch.message})" if fetch.error is not None else ""
        fetch.error = FetchError.GATHERER
        fetch.message = f"{type(self).__name__}: {exc!r}{was}"[:300]

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        raise NotImplementedError
