"""The bytes on the wire, kept for an archive: the request as sent and the response as received.

The decompression middleware (``DecompressionMiddleware``, 810, in place of Scrapy's
``HttpCompressionMiddleware``) replaces a compressed response by its decoded body and drops its
``Content-Encoding``; a WARC file is to hold what the server sent. This middleware sits between it and the
download (815), so its ``process_response`` sees the response before it is decoded, and copies the headers
(which the decoding changes in place) into an :class:`~wirescrapy.items.Exchange` in ``meta[EXCHANGE]``; the
spider puts it on the fetch, for the WARC writer (``wirescrapy.warc``). The body is the same ``bytes`` object
the downloader made, not a copy. It does nothing unless the harvest archives (its ``warc_dir``:
``-a warc=DIR`` or ``WIRE_WARC_DIR``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from wirescrapy.harvester.meta import EXCHANGE
from wirescrapy.items import Exchange
from wirescrapy.signals import harvest_opened

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Headers, Response

    from wirescrapy.harvester.session import Harvest


class ReceivedMiddleware:
    def __init__(self):
        self.archives = False  # whether the harvest writes WARC

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = cls()
        crawler.signals.connect(middleware.harvest_opened, signal=harvest_opened)
        return middleware

    def harvest_opened(self, harvest: Harvest) -> None:
        self.archives = bool(harvest.warc_dir)

    def process_response(self, request: Request, response: Response, spider: Spider) -> Response:
        if self.archives:
            request_headers = _pairs(request.headers)
            if not any(name.lower() == b"host" for name, _ in request_headers):
                request_headers.insert(0, (b"Host", urlsplit(request.url).netloc.encode("ascii", "replace")))
            request.meta[EXCHANGE] = Exchange(
                method=request.method.encode("ascii"),
                request_headers=request_headers,
                protocol=response.protocol or "HTTP/1.1",
                status=response.status,
                headers=_pairs(response.headers),
                body=response.body,
            )
        return response


def _pairs(headers: Headers) -> list[tuple[bytes, bytes]]:
    return [(bytes(name), bytes(value)) for name, values in headers.items() for value in values]
