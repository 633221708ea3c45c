"""What the harvester and the gatherer hand each other: one :class:`Fetch` per network access.

A ``Fetch`` is the outcome of one request — a page, a robots.txt or a sitemap — whatever it was: a
response of any status, a download stopped after the headers, or a failure with no response at all. What
the server said and what we concluded are kept apart: ``status`` is the HTTP status the server sent (0 when
none came, or when what came is no HTTP status), ``error`` our :class:`FetchError`, if any — a server cannot
choose our error kinds by sending a status. The harvester fills in what the network said; the gatherer's
pipelines (``wirescrapy.gatherer.pipelines``) add what they compute, in order: ``page`` (a
:class:`ParsedPage` with its :class:`Link` s), ``original`` and ``changed`` (content-seen and page store),
``links`` (link graph), and write the metadata.

Scrapy keeps a project's items in ``items.py``; these are plain dataclasses (Scrapy accepts any object as an
item), so that the harvester and the gatherer depend on this module and not on each other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple


class Link(NamedTuple):
    """A link found in a page (a tuple: pages have hundreds, and tuples are built fastest)."""

    url: str  # absolute http(s) URL, without fragment
    text: str  # anchor text (``alt`` for ``area`` and image links), whitespace collapsed
    tag: str  # the element it came from: a, area, frame, iframe, link, base...
    position: int  # order among the page's links, from 0
    nofollow: bool = False  # rel="nofollow" (kept only when WIRE_OBEY_NOFOLLOW is off)


@dataclass(slots=True)
class ParsedPage:
    """What the gatherer keeps of a page."""

    url: str  # the response URL
    base_url: str  # the URL relative links were resolved against
    encoding: str  # the page's encoding (Python codec name)
    is_html: bool  # False for text/plain: no links, the document is the text
    title: str = ""
    description: str = ""  # <meta name=description>
    keywords: str = ""  # <meta name=keywords>
    links: list[Link] = field(default_factory=list)
    document: bytes = b""  # the cleaned page, UTF-8, at most WIRE_MAX_STORED_SIZE bytes
    text: str = ""  # the visible text, whitespace collapsed
    truncated: bool = False  # the document was cut at WIRE_MAX_STORED_SIZE
    nofollow: bool = False  # robots meta nofollow/none: the page's links are not to be followed
    noindex: bool = False  # robots meta noindex/none
    original_size: int = 0  # bytes of the body as downloaded
    language: str | None = None  # ISO 639-1 code of its text, "" too short to tell (None: not identified yet)
    # The text's shingle hashes for its near-duplicate fingerprint (``gatherer/simhash.py``: a numpy array),
    # computed by a parse worker; None: not computed, the near-duplicate step computes them. Derived from
    # ``text``: pages compare (and print) without it.
    shingles: object = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class Exchange:
    """One HTTP exchange as it went over the network, for an archive (WARC): the request as sent and the
    response as received, before Scrapy decoded its ``Content-Encoding``. Header names and values are bytes;
    Scrapy keeps no raw status line, so the reason phrase is the status's standard one."""

    method: bytes
    request_headers: list[tuple[bytes, bytes]]
    protocol: str  # "HTTP/1.1"
    status: int  # as sent, whatever it is
    headers: list[tuple[bytes, bytes]]  # the response's, in the order Scrapy keeps them
    body: bytes  # as received: still compressed when it came so; cut where the download was stopped


class FetchError(enum.IntEnum):
    """Why a fetch has no usable response; stored in the document record's ``error`` (0: none)."""

    DNS = 1  # the host name did not resolve
    REFUSED = 2  # connection refused
    TIMEOUT = 3  # connecting or answering took longer than WIRE_CONNECTION_TIMEOUT
    CONNECTION_LOST = 4  # the connection ended before the response was complete
    BLOCKED_IP = 5  # the host resolves to a WIRE_BLOCKED_IPS address
    ROBOTS_DISALLOWED = 6  # robots.txt forbids it (no network access to the page)
    REDIRECT_LOOP = 7  # a redirect back to a URL of the same chain
    TOO_MANY_REDIRECTS = 8  # a chain longer than WIRE_MAX_REDIRECTS hops
    OTHER = 9  # any other failure (logged with its message)
    BAD_STATUS = 10  # a response whose status is no HTTP status (not 100-999, or not a number)
    GATHERER = 11  # a gatherer pipeline failed on the fetch (the step and its exception are logged)
    RENDER_FAILED = (
        12  # Splash was down or refused the render: the raw HTML was kept, rendered at a later visit
    )
    RENDER_TIMEOUT = (
        13  # Splash gave up on the page or froze on it: the raw HTML was kept, never rendered again
    )
    HEADERS_TOO_LARGE = 14  # more than WIRE_MAX_HEADER_SIZE bytes or WIRE_MAX_HEADERS lines of headers

    @property
    def label(self) -> str:
        return self.name.lower()


