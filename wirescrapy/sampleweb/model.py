"""The sample web: a deterministic, generated web of several sites.

A :class:`SampleWeb` is pure: it answers ``respond(host, path)`` with a
:class:`Reply` and knows the ground truth a crawl of it should find, without
any I/O, reactor or global state. :mod:`wirescrapy.sampleweb.server` puts it
on a real HTTP server on 127.0.0.1.

Every page is computed on demand from ``(seed, site, page number)``, so a web
of 100 000 pages costs nothing until it is crawled, and the same seed always
gives the same bytes. Absolute links carry the server's port, so a model is
bound to the port it is served on (:meth:`SampleWeb.at_port`).

URL space of site ``N`` (host ``siteN.wire.test``), ``n`` pages per site
(``pages_per_site``; on the ``weblike`` shape, sites of Zipf-distributed sizes
and links less tied to depth, see :mod:`wirescrapy.sampleweb.shape`):

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
"""

from __future__ import annotations

import io
import random
import re
import struct
import zipfile
import zlib
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from functools import lru_cache
from html import escape
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote, unquote, urldefrag, urljoin, urlsplit

from wirescrapy.sampleweb.shape import SHAPES, Shape

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

DOMAIN = "wire.test"

# Tree fan-out: keeps every page reachable within log4(n) clicks of home.
FANOUT = 4
# Share of pages with a link to another site, and with a broken link.
CROSS_SITE_SHARE = 0.3
BROKEN_SHARE = 0.05
# Extra in-site link targets are int(n * u ** SKEW): density ~ x^(1/SKEW - 1),
# a power law that sends most in-links to the low-numbered pages.
SKEW = 2.5

ROLE_DUPLICATES = 0
ROLE_ODD = 1
ROLE_TRAPS = 2
ROLE_ERRORS = 3
ROLE_MIRROR = 4

BROKEN_ROBOTS = ("500", "malformed")
TRAP_ENTRIES = ("/calendar/2026/11/", "/trap/a/")
BIG_PAGE_LIMIT = 400 * 1024

HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
FILES = {
    "photo.png": "image/png",
    "photo.jpg": "image/jpeg",
    "report.pdf": "application/pdf",
    "archive.zip": "application/zip",
    "big.bin": "application/octet-stream",
}
ODD_PAGES = (
    "unclosed.html",
    "nul.html",
    "latin1.html",
    "base.html",
    "big.html",
    "not-links.html",
    "nofollow.html",
    "meta-nofollow.html",
)
# Small pages that only the odd pages link to; "ghost-*" are linked only from
# comments and scripts, so a correct crawler never asks for them.
ODD_LEAVES = frozenset(
    [f"target-{k}.html" for k in range(1, 9)]
    + [
        "café.html",
        "based/x.html",
        "after-big.html",
        "rel-nofollow.html",
        "meta-nofollow-target.html",
        "ghost-comment.html",
        "ghost-script.html",
    ]
)
GHOSTS = ("/odd/ghost-comment.html", "/odd/ghost-script.html")

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
}

_PAGE_RE = re.compile(r"/page/([1-9][0-9]*)\.html")
_PRIVATE_RE = re.compile(r"/private/([12])\.html")
_CALENDAR_RE = re.compile(r"/calendar/([0-9]{4})/([0-9]{2})/")
_DEEP_RE = re.compile(r"/trap/(?:a/)+")
_HOST_RE = re.compile(r"site(0|[1-9][0-9]*)\." + re.escape(DOMAIN))

_WORDS = (
    "web crawler harvest gather seed site document batch profit freshness "
    "link anchor page text index robots politeness queue server wire archive "
    "quality rank score graph node edge domain host path query cache storage "
    "the of and a to in is for on with as by at from that this be it are or "
    "an was which data search engine national chile collection repository "
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod "
    "tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam"
).split()


