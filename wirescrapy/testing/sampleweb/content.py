"""What the pages of the sample web hold: their links, their text and their HTML.

The links of every HTML page (:func:`doc_of`, a :class:`Doc`, as a correct link extractor sees them)
and its bytes (:func:`render`) are computed from ``(seed, site, page)``: ordinary pages hang from a
4-ary tree (``FANOUT``), with extra in-site links drawn by a power law (``SKEW``), a share of links to
other sites and of broken ones; the home pages link to the special content each site carries (its
``ROLE_*``, see :mod:`wirescrapy.testing.sampleweb.model`), and the odd pages of ``/odd/`` are written by hand
to test a parser: unclosed tags, NUL bytes, Latin-1, ``<base href>``, a page over 400 KB, links that
are not links, ``nofollow``.

The web is passed in (:class:`Web`): the routing imports this module, not the other way round.
"""

from __future__ import annotations

import random
from functools import lru_cache
from html import escape
from typing import TYPE_CHECKING, NamedTuple, Protocol

from wirescrapy.testing.sampleweb import scripts
from wirescrapy.testing.sampleweb.files import FILES

if TYPE_CHECKING:
    from collections.abc import Callable

    from wirescrapy.testing.sampleweb.config import SampleWebConfig
    from wirescrapy.testing.sampleweb.shape import Shape

# Tree fan-out: keeps every page reachable within log4(n) clicks of home.
FANOUT = 4
# Share of pages with a link to another site, and with a broken link.
CROSS_SITE_SHARE = 0.3
BROKEN_SHARE = 0.05
# Extra in-site link targets are int(n * u ** SKEW): density ~ x^(1/SKEW - 1),
# a power law that sends most in-links to the low-numbered pages.
SKEW = 2.5

# The special content of one site each: the site is the role modulo the number of sites.
ROLE_DUPLICATES = 0
ROLE_ODD = 1
ROLE_TRAPS = 2
ROLE_ERRORS = 3
ROLE_MIRROR = 4
ROLE_SCRIPTS = scripts.ROLE_SCRIPTS  # with --js on: the /js/ pages (wirescrapy.testing.sampleweb.scripts)

TRAP_ENTRIES = ("/calendar/2026/11/", "/trap/a/")
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

_WORDS = [
    "web",
    "crawler",
    "harvest",
    "gather",
    "seed",
    "site",
    "document",
    "batch",
    "profit",
    "freshness",
    "link",
    "anchor",
    "page",
    "text",
    "index",
    "robots",
    "politeness",
    "queue",
    "server",
    "wire",
    "archive",
    "quality",
    "rank",
    "score",
    "graph",
    "node",
    "edge",
    "domain",
    "host",
    "path",
    "query",
    "cache",
    "storage",
    "the",
    "of",
    "and",
    "a",
    "to",
    "in",
    "is",
    "for",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "that",
    "this",
    "be",
    "it",
    "are",
    "or",
    "an",
    "was",
    "which",
    "data",
    "search",
    "engine",
    "national",
    "chile",
    "collection",
    "repository",
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
    "enim",
    "ad",
    "minim",
    "veniam",
]


class Link(NamedTuple):
    """One ``<a href>`` as written in a page."""

    href: str
    text: str = ""
    nofollow: bool = False


class Doc(NamedTuple):
    """The parts of an HTML page a link extractor sees."""

    title: str
    links: tuple[Link, ...]
    base: str | None = None
    meta_nofollow: bool = False


class Route(NamedTuple):
    """What a request target is on its site (``SampleWeb.route``): a kind and its argument."""

    kind: str
    arg: object = None


class Web(Protocol):
    """What the pages ask of their web (a ``SampleWeb``)."""

    config: SampleWebConfig
    shape: Shape

    def origin(self, site: int) -> str: ...

    def robots_kind(self, site: int) -> str: ...

    def site_with(self, role: int) -> int: ...


