"""robots.txt, checked before any access to a page (the harvest's robots.txt owner, ``harvest.robots``,
answers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

from wirescrapy.harvester.meta import KIND, SPLASH_PROCESSED
from wirescrapy.harvester.robots import Verdict, origin_of

if TYPE_CHECKING:
    from scrapy import Request, Spider


class RobotsDisallowed(IgnoreRequest):
    """robots.txt forbids the URL."""


class RobotsNotReady(IgnoreRequest):
    """The site's robots.txt is unreachable or not fetched yet: its pages wait for a later batch."""


class RobotsMiddleware:
    def process_request(self, request: Request, spider: Spider) -> None:
        harvest = getattr(spider, "harvest", None)
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
