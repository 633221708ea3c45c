"""Scrapy's HTTP/1.1 download handler with bounded response headers.

Twisted's client parser (``twisted.web._newclient.HTTPParser``) bounds a header line (16 KiB, its
``LineReceiver``'s ``MAX_LENGTH``) but not how many lines come: a server that sends header lines without
end has them all kept, for as long as the download timeout lets it.
Here each response's parser counts the lines of its head (status line and headers) as they come; past
``WIRE_MAX_HEADER_SIZE`` bytes or ``WIRE_MAX_HEADERS`` lines the connection is dropped and the request fails
with :class:`HeadersTooLarge` (in Twisted's ``ResponseFailed``), which the spider records as the error
``headers_too_large``.

Enabled for http and https in ``settings/default.py`` (``DOWNLOAD_HANDLERS``). Everything else is Scrapy's
``HTTP11DownloadHandler``: its connection pool builds the connections through the factory set here.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from twisted.web._newclient import HTTP11ClientProtocol
from twisted.web.client import _HTTP11ClientFactory

from wirescrapy.config import WireConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings


class HeadersTooLarge(Exception):
    """A response's headers went past WIRE_MAX_HEADER_SIZE bytes or WIRE_MAX_HEADERS lines."""


class HeaderLimitsDownloadHandler(HTTP11DownloadHandler):
    def __init__(self, settings: BaseSettings, crawler: Crawler):
        super().__init__(settings, crawler)
        config = WireConfig.from_crawler(crawler)
        self._pool._factory = partial(
            _HeaderLimitsFactory, max_bytes=config.max_header_size, max_lines=config.max_headers
        )


class _HeaderLimitsFactory(_HTTP11ClientFactory):
    noisy = False

    def __init__(self, quiescentCallback, metadata, *, max_bytes: int, max_lines: int):
        super().__init__(quiescentCallback, metadata)
        self.max_bytes = max_bytes
        self.max_lines = max_lines

    def buildProtocol(self, addr) -> HTTP11ClientProtocol:
        return HeaderLimitsProtocol(self._quiescentCallback, self.max_bytes, self.max_lines)


class HeaderLimitsProtocol(HTTP11ClientProtocol):
    """One connection; each response's parser counts the lines of its head."""

    def __init__(self, quiescentCallback, max_bytes: int, max_lines: int):
        super().__init__(quiescentCallback)
        self.max_bytes = max_bytes
        self.max_lines = max_lines

    def request(self, request):
        finished = super().request(request)
        # Twisted's protocol builds its parser (HTTPClientParser) inside request(): its line handler, which
        # sees the status line and the header lines only (the body comes in raw mode), is wrapped here.
        if self._parser is not None:
            self._parser.lineReceived = _HeadLines(self._parser.lineReceived, self.max_bytes, self.max_lines)
        return finished


class _HeadLines:
    """A parser's ``lineReceived`` that raises :class:`HeadersTooLarge` past the limits: the protocol drops
    the connection and fails the request with it (``HTTP11ClientProtocol.dataReceived``)."""

    def __init__(self, line_received, max_bytes: int, max_lines: int):
        self.line_received = line_received
        self.max_bytes = max_bytes
        self.max_lines = max_lines
        self.bytes = 0
        self.lines = 0

    def __call__(self, line: bytes) -> None:
        self.bytes += len(line) + 1
        self.lines += 1
        if self.bytes > self.max_bytes or self.lines > self.max_lines:
            raise HeadersTooLarge(f"response headers past {self.max_bytes} bytes or {self.max_lines} lines")
        self.line_received(line)
