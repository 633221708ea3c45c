"""Only the accepted media types, and at most the max file size, of each response: counted on the wire and,
for a compressed body (``Content-Encoding`` gzip or deflate, or a sitemap's raw ``.xml.gz``), inflated too.

The last middleware before the network, it also holds a request the scheduler handed out before its site's
wait ended (``meta[NOT_BEFORE]``, a few ms) until the wait is over, and stamps when it went
(``meta[STARTED]``), and when a response's last byte came in (``meta[BODY_DONE]``: the site's wait starts
then). The reactor's timers end on whole milliseconds, up to one late (epoll's timeout is in
ms, rounded up), so the hold's timer ends ``TIMER_GRAIN`` short and the rest is slept: the request leaves
when the wait ends, not up to a millisecond later."""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import StopDownload
from twisted.internet.task import deferLater

from wirescrapy.config import WireConfig
from wirescrapy.harvester.meta import (
    BODY_DONE,
    KIND,
    MIME_REFUSED,
    NOT_BEFORE,
    RECEIVED,
    RENDER,
    STARTED,
    TRUNCATED,
)
from wirescrapy.harvester.middlewares.decompression import (
    CODINGS,
    GZIP_MAGIC,
    InflatedSize,
    content_codings,
)
from wirescrapy.harvester.politeness import DISPATCH_LEAD
from wirescrapy.items import Kind
from wirescrapy.seeder.robots import MAX_ROBOTS_BYTES
from wirescrapy.seeder.sitemaps import MAX_BYTES as MAX_SITEMAP_BYTES

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred


# A render's answer (harvester/render.py's LUA, bounded by construction): the raw body and the DOM each cut
# at the max file size and base64-encoded (2 × 4/3), view links of at most the max file size (and their
# JSON quotes).
RENDER_SIZE_FACTOR = 5


class FetchLimitsMiddleware:
    def __init__(self, accept_mime: list[str], max_file_size: int):
        self.accept_mime = frozenset(m.lower() for m in accept_mime)
        self.max_file_size = max_file_size
        # robots.txt: what RFC 9309 asks a crawler to parse; sitemaps: the protocol's limit
        self.limits = {"robots": MAX_ROBOTS_BYTES, "sitemap": MAX_SITEMAP_BYTES}
        # A compressed body's inflated size so far, for as long as its request lives.
        self.inflated: weakref.WeakKeyDictionary[Request, InflatedSize] = weakref.WeakKeyDictionary()
        # The body's length its headers announce (Content-Length), for as long as its request lives.
        self.lengths: weakref.WeakKeyDictionary[Request, int] = weakref.WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = WireConfig.from_crawler(crawler)
        middleware = cls(config.accept_mime, config.max_file_size)
        crawler.signals.connect(middleware.headers_received, signal=signals.headers_received)
        crawler.signals.connect(middleware.bytes_received, signal=signals.bytes_received)
        return middleware

    def process_request(self, request: Request, spider: Spider) -> Deferred[None] | None:
        # A retry is a copy of the request before it, meta included (``get_retry_request``): what this
        # middleware wrote of that request's response is not this one's.
        for key in ATTEMPT_KEYS:
            request.meta.pop(key, None)
        return self._hold(request)

    @classmethod
    def _hold(cls, request: Request) -> Deferred[None] | None:
        """Hold ``request`` until its site's wait is over (``meta[NOT_BEFORE]``): a timer while more than
        ``TIMER_GRAIN`` is left, then a sleep for the rest; stamp when it goes."""
        rest = hold_time(request.meta.get(NOT_BEFORE), time.time())
        if rest > TIMER_GRAIN:
            from twisted.internet import reactor

            return deferLater(reactor, rest - TIMER_GRAIN, cls._hold, request)
        if rest > 0:
            time.sleep(rest)
        request.meta[STARTED] = time.time()
        return None

    def headers_received(self, headers, body_length, request: Request, spider: Spider) -> None:
        mime = media_type(headers.get(b"Content-Type"))
        if (
            mime
            and mime not in self.accept_mime
            and request.meta.get(KIND) is None
            and RENDER not in request.meta
        ):
            request.meta[MIME_REFUSED] = mime
            raise StopDownload(fail=False)
        codings = content_codings(headers.getlist(b"Content-Encoding"))
        if len(codings) == 1 and codings[0] in CODINGS:
            self.inflated[request] = InflatedSize(codings[0])
        if isinstance(body_length, int) and body_length >= 0:
            self.lengths[request] = body_length
            if body_length == 0:
                request.meta[BODY_DONE] = time.time()

    def bytes_received(self, data: bytes, request: Request, spider: Spider) -> None:
        meta = request.meta
        received = meta.get(RECEIVED, 0) + len(data)
        meta[RECEIVED] = received
        kind = meta.get(KIND)
        if RENDER in meta:  # Splash's JSON: past this, Splash broke the script's bound (a failed render)
            limit = RENDER_SIZE_FACTOR * self.max_file_size
        else:
            limit = self.max_file_size if kind is None else self.limits[kind]
        inflated = self.inflated.get(request)
        if (
            inflated is None
            and received == len(data)
            and kind == Kind.SITEMAP.value
            and data[:2] == GZIP_MAGIC
        ):
            inflated = self.inflated[request] = InflatedSize(b"gzip")  # a raw .xml.gz
        # The bytes inflated count against the same limit: a gzip bomb stops after a few hundred bytes.
        if received > limit or (inflated is not None and inflated.feed(data, limit) > limit):
            request.meta[TRUNCATED] = True
            raise StopDownload(fail=False)
        if received == self.lengths.get(request):
            request.meta[BODY_DONE] = time.time()


# What the middleware writes of a response (one network access), cleared before the next access of a copy.
ATTEMPT_KEYS = (BODY_DONE, MIME_REFUSED, RECEIVED, TRUNCATED)
# The reactor's timers wake on whole milliseconds (epoll's timeout is in ms, rounded up), so a timer ends up
# to 1 ms late: a hold's timer is set this much short, and the rest is slept.
TIMER_GRAIN = 0.001
# The longest hold: the scheduler's lead, and the wall clock's drift from the monotonic one over a long wait;
# a wall clock stepped back holds no longer.
MAX_HOLD = DISPATCH_LEAD + 0.05


def hold_time(not_before: float | None, now: float) -> float:
    """Seconds to hold a request whose site may be visited at ``not_before`` (Unix time; None: at once), at
    most ``MAX_HOLD``."""
    if not_before is None:
        return 0.0
    return min(max(not_before - now, 0.0), MAX_HOLD)


def media_type(value: bytes | str | None) -> str:
    """``text/html`` of ``text/html; charset=UTF-8``; ``""`` when there is none."""
    if not value:
        return ""
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.split(";", 1)[0].strip().lower()
