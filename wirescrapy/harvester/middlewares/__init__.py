"""The harvester's downloader middlewares, one a module: what may be fetched, and how much of it.

Enabled in ``settings/default.py`` (``DOWNLOADER_MIDDLEWARES``), in this order; the ``Request.meta`` keys
they read and write are in :mod:`wirescrapy.harvester.meta`. Those that work inside a harvest keep the one
the ``harvest_opened`` signal brings (``wirescrapy/signals.py``):

* ``batchfilter``: :class:`BatchFilterMiddleware` (100): a page of the batch already fetched in it (a redirect
  led there first, or a run before a restart) is refused with :class:`AlreadyFetched`.
* ``blockedip``: :class:`BlockedIPMiddleware` (110): resolves the host with the reactor's resolver (Scrapy's
  ``DNS_RESOLVER``, cached, so the connection that follows resolves from the cache) and refuses
  :class:`BlockedIP` when the address is in ``WIRE_BLOCKED_IPS``. Every request passes here, robots.txt,
  sitemaps and redirect follow-ups included, and an IP literal in a URL is checked the same way. The
  address is put in ``request.meta[IP]``. It comes before the robots.txt check so that the pages of
  a blocked site are recorded as blocked, not left waiting for a robots.txt that will never come. A refusal
  is our setting's, not the site's failure: it counts toward no page's errors, leaves the site's robots.txt
  state as it was, and the manager selects the page again in the next cycle.
* ``robots``: :class:`RobotsMiddleware` (120): a page request whose site's robots.txt forbids it is refused
  with :class:`RobotsDisallowed` before any network access; a site whose robots.txt is unreachable (5xx,
  network error: RFC 9309 §2.3.1.4) or not known yet gets :class:`RobotsNotReady` for all its pages: they stay
  in the collection for a later batch. The harvest's robots.txt owner decides (``harvest.robots``); a crawl
  with no harvest passes everything.
* ``retry``: :class:`WireRetryMiddleware` (550, in place of Scrapy's ``RetryMiddleware``): a failed fetch is
  tried again in its batch, at the back of its site's queue; giving up is logged as INFO (the page is recorded
  with its error).
* ``received``: :class:`ReceivedMiddleware` (815, between ``DecompressionMiddleware`` and the download): when
  the harvest writes WARC, the request as sent and the response as received, before it is decoded
  (``meta[EXCHANGE]``).
* ``decompression``: :class:`DecompressionMiddleware` (810, in place of Scrapy's
  ``HttpCompressionMiddleware``, after scrapy-splash's middlewares): a gzip or deflate ``Content-Encoding`` is
  decoded up to the same size limit as the bytes on the wire, and a page inflated past it is kept cut
  (``meta[TRUNCATED]``); a gzip sitemap is left for the sitemap reader, which inflates it as it parses.
* ``fetchlimits``: :class:`FetchLimitsMiddleware` (950, next to the downloader): from the ``headers_received``
  signal, a response whose Content-Type is not in ``WIRE_ACCEPT_MIME`` is stopped after its headers
  (``meta[MIME_REFUSED]``); from ``bytes_received``, a body longer than ``WIRE_MAX_FILE_SIZE`` is stopped
  there and kept (``meta[TRUNCATED]``). Both with ``StopDownload(fail=False)``: the response reaches the
  spider, with ``download_stopped`` in its flags. It also stamps ``meta[STARTED]``, the time the request went
  to the network.

A refused request never reaches the downloader, so the scheduler releases its site without a wait (no
access was made); its errback gets the exception, and the spider records the page.
"""

from wirescrapy.harvester.middlewares.batchfilter import (
    AlreadyFetched,
    BatchFilterMiddleware,
)
from wirescrapy.harvester.middlewares.blockedip import BlockedIP, BlockedIPMiddleware
from wirescrapy.harvester.middlewares.decompression import DecompressionMiddleware
from wirescrapy.harvester.middlewares.fetchlimits import (
    FetchLimitsMiddleware,
    media_type,
)
from wirescrapy.harvester.middlewares.received import ReceivedMiddleware
from wirescrapy.harvester.middlewares.retry import WireRetryMiddleware
from wirescrapy.harvester.middlewares.robots import (
    RobotsDisallowed,
    RobotsMiddleware,
    RobotsNotReady,
)

__all__ = [
    "AlreadyFetched",
    "BatchFilterMiddleware",
    "BlockedIP",
    "BlockedIPMiddleware",
    "DecompressionMiddleware",
    "FetchLimitsMiddleware",
    "ReceivedMiddleware",
    "RobotsDisallowed",
    "RobotsMiddleware",
    "RobotsNotReady",
    "WireRetryMiddleware",
    "media_type",
]