def doc_of(web: Web, site: int, route: Route) -> Doc:
    """The links of an HTML route, as a correct extractor sees them."""
    kind, arg = route
    if kind == "alias":
        return doc_of(web, *original(route))
    if kind == "page":
        return _home_doc(web, site) if arg == 0 else _page_doc(web, site, arg)
    if kind == "private":
        other = Link(f"/private/{3 - arg}.html", "other")
        return Doc(f"Site {site} private {arg}", (Link("/", "home"), other))
    if kind == "search":
        return Doc("Search results", (Link("/", "home"), Link("/page/1.html", "result")))
    if kind == "files":
        files = tuple(Link(name, name) for name in FILES)
        return Doc("Files", (*files, Link("/notes.txt", "notes"), Link("/", "home")))
    if kind == "odd":
        return _odd_doc(web, site, arg)
    if kind == "js":
        links = tuple(
            Link(href if href.startswith("/") else scripts.PREFIX + href)
            for href in scripts.raw_links(web.config.js, arg)
        )
        return Doc(f"Script page {arg}", links)
    if kind == "calendar":
        year, month = arg
        nxt = (year + month // 12, month % 12 + 1)
        links = [Link(f"/calendar/{nxt[0]:04d}/{nxt[1]:02d}/", "next month")]
        if (year, month) > (1, 1):
            prev = (year - (month == 1), (month - 2) % 12 + 1)
            links.insert(0, Link(f"/calendar/{prev[0]:04d}/{prev[1]:02d}/", "previous month"))
        return Doc(f"Calendar {year:04d}-{month:02d}", (*links, Link("/", "home")))
    if kind == "deep":
        return Doc(f"Trap depth {arg}", (Link("a/", "deeper"), Link("/", "home")))
    if kind == "slow":
        return Doc("Slow page", (Link("/", "home"), Link("/page/1.html", "page 1")))
    if kind == "drop":
        return Doc("Dropped page", (Link("/", "home"),))
    raise AssertionError(f"not an HTML route: {route}")


def scripted_links(web: Web, site: int, route: Route) -> tuple[str, ...]:
    """The hrefs of the links only running the route's scripts shows (document.write, DOM insertion, XHR,
    the views of a hash-routed application), as written; ``()`` for a page without such scripts."""
    if route.kind == "js":
        return scripts.scripted_links(route.arg)
    if route.kind == "odd" and route.arg == "not-links.html":
        return (GHOSTS[1],)  # written by document.write: a link once the script has run
    return ()


def original(route: Route) -> tuple[int, Route]:
    """The site and page route that an alias route repeats, byte for byte."""
    site, page = route.arg
    return site, Route("page", page)


def _page_href(web: Web, rng: random.Random, site: int, page: int) -> str:
    # Several spellings of one URL, all resolving alike from "/", from
    # /page/ and from the one-level-deep copies, so a copy's bytes resolve.
    if page == 0:
        return rng.choice(("/", "../", web.origin(site) + "/"))
    path = f"/page/{page}.html"
    return rng.choice((path, ".." + path, web.origin(site) + path, f"{path}#part{rng.randrange(3)}"))


def _page_doc(web: Web, site: int, page: int) -> Doc:
    shape = web.shape
    n = shape.size(site)
    rng = random.Random(f"{web.config.seed}:{site}:{page}")
    parent = (page - 1) // FANOUT
    links = [Link(_page_href(web, rng, site, parent), "up")]
    for child in range(FANOUT * page + 1, min(FANOUT * page + FANOUT, n - 1) + 1):
        links.append(Link(_page_href(web, rng, site, child), f"page {child}"))
    for _ in range(web.config.links_per_page):
        target = shape.page(rng, site, SKEW)
        links.append(Link(_page_href(web, rng, site, target), f"page {target}"))
    if web.config.sites > 1 and rng.random() < CROSS_SITE_SHARE:
        other = shape.site(rng, site, other=True)
        target = shape.page(rng, other, 3)
        path = f"/page/{target}.html" if target else "/"
        links.append(Link(web.origin(other) + path, f"site {other} page {target}"))
    if rng.random() < BROKEN_SHARE:
        links.append(Link(f"/missing/{site}-{page}.html", "gone"))
    return Doc(f"Site {site} page {page}", tuple(links))


def _home_doc(web: Web, site: int) -> Doc:
    shape = web.shape
    n = shape.size(site)
    rng = random.Random(f"{web.config.seed}:{site}:0")
    links = [Link(f"page/{c}.html", f"page {c}") for c in range(1, min(FANOUT, n - 1) + 1)]
    for _ in range(web.config.links_per_page):
        target = shape.page(rng, site, SKEW, not_home=True)
        links.append(Link(f"page/{target}.html", f"page {target}"))
    links.append(Link("/private/1.html", "private"))
    if web.robots_kind(site) == "crawl-delay":
        links.append(Link("/search?q=wire", "search"))
    features = {
        ROLE_DUPLICATES: ("/index.html", "/copy/1.html", "/moved/a", "/moved/away", "/loop/a", "/files/"),
        ROLE_ODD: ("/odd/",),
        ROLE_TRAPS: TRAP_ENTRIES,
        ROLE_ERRORS: ("/error.html", "/slow.html", "/drop.html", "/missing/home.html"),
        ROLE_MIRROR: ("/mirror/2.html",),
        ROLE_SCRIPTS: (scripts.PREFIX,) if web.config.js != "off" else (),
    }
    for role, hrefs in features.items():
        if site == web.site_with(role):
            links += [Link(href, href) for href in hrefs]
    if web.config.sites > 1:
        nxt = (site + 1) % web.config.sites
        links.append(Link(web.origin(nxt) + "/", f"site {nxt}"))
        # Uniform: any site, this one too; weblike: another site.
        other = shape.site(rng, site, other=shape.name != "uniform")
        target = shape.page(rng, other, 3)
        path = f"/page/{target}.html" if target else "/"
        links.append(Link(web.origin(other) + path, f"site {other} page {target}"))
    return Doc(f"Site {site} home", tuple(links))


def _odd_doc(web: Web, site: int, name: str) -> Doc:
    if name == "":
        return Doc("Odd pages", tuple(Link(p, p) for p in ODD_PAGES))
    if name in ODD_LEAVES:
        return Doc(f"Odd leaf {name}", (Link("/odd/", "back"),))
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
    base = web.origin(site) + "/odd/based/" if name == "base.html" else None
    return Doc(f"Odd {name}", links, base=base, meta_nofollow=name == "meta-nofollow.html")


def render(web: Web, site: int, route: Route) -> bytes:
    """The bytes of an HTML route: its links (``doc_of``) among filler text, or an odd page as written."""
    if route.kind == "alias":
        return render(web, *original(route))
    doc = doc_of(web, site, route)
    if route.kind == "odd" and route.arg in _ODD_RENDERERS:
        html = _ODD_RENDERERS[route.arg](web, doc)
        return html.encode("latin-1" if route.arg == "latin1.html" else "utf-8")
    size = web.config.page_size if route.kind == "page" else 200
    text = random.Random(f"{web.config.seed}:{site}:{route.kind}:{route.arg}:text")
    paragraphs = _paragraphs(text, size, len(doc.links))
    if route.kind == "files":
        # Embedded as well as linked, so img-aware extractors see the same URLs.
        paragraphs.insert(0, '<img src="photo.png" alt="a photo"> <img src="photo.jpg" alt="another">')
    return _html_page(doc, paragraphs).encode("utf-8")


def _paragraphs(rng: random.Random, size: int, slots: int) -> list[str]:
    """Filler text of about ``size`` bytes in at least ``slots`` paragraphs."""
    words = rng.choices(_WORDS, k=max(size // 6, slots))
    count = max(slots, len(words) // 40, 1)
    step = -(-len(words) // count)
    return [" ".join(words[k : k + step]) for k in range(0, len(words), step)]


def _anchor(link: Link) -> str:
    rel = ' rel="nofollow"' if link.nofollow else ""
    return f'<a href="{escape(link.href)}"{rel}>{escape(link.text or link.href)}</a>'


def _html_page(doc: Doc, paragraphs: list[str], head: str = "") -> str:
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


def _unclosed(web: Web, doc: Doc) -> str:
    a, b, c = (link.href for link in doc.links)
    return (
        # The title is closed: an unclosed <title> swallows the page, in browsers too.
        "<html><head><title>Unclosed tags</title>\n"
        "<body><div class=main><p>A paragraph without end <b>bold <i>italic\n"
        f'<a href="{a}">first target\n<p>Another <a href={b}>second target</a>\n'
        f"<table><tr><td>cell<td><a href='{c}'>third target\n<ul><li>item<li>item\n"
    )


def _nul(web: Web, doc: Doc) -> str:
    return (
        "<html><head><title>NUL bytes</title></head><body><p>before\x00after</p>\x00"
        f'<a href="{doc.links[0].href}">four</a>\x00\x00<p>tail\x00</p></body></html>'
    )


def _latin1(web: Web, doc: Doc) -> str:
    # Encoded to Latin-1 by render, so the href holds the byte 0xE9.
    return (
        '<html><head><meta charset="iso-8859-1"><title>Café crème</title></head>\n'
        f'<body><p>Déjà vu à la française: <a href="{doc.links[0].href}">café</a></p></body></html>\n'
    )


def _base(web: Web, doc: Doc) -> str:
    text = "Relative links here resolve against the base, not this URL."
    return _html_page(doc, [text], f'<base href="{doc.base}">')


def _big(web: Web, doc: Doc) -> str:
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


def _not_links(web: Web, doc: Doc) -> str:
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


def _meta_nofollow(web: Web, doc: Doc) -> str:
    return _html_page(doc, ["Links here are not to be followed."], '<meta name="robots" content="nofollow">')


_ODD_RENDERERS: dict[str, Callable[[Web, Doc], str]] = {
    "unclosed.html": _unclosed,
    "nul.html": _nul,
    "latin1.html": _latin1,
    "base.html": _base,
    "big.html": _big,
    "not-links.html": _not_links,
    "meta-nofollow.html": _meta_nofollow,
}
