"""The ground truth of the real-document web, read from the files nginx serves.

:func:`walk` does what a correct polite crawler does from the sites' home pages, breadth-first, but on
the files instead of over HTTP: a URL is mapped to a file as nginx maps it (the path percent-decoded
under the site's root, the query ignored, a directory URL served by its index file, a directory without
its final slash redirected to it), a page's links are read with lxml's HTML parser, and
the crawler's URL rules are applied with their default values, copied here so that the truth owes
nothing to the crawler's code: the schemes, the extensions fetched, the reject patterns, the link
attributes, rel/meta nofollow, the content dropped with its links (script, svg, ...), the body cut at
the largest file size and the largest depth.

The result has the fields of the sample web's ``GroundTruth`` that a crawl order needs (``seeds``,
``pages``, ``links``, ``nofollow``, ``redirects``, ``disallowed``) plus ``errors`` and ``non_html``;
:func:`pagerank` is the PageRank of the final graph (the pages and the links between them, redirects
followed), by plain power iteration.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urldefrag, urljoin, urlsplit

import lxml.html
import numpy as np
from lxml import etree
from scipy.sparse import csr_matrix

# The crawler's defaults (wirescrapy.config.table), copied: the truth does not import the crawler.
PAGE_EXTENSIONS = {
    "",
    ".html",
    ".htm",
    ".shtml",
    ".xhtml",
    ".txt",
    ".php",
    ".php3",
    ".asp",
    ".aspx",
    ".jsp",
    ".pl",
    ".cgi",
    ".cfm",
}
REJECT_PATTERNS = (
    "login",
    "logout",
    "logoff",
    "register",
    "signin",
    "signup",
    "sign-in",
    "sign-up",
    "password",
    "cart",
    "checkout",
)
ATTRIBUTE = {"a": "href", "area": "href", "frame": "src", "iframe": "src", "link": "href"}  # link attributes
TAGS = (*ATTRIBUTE, "base", "meta")
DISCARD = {"script", "style", "noscript", "template", "object", "embed", "applet", "svg"}
MAX_FILE_SIZE = 400_000
MAX_DEPTH = 15
HTML_EXTENSIONS = {".html", ".htm", ".shtml"}  # served as text/html by nginx's mime.types
_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
_UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


@dataclass(frozen=True)
class Host:
    origin: str  # http://name:port
    root: str
    index: str = "index.html"


@dataclass
class RealTruth:
    seeds: tuple[str, ...]
    pages: set[str] = field(default_factory=set)
    links: dict[str, tuple[str, ...]] = field(default_factory=dict)
    nofollow: dict[str, frozenset[str]] = field(default_factory=dict)
    redirects: dict[str, tuple[int, str]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    non_html: dict[str, str] = field(default_factory=dict)
    too_deep: set[str] = field(default_factory=set)
    disallowed: frozenset[str] = frozenset()  # no robots.txt on these sites

    def site_pages(self, origin: str) -> int:
        return sum(1 for page in self.pages if page.startswith(origin + "/"))


def _parse(body: bytes) -> tuple[list[tuple[str, bool]], str | None, bool]:
    """A page's links in document order, (URL as written, rel=nofollow), its <base href> and whether a
    robots meta tag says nofollow."""
    try:
        root = lxml.html.document_fromstring(body[:MAX_FILE_SIZE])
    except (etree.ParserError, ValueError):
        return [], None, False
    for element in list(root.iter(*DISCARD)):
        if element.getparent() is not None:
            element.drop_tree()
    links, base, meta_nofollow = [], None, False
    for element in root.iter(*TAGS):
        tag = element.tag
        if tag == "base":
            if base is None and (element.get("href") or "").strip():
                base = element.get("href").strip()
        elif tag == "meta":
            if (element.get("name") or "").lower() == "robots":
                meta_nofollow |= "nofollow" in (element.get("content") or "").lower()
        else:
            value = (element.get(ATTRIBUTE[tag]) or "").strip()
            if value:
                links.append((value, "nofollow" in (element.get("rel") or "").lower().split()))
    return links, base, meta_nofollow


def _normalise(url: str) -> str | None:
    """An absolute http URL as the crawler keeps it: no fragment, lower-case host, escapes upper-case
    (unreserved ones decoded), non-ASCII characters percent-encoded as UTF-8; None if not http, or if its
    host or port is no host or port (``http://[user@]host/``, ``http://host:port/``): a browser parses no
    URL there, so the link leads nowhere."""
    url = urldefrag(url)[0]
    try:
        split = urlsplit(url)
        hostname, port = split.hostname, split.port
    except ValueError:
        return None
    if split.scheme not in ("http", "https") or not hostname:
        return None
    netloc = hostname.lower() + (f":{port}" if port and port != 80 else "")
    path = split.path or "/"  # urljoin has removed the dot segments

    def escape(text: str) -> str:
        text = quote(text, safe="/:@!$&'()*+,;=~%?") if not text.isascii() or " " in text else text
        return _ESCAPE.sub(
            lambda m: (
                chr(int(m.group()[1:], 16))
                if chr(int(m.group()[1:], 16)) in _UNRESERVED
                else m.group().upper()
            ),
            text,
        )

    query = f"?{escape(split.query)}" if split.query else ""
    return f"{split.scheme}://{netloc}{escape(path)}{query}"


def _rejected(url: str) -> bool:
    split = urlsplit(url)
    target = (split.path + ("?" + split.query if split.query else "")).lower()
    if any(pattern in target for pattern in REJECT_PATTERNS):
        return True
    last = split.path.rsplit("/", 1)[-1]
    extension = posixpath.splitext(last)[1].lower()
    if extension[1:].isdigit():
        extension = ""
    return extension not in PAGE_EXTENSIONS


def page_links(body: bytes, url: str) -> tuple[list[str], set[str]]:
    """The absolute links of a page (unique, in order) and those of them not to be followed. An href that
    is no URL is no link, and a ``<base href>`` that is none is ignored, as a browser does."""
    found, base, meta_nofollow = _parse(body)
    base = (_join(url, base) or url) if base else url
    links: dict[str, bool] = {}
    for href, nofollow in found:
        joined = _join(base, href)
        resolved = _normalise(joined) if joined is not None else None
        if resolved is not None:
            links[resolved] = links.get(resolved, True) and (nofollow or meta_nofollow)
    return list(links), {link for link, nofollow in links.items() if nofollow}


def _join(base: str, href: str) -> str | None:
    """``href`` resolved against ``base``; None if urllib cannot split it (``http://[user@]host/``)."""
    try:
        return urljoin(base, href)
    except ValueError:
        return None


def _serve(host: Host, url: str) -> tuple[str, object]:
    """What nginx answers for ``url``: ("page", path), ("file", path), ("redirect", URL) or ("error", 404)."""
    split = urlsplit(url)
    path = posixpath.normpath(unquote(split.path or "/"))
    local = os.path.join(host.root, path.lstrip("/"))
    if os.path.isdir(local):
        if not split.path.endswith("/"):
            return "redirect", f"{host.origin}{split.path}/" + (f"?{split.query}" if split.query else "")
        local = os.path.join(local, host.index)
    if not os.path.isfile(local):
        return "error", 404
    kind = "page" if posixpath.splitext(local)[1].lower() in HTML_EXTENSIONS else "file"
    return kind, local


def walk(hosts: list[Host]) -> RealTruth:
    """Breadth-first from every host's home page, over the files."""
    by_origin = {host.origin: host for host in hosts}
    seeds = tuple(host.origin + "/" for host in hosts)
    truth = RealTruth(seeds)
    depth = dict.fromkeys(seeds, 0)
    queue = deque(seeds)
    while queue:
        url = queue.popleft()
        split = urlsplit(url)
        host = by_origin.get(f"{split.scheme}://{split.netloc}")
        if host is None:
            continue  # another web: never fetched here
        kind, value = _serve(host, url)
        nexts: list[str] = []
        if kind == "redirect":
            truth.redirects[url] = (301, value)
            nexts = [value]
        elif kind == "error":
            truth.errors[url] = value
        elif kind == "file":
            truth.non_html[url] = posixpath.splitext(value)[1]
        else:
            truth.pages.add(url)
            links, nofollow = page_links(Path(value).read_bytes(), url)
            truth.links[url] = tuple(links)
            if nofollow:
                truth.nofollow[url] = frozenset(nofollow)
            nexts = [link for link in links if link not in nofollow]
        for link in nexts:
            if link in depth or _rejected(link):
                continue
            if depth[url] + 1 > MAX_DEPTH:
                truth.too_deep.add(link)
                continue
            depth[link] = depth[url] + 1
            queue.append(link)
    truth.too_deep -= depth.keys()
    return truth


def with_port(truth: RealTruth, port: int) -> RealTruth:
    """``truth`` walked on port-less origins (http://host/), its URLs given ``port``: the walk reads the files
    once, whatever port nginx gets (``RealWeb``'s cache)."""
    pattern = re.compile(r"^(https?://[^/:]+)(?=/)")

    def move(url: str) -> str:
        return pattern.sub(lambda m: f"{m.group(1)}:{port}", url, count=1)

    def moves(urls):
        return type(urls)(move(url) for url in urls)

    return RealTruth(
        seeds=moves(truth.seeds),
        pages=moves(truth.pages),
        links={move(url): moves(links) for url, links in truth.links.items()},
        nofollow={move(url): moves(links) for url, links in truth.nofollow.items()},
        redirects={move(url): (status, move(target)) for url, (status, target) in truth.redirects.items()},
        errors={move(url): status for url, status in truth.errors.items()},
        non_html={move(url): kind for url, kind in truth.non_html.items()},
        too_deep=moves(truth.too_deep),
    )


def pagerank(truth: RealTruth, q: float = 0.15, tolerance: float = 1e-12) -> dict[str, float]:
    """PageRank of the final graph (random jump ``q``, dangling pages spread evenly), summing to 1."""
    urls = sorted(truth.pages)
    index = {url: i for i, url in enumerate(urls)}

    def target(link: str) -> int | None:
        for _ in range(20):
            if link not in truth.redirects:
                return index.get(link)
            link = truth.redirects[link][1]
        return None

    rows, cols = [], []
    for url in urls:
        skip = truth.nofollow.get(url, frozenset())
        targets = {target(link) for link in truth.links.get(url, ()) if link not in skip} - {None, index[url]}
        rows += [index[url]] * len(targets)
        cols += sorted(targets)
    n = len(urls)
    matrix = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    out = np.asarray(matrix.sum(axis=1)).ravel()
    scale = np.divide(1.0, out, out=np.zeros(n), where=out > 0)
    transposed = (matrix.multiply(scale[:, None])).T.tocsr()
    rank = np.full(n, 1.0 / n)
    for _ in range(10_000):
        dangling = rank[out == 0].sum()
        new = (1 - q) * (transposed @ rank + dangling / n) + q / n
        done = np.abs(new - rank).sum() < tolerance
        rank = new
        if done:
            break
    return dict(zip(urls, (rank / rank.sum()).tolist()))
