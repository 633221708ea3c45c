"""Content-Encoding decoded up to the fetch's size limit: a gzip bomb is cut, not inflated whole.

In place of Scrapy's ``HttpCompressionMiddleware`` (at 810, after scrapy-splash's middlewares as its
documentation asks). Scrapy's inflates the whole body unless ``DOWNLOAD_MAXSIZE`` is set, and then drops the
response (``IgnoreRequest``): a page 1 MB on the wire and 1 GB inflated either costs 1 GB or is lost. Here the
decoded bytes count against the same limit as the bytes on the wire
(:class:`~wirescrapy.harvester.middlewares.fetchlimits.FetchLimitsMiddleware`'s): ``WIRE_MAX_FILE_SIZE`` for a
page, robots.txt's 500 KiB, and inflation stops there. The page is kept cut, with ``meta[TRUNCATED]``, as a
body too long on the wire is.

A sitemap's gzip body is passed on still compressed (its ``Content-Encoding`` removed): the
sitemap reader (:mod:`wirescrapy.seeder.sitemaps`) inflates it as it parses, a piece at a time, as it does a
raw ``.xml.gz``, so that its 50 MB are never held at once.

Only gzip and deflate are asked for (``Accept-Encoding``); a body in an encoding not known here is passed on
as it came, as Scrapy does. Scrapy's own ``scrapy.utils.gz.gunzip(max_size=…)`` raises past the limit and
keeps nothing, which would lose the page: hence zlib's ``max_length`` here.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from scrapy.http import TextResponse
from scrapy.responsetypes import responsetypes

from wirescrapy.config import WireConfig
from wirescrapy.harvester.meta import KIND, TRUNCATED
from wirescrapy.items import Kind
from wirescrapy.seeder.robots import MAX_ROBOTS_BYTES
from wirescrapy.seeder.sitemaps import MAX_BYTES as MAX_SITEMAP_BYTES

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

ACCEPT_ENCODING = b"gzip, deflate"
GZIP_MAGIC = b"\x1f\x8b"
_WBITS = {b"gzip": 16 + zlib.MAX_WBITS, b"x-gzip": 16 + zlib.MAX_WBITS, b"deflate": zlib.MAX_WBITS}
CODINGS = frozenset(_WBITS)
_CHUNK = 64 * 1024


class DecompressionMiddleware:
    def __init__(self, max_file_size: int):
        self.limits = {
            None: max_file_size,
            Kind.ROBOTS.value: MAX_ROBOTS_BYTES,
            Kind.SITEMAP.value: MAX_SITEMAP_BYTES,
        }

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(WireConfig.from_crawler(crawler).max_file_size)

    def process_request(self, request: Request, spider: Spider) -> None:
        request.headers.setdefault(b"Accept-Encoding", ACCEPT_ENCODING)

    def process_response(self, request: Request, response: Response, spider: Spider) -> Response:
        codings = content_codings(response.headers.getlist(b"Content-Encoding"))
        if request.method == "HEAD" or not codings or any(c not in CODINGS for c in codings):
            return response
        headers = response.headers.copy()
        del headers[b"Content-Encoding"]
        kind = request.meta.get(KIND)
        if kind == Kind.SITEMAP.value and codings in ([b"gzip"], [b"x-gzip"]):
            return response.replace(headers=headers)  # the sitemap reader inflates it as it parses
        body, cut = response.body, False
        for coding in reversed(codings):
            body, cut_here = inflate(body, coding, self.limits.get(kind, self.limits[None]))
            cut = cut or cut_here
        if cut:
            request.meta[TRUNCATED] = True
        respcls = responsetypes.from_args(headers=headers, url=response.url, body=body)
        kwargs = {"encoding": None} if issubclass(respcls, TextResponse) else {}
        return response.replace(cls=respcls, body=body, headers=headers, **kwargs)


def content_codings(values: list[bytes]) -> list[bytes]:
    """The codings of ``Content-Encoding`` header values, in the order they were applied, lower case;
    ``identity`` left out."""
    codings = (c.strip().lower() for value in values for c in value.split(b","))
    return [c for c in codings if c and c != b"identity"]


def inflate(data: bytes, coding: bytes, limit: int) -> tuple[bytes, bool]:
    """``data`` decoded from ``coding`` (gzip, x-gzip or deflate), at most ``limit`` bytes of it, and whether
    there was more. Corrupt or cut data gives what came before the damage; deflate is zlib-wrapped or raw
    (servers send both)."""
    decoded, cut, failed = _inflate(data, _WBITS[coding], limit)
    if failed and not decoded and coding == b"deflate":
        decoded, cut, failed = _inflate(data, -zlib.MAX_WBITS, limit)
    return decoded, cut


def _inflate(data: bytes, wbits: int, limit: int) -> tuple[bytes, bool, bool]:
    inflater = zlib.decompressobj(wbits)
    parts: list[bytes] = []
    size = 0
    pending = data
    try:
        # At most one chunk more than the limit is ever inflated, whatever the ratio.
        while pending and size <= limit:
            part = inflater.decompress(pending, min(_CHUNK, limit + 1 - size))
            pending = inflater.unconsumed_tail
            parts.append(part)
            size += len(part)
            if inflater.eof:  # a gzip file may hold several members; anything else after one is padding
                more = wbits > zlib.MAX_WBITS and inflater.unused_data[:2] == GZIP_MAGIC
                pending = inflater.unused_data if more else b""
                inflater = zlib.decompressobj(wbits)
        if size <= limit and not inflater.eof:
            part = inflater.flush()
            parts.append(part)
            size += len(part)
    except zlib.error:
        return b"".join(parts)[:limit], False, True
    decoded = b"".join(parts)
    return decoded[:limit], size > limit, False


class InflatedSize:
    """How many bytes a compressed body inflates to, counted as its pieces arrive and none of them kept:
    :class:`~wirescrapy.harvester.middlewares.fetchlimits.FetchLimitsMiddleware` stops a download whose
    inflated size passes its limit, after a few hundred bytes of a bomb. An undecodable body counts as
    what it inflated to before the damage (its bytes on the wire are still counted)."""

    def __init__(self, coding: bytes):
        self.wbits = _WBITS[coding]
        self.size = 0
        self._inflater = zlib.decompressobj(self.wbits)
        self._first = True

    def feed(self, data: bytes, limit: int) -> int:
        """Count ``data``'s inflated bytes, no more than one chunk past ``limit``; the size so far."""
        pending = data
        while pending and self.size <= limit and self._inflater is not None:
            try:
                self.size += len(self._inflater.decompress(pending, _CHUNK))
            except zlib.error:
                if self._first and self.wbits == zlib.MAX_WBITS:  # deflate without its zlib wrapper
                    self.wbits = -zlib.MAX_WBITS
                    self._inflater = zlib.decompressobj(self.wbits)
                    continue
                self._inflater = None
                break
            self._first = False
            pending = self._inflater.unconsumed_tail
            if self._inflater.eof:
                more = self.wbits > zlib.MAX_WBITS and self._inflater.unused_data[:2] == GZIP_MAGIC
                pending = self._inflater.unused_data if more else b""
                self._inflater = zlib.decompressobj(self.wbits) if more else None
        return self.size
