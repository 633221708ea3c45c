"""Pages of the batch already fetched in it are not fetched again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

from wirescrapy.harvester.meta import DOC_ID, RENDER
from wirescrapy.signals import harvest_opened

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from wirescrapy.harvester.session import Harvest


class AlreadyFetched(IgnoreRequest):
    """The page was fetched in this batch already (through a redirect, or before a restart)."""


class BatchFilterMiddleware:
    def __init__(self):
        self.harvest: Harvest | None = None  # none: not a harvest, nothing is filtered

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = cls()
        crawler.signals.connect(middleware.harvest_opened, signal=harvest_opened)
        return middleware

    def harvest_opened(self, harvest: Harvest) -> None:
        self.harvest = harvest

    def process_request(self, request: Request, spider: Spider) -> None:
        harvest = self.harvest
        doc_id = request.meta.get(DOC_ID)
        # A render after the page's raw fetch in this batch is part of that visit.
        if (
            harvest is not None
            and doc_id
            and RENDER not in request.meta
            and harvest.fetched_in_batch(doc_id=doc_id)
        ):
            raise AlreadyFetched(f"{request.url} was fetched in this batch already")
