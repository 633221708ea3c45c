"""The sample web: a deterministic, generated web of several sites.

A :class:`SampleWeb` is pure: it answers ``respond(host, path)`` with a
:class:`Reply` and knows the ground truth a crawl of it should find, without
any I/O, reactor or global state. :mod:`wirescrapy.testing.sampleweb.server` puts it
on a real HTTP server on 127.0.0.1. This module names the sites and routes
each request to its reply (robots.txt, sitemaps, redirects, errors); the
pages' links and bytes come from :mod:`.content` and :mod:`.files`, the
ground truth from :mod:`.truth`.

Every page is computed on demand from ``(seed, site, page number)``, so a web
of 100 000 pages costs nothing until it is crawled, and the same seed always
gives the same bytes. Absolute links carry the server's port, so a model is
bound to the port it is served on (:meth:`SampleWeb.at_port`).

URL space of site ``N`` (host ``siteN.wire.test``), ``n`` pages per site
(``pages_per_site``; on the ``weblike`` shape, sites of Zipf-distributed sizes
and links less tied to depth, see :mod:`wirescrapy.testing.sampleweb.shape`):

==========================  ==================================================
``/``                       home page (page 0): links into the site and out
``/page/I.html``            page I, 1 <= I < n: a 4-ary tree keeps every page
                            reachable, extra in-site links are power-law
                            (low numbers get most in-links), some links go to
                            other sites, a few are broken (``/missing/...``)
``/private/1.html``, ``2``  pages that most robots.txt files disallow
``/robots.txt``             one of the robots kinds below
``/missing/...``            404
==========================  ==================================================

Special content lives on one site each (site index modulo the number of
sites, so a web of 2 sites still has everything):

* site 0 -- duplicates: ``/index.html`` is ``/``, ``/copy/1.html`` is
  ``/page/1.html``; redirects: ``/moved/a`` 301 -> ``/moved/b`` 302 ->
  ``/page/3.html``, ``/moved/away`` 301 -> page 2 of the next site,
  ``/loop/a`` <-> ``/loop/b``; files under ``/files/`` (PNG, JPEG, PDF, ZIP,
  a large ``application/octet-stream``) and ``/notes.txt`` (text/plain).
* site 1 -- odd HTML under ``/odd/``: unclosed tags, NUL bytes, a Latin-1 page
  linking to a non-ASCII path, a ``<base href>``, a page over 400 KB, links
  inside comments and scripts (not links), ``rel=nofollow``, and
  ``<meta name=robots content=nofollow>``.
* site 2 -- spider traps: ``/calendar/2026/11/`` with endless next/previous
  month links, and ``/trap/a/`` whose relative link ``a/`` goes ever deeper.
* site 3 -- errors: ``/error.html`` (500), ``/slow.html`` (answered after
  ``slow_delay`` seconds), ``/drop.html`` (connection closed mid-body).
* site 4 -- ``/mirror/2.html``, the same bytes as site 0's ``/page/2.html``.

robots.txt by site index: 0 disallows ``/private/`` and names a sitemap; 1
adds ``Crawl-delay`` and disallows ``/search``; 2 has none (404); 3 is broken,
either a 500 or a 200 HTML page that is no robots.txt at all
(``broken_robots``); 4 and up disallow ``/private/``. Every file also has a
``BadBot`` group disallowing everything, to check user-agent matching. Broken
and missing robots.txt allow everything, as Scrapy's robots middleware does.

Every whole 200 answer carries validators, an ``ETag`` (a hash of its bytes) and a ``Last-Modified``
(``PUBLISHED``: the web never changes), and a conditional request that they match gets a 304 with no body
(:func:`not_modified`, RFC 9110 §13), as a static file server answers a revisit.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from email.utils import parsedate_to_datetime
from html import escape
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from wirescrapy.testing.sampleweb import content, scripts, truth
from wirescrapy.testing.sampleweb.config import SampleWebConfig
from wirescrapy.testing.sampleweb.content import (
    ODD_LEAVES,
    ODD_PAGES,
    ROLE_DUPLICATES,
    ROLE_ERRORS,
    ROLE_MIRROR,
    ROLE_ODD,
    ROLE_SCRIPTS,
    ROLE_TRAPS,
    Route,
)
from wirescrapy.testing.sampleweb.files import FILES, TEXT, file_bytes, notes
from wirescrapy.testing.sampleweb.shape import Shape
from wirescrapy.testing.sampleweb.truth import GroundTruth, request_target

DOMAIN = "wire.test"
HTML = "text/html; charset=utf-8"
PUBLISHED = "Thu, 01 Jan 2026 00:00:00 GMT"  # every page's Last-Modified

# Route kinds as classify() names them.
_CLASSES = {
    "alias": "page",
    "private": "page",
    "search": "page",
    "files": "page",
    "odd": "page",
    "calendar": "trap",
    "deep": "trap",
    "text": "file",
    "js": "page",
    "js-asset": "file",
}

_PAGE_RE = re.compile(r"/page/([1-9][0-9]*)\.html")
_PRIVATE_RE = re.compile(r"/private/([12])\.html")
_CALENDAR_RE = re.compile(r"/calendar/([0-9]{4})/([0-9]{2})/")
_DEEP_RE = re.compile(r"/trap/(?:a/)+")
_HOST_RE = re.compile(r"site(0|[1-9][0-9]*)\." + re.escape(DOMAIN))


class Reply(NamedTuple):
    """What the server sends for one request."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    delay: float = 0.0  # wait this long before answering
    cut: int | None = None  # send only this many body bytes, then drop the connection


