"""The ground truth of a sample web: what a polite crawl from its seeds finds.

:func:`crawl` walks the model breadth-first, as a correct crawler would (robots.txt obeyed, redirects
followed, traps entered but not explored, nofollow links not followed), and records what each URL is
(:class:`GroundTruth`). Crawls of the served web are checked against it. It is read off the model
(the web's ``route`` and its pages' links, not their HTML), so it owes nothing to a link extractor.
The web is passed in (:class:`Web`): the routing imports this module, not the other way round.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote, urldefrag, urljoin, urlsplit

from wirescrapy.testing.sampleweb import content, scripts
from wirescrapy.testing.sampleweb.content import GHOSTS, ROLE_ODD, doc_of, original
from wirescrapy.testing.sampleweb.files import FILES, TEXT

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from urllib.parse import SplitResult

    from wirescrapy.testing.sampleweb.content import Route


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
    #: page with scripts that add links -> those links (absolute, as ``links``) that only running its scripts
    #: shows: written by document.write, inserted after load, fetched by XHR, in a hash route's view.
    scripted: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))
    #: pages whose script never ends (a renderer freezes on them).
    endless: frozenset[str] = frozenset()

    @property
    def unique_pages(self) -> frozenset[str]:
        """Pages with duplicates removed: one URL per distinct body."""
        return self.pages - self.duplicates.keys()


class Web(content.Web, Protocol):
    """What the walk asks of the web (a ``SampleWeb``) besides what its pages do."""

    def seeds(self) -> list[str]: ...

    def hosts(self) -> list[str]: ...

    def site_of(self, host: str) -> int | None: ...

    def url(self, host: str | int, path: str = "/") -> str: ...

    def disallowed(self, site: int, path: str) -> bool: ...

    def route(self, site: int, target: str) -> Route: ...


def crawl(web: Web, follow_nofollow: bool = False, rendered: bool = False) -> GroundTruth:
    """The ground truth of ``web``, walked from its seeds (``SampleWeb.ground_truth`` keeps it); ``rendered``:
    the links that only scripts show are followed too."""
    return _Crawl(web, follow_nofollow, rendered).run()


class _Crawl:
    """Breadth-first walk of the model, the reference a real crawl is checked against."""

    def __init__(self, web: Web, follow_nofollow: bool, rendered: bool = False):
        self.web = web
        self.follow_nofollow = follow_nofollow
        self.rendered = rendered
        self.scripted: dict[str, frozenset[str]] = {}
        self.endless: set[str] = set()
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
            ghosts=frozenset(web.url(web.site_with(ROLE_ODD), g) for g in GHOSTS),
            unfollowed=frozenset(self.nofollow_targets - seen),
            robots=MappingProxyType(robots),
            crawl_delays=MappingProxyType({h: delay for h in hosts if robots[h] == "crawl-delay"}),
            sitemaps=MappingProxyType(sitemaps),
            scripted=MappingProxyType(self.scripted),
            endless=frozenset(self.endless),
        )

    def visit(self, url: str) -> Iterable[str]:
        """Record what ``url`` is; return the URLs a crawler goes on to."""
        web = self.web
        split = urlsplit(url)
        site = web.site_of(split.netloc)
        assert site is not None, f"the model links outside itself: {url}"
        target = request_target(split)
        if web.disallowed(site, target):
            self.disallowed.add(url)
            return ()
        route = web.route(site, target)
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
        if kind == "js-asset":
            self.non_html[url] = scripts.ASSETS[route.arg]
            return ()
        if kind == "alias":
            orig_site, orig = original(route)
            path = "/" if orig.arg == 0 else f"/page/{orig.arg}.html"
            self.duplicates[url] = web.origin(orig_site) + path
        if kind == "slow":
            self.slow.add(url)
        if kind == "odd" and route.arg == "big.html":
            self.big.add(url)
        self.pages.add(url)
        doc = doc_of(web, site, route)
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
        follow = list(links) if self.follow_nofollow else [u for u, nofollow in links.items() if not nofollow]
        if kind == "js" and route.arg == scripts.ENDLESS:
            self.endless.add(url)
            self.scripted[url] = frozenset()
        hrefs = content.scripted_links(web, site, route)
        if hrefs:
            scripted = {_resolve(base, href) for href in hrefs} - set(links)
            self.scripted[url] = frozenset(scripted)
            if self.rendered:
                follow += sorted(scripted)
        return follow


def request_target(split: SplitResult) -> str:
    """The path and query of a split URL, as a request line carries them."""
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
