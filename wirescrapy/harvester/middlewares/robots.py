"""robots.txt, checked before any access to a page (the harvest's robots.txt owner, ``harvest.robots``,
answers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

from wirescrapy.harvester.meta import KIND, SPLASH_PROCESSED
from wirescrapy.harvester.robots import Verdict, origin_of
from wirescrapy.signals import harvest_opened

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from wirescrapy.harvester.session import Harvest


class RobotsDisallowed(IgnoreRequest):
    """robots.txt forbids the URL."""


class RobotsNotReady(IgnoreRequest):
    """The site's robots.txt is unreachable or not fetched yet: its pages wait for a later batch."""


class RobotsMiddleware:
    def __init__(self):
        self.harvest: Harvest | None = None  # none: not a harvest, everything passes

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = cls()
        crawler.signals.connect(middleware.harvest_opened, signal=harvest_opened)
        return middleware

    def harvest_opened(self, harvest: Harvest) -> None:
        self.harvest = harvest

    def process_request(self, request: Request, spider: Spider) -> None:
        harvest = self.harvest
        if harvest is None or request.meta.get(KIND) is not None:
            return  # robots.txt and sitemaps are not subject to robots.txt
        if request.meta.get(SPLASH_PROCESSED):
            return  # the request to Splash: its page's URL was checked before it was sent there
        verdict = harvest.robots.verdict(request.url)
        if verdict is Verdict.ALLOWED:
            return
        origin = origin_of(request.url)
        if verdict is Verdict.DISALLOWED:
            raise RobotsDisallowed(f"robots.txt of {origin} forbids {request.url}")
        raise RobotsNotReady(f"robots.txt of {origin} is {verdict.value}")
