"""Scrapy's HTTP/1.1 download handler with bounded response headers.

Twisted's client parser (``twisted.web._newclient.HTTPParser``) bounds a header line (16 KiB, its
``LineReceiver``'s ``MAX_LENGTH``) but not how many lines come: a server that sends header lines without
end has them all kept, for as long as the download timeout lets it, about 150 MB a connection in 30 s.
Here the connection's protocol counts what arrives while the parser is still in the status line and headers;
past ``WIRE_MAX_HEADER_SIZE`` bytes or ``WIRE_MAX_HEADERS`` lines it drops the connection, and the request
fails with :class:`HeadersTooLarge` (in Twisted's ``ResponseFailed``), which the spider records as the error
``headers_too_large``.

Enabled for http and https in ``settings/default.py`` (``DOWNLOAD_HANDLERS``). Everything else is Scrapy's
``HTTP11DownloadHandler``: its connection pool builds the connections through the factory set here.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from twisted.python.failure import Failure
from twisted.web._newclient import HEADER, STATUS, HTTP11ClientProtocol
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
        self._pool._factory = partial(_HeaderLimitsFactory, max_bytes=config.max_header_size,
                                      max_lines=config.max_headers)


class _HeaderLimitsFactory(_HTTP11ClientFactory):
    noisy = False

    def __init__(self, quiescentCallback, metadata, *, max_bytes: int, max_lines: int):
        super().__init__(quiescentCallback, metadata)
        self.max_bytes = max_bytes
        self.max_lines = max_lines

    def buildProtocol(self, addr) -> HTTP11ClientProtocol:
        return HeaderLimitsProtocol(self._quiescentCallback, self.max_bytes, self.max_lines)


class HeaderLimitsProtocol(HTTP11ClientProtocol):
    """One connection: what it received of the current response's head, checked after each read."""

    def __init__(self, quiescentCallback, max_bytes: int, max_lines: int):
        super().__init__(quiescentCallback)
        self.max_bytes = max_bytes
        self.max_lines = max_lines
        self._head_bytes = 0
        self._head_lines = 0

    def request(self, request):
        self._head_bytes = self._head_lines = 0
        return super().request(request)

    def dataReceived(self, data: bytes) -> None:
        super().dataReceived(data)
        # The parser has taken all of ``data``; if it still waits for the end of the headers, every byte of
        # it was head (a read that also held the body's first bytes ends the head and is not counted).
        parser = self._parser
        if parser is None or parser.state not in (STATUS, HEADER):
            return
        self._head_bytes += len(data)
        self._head_lines += data.count(b"\n")
        if self._head_bytes > self.max_bytes or self._head_lines > self.max_lines:
            self._giveUp(Failure(HeadersTooLarge(
                f"response headers past {self.max_bytes} bytes or {self.max_lines} lines "
                f"({self._head_bytes} bytes, {self._head_lines} lines)")))
