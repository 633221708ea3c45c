"""Pages a server asked to wait for: a 429 or 503 with ``Retry-After`` is not the page's answer.

The scheduler holds the server's whole group until the time asked (``WireScheduler``, on the response's
download). Here the page itself goes back to its site's queue, at its front, instead of reaching the spider as
an error: it is fetched again once the hold is over, in this batch, or in the next if this one ends first.
robots.txt too: a 503 with ``Retry-After`` is a hold, not a day's absence (RFC 9309 §2.3.1.4 asks a crawler to
retry a 5xx robots.txt). Each page's holds add up in its ``meta[HELD]``; once they reach
``WIRE_MAX_RETRY_AFTER`` the answer goes on to the spider as it is: a server that never recovers cannot
keep a batch open.

A time-out is the server's signal too: its group backs off (``WireScheduler.timed_out``), as after a 5xx.

Its place is above the retry middleware (``WireRetryMiddleware``, 550), whose ``process_response`` runs after
this one's and would retry a 429 or 503 at once and count it against the page's errors.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from twisted.internet import defer
from twisted.internet.error import TCPTimedOutError
from twisted.internet.error import TimeoutError as ConnectTimeoutError

from wirescrapy.config import WireConfig
from wirescrapy.harvester.meta import HELD
from wirescrapy.harvester.retryafter import HOLD_STATUSES, retry_after
from wirescrapy.harvester.scheduler import WireScheduler

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class ServerHoldMiddleware:
    def __init__(self, max_retry_after: float, crawler: Crawler):
        self.max_retry_after = max_retry_after
        self.crawler = crawler
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(WireConfig.from_crawler(crawler).max_retry_after, crawler)

    def process_response(self, request: Request, response: Response, spider: Spider) -> Request | Response:
        if response.status not in HOLD_STATUSES:
            return response
        wait = retry_after(response.headers.get(b"Retry-After"), time.time())
        held = request.meta.get(HELD, 0.0)
        if wait is None or held >= self.max_retry_after:
            return response
        self.stats.inc_value("harvester/holds/requeued")
        again = request.replace(dont_filter=True, priority=max(request.priority, 1))
        again.meta[HELD] = held + max(min(wait, self.max_retry_after), 1.0)
        return again

    def process_exception(self, request: Request, exception: Exception, spider: Spider) -> None:
        if isinstance(exception, _TIMEOUTS):
            WireScheduler.of(self.crawler).timed_out(request)


_TIMEOUTS = (defer.TimeoutError, ConnectTimeoutError, TCPTimedOutError, TimeoutError)
