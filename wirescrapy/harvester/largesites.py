"""A site found large in the middle of its batch gets the large-site wait at once.

WIRE gives a site with more than ``harvester/wait/countbig`` pages (``WIRE_LARGE_SITE_PAGES``) the shorter
wait, judged by the documents the collection knows of it when its batch is queued. A crawl's first batches are
where its large sites are found to be large, a page at a time: a site seeded with its home page knows a few
documents when its batch starts and many more a few pages in. This extension watches the gatherer's records
(``item_scraped``): once a site of the batch being harvested knows more documents than that, the scheduler is
told (``WireScheduler.set_pages``), and the site's next fetch, the one it is waiting for included, comes at
the large-site wait. A site only grows in a harvest, so each is told once a process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals

from wirescrapy.config import WireConfig
from wirescrapy.harvester.scheduler import WireScheduler
from wirescrapy.signals import harvest_opened

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from wirescrapy.harvester.session import Harvest


class LargeSiteWait:
    def __init__(self, crawler: Crawler, large_site_pages: int):
        self.crawler = crawler
        self.large_site_pages = large_site_pages
        self.harvest: Harvest | None = None
        self.told: set[int] = set()  # site-ids the scheduler knows are large

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        watch = cls(crawler, WireConfig.from_crawler(crawler).large_site_pages)
        crawler.signals.connect(watch.harvest_opened, signal=harvest_opened)
        crawler.signals.connect(watch.gathered, signal=signals.item_scraped)
        return watch

    def harvest_opened(self, harvest: Harvest) -> None:
        self.harvest = harvest

    def gathered(self, item) -> None:
        """``item``: the gatherer's record of a fetch (a dict with its ``site_id``)."""
        harvest = self.harvest
        batch = harvest.batch if harvest is not None else None
        site_id = item.get("site_id") if isinstance(item, dict) else None
        if batch is None or harvest.collection is None or site_id in self.told or site_id not in batch.sites:
            return
        docs = int(harvest.collection.sites.records[site_id]["docs"])
        if docs > self.large_site_pages:
            self.told.add(site_id)
            WireScheduler.of(self.crawler).set_pages(batch.sites[site_id].origin, docs)
