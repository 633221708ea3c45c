"""At most ``SITEMAPS_AT_ONCE`` sitemaps downloading at once, however many sites are fetched together.

A sitemap may be 50 MB on the wire (the protocol's limit, ``seeder.sitemaps.MAX_BYTES``), and Scrapy keeps a
body whole until its download ends. At a crawl's start every site's robots.txt names its sitemaps, and with
``WIRE_CONNECTIONS`` (300) sites fetched together, as many sitemaps could be downloading at once: 15 GB for
sites that each send 50 MB. Past the limit a sitemap's request waits here, before the network, until a sitemap
download ends; its site stays busy meanwhile (the sitemap is that site's next access, and its one connection),
and the wait does not count against its download timeout, which starts in the download handler.

A slot is taken in ``process_request`` and given back when the request comes back through ``process_response``
or ``process_exception``, whichever way it ended: downloaded, failed, or answered or refused by a later
middleware. The waiting requests get their slots in the order they came.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from twisted.internet.defer import Deferred

from wirescrapy.harvester.meta import KIND
from wirescrapy.items import Kind

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

SITEMAPS_AT_ONCE = 8  # at most 400 MB of sitemap bodies


class Slots:
    """``size`` slots for keys, and the keys waiting for one, first come first served (pure)."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError("size must be >= 1")
        self.size = size
        self.holders: set[object] = set()
        self.waiting: OrderedDict[object, None] = OrderedDict()

    def take(self, key: object) -> bool:
        """Whether ``key`` has a slot now; if not, it waits for one."""
        if key in self.holders:
            return True
        if len(self.holders) < self.size:
            self.holders.add(key)
            return True
        self.waiting[key] = None
        return False

    def give_back(self, key: object) -> object | None:
        """``key`` no longer needs its slot (or no longer waits for one): the waiting key that now has it."""
        self.waiting.pop(key, None)
        if key not in self.holders:
            return None
        self.holders.discard(key)
        if not self.waiting:
            return None
        following, _ = self.waiting.popitem(last=False)
        self.holders.add(following)
        return following


class SitemapSlotsMiddleware:
    def __init__(self, stats, size: int = SITEMAPS_AT_ONCE):
        self.stats = stats
        self.slots = Slots(size)
        self.deferreds: dict[Request, Deferred[None]] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler.stats)

    def process_request(self, request: Request, spider: Spider) -> Deferred[None] | None:
        if request.meta.get(KIND) != Kind.SITEMAP.value or self.slots.take(request):
            return None
        self.stats.inc_value("harvester/sitemaps/waited_for_a_slot")
        deferred: Deferred[None] = Deferred()
        self.deferreds[request] = deferred
        return deferred

    def process_response(self, request: Request, response: Response, spider: Spider) -> Response:
        self._give_back(request)
        return response

    def process_exception(self, request: Request, exception: Exception, spider: Spider) -> None:
        self._give_back(request)

    def _give_back(self, request: Request) -> None:
        self.deferreds.pop(request, None)
        following = self.slots.give_back(request)
        if following is not None:
            self.deferreds.pop(following).callback(None)