class SampleWeb:
    """A generated web of ``config.sites`` sites served on ``port``."""

    def __init__(self, config: SampleWebConfig | None = None, port: int = 80):
        if not 0 <= port < 65536:
            raise ValueError(f"port out of range: {port}")
        self.config = config or SampleWebConfig()
        self.port = port
        self._sites = self.config.sites
        self.shape = Shape(self.config.shape, self._sites, self.config.pages_per_site, self.config.seed)
        self._suffix = "" if port == 80 else f":{port}"
        self._replies: OrderedDict[tuple[int, str], Reply] = OrderedDict()
        self._truths: dict[tuple[bool, bool], GroundTruth] = {}

    def __repr__(self) -> str:
        return f"SampleWeb({self.config!r}, port={self.port})"

    def at_port(self, port: int) -> SampleWeb:
        """The same web, its links pointing to ``port``."""
        return SampleWeb(self.config, port)

    # -- names -------------------------------------------------------------

    def host(self, site: int) -> str:
        return f"site{site}.{DOMAIN}"

    def hosts(self) -> list[str]:
        return [self.host(s) for s in range(self._sites)]

    def site_of(self, host: str) -> int | None:
        """Site number of ``host`` (port allowed), or None if not ours."""
        match = _HOST_RE.fullmatch(host.lower().partition(":")[0])
        if match is None:
            return None
        site = int(match.group(1))
        return site if site < self._sites else None

    def origin(self, site: int) -> str:
        return f"http://{self.host(site)}{self._suffix}"

    def url(self, host: str | int, path: str = "/") -> str:
        """Absolute URL of ``path`` on a host name or site number."""
        site = host if isinstance(host, int) else self.site_of(host)
        if site is None:
            raise ValueError(f"not a host of this web: {host!r}")
        return self.origin(site) + path

    def site_pages(self, site: int) -> int:
        """Pages of ``site`` (``/`` and ``/page/1.html`` up), the same for every site unless weblike."""
        return self.shape.size(site)

    def seeds(self) -> list[str]:
        """Start URLs: every site's home page."""
        return [self.origin(s) + "/" for s in range(self._sites)]

    def site_with(self, role: int) -> int:
        """The site that carries the content of ``role`` (a ``ROLE_*``)."""
        return role % self._sites

    def robots_kind(self, site: int) -> str:
        if site == 0:
            return "sitemap"
        if site == 1:
            return "crawl-delay"
        if site == 2:
            return "missing"
        if site == 3:
            return self.config.broken_robots
        return "plain"

    def disallowed(self, site: int, path: str) -> bool:
        """Whether robots.txt of ``site`` forbids ``path`` to a crawler that is not BadBot."""
        kind = self.robots_kind(site)
        if kind in ("missing", "500", "malformed"):
            return False
        if path.startswith("/private/"):
            return True
        return kind == "crawl-delay" and path.startswith("/search")

    # -- answering ---------------------------------------------------------

    def respond(self, host: str, path: str) -> Reply:
        """The reply to ``GET path`` with ``Host: host``; ``path`` is the raw
        request target, percent-encoded, query included."""
        site = self.site_of(host)
        if site is None:
            return self._directory() if host.split(":")[0] in ("127.0.0.1", "localhost") else _not_found()
        key = (site, path)
        reply = self._replies.get(key)
        if reply is not None:
            self._replies.move_to_end(key)
            return reply
        reply = _validated(self._reply(site, self.route(site, path)))
        self._replies[key] = reply
        # Bounded because trap and missing URLs are endless.
        if len(self._replies) > 4096:
            self._replies.popitem(last=False)
        return reply

    def classify(self, url: str) -> str:
        """Kind of ``url``: page, trap, redirect, file, error, notfound, slow,
        drop, robots, sitemap, or foreign (not on this web)."""
        split = urlsplit(url)
        site = self.site_of(split.netloc)
        if site is None or split.netloc.partition(":")[2] != self._suffix[1:]:
            return "foreign"
        kind = self.route(site, request_target(split)).kind
        return _CLASSES.get(kind, kind)

    def route(self, site: int, target: str) -> Route:
        """What the request target ``target`` (percent-encoded, query included) is on ``site``."""
        raw_path, _, query = target.partition("?")
        try:
            path = unquote(raw_path, errors="strict")
        except UnicodeDecodeError:
            path = unquote(raw_path, encoding="latin-1")
        if query:
            if path == "/search" and self.robots_kind(site) == "crawl-delay":
                return Route("search")
            return Route("notfound")
        if path == "/":
            return Route("page", 0)
        if m := _PAGE_RE.fullmatch(path):
            page = int(m.group(1))
            return Route("page", page) if page < self.shape.size(site) else Route("notfound")
        if m := _PRIVATE_RE.fullmatch(path):
            return Route("private", int(m.group(1)))
        if path == "/robots.txt":
            return Route("robots")
        if path == "/sitemap.xml" and self.robots_kind(site) == "sitemap":
            return Route("sitemap")
        if site == self.site_with(ROLE_DUPLICATES) and (route := self._duplicates_route(path)):
            return route
        if site == self.site_with(ROLE_MIRROR) and path == "/mirror/2.html":
            return Route("alias", (self.site_with(ROLE_DUPLICATES), 2))
        if site == self.site_with(ROLE_ODD) and path.startswith("/odd/"):
            name = path[len("/odd/") :]
            if name == "" or name in ODD_PAGES or name in ODD_LEAVES:
                return Route("odd", name)
        if site == self.site_with(ROLE_SCRIPTS) and path.startswith(scripts.PREFIX):
            name = path[len(scripts.PREFIX) :]
            if scripts.exists(self.config.js, name):
                return Route("js-asset" if name in scripts.ASSETS else "js", name)
        if site == self.site_with(ROLE_TRAPS):
            if m := _CALENDAR_RE.fullmatch(path):
                year, month = int(m.group(1)), int(m.group(2))
                if year >= 1 and 1 <= month <= 12:
                    return Route("calendar", (year, month))
            if _DEEP_RE.fullmatch(path):
                return Route("deep", path.count("a/"))
        if site == self.site_with(ROLE_ERRORS):
            if path == "/error.html":
                return Route("error", 500)
            if path == "/slow.html":
                return Route("slow")
            if path == "/drop.html":
                return Route("drop")
        return Route("notfound")

    def _duplicates_route(self, path: str) -> Route | None:
        site = self.site_with(ROLE_DUPLICATES)
        redirects = {
            "/moved/a": (301, self.origin(site) + "/moved/b"),
            "/moved/b": (302, self.origin(site) + "/page/3.html"),
            "/moved/away": (301, self.origin((site + 1) % self._sites) + "/page/2.html"),
            "/loop/a": (302, self.origin(site) + "/loop/b"),
            "/loop/b": (302, self.origin(site) + "/loop/a"),
        }
        if path in redirects:
            return Route("redirect", redirects[path])
        if path == "/index.html":
            return Route("alias", (site, 0))
        if path == "/copy/1.html":
            return Route("alias", (site, 1))
        if path == "/files/":
            return Route("files")
        if path.startswith("/files/") and path[len("/files/") :] in FILES:
            return Route("file", path[len("/files/") :])
        if path == "/notes.txt":
            return Route("text")
        return None

    def _reply(self, site: int, route: Route) -> Reply:
        kind, arg = route
        if kind == "notfound":
            return _not_found()
        if kind == "redirect":
            status, location = arg
            body = f'<html><body>Moved to <a href="{escape(location)}">here</a></body></html>'
            return Reply(status, (("Content-Type", HTML), ("Location", location)), body.encode())
        if kind == "error":
            return _server_error()
        if kind == "robots":
            return self._robots(site)
        if kind == "sitemap":
            return Reply(200, (("Content-Type", "application/xml"),), self._sitemap(site))
        if kind == "file":
            return Reply(200, (("Content-Type", FILES[arg]),), file_bytes(arg, self.config))
        if kind == "text":
            return Reply(200, (("Content-Type", TEXT),), notes())
        if kind == "js-asset":
            return Reply(200, (("Content-Type", scripts.ASSETS[arg]),), scripts.asset(arg))
        if kind == "js":
            third_party = self.origin((site + 1) % self._sites)
            return Reply(200, (("Content-Type", HTML),), scripts.page(self.config.js, arg, third_party))
        body = content.render(self, site, route)
        if kind == "odd" and arg == "latin1.html":
            return Reply(200, (("Content-Type", "text/html; charset=iso-8859-1"),), body)
        if kind == "slow":
            return Reply(200, (("Content-Type", HTML),), body, delay=self.config.slow_delay)
        if kind == "drop":
            return Reply(200, (("Content-Type", HTML),), body, cut=len(body) // 2)
        return Reply(200, (("Content-Type", HTML),), body)

    def _robots(self, site: int) -> Reply:
        kind = self.robots_kind(site)
        if kind == "missing":
            return _not_found()
        if kind == "500":
            return _server_error()
        if kind == "malformed":
            # A soft error page where robots.txt should be: no directive in it.
            body = (
                b"<!DOCTYPE html>\n<html><head><title>Welcome</title></head>\n"
                b"<body><p>\xff\xfe\x00 Page not found</p></body></html>\n"
            )
            return Reply(200, (("Content-Type", "text/html"),), body)
        lines = ["User-agent: BadBot", "Disallow: /", "", "User-agent: *"]
        if kind == "crawl-delay":
            lines.append(f"Crawl-delay: {self.config.crawl_delay:g}")
            lines.append("Disallow: /search")
        lines.append("Disallow: /private/")
        if kind == "sitemap":
            lines += ["", f"Sitemap: {self.origin(site)}/sitemap.xml"]
        return Reply(200, (("Content-Type", "text/plain"),), ("\n".join(lines) + "\n").encode())

    def _sitemap(self, site: int) -> bytes:
        origin = self.origin(site)
        urls = [origin + "/"] + [f"{origin}/page/{p}.html" for p in range(1, min(self.shape.size(site), 5))]
        entries = "".join(f"  <url><loc>{u}</loc></url>\n" for u in urls)
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{entries}</urlset>\n"
        ).encode()

    def _directory(self) -> Reply:
        items = "".join(f'<li><a href="{u}">{u}</a></li>\n' for u in self.seeds())
        body = (
            "<!DOCTYPE html>\n<html><head><title>wirescrapy sample web</title></head>\n"
            f"<body><ul>\n{items}</ul></body></html>\n"
        )
        return Reply(200, (("Content-Type", HTML),), body.encode())

    # -- ground truth ------------------------------------------------------

    def ground_truth(self, follow_nofollow: bool = False, rendered: bool = False) -> GroundTruth:
        """Crawl the model from the seeds (breadth-first, robots.txt obeyed,
        redirects followed, traps entered but not explored); ``rendered``: as
        a crawler that runs every page's scripts (the links they write
        followed too)."""
        key = (follow_nofollow, rendered)
        if key not in self._truths:
            self._truths[key] = truth.crawl(self, follow_nofollow, rendered)
        return self._truths[key]


