"""The harvester's downloader middlewares: what may be fetched, and how much of it.

Enabled in ``settings/default.py`` (``DOWNLOADER_MIDDLEWARES``), in this order:

* :class:`BatchFilterMiddleware` (100): a page of the batch already fetched in it (a redirect led there
  first, or a run before a restart) is refused with :class:`AlreadyFetched`.
* :class:`BlockedIPMiddleware` (110): resolves the host with the reactor's resolver (Scrapy's
  ``DNS_RESOLVER``, cached, so the connection that follows resolves from the cache) and refuses
  :class:`BlockedIP` when the address is in ``WIRE_BLOCKED_IPS``. Every request passes here, robots.txt,
  sitemaps and redirect follow-ups included, and an IP literal in a URL is checked the same way. The
  address is put in ``request.meta["wire_ip"]``. It comes before the robots.txt check so that the pages of
  a blocked site are recorded as blocked (and counted as errors by the manager), not left waiting for a
  robots.txt that will never come.
* :class:`RobotsMiddleware` (120): a page request whose site's robots.txt forbids it is refused with
  :class:`RobotsDisallowed` before any network access; a site whose robots.txt is unreachable (5xx,
  network error: RFC 9309 §2.3.1.4) or not known yet gets :class:`RobotsNotReady` for all its pages: they
  stay in the collection for a later batch. The rules are the harvest's (``Harvest.policy``); a spider
  without a ``harvest`` attribute passes everything.
* :class:`WireRetryMiddleware` (550, in place of Scrapy's ``RetryMiddleware``): a failed fetch is tried
  again in its batch, at the back of its site's queue; giving up is logged as INFO (the page is recorded
  with its error).
* :class:`FetchLimitsMiddleware` (950, next to the downloader): from the ``headers_received`` signal, a
  response whose Content-Type is not in ``WIRE_ACCEPT_MIME`` is stopped after its headers
  (``meta["wire_mime_refused"]``); from ``bytes_received``, a body longer than ``WIRE_MAX_FILE_SIZE`` is
  stopped there and kept (``meta["wire_truncated"]``). Both with ``StopDownload(fail=False)``: the
  response reaches the spider, with ``download_stopped`` in its flags. It also stamps
  ``meta["wire_started"]``, the time the request went to the network.

A refused request never reaches the downloader, so the scheduler releases its site without a wait (no
access was made); its errback gets the exception, and the spider records the page.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.downloadermiddlewares.retry import RetryMiddleware, get_retry_request
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.error import DNSLookupError

from wirescrapy.collection.metadata import RobotsState
from wirescrapy.config import WireConfig
from wirescrapy.harvester.scheduler import DOC_ID
from wirescrapy.harvester.session import origin_of
from wirescrapy.seeder.robots import MAX_ROBOTS_BYTES
from wirescrapy.seeder.sitemaps import MAX_BYTES as MAX_SITEMAP_BYTES

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# Request.meta keys
KIND = "wire_kind"  # items.Kind of the request; absent: a page
IP = "wire_ip"
STARTED = "wire_started"
RECEIVED = "wire_received"
TRUNCATED = "wire_truncated"
MIME_REFUSED = "wire_mime_refused"


class RobotsDisallowed(IgnoreRequest):
    """robots.txt forbids the URL."""


class RobotsNotReady(IgnoreRequest):
    """The site's robots.txt is unreachable or not fetched yet: its pages wait for a later batch."""


class BlockedIP(IgnoreRequest):
    """The host resolves to an address in WIRE_BLOCKED_IPS."""


class AlreadyFetched(IgnoreRequest):
    """The page was fetched in this batch already (through a redirect, or before a restart)."""


class BatchFilterMiddleware:
    def process_request(self, request: Request, spider: Spider) -> None:
        harvest = getattr(spider, "harvest", None)
        doc_id = request.meta.get(DOC_ID)
        if harvest is not None and doc_id and harvest.fetched_in_batch(doc_id=doc_id):
            raise AlreadyFetched(f"{request.url} was fetched in this batch already")


class RobotsMiddleware:
    def process_request(self, request: Request, spider: Spider) -> None:
        harvest = getattr(spider, "harvest", None)
        if harvest is None or request.meta.get(KIND) is not None:
            return  # robots.txt and sitemaps are not subject to robots.txt
        origin = origin_of(request.url)
        policy = harvest.policy(origin)
        if policy.allowed(request.url):
            return
        if policy.state is RobotsState.VALID:
            raise RobotsDisallowed(f"robots.txt of {origin} forbids {request.url}")
        raise RobotsNotReady(f"robots.txt of {origin} is {policy.state.name.lower()}")


