"""The decompression middleware: ``Content-Encoding`` decoded up to the fetch's size limit, through the real
middleware built from a crawl's settings (``tests.components.Bench``), and its pure ``inflate``."""

from __future__ import annotations

import gzip
import zlib

import pytest
import scrapy
from scrapy.http import HtmlResponse, Response, TextResponse

from tests.components import Bench
from wirescrapy.harvester.meta import TRUNCATED
from wirescrapy.harvester.middlewares.decompression import content_codings, inflate
from wirescrapy.items import Kind
from wirescrapy.seeder.robots import MAX_ROBOTS_BYTES
from wirescrapy.testing.hostile import gzip_bomb

SITE = "http://site1.wire.test"
LIMIT = 10_000
BOMB = gzip_bomb(b"<html><body>", b" " * (1 << 20), 64 << 20)  # 64 MB inflated, 66 KB on the wire


@pytest.fixture
def middleware(tmp_path):
    with Bench(tmp_path, WIRE_MAX_FILE_SIZE=LIMIT, WIRE_MAX_STORED_SIZE=LIMIT) as bench:
        yield bench.middleware("DecompressionMiddleware"), bench


def respond(
    middleware,
    request: scrapy.Request,
    body: bytes,
    encoding: str | None = "gzip",
    content_type: str = "text/html",
) -> Response:
    middleware, bench = middleware
    assert middleware.process_request(request, bench.spider) is None
    headers = {"Content-Type": content_type, **({"Content-Encoding": encoding} if encoding else {})}
    response = Response(request.url, body=body, headers=headers, request=request)
    return middleware.process_response(request, response, bench.spider)


def test_gzip_and_deflate_are_asked_for(middleware):
    request = scrapy.Request(SITE + "/a.html")
    respond(middleware, request, b"x", encoding=None)
    assert request.headers[b"Accept-Encoding"] == b"gzip, deflate"


def test_a_gzip_page_is_decoded_whole_under_the_limit(middleware):
    request = scrapy.Request(SITE + "/a.html")
    response = respond(middleware, request, gzip.compress(b"<p>small</p>"))
    assert isinstance(response, HtmlResponse) and response.body == b"<p>small</p>"
    assert b"Content-Encoding" not in response.headers and TRUNCATED not in request.meta


def test_a_gzip_bomb_page_is_cut_at_the_limit_and_kept(middleware):
    request = scrapy.Request(SITE + "/bomb.html")
    response = respond(middleware, request, BOMB)
    assert isinstance(response, TextResponse) and len(response.body) == LIMIT
    assert response.body.startswith(b"<html><body>") and request.meta[TRUNCATED] is True


def test_robots_txt_has_its_own_limit(middleware):
    request = scrapy.Request(SITE + "/robots.txt", meta={"wire_kind": Kind.ROBOTS.value})
    response = respond(middleware, request, BOMB, content_type="text/plain")
    assert len(response.body) == MAX_ROBOTS_BYTES and request.meta[TRUNCATED]


def test_a_gzip_sitemap_is_left_to_the_sitemap_reader(middleware):
    request = scrapy.Request(SITE + "/sitemap.xml", meta={"wire_kind": Kind.SITEMAP.value})
    response = respond(middleware, request, BOMB, content_type="application/xml")
    assert response.body == BOMB and b"Content-Encoding" not in response.headers
    assert TRUNCATED not in request.meta


@pytest.mark.parametrize("encoding", ["br", "gzip, br", "compress"])
def test_an_unknown_encoding_is_passed_on_as_it_came(middleware, encoding):
    request = scrapy.Request(SITE + "/a.html")
    response = respond(middleware, request, b"\x00\x01", encoding=encoding)
    assert response.body == b"\x00\x01" and response.headers[b"Content-Encoding"] == encoding.encode()


def test_layered_encodings_are_each_bounded(middleware):
    request = scrapy.Request(SITE + "/a.html")
    twice = gzip.compress(BOMB)
    response = respond(middleware, request, twice, encoding="gzip, gzip")
    assert len(response.body) == LIMIT and request.meta[TRUNCATED]


def test_content_codings():
    assert content_codings([b"GZIP, identity", b" deflate"]) == [b"gzip", b"deflate"]
    assert content_codings([b"identity"]) == []


def test_inflate():
    assert inflate(BOMB, b"gzip", 1000) == (b"<html><body>" + b" " * 988, True)
    assert inflate(gzip.compress(b"abc"), b"gzip", 3) == (b"abc", False)
    assert inflate(gzip.compress(b"ab") + gzip.compress(b"cd") + b"\0\0", b"x-gzip", 100) == (b"abcd", False)
    assert inflate(zlib.compress(b"zlib"), b"deflate", 100) == (b"zlib", False)
    raw = zlib.compressobj(wbits=-15)
    assert inflate(raw.compress(b"raw") + raw.flush(), b"deflate", 100) == (b"raw", False)
    text = b"".join(b"<p>paragraph %d</p>" % i for i in range(20_000))
    page = gzip.compress(text)
    cut, more = inflate(page[: len(page) // 2], b"gzip", len(text))  # cut on the wire: what it holds
    assert len(text) // 4 < len(cut) < len(text) and text.startswith(cut) and not more
    assert inflate(b"not gzip", b"gzip", 100) == (b"", False)


# -- while receiving: the inflated size counts against the limit (FetchLimitsMiddleware) ----------------


def pieces(data: bytes, size: int = 4096) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)]


def receive(bench: Bench, request: scrapy.Request, headers: dict, body: bytes) -> int | None:
    """Send the body's pieces as the download handler does; the bytes sent when a handler stopped it."""
    bench.middleware("FetchLimitsMiddleware")
    assert not bench.headers_received(request, headers)
    for piece in pieces(body):
        if bench.bytes_received(request, piece):
            return request.meta["wire_received"]
    return None


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip"])
def test_a_gzip_bomb_stops_downloading_once_it_inflates_past_the_limit(middleware, encoding):
    _, bench = middleware
    request = scrapy.Request(SITE + "/bomb.html")
    stopped = receive(bench, request, {"Content-Type": "text/html", "Content-Encoding": encoding}, BOMB)
    assert stopped is not None and stopped <= 8192 and request.meta[TRUNCATED]


def test_a_deflate_page_under_the_limit_is_received_whole(middleware):
    _, bench = middleware
    text = b"".join(b"<p>%d</p>" % i for i in range(1000))
    assert len(text) < LIMIT
    for body in (zlib.compress(text), zlib.compressobj(wbits=-15).compress(text)):
        request = scrapy.Request(SITE + "/a.html")
        assert receive(bench, request, {"Content-Encoding": "deflate"}, body) is None
        assert TRUNCATED not in request.meta


def test_a_raw_xml_gz_sitemap_bomb_stops_at_the_sitemap_limit(middleware):
    _, bench = middleware
    request = scrapy.Request(SITE + "/sitemap.xml.gz", meta={"wire_kind": Kind.SITEMAP.value})
    stopped = receive(bench, request, {"Content-Type": "application/gzip"}, BOMB)  # 64 MB: past the 50 MB
    assert stopped is not None and stopped < len(BOMB) and request.meta[TRUNCATED]
    page = scrapy.Request(SITE + "/file.gz")  # a page's body is not guessed at: only the header says gzip
    assert receive(bench, page, {"Content-Type": "text/plain"}, BOMB[:LIMIT]) is None