class Kind(enum.Enum):
    PAGE = "page"
    ROBOTS = "robots"  # a site's /robots.txt
    SITEMAP = "sitemap"  # a sitemap named in robots.txt


@dataclass(slots=True, repr=False)
class Fetch:
    """One network access and what the gatherer made of it. Its ``repr``, which Scrapy logs with an item it
    drops or fails on, names the access and sizes the body: a page's bytes never go into a log."""

    kind: Kind
    url: str  # the URL requested (canonical)
    doc_id: int  # 0: not known yet (a redirect follow-up, a robots.txt); the pipeline finds or adds it
    site_id: int
    depth: int
    started: float  # Unix seconds, request sent
    ended: float  # Unix seconds, response complete or failure
    status: int = 0  # HTTP status as sent, 100-999; 0: none (no response, or a BAD_STATUS)
    error: FetchError | None = None
    message: str = ""  # the failure's text, for the log
    mime: str = ""  # media type of the Content-Type header, lower case, no parameters
    content_type: str = ""  # the whole header (charset) for the parser
    body: bytes = b""  # what was kept: at most WIRE_MAX_FILE_SIZE bytes
    raw_length: int = 0  # bytes received
    truncated: bool = False  # cut at WIRE_MAX_FILE_SIZE
    mime_refused: bool = False  # stopped after the headers: not an accepted MIME type
    latency: float = 0.0  # seconds from the request to the response headers
    last_modified: float = 0.0  # Last-Modified header, Unix seconds, 0 none
    etag: bytes = b""  # the ETag header exactly as sent (a revisit sends it back in If-None-Match)
    last_modified_header: bytes = b""  # the Last-Modified header exactly as sent (for If-Modified-Since)
    ip: str = ""  # the address the response came from
    redirect: str = ""  # canonical target of a 3xx with a Location the seeder accepts
    hops: int = 0  # redirects followed to get here
    origin: str = ""  # robots.txt and sitemaps: the site they are for (a redirect may lead elsewhere)
    listed: list[tuple[str, float | None]] = field(default_factory=list)  # a sitemap's (URL, last-modified)
    # -- rendering through Splash (WIRE_RENDER_JS) --
    render: int = 0  # the page's RenderState after this fetch (collection.metadata): 0 not rendered
    render_follow_up: bool = False  # a render after this batch's raw fetch of the page, already recorded
    raw_body: bytes = b""  # a render: the raw HTML the site sent (``body`` is the rendered DOM)
    script_links: list[str] = field(
        default_factory=list
    )  # a render: links of a hash-routed page's other views
    followed: bool = (
        False  # a redirect the harvester followed (robots.txt: its rules wait for the chain's end)
    )
    exchange: Exchange | None = None  # the bytes on the wire, kept only when the harvest writes WARC
    # -- filled by the pipelines --
    page: ParsedPage | None = None
    original: int = 0  # the doc-id whose content this is (itself, or the original of a duplicate)
    changed: bool = False  # the content differs from the previous visit's
    links: list[int] = field(default_factory=list)  # doc-ids linked (pages only), in page order
    raw_page: ParsedPage | None = None  # a render: the raw HTML parsed (content-seen, links it gained)
    link_decisions: list | None = (
        None  # the seeder rules' Decision for the first links of page.links (parse worker)
    )
    render_links: int = 0  # a render: links found only in the rendered DOM
    render_wanted: bool = False  # a raw page that looks script-built, on a site still being tried (auto)

    def __repr__(self) -> str:
        error = f" error={self.error.label}" if self.error is not None else ""
        return (
            f"<Fetch {self.kind.value} {self.url} doc_id={self.doc_id} status={self.status}{error} "
            f"body={len(self.body)} bytes links={len(self.links)}>"
        )

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def not_modified(self) -> bool:
        """A 304 to a conditional revisit: the stored page is still the page (no body came)."""
        return self.status == 304 and self.error is None

    @property
    def responded(self) -> bool:
        """An HTTP response came (a redirect error is a response whose target is refused)."""
        return self.error is None or self.error in _RESPONSE_ERRORS

    @property
    def duration(self) -> float:
        return max(self.ended - self.started, 0.0)


_RESPONSE_ERRORS = frozenset(
    {
        FetchError.REDIRECT_LOOP,
        FetchError.TOO_MANY_REDIRECTS,
        FetchError.BAD_STATUS,
        FetchError.GATHERER,
        FetchError.RENDER_FAILED,
        FetchError.RENDER_TIMEOUT,
    }
)