def _validated(reply: Reply) -> Reply:
    """A whole 200 answer with its ETag and Last-Modified."""
    if reply.status != 200 or reply.delay or reply.cut is not None:
        return reply
    etag = f'"{hashlib.blake2b(reply.body, digest_size=8).hexdigest()}"'
    return reply._replace(headers=(*reply.headers, ("ETag", etag), ("Last-Modified", PUBLISHED)))


def not_modified(reply: Reply, if_none_match: str | None, if_modified_since: str | None) -> bool:
    """Whether a GET with these conditional headers gets a 304 in place of ``reply`` (RFC 9110 §13.1.2,
    §13.1.3, §13.2.2): If-None-Match, when sent, decides alone (weak comparison); else If-Modified-Since not
    earlier than the Last-Modified. An unreadable date is no condition."""
    headers = dict(reply.headers)
    if reply.status != 200 or "ETag" not in headers:
        return False
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return "*" in tags or headers["ETag"].removeprefix("W/") in tags
    if if_modified_since is None:
        return False
    try:
        return parsedate_to_datetime(if_modified_since) >= parsedate_to_datetime(headers["Last-Modified"])
    except (TypeError, ValueError, IndexError):
        return False


def _not_found() -> Reply:
    return Reply(404, (("Content-Type", HTML),), b"<html><body><h1>Not Found</h1></body></html>")


def _server_error() -> Reply:
    return Reply(500, (("Content-Type", HTML),), b"<html><body><h1>Internal Server Error</h1></body></html>")
