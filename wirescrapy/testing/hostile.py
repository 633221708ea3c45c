"""Hostile sites for the tests and ``benchmarks/hostile.py``: one HTTP server on 127.0.0.1 answering as a
crawler's worst enemy would, every site a host name ``<name>.wire.test`` (``settings.test`` maps them to
loopback), so that one server is as many sites as a test names.

Paths, on any site:

* ``/bomb.html``: a page in ``Content-Encoding: gzip``, a run of zeros deflate shrinks at its highest ratio,
  ``bomb_size`` bytes of HTML in all;
* ``/sitemap.xml``: a sitemap bombed the same way (``Content-Encoding: gzip``), ``bomb_size`` bytes of
  ``<url>`` entries, every one the same page, ``/listed.html``;
* ``/sitemap.xml.gz``: the same sitemap as a raw ``.xml.gz`` file (``Content-Type: application/gzip``);
* ``/headers.html``: a status line and then header lines without end, as fast as the client takes them, for
  at most ``endless_seconds``;
* ``/many-headers.html``: a small page after ``MANY_HEADERS`` short header lines;
* ``/page/N.html``: a small page linking to the next three, up to ``pages`` (a normal crawl to compare with);
* ``/robots.txt``: on a site whose name starts with ``sitemap``, names both sitemaps; with ``ce-sitemap``
  or ``gz-sitemap``, only the ``Content-Encoding`` or the ``.xml.gz`` one; elsewhere 404;
* anything else: a small page.

The bombs are built in well under a second (the deflate block of one MB is repeated: ``gzip_bomb``). The
server is asyncio in a thread of its own; every request is kept in ``requests`` as (host, path).
"""

from __future__ import annotations

import asyncio
import struct
import zlib

from wirescrapy.testing.loopback import LoopbackServer

BOMB_SIZE = 1 << 30
MANY_HEADERS = 2000
_UNIT = 1 << 20
_PAGE = b"<html><head><title>%s</title></head><body><p>%s</p>%s</body></html>"
_ENTRY = b"<url><loc>/listed.html</loc><lastmod>2024-01-01</lastmod></url>"


def gzip_bomb(head: bytes, unit: bytes, size: int) -> bytes:
    """A gzip file of ``head`` and then ``unit`` repeated up to ``size`` bytes: each repeat is one identical
    deflate block (compressed once; a full flush makes the next block start afresh)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(unit) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeats = max((size - len(head)) // len(unit), 0)
    crc = zlib.crc32(head)
    for _ in range(repeats):
        crc = zlib.crc32(unit, crc)
    length = len(head) + repeats * len(unit)
    return (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
        + first
        + block * repeats
        + compressor.flush()
        + struct.pack("<II", crc, length & 0xFFFFFFFF)
    )


class HostileWeb(LoopbackServer):
    """``with HostileWeb() as web:`` serves until the block ends; ``web.url("bomb1", "/bomb.html")``."""

    def __init__(self, bomb_size: int = BOMB_SIZE, endless_seconds: float = 60.0, pages: int = 30):
        super().__init__("127.0.0.1")
        self.endless_seconds = endless_seconds
        self.pages = pages
        self.requests: list[tuple[str, str]] = []
        self.page_bomb = gzip_bomb(b"<html><body><p>bomb</p>", b" " * _UNIT, bomb_size)
        unit = _ENTRY * (_UNIT // len(_ENTRY))
        head = b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        self.sitemap_bomb = gzip_bomb(head, unit, bomb_size)

    def url(self, site: str, path: str = "/") -> str:
        return f"http://{site}.wire.test:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            host, path = await self.read_request(reader)
            host = host.split(".")[0]
            self.requests.append((host, path))
            await self._answer(host, path, writer)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _answer(self, host: str, path: str, writer: asyncio.StreamWriter) -> None:
        if path == "/headers.html":
            await self.endless_headers(writer, self.endless_seconds)
            return
        if path == "/many-headers.html":
            body = self._page(path)
            head = _head(b"text/html", body, b"".join(b"X-Many-%d: b\r\n" % i for i in range(MANY_HEADERS)))
        elif path == "/bomb.html":
            head, body = _head(b"text/html", self.page_bomb, b"Content-Encoding: gzip\r\n"), self.page_bomb
        elif path == "/sitemap.xml":
            body = self.sitemap_bomb
            head = _head(b"application/xml", body, b"Content-Encoding: gzip\r\n")
        elif path == "/sitemap.xml.gz":
            head, body = _head(b"application/gzip", self.sitemap_bomb), self.sitemap_bomb
        elif path == "/robots.txt":
            body = b"User-agent: *\n" + b"".join(
                b"Sitemap: %s\n" % self.url(host, sitemap).encode() for sitemap in _sitemaps(host)
            )
            head = _head(b"text/plain", body, status=b"200 OK" if _sitemaps(host) else b"404 Not Found")
        else:
            body = self._page(path)
            head = _head(b"text/html", body)
        writer.write(head)
        for start in range(0, len(body), 1 << 16):
            writer.write(body[start : start + (1 << 16)])
            await writer.drain()

    def _page(self, path: str) -> bytes:
        title = path.encode()
        links = b""
        if path.startswith("/page/") and path.endswith(".html") and path[6:-5].isdigit():
            number = int(path[6:-5])
            links = b"".join(
                b'<a href="/page/%d.html">next</a>' % n
                for n in range(number + 1, min(number + 4, self.pages))
            )
        return _PAGE % (title, b"A page of a hostile site. " * 20, links)


def _sitemaps(host: str) -> list[str]:
    if host.startswith("ce-sitemap"):
        return ["/sitemap.xml"]
    if host.startswith("gz-sitemap"):
        return ["/sitemap.xml.gz"]
    if host.startswith("sitemap"):
        return ["/sitemap.xml", "/sitemap.xml.gz"]
    return []


def _head(content_type: bytes, body: bytes, extra: bytes = b"", status: bytes = b"200 OK") -> bytes:
    return b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n%s\r\n" % (
        status,
        content_type,
        len(body),
        extra,
    )
