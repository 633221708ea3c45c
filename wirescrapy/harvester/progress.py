"""What a person watching a harvest sees: a progress line every ``LOGSTATS_INTERVAL`` seconds.

    Harvest: 1204 fetches (18.3/s), 412 pages parsed, 37 duplicates; sites 212 fetching, 1530 waiting,
    418 done; 48211 URLs left, about 1:04:10 left; errors: timeout 12, dns 3

The time left is the larger of two estimates: the URLs left at the current rate, and what politeness
alone allows — the longest site queue times its wait (``PolitenessQueue.time_left``). Everything in it
comes from the crawl's stats (``harvester/*``, ``gatherer/*``) and the scheduler's counts.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

LINE = (
    "Harvest: %(fetches)d fetches (%(rate).1f/s), %(parsed)d pages parsed, %(duplicates)d duplicates; "
    "sites %(fetching)d fetching, %(waiting)d waiting, %(done)d done; "
    "%(left)d URLs left, about %(eta)s left; "
    "errors: %(errors)s"
)


class HarvestProgress:
    def __init__(self, crawler: Crawler, interval: float):
        self.crawler = crawler
        self.interval = interval
        self.task: task.LoopingCall | None = None
        self.last = (0.0, 0)  # (time, fetches) at the previous line

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        interval = crawler.settings.getfloat("LOGSTATS_INTERVAL")
        if interval <= 0:
            raise NotConfigured
        extension = cls(crawler, interval)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider) -> None:
        self.last = (time.monotonic(), 0)
        self.task = task.LoopingCall(self.log)
        self.task.start(self.interval, now=False)

    def spider_closed(self, spider, reason) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()

    def log(self) -> None:
        values = self.figures()
        if values is not None:
            logger.info(LINE, values)

    def figures(self) -> dict | None:
        """The values of the progress line now; None when no harvester scheduler runs."""
        from wirescrapy.harvester.scheduler import WireScheduler

        try:
            scheduler = WireScheduler.of(self.crawler)
        except RuntimeError:
            return None
        stats = self.crawler.stats.get_stats()
        counts = scheduler.counts()
        now = time.monotonic()
        then, before = self.last
        rate = (counts.fetches - before) / (now - then) if now > then else 0.0
        self.last = (now, counts.fetches)
        left = counts.urls + counts.fetching
        bound = scheduler.queue.time_left(scheduler.clock())
        eta = max(left / rate if rate > 0 else 0.0, bound)
        errors = sorted(
            ((v, k.rsplit("/", 1)[1]) for k, v in stats.items() if k.startswith("harvester/errors/")),
            reverse=True,
        )
        return {
            "fetches": counts.fetches,
            "rate": rate,
            "parsed": stats.get("gatherer/parsed", 0),
            "duplicates": stats.get("gatherer/duplicates", 0),
            "fetching": counts.fetching,
            "waiting": counts.waiting + counts.ready,
            "done": counts.empty,
            "left": left,
            "eta": str(timedelta(seconds=round(eta))),
            "errors": ", ".join(f"{kind} {count:,}" for count, kind in errors) or "none",
        }
