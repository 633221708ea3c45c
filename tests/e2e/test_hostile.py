"""End to end: ``scrapy crawl harvester`` against a server that writes raw bytes, saying what no HTTP server
should: a status of 99999, of -5 (our own blocked-address error kind, were error kinds statuses), a status
that is no number, an ``href`` of 100 KB, and a robots.txt redirected more than five times. Every fetch is
recorded, whatever the server says.
"""

from __future__ import annotations

import socketserver

import pytest

from tests.e2e.test_harvester import harvest, served
from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import RobotsState
from wirescrapy.items import FetchError

PAGES = ["/big.html", "/negative.html", "/junk.html", "/long.html", "/after.html"]
ROBOTS_HOPS = 7  # RFC 9309 §2.3.1.2: five are followed


def answer(path: str) -> bytes:
    """The raw response to a GET of ``path``."""
    html = b"text/html"
    if path == "/robots.txt" or path.startswith("/robots-"):
        hop = int(path[len("/robots-") : -len(".txt")]) if path.startswith("/robots-") else 0
        return raw(b"HTTP/1.1 301 Moved", html, location=f"/robots-{hop + 1}.txt".encode())
    if path == "/":
        links = "".join(f'<a href="{page}">{page}</a>' for page in [*PAGES, "/private.html"])
        return raw(b"HTTP/1.1 200 OK", html, f"<html><body>{links}</body></html>".encode())
    if path == "/big.html":
        return raw(b"HTTP/1.1 99999 Big", html, b"<html><body>big</body></html>")
    if path == "/negative.html":
        return raw(b"HTTP/1.1 -5 Blocked", html, b"<html><body>negative</body></html>")
    if path == "/junk.html":
        return raw(b"HTTP/1.1 OK Junk", html, b"<html><body>junk</body></html>")
    if path == "/long.html":
        return raw(
            b"HTTP/1.1 200 OK",
            html,
            b'<html><body><a href="/'
            + b"x" * 100_000
            + b'.html">long</a><a href="/next.html">next</a></body></html>',
        )
    return raw(b"HTTP/1.1 200 OK", html, b"<html><body>a page</body></html>")


def raw(status_line: bytes, content_type: bytes, body: bytes = b"", location: bytes = b"") -> bytes:
    headers = [
        status_line,
        b"Content-Type: " + content_type,
        b"Content-Length: %d" % len(body),
        b"Connection: close",
    ]
    if location:
        headers.append(b"Location: " + location)
    return b"\r\n".join(headers) + b"\r\n\r\n" + body


class _Handler(socketserver.StreamRequestHandler):
    def handle(self):
        request_line = self.rfile.readline().decode("latin-1")
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        path = request_line.split(" ")[1] if request_line.count(" ") >= 2 else "/"
        self.server.requests.append(path)
        self.wfile.write(answer(path))


class _HostileWeb(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[str] = []

    def url(self, path: str) -> str:
        return f"http://hostile.wire.test:{self.server_address[1]}{path}"


@pytest.fixture
def hostile_web():
    yield from served(_HostileWeb())


@pytest.mark.timeout(120)
def test_every_fetch_is_recorded_whatever_the_server_says(hostile_web, tmp_path):
    web = hostile_web
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(web.url("/") + "\n")
    collection = tmp_path / "collection"
    harvest(collection, "-a", f"seeds={seeds}", "-a", "cycles=4")
    assert "/next.html" in web.requests  # the link after the 100 KB one
    assert f"/robots-{ROBOTS_HOPS}.txt" not in web.requests and "/robots-5.txt" in web.requests
    with Collection(collection, readonly=True) as stored:

        def record(path):
            doc = stored.lookup(web.url(path))
            assert doc, path
            return stored.documents.records[doc]

        expected = {
            "/big.html": (0, FetchError.BAD_STATUS),
            "/negative.html": (0, FetchError.BAD_STATUS),
            "/junk.html": (0, FetchError.BAD_STATUS),
            "/long.html": (200, 0),
            "/next.html": (200, 0),
            "/after.html": (200, 0),
            "/private.html": (200, 0),
        }
        for path, outcome in expected.items():
            assert (int(record(path)["status"]), int(record(path)["error"])) == outcome, path
            assert record(path)["last_visit"] > 0, path
        assert (record("/robots.txt")["status"], record("/robots.txt")["error"]) == (
            301,
            FetchError.TOO_MANY_REDIRECTS,
        )
        site = stored.sites.records[int(record("/")["siteid"])]
        assert RobotsState(int(site["robots_state"])) is RobotsState.MISSING  # everything allowed