class BlockedIPMiddleware:
    def __init__(self, networks: list[str]):
        parsed = [ipaddress.ip_network(n, strict=False) for n in networks]
        self.v4 = [n for n in parsed if n.version == 4]
        self.v6 = [n for n in parsed if n.version == 6]

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(WireConfig.from_settings(crawler.settings).blocked_ips)

    def blocked(self, address: str) -> bool:
        ip = ipaddress.ip_address(address)
        if ip.version == 6 and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in network for network in (self.v4 if ip.version == 4 else self.v6))

    async def process_request(self, request: Request, spider: Spider) -> None:
        from twisted.internet import reactor

        host = _host(request.url)
        if not host:
            return  # the download handler reports the bad URL
        try:
            address = await maybe_deferred_to_future(reactor.resolve(host))
        except DNSLookupError:
            raise
        except Exception as exc:
            raise DNSLookupError(f"{host}: {exc}") from exc
        request.meta[IP] = address
        if self.blocked(address):
            raise BlockedIP(f"{host} resolves to {address}, a blocked address (WIRE_BLOCKED_IPS)")


class _GiveUpAsInfo(logging.LoggerAdapter):
    def error(self, msg, *args, **kwargs) -> None:
        self.info(msg, *args, **kwargs)


class WireRetryMiddleware(RetryMiddleware):
    """Scrapy's retries (``RETRY_TIMES`` = ``WIRE_MAX_ERRORS_SAME_BATCH`` − 1), with "gave up retrying"
    logged as INFO: a page that keeps failing is recorded with its error, the normal course of a crawl, not
    an error of the crawler."""

    _logger = _GiveUpAsInfo(logging.getLogger(__name__), {})

    def _retry(self, request: Request, reason, spider: Spider) -> Request | None:
        return get_retry_request(
            request, reason=reason, spider=spider,
            max_retry_times=request.meta.get("max_retry_times", self.max_retry_times),
            priority_adjust=request.meta.get("priority_adjust", self.priority_adjust),
            logger=self._logger,
        )


class FetchLimitsMiddleware:
    def __init__(self, accept_mime: list[str], max_file_size: int):
        self.accept_mime = frozenset(m.lower() for m in accept_mime)
        self.max_file_size = max_file_size
        # robots.txt: what RFC 9309 asks a crawler to parse; sitemaps: the protocol's limit
        self.limits = {"robots": MAX_ROBOTS_BYTES, "sitemap": MAX_SITEMAP_BYTES}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = WireConfig.from_settings(crawler.settings)
        middleware = cls(config.accept_mime, config.max_file_size)
        crawler.signals.connect(middleware.headers_received, signal=signals.headers_received)
        crawler.signals.connect(middleware.bytes_received, signal=signals.bytes_received)
        return middleware

    def process_request(self, request: Request, spider: Spider) -> None:
        request.meta[STARTED] = time.time()

    def headers_received(self, headers, body_length, request: Request, spider: Spider) -> None:
        mime = media_type(headers.get(b"Content-Type"))
        if mime and mime not in self.accept_mime and request.meta.get(KIND) is None:
            request.meta[MIME_REFUSED] = mime
            raise StopDownload(fail=False)

    def bytes_received(self, data: bytes, request: Request, spider: Spider) -> None:
        meta = request.meta
        received = meta.get(RECEIVED, 0) + len(data)
        meta[RECEIVED] = received
        kind = meta.get(KIND)
        if received > (self.max_file_size if kind is None else self.limits[kind]):
            request.meta[TRUNCATED] = True
            raise StopDownload(fail=False)


def media_type(value: bytes | str | None) -> str:
    """``text/html`` of ``text/html; charset=UTF-8``; ``""`` when there is none."""
    if not value:
        return ""
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.split(";", 1)[0].strip().lower()


def _host(url: str) -> str:
    start = url.find("://")
    if start == -1:
        return ""
    rest = url[start + 3:]
    for end, char in enumerate(rest):
        if char in "/?#":
            rest = rest[:end]
            break
    rest = rest.rpartition("@")[2]
    if rest.startswith("["):
        return rest[1:rest.find("]")] if "]" in rest else ""
    return rest.partition(":")[0]
