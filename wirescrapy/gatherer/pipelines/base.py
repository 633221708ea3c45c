"""What the gatherer's pipelines share: built from the crawler, acting on ``Fetch`` items of a harvest."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import DropItem

from wirescrapy.config import WireConfig
from wirescrapy.items import Fetch

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

    from wirescrapy.harvester.session import Harvest

logger = logging.getLogger(__name__)


class GathererStep:
    """A gatherer pipeline: acts on ``Fetch`` items of a spider with a ``harvest``; passes others."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = WireConfig.from_crawler(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item, spider: Spider):
        harvest = getattr(spider, "harvest", None)
        if harvest is None or not isinstance(item, Fetch):
            return item
        try:
            self.process(item, harvest)
        except DropItem:
            raise
        except Exception as exc:
            logger.exception("%(step)s failed on %(url)s", {"step": type(self).__name__, "url": item.url})
            self.stats.inc_value(f"gatherer/failed/{type(self).__name__}")
            raise DropItem(f"{type(self).__name__} failed on {item.url}: {exc!r}") from exc
        return item

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        raise NotImplementedError