@dataclass(frozen=True)
class SampleWebConfig:
    """Parameters of a sample web; the same values always give the same web."""

    sites: int = field(default=6, metadata={"help": "number of sites, site0.wire.test and up"})
    pages_per_site: int = field(default=40, metadata={"help": "pages per site, home included (>= 4)"})
    seed: int = field(default=1, metadata={"help": "the same seed gives the same bytes"})
    page_size: int = field(default=2048, metadata={"help": "bytes of text on an ordinary page, roughly"})
    links_per_page: int = field(default=6, metadata={"help": "power-law in-site links per page, tree aside"})
    slow_delay: float = field(default=2.0, metadata={"help": "seconds before /slow.html answers"})
    crawl_delay: float = field(default=1.0, metadata={"help": "Crawl-delay in site1's robots.txt"})
    broken_robots: str = field(default="500", metadata={"help": "site3's robots.txt: 500 or malformed"})
    big_page_size: int = field(default=450_000, metadata={"help": "bytes of /odd/big.html (over 400 KB)"})
    binary_size: int = field(default=1 << 20, metadata={"help": "bytes of /files/big.bin"})
    shape: str = field(
        default="uniform",
        metadata={"help": "uniform, or weblike: Zipf site sizes (pages_per_site the mean), cross-site links "
                  "to large sites, popular pages at any depth (see wirescrapy.sampleweb.shape)"},
    )

    def __post_init__(self) -> None:
        if self.sites < 1:
            raise ValueError(f"sites must be >= 1, got {self.sites}")
        # Pages 1..3 carry the redirect, copy and mirror targets.
        if self.pages_per_site < 4:
            raise ValueError(f"pages_per_site must be >= 4, got {self.pages_per_site}")
        if self.page_size < 0 or self.links_per_page < 0:
            raise ValueError("page_size and links_per_page must be >= 0")
        if self.slow_delay < 0 or self.crawl_delay < 0:
            raise ValueError("slow_delay and crawl_delay must be >= 0")
        if self.broken_robots not in BROKEN_ROBOTS:
            raise ValueError(f"broken_robots must be one of {BROKEN_ROBOTS}, got {self.broken_robots!r}")
        if self.big_page_size <= BIG_PAGE_LIMIT:
            raise ValueError(f"big_page_size must exceed {BIG_PAGE_LIMIT}, got {self.big_page_size}")
        if self.binary_size < 1:
            raise ValueError(f"binary_size must be >= 1, got {self.binary_size}")
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {SHAPES}, got {self.shape!r}")


class Reply(NamedTuple):
    """What the server sends for one request."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    delay: float = 0.0  # wait this long before answering
    cut: int | None = None  # send only this many body bytes, then drop the connection


class Link(NamedTuple):
    """One ``<a href>`` as written in a page."""

    href: str
    text: str = ""
    nofollow: bool = False


class _Doc(NamedTuple):
    """The parts of an HTML page a link extractor sees."""

    title: str
    links: tuple[Link, ...]
    base: str | None = None
    meta_nofollow: bool = False


class _Route(NamedTuple):
    kind: str
    arg: object = None


@dataclass(frozen=True)
class GroundTruth:
    """What a polite crawl from the seeds finds, computed from the model.

    All URLs are absolute, as a crawler normalises them: lower-case host with
    the port, no fragment, non-ASCII path characters percent-encoded as UTF-8.
    """

    seeds: tuple[str, ...]
    #: HTML pages answered 200 and reached by following links and redirects
    #: from the seeds, robots.txt obeyed; trap pages are not included.
    pages: frozenset[str]
    #: page -> the http URLs of its <a href> links (resolved against <base>,
    #: unique, in page order), nofollow ones included.
    links: Mapping[str, tuple[str, ...]]
    #: page -> those of its links marked rel=nofollow or under meta nofollow.
    nofollow: Mapping[str, frozenset[str]]
    #: page -> the page whose bytes it repeats exactly (both in ``pages``).
    duplicates: Mapping[str, str]
    #: linked URLs that robots.txt forbids.
    disallowed: frozenset[str]
    #: trap URLs linked from ordinary pages (behind each, endless more).
    traps: frozenset[str]
    #: redirect source -> (status, absolute target), every hop reached.
    redirects: Mapping[str, tuple[int, str]]
    #: redirect sources whose chain never ends.
    redirect_loops: frozenset[str]
    #: URL -> HTTP error status (404 links, the 500 page).
    errors: Mapping[str, int]
    #: URLs whose connection is closed mid-response.
    dropped: frozenset[str]
    #: pages answered only after the configured delay.
    slow: frozenset[str]
    #: non-HTML URLs reached -> content type.
    non_html: Mapping[str, str]
    #: pages over 400 KB (links near their end come late in the body).
    big: frozenset[str]
    #: URLs found only inside comments or scripts: never to be requested.
    ghosts: frozenset[str]
    #: URLs linked only through nofollow links, so not in ``pages``.
    unfollowed: frozenset[str]
    #: host -> robots.txt kind: sitemap, crawl-delay, plain, missing, 500, malformed.
    robots: Mapping[str, str]
    crawl_delays: Mapping[str, float]
    sitemaps: Mapping[str, str]

    @property
    def unique_pages(self) -> frozenset[str]:
        """Pages with duplicates removed: one URL per distinct body."""
        return self.pages - self.duplicates.keys()


class SampleWeb:
    """A generated web of ``config.sites`` sites served on ``port``."""

    def __init__(self, config: SampleWebConfig | None = None, port: int = 80):
        if not 0 <= port < 65536:
            raise ValueError(f"port out of range: {port}")
        self.config = config or SampleWebConfig()
        self.port = port
        self._sites = self.config.sites
        self._shape = Shape(self.config.shape, self._sites, self.config.pages_per_site, self.config.seed)
        self._suffix = "" if port == 80 else f":{port}"
        self._replies: OrderedDict[tuple[int, str], Reply] = OrderedDict()
        self._truths: dict[bool, GroundTruth] = {}

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
        return self._shape.size(site)

    def seeds(self) -> list[str]:
        """Start URLs: every site's home page."""
        return [self.origin(s) + "/" for s in range(self._sites)]

    def _role(self, role: int) -> int:
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
        reply = self._reply(site, self._route(site, path))
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
        kind = self._route(site, _target(split)).kind
        return _CLASSES.get(kind, kind)

    def _route(self, site: int, target: str) -> _Route:
        raw_path, _, query = target.partition("?")
        try:
            path = unquote(raw_path, errors="strict")
        except UnicodeDecodeError:
            path = unquote(raw_path, encoding="latin-1")
        if query:
            if path == "/search" and self.robots_kind(site) == "crawl-delay":
                return _Route("search")
            return _Route("notfound")
        if path == "/":
            return _Route("page", 0)
        if m := _PAGE_RE.fullmatch(path):
            page = int(m.group(1))
            return _Route("page", page) if page < self._shape.size(site) else _Route("notfound")
        if m := _PRIVATE_RE.fullmatch(path):
            return _Route("private", int(m.group(1)))
        if path == "/robots.txt":
            return _Route("robots")
        if path == "/sitemap.xml" and self.robots_kind(site) == "sitemap":
            return _Route("sitemap")
        if site == self._role(ROLE_DUPLICATES):
            if route := self._duplicates_route(path):
                return route
        if site == self._role(ROLE_MIRROR) and path == "/mirror/2.html":
            return _Route("alias", (self._role(ROLE_DUPLICATES), 2))
        if site == self._role(ROLE_ODD) and path.startswith("/odd/"):
            name = path[len("/odd/") :]
            if name == "" or name in ODD_PAGES or name in ODD_LEAVES:
                return _Route("odd", name)
        if site == self._role(ROLE_TRAPS):
            if m := _CALENDAR_RE.fullmatch(path):
                year, month = int(m.group(1)), int(m.group(2))
                if year >= 1 and 1 <= month <= 12:
                    return _Route("calendar", (year, month))
            if _DEEP_RE.fullmatch(path):
                return _Route("deep", path.count("a/"))
        if site == self._role(ROLE_ERRORS):
            if path == "/error.html":
                return _Route("error", 500)
            if path == "/slow.html":
                return _Route("slow")
            if path == "/drop.html":
                return _Route("drop")
        return _Route("notfound")

    def _duplicates_route(self, path: str) -> _Route | None:
        site = self._role(ROLE_DUPLICATES)
        redirects = {
            "/moved/a": (301, self.origin(site) + "/moved/b"),
            "/moved/b": (302, self.origin(site) + "/page/3.html"),
            "/moved/away": (301, self.origin((site + 1) % self._sites) + "/page/2.html"),
            "/loop/a": (302, self.origin(site) + "/loop/b"),
            "/loop/b": (302, self.origin(site) + "/loop/a"),
        }
        if path in redirects:
            return _Route("redirect", redirects[path])
        if path == "/index.html":
            return _Route("alias", (site, 0))
        if path == "/copy/1.html":
            return _Route("alias", (site, 1))
        if path == "/files/":
            return _Route("files")
        if path.startswith("/files/") and path[len("/files/") :] in FILES:
            return _Route("file", path[len("/files/") :])
        if path == "/notes.txt":
            return _Route("text")
        return None

    def _reply(self, site: int, route: _Route) -> Reply:
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
            return Reply(200, (("Content-Type", FILES[arg]),), self._file(arg))
        if kind == "text":
            return Reply(200, (("Content-Type", TEXT),), _notes())
        if kind == "odd" and arg == "latin1.html":
            return Reply(200, (("Content-Type", "text/html; charset=iso-8859-1"),), self._render(site, route))
        body = self._render(site, route)
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
        urls = [origin + "/"] + [f"{origin}/page/{p}.html" for p in range(1, min(self._shape.size(site), 5))]
        entries = "".join(f"  <url><loc>{u}</loc></url>\n" for u in urls)
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{entries}</urlset>\n"
        ).encode()

    def _file(self, name: str) -> bytes:
        if name == "big.bin":
            return random.Random(f"{self.config.seed}:big.bin").randbytes(self.config.binary_size)
        return _FILE_MAKERS[name]()

    def _directory(self) -> Reply:
        items = "".join(f'<li><a href="{u}">{u}</a></li>\n' for u in self.seeds())
        body = (
            "<!DOCTYPE html>\n<html><head><title>wirescrapy sample web</title></head>\n"
            f"<body><ul>\n{items}</ul></body></html>\n"
        )
        return Reply(200, (("Content-Type", HTML),), body.encode())

    # -- pages -------------------------------------------------------------

    def _doc(self, site: int, route: _Route) -> _Doc:
        """The links of an HTML route, as a correct extractor sees them."""
        kind, arg = route
        if kind == "alias":
            return self._doc(*self._original(route))
        if kind == "page":
            return self._home_doc(site) if arg == 0 else self._page_doc(site, arg)
        if kind == "private":
            other = Link(f"/private/{3 - arg}.html", "other")
            return _Doc(f"Site {site} private {arg}", (Link("/", "home"), other))
        if kind == "search":
            return _Doc("Search results", (Link("/", "home"), Link("/page/1.html", "result")))
        if kind == "files":
            files = tuple(Link(name, name) for name in FILES)
            return _Doc("Files", (*files, Link("/notes.txt", "notes"), Link("/", "home")))
        if kind == "odd":
            return self._odd_doc(site, arg)
        if kind == "calendar":
            year, month = arg
            nxt = (year + month // 12, month % 12 + 1)
            links = [Link("/calendar/%04d/%02d/" % nxt, "next month")]
            if (year, month) > (1, 1):
                prev = (year - (month == 1), (month - 2) % 12 + 1)
                links.insert(0, Link("/calendar/%04d/%02d/" % prev, "previous month"))
            return _Doc(f"Calendar {year:04d}-{month:02d}", (*links, Link("/", "home")))
        if kind == "deep":
            return _Doc(f"Trap depth {arg}", (Link("a/", "deeper"), Link("/", "home")))
        if kind == "slow":
            return _Doc("Slow page", (Link("/", "home"), Link("/page/1.html", "page 1")))
        if kind == "drop":
            return _Doc("Dropped page", (Link("/", "home"),))
        raise AssertionError(f"not an HTML route: {route}")

    def _original(self, route: _Route) -> tuple[int, _Route]:
        site, page = route.arg
        return site, _Route("page", page)

    def _page_href(self, rng: random.Random, site: int, page: int) -> str:
        # Several spellings of one URL, all resolving alike from "/", from
        # /page/ and from the one-level-deep copies, so a copy's bytes resolve.
        if page == 0:
            return rng.choice(("/", "../", self.origin(site) + "/"))
        path = f"/page/{page}.html"
        return rng.choice((path, ".." + path, self.origin(site) + path, f"{path}#part{rng.randrange(3)}"))

    def _page_doc(self, site: int, page: int) -> _Doc:
        shape = self._shape
        n = shape.size(site)
        rng = random.Random(f"{self.config.seed}:{site}:{page}")
        parent = (page - 1) // FANOUT
        links = [Link(self._page_href(rng, site, parent), "up")]
        for child in range(FANOUT * page + 1, min(FANOUT * page + FANOUT, n - 1) + 1):
            links.append(Link(self._page_href(rng, site, child), f"page {child}"))
        for _ in range(self.config.links_per_page):
            target = shape.page(rng, site, SKEW)
            links.append(Link(self._page_href(rng, site, target), f"page {target}"))
        if self._sites > 1 and rng.random() < CROSS_SITE_SHARE:
            other = shape.site(rng, site, other=True)
            target = shape.page(rng, other, 3)
            path = f"/page/{target}.html" if target else "/"
            links.append(Link(self.origin(other) + path, f"site {other} page {target}"))
        if rng.random() < BROKEN_SHARE:
            links.append(Link(f"/missing/{site}-{page}.html", "gone"))
        return _Doc(f"Site {site} page {page}", tuple(links))

    def _home_doc(self, site: int) -> _Doc:
        shape = self._shape
        n = shape.size(site)
        rng = random.Random(f"{self.config.seed}:{site}:0")
        links = [Link(f"page/{c}.html", f"page {c}") for c in range(1, min(FANOUT, n - 1) + 1)]
        for _ in range(self.config.links_per_page):
            target = shape.page(rng, site, SKEW, not_home=True)
            links.append(Link(f"page/{target}.html", f"page {target}"))
        links.append(Link("/private/1.html", "private"))
        if self.robots_kind(site) == "crawl-delay":
            links.append(Link("/search?q=wire", "search"))
        features = {
            ROLE_DUPLICATES: ("/index.html", "/copy/1.html", "/moved/a", "/moved/away", "/loop/a", "/files/"),
            ROLE_ODD: ("/odd/",),
            ROLE_TRAPS: TRAP_ENTRIES,
            ROLE_ERRORS: ("/error.html", "/slow.html", "/drop.html", "/missing/home.html"),
            ROLE_MIRROR: ("/mirror/2.html",),
        }
        for role, hrefs in features.items():
            if site == self._role(role):
                links += [Link(href, href) for href in hrefs]
        if self._sites > 1:
            nxt = (site + 1) % self._sites
            links.append(Link(self.origin(nxt) + "/", f"site {nxt}"))
            # Uniform: any site, this one too; weblike: another site.
            other = shape.site(rng, site, other=shape.name != "uniform")
            target = shape.page(rng, other, 3)
            path = f"/page/{target}.html" if target else "/"
            links.append(Link(self.origin(other) + path, f"site {other} page {target}"))
        return _Doc(f"Site {site} home", tuple(links))

    def _odd_doc(self, site: int, name: str) -> _Doc:
        if name == "":
            return _Doc("Odd pages", tuple(Link(p, p) for p in ODD_PAGES))
        if name in ODD_LEAVES:
            return _Doc(f"Odd leaf {name}", (Link("/odd/", "back"),))
        links = {
            "unclosed.html": tuple(Link(f"/odd/target-{k}.html") for k in (1, 2, 3)),
            "nul.html": (Link("/odd/target-4.html"),),
            "latin1.html": (Link("/odd/café.html"),),
            "base.html": (Link("x.html"), Link("/odd/target-5.html")),
            "big.html": (Link("/odd/target-6.html"), Link("/odd/after-big.html")),
            "not-links.html": (Link("/odd/target-7.html"),),
            "nofollow.html": (Link("/odd/rel-nofollow.html", nofollow=True), Link("/odd/target-8.html")),
            "meta-nofollow.html": (Link("/odd/meta-nofollow-target.html"),),
        }[name]
        base = self.origin(site) + "/odd/based/" if name == "base.html" else None
        return _Doc(f"Odd {name}", links, base=base, meta_nofollow=name == "meta-nofollow.html")

    def _render(self, site: int, route: _Route) -> bytes:
        if route.kind == "alias":
            return self._render(*self._original(route))
        doc = self._doc(site, route)
        if route.kind == "odd" and route.arg in _ODD_RENDERERS:
            html = _ODD_RENDERERS[route.arg](self, doc)
            return html.encode("latin-1" if route.arg == "latin1.html" else "utf-8")
        size = self.config.page_size if route.kind == "page" else 200
        text = random.Random(f"{self.config.seed}:{site}:{route.kind}:{route.arg}:text")
        paragraphs = _paragraphs(text, size, len(doc.links))
        if route.kind == "files":
            # Embedded as well as linked, so img-aware extractors see the same URLs.
            paragraphs.insert(0, '<img src="photo.png" alt="a photo"> <img src="photo.jpg" alt="another">')
        return _html_page(doc, paragraphs).encode("utf-8")

    # -- ground truth ------------------------------------------------------

    def ground_truth(self, follow_nofollow: bool = False) -> GroundTruth:
        """Crawl the model from the seeds (breadth-first, robots.txt obeyed,
        redirects followed, traps entered but not explored)."""
        if follow_nofollow not in self._truths:
            self._truths[follow_nofollow] = _Crawl(self, follow_nofollow).run()
        return self._truths[follow_nofollow]


class _Crawl:
    """Breadth-first walk of the model, the reference a real crawl is checked against."""

    def __init__(self, web: SampleWeb, follow_nofollow: bool):
        self.web = web
        self.follow_nofollow = follow_nofollow
        self.pages: set[str] = set()
        self.links: dict[str, tuple[str, ...]] = {}
        self.nofollow: dict[str, frozenset[str]] = {}
        self.duplicates: dict[str, str] = {}
        self.disallowed: set[str] = set()
        self.traps: set[str] = set()
        self.redirects: dict[str, tuple[int, str]] = {}
        self.errors: dict[str, int] = {}
        self.dropped: set[str] = set()
        self.slow: set[str] = set()
        self.non_html: dict[str, str] = {}
        self.big: set[str] = set()
        self.nofollow_targets: set[str] = set()

    def run(self) -> GroundTruth:
        web = self.web
        seeds = web.seeds()
        seen = set(seeds)
        queue = deque(seeds)
        while queue:
            url = queue.popleft()
            for target in self.visit(url):
                if target not in seen:
                    seen.add(target)
                    queue.append(target)
        hosts = web.hosts()
        robots = {host: web.robots_kind(site) for site, host in enumerate(hosts)}
        delay = web.config.crawl_delay
        sitemaps = {host: web.url(host, "/sitemap.xml") for host in hosts if robots[host] == "sitemap"}
        return GroundTruth(
            seeds=tuple(seeds),
            pages=frozenset(self.pages),
            links=MappingProxyType(self.links),
            nofollow=MappingProxyType(self.nofollow),
            duplicates=MappingProxyType(self.duplicates),
            disallowed=frozenset(self.disallowed),
            traps=frozenset(self.traps),
            redirects=MappingProxyType(self.redirects),
            redirect_loops=frozenset(_loops(self.redirects)),
            errors=MappingProxyType(self.errors),
            dropped=frozenset(self.dropped),
            slow=frozenset(self.slow),
            non_html=MappingProxyType(self.non_html),
            big=frozenset(self.big),
            ghosts=frozenset(web.url(web._role(ROLE_ODD), g) for g in GHOSTS),
            unfollowed=frozenset(self.nofollow_targets - seen),
            robots=MappingProxyType(robots),
            crawl_delays=MappingProxyType({h: delay for h in hosts if robots[h] == "crawl-delay"}),
            sitemaps=MappingProxyType(sitemaps),
        )

    def visit(self, url: str) -> Iterable[str]:
        """Record what ``url`` is; return the URLs a crawler goes on to."""
        web = self.web
        split = urlsplit(url)
        site = web.site_of(split.netloc)
        assert site is not None, f"the model links outside itself: {url}"
        target = _target(split)
        if web.disallowed(site, target):
            self.disallowed.add(url)
            return ()
        route = web._route(site, target)
        kind = route.kind
        if kind in ("calendar", "deep"):
            self.traps.add(url)
            return ()
        if kind == "redirect":
            self.redirects[url] = route.arg
            return (route.arg[1],)
        if kind in ("notfound", "error"):
            self.errors[url] = 404 if kind == "notfound" else route.arg
            return ()
        if kind == "drop":
            self.dropped.add(url)
            return ()
        if kind in ("file", "text"):
            self.non_html[url] = FILES.get(route.arg, TEXT)
            return ()
        if kind == "alias":
            orig_site, orig = web._original(route)
            path = "/" if orig.arg == 0 else f"/page/{orig.arg}.html"
            self.duplicates[url] = web.origin(orig_site) + path
        if kind == "slow":
            self.slow.add(url)
        if kind == "odd" and route.arg == "big.html":
            self.big.add(url)
        self.pages.add(url)
        doc = web._doc(site, route)
        base = doc.base or url
        links: dict[str, bool] = {}
        for link in doc.links:
            resolved = _resolve(base, link.href)
            if resolved is not None and resolved not in links:
                links[resolved] = link.nofollow or doc.meta_nofollow
        self.links[url] = tuple(links)
        unfollowed = frozenset(u for u, nofollow in links.items() if nofollow)
        if unfollowed:
            self.nofollow[url] = unfollowed
            self.nofollow_targets |= unfollowed
        if self.follow_nofollow:
            return links
        return [u for u, nofollow in links.items() if not nofollow]


def _target(split) -> str:
    return (split.path or "/") + (f"?{split.query}" if split.query else "")


def _resolve(base: str, href: str) -> str | None:
    """``href`` made absolute against ``base`` and stripped of its fragment, as
    a browser does; None if it is not an http URL."""
    if href.startswith("http://"):
        url = href.partition("#")[0]
    elif href.startswith("//") or ":" in href.partition("/")[0]:
        url = urldefrag(urljoin(base, href))[0]
        if not url.startswith("http://"):
            return None
    else:
        # Joined on the path alone, so the cache serves every site alike.
        slash = base.index("/", len("http://"))
        url = base[:slash] + _join_path(base[slash : base.rindex("/") + 1], href)
    # Browsers and w3lib encode non-ASCII path characters as UTF-8.
    return url if url.isascii() else quote(url, safe=":/?#[]@!$&'()*+,;=%~")


@lru_cache(maxsize=1 << 16)
def _join_path(directory: str, href: str) -> str:
    return urldefrag(urljoin("http://x" + directory, href))[0][len("http://x") :]


def _loops(redirects: Mapping[str, tuple[int, str]]) -> set[str]:
    loops = set()
    for start in redirects:
        chain, url = {start}, redirects[start][1]
        while url in redirects and url not in chain:
            chain.add(url)
            url = redirects[url][1]
        if url in chain:
            loops.add(start)
    return loops


def _not_found() -> Reply:
    return Reply(404, (("Content-Type", HTML),), b"<html><body><h1>Not Found</h1></body></html>")


def _server_error() -> Reply:
    return Reply(500, (("Content-Type", HTML),), b"<html><body><h1>Internal Server Error</h1></body></html>")


# -- HTML ------------------------------------------------------------------


def _paragraphs(rng: random.Random, size: int, slots: int) -> list[str]:
    """Filler text of about ``size`` bytes in at least ``slots`` paragraphs."""
    words = rng.choices(_WORDS, k=max(size // 6, slots))
    count = max(slots, len(words) // 40, 1)
    step = -(-len(words) // count)
    return [" ".join(words[k : k + step]) for k in range(0, len(words), step)]


def _anchor(link: Link) -> str:
    rel = ' rel="nofollow"' if link.nofollow else ""
    return f'<a href="{escape(link.href)}"{rel}>{escape(link.text or link.href)}</a>'


def _html_page(doc: _Doc, paragraphs: list[str], head: str = "") -> str:
    body = []
    for k, text in enumerate(paragraphs):
        anchor = f" {_anchor(doc.links[k])}" if k < len(doc.links) else ""
        body.append(f"<p>{text}{anchor}</p>")
    # Links beyond the paragraphs go into a list, as a site's navigation would.
    rest = doc.links[len(paragraphs) :]
    if rest:
        body.append("<ul>" + "".join(f"<li>{_anchor(link)}</li>" for link in rest) + "</ul>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(doc.title)}</title>{head}</head>\n"
        f"<body><h1>{escape(doc.title)}</h1>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _unclosed(web: SampleWeb, doc: _Doc) -> str:
    a, b, c = (link.href for link in doc.links)
    return (
        # The title is closed: an unclosed <title> swallows the page, in browsers too.
        "<html><head><title>Unclosed tags</title>\n"
        "<body><div class=main><p>A paragraph without end <b>bold <i>italic\n"
        f'<a href="{a}">first target\n<p>Another <a href={b}>second target</a>\n'
        f"<table><tr><td>cell<td><a href='{c}'>third target\n<ul><li>item<li>item\n"
    )


def _nul(web: SampleWeb, doc: _Doc) -> str:
    return (
        "<html><head><title>NUL bytes</title></head><body><p>before\x00after</p>\x00"
        f'<a href="{doc.links[0].href}">four</a>\x00\x00<p>tail\x00</p></body></html>'
    )


def _latin1(web: SampleWeb, doc: _Doc) -> str:
    # Encoded to Latin-1 by _reply, so the href holds the byte 0xE9.
    return (
        '<html><head><meta charset="iso-8859-1"><title>Café crème</title></head>\n'
        f'<body><p>Déjà vu à la française: <a href="{doc.links[0].href}">café</a></p></body></html>\n'
    )


def _base(web: SampleWeb, doc: _Doc) -> str:
    text = "Relative links here resolve against the base, not this URL."
    return _html_page(doc, [text], f'<base href="{doc.base}">')


def _big(web: SampleWeb, doc: _Doc) -> str:
    start = _html_page(doc._replace(links=doc.links[:1]), ["The start of a very long page."])
    head = start.rsplit("</body>", 1)[0]
    tail = f"<p>The end. {_anchor(doc.links[1])}</p>\n</body></html>\n"
    filler = _big_filler(web.config.seed)
    need = web.config.big_page_size - len(head) - len(tail)
    chunks = filler * (need // len(filler) + 1)
    return head + chunks[:need] + tail


@lru_cache(maxsize=4)
def _big_filler(seed: int) -> str:
    rng = random.Random(f"{seed}:big")
    return "".join(f"<p>{' '.join(rng.choices(_WORDS, k=60))}</p>\n" for _ in range(50))


def _not_links(web: SampleWeb, doc: _Doc) -> str:
    ghost_comment, ghost_script = GHOSTS
    return (
        "<!DOCTYPE html>\n<html><head><title>Things that are not links</title>\n"
        f"<script>var html = '<a href=\"{ghost_script}\">x</a>'; document.write(html);</script>\n"
        "</head><body>\n"
        f'<!-- <a href="{ghost_comment}">commented out</a> -->\n'
        '<p><a href="mailto:webmaster@wire.test">mail</a> <a href="javascript:void(0)">script</a>'
        " <a>no href</a></p>\n"
        f"<p>The only link: {_anchor(doc.links[0])}</p>\n</body></html>\n"
    )


def _meta_nofollow(web: SampleWeb, doc: _Doc) -> str:
    return _html_page(doc, ["Links here are not to be followed."], '<meta name="robots" content="nofollow">')


_ODD_RENDERERS: dict[str, Callable[[SampleWeb, _Doc], str]] = {
    "unclosed.html": _unclosed,
    "nul.html": _nul,
    "latin1.html": _latin1,
    "base.html": _base,
    "big.html": _big,
    "not-links.html": _not_links,
    "meta-nofollow.html": _meta_nofollow,
}


# -- non-HTML files --------------------------------------------------------


def _notes() -> bytes:
    return b"Plain text notes.\nhttp://site0.wire.test/page/1.html is a URL in plain text, not a link.\n"


def _png() -> bytes:
    """A valid 16x16 RGB gradient."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(v for x in range(16) for v in (x * 16, y * 16, 128)) for y in range(16))
    header = struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)
    image = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + image


def _jpeg() -> bytes:
    """A valid baseline JPEG: one 8x8 grey block, one-symbol Huffman tables."""
    seg = lambda marker, data: b"\xff" + marker + struct.pack(">H", len(data) + 2) + data  # noqa: E731
    one_symbol = bytes([1] + [0] * 15) + b"\x00"
    return (
        b"\xff\xd8"
        + seg(b"\xe0", b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
        + seg(b"\xdb", b"\x00" + b"\x01" * 64)
        + seg(b"\xc0", b"\x08\x00\x08\x00\x08\x01\x01\x11\x00")
        + seg(b"\xc4", b"\x00" + one_symbol)
        + seg(b"\xc4", b"\x10" + one_symbol)
        + seg(b"\xda", b"\x01\x01\x00\x00\x3f\x00")
        # DC difference 0 then end of block: bits "00", padded with ones.
        + b"\x3f"
        + b"\xff\xd9"
    )


def _pdf() -> bytes:
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R "
        b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
    ]
    stream = b"BT /F1 12 Tf 20 50 Td (WIRE sample report) Tj ET"
    objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _zip() -> bytes:
    buffer = io.BytesIO()
    # Stored, not deflated, and dated: the bytes stay the same on every run and zlib.
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        info = zipfile.ZipInfo("readme.txt", date_time=(2026, 1, 1, 0, 0, 0))
        archive.writestr(info, b"An archive in the WIRE sample web.\n" * 20)
    return buffer.getvalue()


_FILE_MAKERS: dict[str, Callable[[], bytes]] = {
    "photo.png": lru_cache(maxsize=1)(_png),
    "photo.jpg": lru_cache(maxsize=1)(_jpeg),
    "report.pdf": lru_cache(maxsize=1)(_pdf),
    "archive.zip": lru_cache(maxsize=1)(_zip),
}
