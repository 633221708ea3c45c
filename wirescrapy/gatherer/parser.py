"""The gatherer's parser (WIRE §7.2.3): links, cleaned document and text of a page, in one parse.

WIRE parsed pages with an event-oriented parser tolerant of malformed markup, and kept a cleaned copy of
each page: document structure, logical and physical formatting (``gatherer/keep``) without colours, fonts,
widths and other visual markup, and without scripts and styles (``gatherer/discard``) — about 30% of the
original size. It passed the page's links to the seeder.

Here the parser is such an event-driven scanner, written in C (``_scanner.c``, built by ``setup.py``): it
tokenizes as the HTML Standard's tokenizer does, so any input is read to its end, and handles each tag and
piece of text as it meets it, writing the document, the text, the title and the links in the same pass,
without building a tree. A page goes through these steps:

1. decode (``encoding.py``: BOM, header, meta, UTF-8 detection, default charset) to valid UTF-8 bytes: a
   UTF-8 page is only checked, others are decoded and encoded; invalid bytes become U+FFFD;
2. the scanner's one pass (see ``_scanner.c`` for what it keeps and how it stays tolerant without a tree):
   the cleaned document (the tags of ``WIRE_KEEP_TAGS`` with the attributes of ``WIRE_KEEP_ATTRIBUTES``,
   no comments, the content of ``WIRE_DISCARD_CONTENT`` elements left out, white space collapsed outside
   ``<pre>``), the visible text (block elements separate words, inline ones do not), the title, the first
   ``<base href>``, the ``<meta name>`` tags, and each link attribute's value with its anchor text;
3. here, in Python: the robots ``<meta>``, the base URL, and the links resolved;
4. the cleaned document is cut at ``WIRE_MAX_STORED_SIZE`` bytes on a character boundary and never inside a
   tag or an entity (the tags left open by the cut are not closed: any HTML parser reads it).

Links are resolved against the first valid ``<base href>`` or the page's URL and made safe with w3lib
(``urljoin`` then ``safe_url_string``: the path is percent-encoded as UTF-8, the query in the page's
encoding, as the WHATWG URL Standard does); only http and https links are kept, without their fragment.
Canonicalisation beyond that is the seeder's job. Those two calls take ten times what the rest of a link
takes: the references they would return unchanged (most: ``../library/os.html``, ``https://example.org/x``)
are resolved without them, and each distinct href of a page is resolved once.

Where the time goes: ``python benchmarks/gatherer.py --steps``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from urllib.parse import urljoin

from w3lib.encoding import to_unicode
from w3lib.url import safe_url_string

from wirescrapy.config import WireConfig, default_settings
from wirescrapy.gatherer._scanner import Scanner
from wirescrapy.gatherer.encoding import check_charset, detect_encoding
from wirescrapy.items import Link, ParsedPage

__all__ = ["Parser"]


# Builds a Link without the Python-level __new__ of a NamedTuple: half the cost, for every link of every page.
_new_link = tuple.__new__

_MISSING = object()
_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Relative references that urljoin + safe_url_string leave as they are (checked by the fuzz tests): resolved
# by a copy of urljoin's algorithm, ten times faster than the two calls.
_PLAIN_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&()*+,=:@/?%"
_PLAIN_REFERENCE = re.compile(f"[{re.escape(_PLAIN_CHARACTERS)}]+")
# Absolute URLs that urljoin + safe_url_string return unchanged (checked by the fuzz tests): lower-case scheme
# and ASCII host, no user info, a port without leading zero, a path and query of the plain characters. The
# two calls on them took half the time of resolving python3-doc's links (a page's links to other sites).
_PLAIN_ABSOLUTE = re.compile(
    rf"https?://[a-z0-9.\-]++(?::([1-9][0-9]{{0,4}}))?+(?:/[{re.escape(_PLAIN_CHARACTERS)}]*+)?+"
)
_WHITESPACE = re.compile(r"\s")


class _Resolver:
    """Resolves a page's hrefs against its base URL; ``cache`` is for the caller: pages repeat their links."""

    __slots__ = (
        "ascii_query",
        "base",
        "cache",
        "directory",
        "encoding",
        "folders",
        "joined",
        "origin",
        "path",
        "plain",
        "query",
    )

    def __init__(self, base: str, encoding: str):
        base = base.split("#", 1)[0]
        if base.startswith(("http://", "https://")):
            try:
                base = safe_url_string(base, encoding)
            except (ValueError, UnicodeError):
                pass
        self.base = base
        self.encoding = encoding
        self.ascii_query = _writes_ascii(encoding)
        self.cache: dict[str, str | None] = {}  # href up to its first "#" -> resolve(href), kept by the caller
        self.joined: dict[str, str | None] = {}  # href without fragment -> URL
        scheme_end = base.find("://")
        path_start = base.find("/", scheme_end + 3)
        query_start = base.find("?")
        if path_start < 0 or (0 <= query_start < path_start):
            path_start = query_start if query_start >= 0 else len(base)
        self.origin = base[:path_start]
        path_end = query_start if query_start >= 0 else len(base)
        self.path = base[path_start:path_end]
        self.query = base[path_end + 1 :] if query_start >= 0 else ""
        self.directory = self.path.split("/")
        if self.directory[-1]:
            del self.directory[-1]
        # The base's folders, as urljoin keeps them (without empty segments); None if it has dot segments.
        self.folders = [folder for folder in self.directory if folder]
        if "." in self.folders or ".." in self.folders:
            self.folders = None
        # urljoin splits ';params' off the base path: such bases take the slow path.
        self.plain = ";" not in base and base.startswith(("http://", "https://"))

    def resolve(self, href: str) -> str | None:
        """The absolute http(s) URL of ``href`` without its fragment, or None if it is not one."""
        # WHATWG URL parsing: leading and trailing C0 controls and spaces go, tabs and newlines anywhere go.
        href = href.strip(_C0_AND_SPACE)
        if "\t" in href or "\n" in href or "\r" in href:
            href = href.translate(_TAB_NEWLINE)
        hash_at = href.find("#")
        if hash_at >= 0:
            href = href[:hash_at]
        if not href:
            return None  # a link to the page itself, or to a place in it
        try:
            return self.joined[href]
        except KeyError:
            url = self.joined[href] = self._join(href)
            return url

    def _join(self, href: str) -> str | None:
        scheme = _SCHEME.match(href)
        if scheme is None:
            if self.plain and not href.startswith("//") and _PLAIN_REFERENCE.fullmatch(href):
                return self._join_plain(href)
        elif _is_plain_absolute(href) and (self.ascii_query or "?" not in href):
            return href  # safe_url_string encodes the query in the page's encoding: UTF-16 turns "a" into "a%00"
        elif scheme.group().lower() not in ("http:", "https:"):
            return None  # javascript:, mailto:, data:, tel:, ftp:...
        try:
            url = safe_url_string(urljoin(self.base, href), self.encoding)
        except (ValueError, UnicodeError):
            return None
        hash_at = url.find("#")
        if hash_at >= 0:
            url = url[:hash_at]
        if not url.startswith(("http://", "https://")) or _WHITESPACE.search(url):
            return None
        host = url[url.find("//") + 2 :]
        if not host or host[0] in "/?":
            return None
        return url

    def _join_plain(self, href: str) -> str:
        """urljoin's algorithm for a reference without scheme, authority, fragment or ';'."""
        query_at = href.find("?")
        if query_at >= 0:
            path, query = href[:query_at], href[query_at + 1 :]
        else:
            path, query = href, ""
        if not path:
            # urljoin keeps the base path, and the base query too when the reference's is empty
            query = query or self.query
            if not query:
                return self.origin + self.path  # safe_url_string adds no "/" to a bare origin...
            return self.origin + (self.path or "/") + "?" + query  # ...but adds it before a query
        relative = self._join_relative(path)
        if relative is not None:
            return self.origin + relative + ("?" + query if query else "")
        if path[0] == "/":
            segments = path.split("/")
        else:
            segments = self.directory + path.split("/")
            segments[1:-1] = filter(None, segments[1:-1])
        resolved: list[str] = []
        for segment in segments:
            if segment == "..":
                if resolved:
                    resolved.pop()
            elif segment != ".":
                resolved.append(segment)
        if segments[-1] in (".", ".."):
            resolved.append("")
        joined = "/".join(resolved) or "/"
        if joined[0] != "/":
            joined = "/" + joined
        return self.origin + joined + ("?" + query if query else "")

    def _join_relative(self, path: str) -> str | None:
        """The resolved path of the commonest references, "../../x/y.html", "x/y.html", "./x"; else None.

        Leading "../" and "./" go up from, or stay in, the base's folder; the rest must hold no dot segment
        and no empty one, which urljoin would remove.
        """
        start = up = 0
        while True:
            if path.startswith("../", start):
                up += 1
                start += 3
            elif path.startswith("./", start):
                start += 2
            else:
                break
        rest = path[start:]
        folders = self.folders
        if folders is None or rest[:1] in (".", "/") or "/." in rest or "//" in rest:
            return None
        return "/" + "/".join([*folders[: max(len(folders) - up, 0)], rest])


class Parser:
    """Parses downloaded pages; configured once, then ``parse`` is pure and thread-compatible."""

    def __init__(
        self,
        *,
        link_attributes: Iterable[str] = (),
        keep_tags: Iterable[str] = (),
        keep_attributes: Iterable[str] = (),
        discard_content: Iterable[str] = (),
        max_stored_size: int = 300_000,
        default_charset: str = "windows-1252",
        obey_nofollow: bool = True,
    ):
        if max_stored_size < 1:
            raise ValueError(f"max_stored_size must be >= 1, got {max_stored_size!r}")
        self.max_stored_size = max_stored_size
        self.default_charset = check_charset(default_charset)
        self.obey_nofollow = obey_nofollow
        self.link_attributes: dict[str, tuple[str, ...]] = {}
        for pair in link_attributes:
            tag, _, attribute = pair.strip().lower().partition("/")
            if not tag or not attribute:
                raise ValueError(f"{pair!r} is not a tag/attribute pair such as 'a/href'")
            self.link_attributes[tag] = self.link_attributes.get(tag, ()) + (attribute,)
        self.discard = frozenset(t.lower() for t in discard_content) | {"script", "style"}
        self.keep_tags = frozenset(t.lower() for t in keep_tags) - self.discard
        self.keep_attributes = frozenset(a.lower() for a in keep_attributes)
        self._scanner = Scanner(self.link_attributes, sorted(self.keep_tags), sorted(self.keep_attributes),
                                sorted(self.discard))

    @classmethod
    def from_config(cls, config: WireConfig) -> Parser:
        return cls(
            link_attributes=config.link_attributes,
            keep_tags=config.keep_tags,
            keep_attributes=config.keep_attributes,
            discard_content=config.discard_content,
            max_stored_size=config.max_stored_size,
            default_charset=config.default_charset,
            obey_nofollow=config.obey_nofollow,
        )

    @classmethod
    def from_settings(cls, settings) -> Parser:
        return cls.from_config(WireConfig.from_settings(settings))

    @classmethod
    def default(cls) -> Parser:
        """A parser with the WIRE_* defaults."""
        defaults = default_settings()
        return cls(
            link_attributes=defaults["WIRE_LINK_ATTRIBUTES"],
            keep_tags=defaults["WIRE_KEEP_TAGS"],
            keep_attributes=defaults["WIRE_KEEP_ATTRIBUTES"],
            discard_content=defaults["WIRE_DISCARD_CONTENT"],
            max_stored_size=defaults["WIRE_MAX_STORED_SIZE"],
            default_charset=defaults["WIRE_DEFAULT_CHARSET"],
            obey_nofollow=defaults["WIRE_OBEY_NOFOLLOW"],
        )

    def parse(self, body: bytes, url: str, headers_content_type: str | None = None) -> ParsedPage:
        """Parse a page downloaded from ``url`` (the final URL, after redirects)."""
        if not isinstance(body, bytes):
            if not isinstance(body, (bytearray, memoryview)):
                raise TypeError(f"body must be bytes, got {type(body).__name__}")
            body = bytes(body)
        if not isinstance(url, str):
            raise TypeError(f"url must be str, got {type(url).__name__}")
        if _is_plain_text(headers_content_type):
            return self._parse_text(body, url, headers_content_type)
        return self._parse_html(body, url, headers_content_type)

    def _parse_text(self, body: bytes, url: str, content_type: str | None) -> ParsedPage:
        encoding, skip = detect_encoding(body, content_type, self.default_charset, html=False)
        text = to_unicode(body[skip:], encoding)
        document, truncated = _truncate(text.encode("utf-8"), self.max_stored_size, html=False)
        return ParsedPage(url=url, base_url=url, encoding=encoding, is_html=False, document=document,
                          text=text, truncated=truncated, original_size=len(body))

    def _parse_html(self, body: bytes, url: str, content_type: str | None) -> ParsedPage:
        encoding, skip = detect_encoding(body, content_type, self.default_charset)
        page = ParsedPage(url=url, base_url=url, encoding=encoding, is_html=True, original_size=len(body))
        document, page.text, page.title, base, found, metas = self._scanner.scan(_utf8(body, skip, encoding))
        for name, content in metas:
            self._read_meta(name, content, page)
        if base is not None:
            page.base_url = _Resolver(url, encoding).resolve(base) or url
        if not (page.nofollow and self.obey_nofollow):
            page.links = self._resolve_links(found, _Resolver(page.base_url, encoding))
        page.document, page.truncated = _truncate(document, self.max_stored_size, html=True)
        return page

    @staticmethod
    def _read_meta(name: str, content: str, page: ParsedPage) -> None:
        name = name.strip().lower()
        if name == "robots":
            directives = {d.strip() for d in content.lower().split(",")}
            if "none" in directives:
                page.nofollow = page.noindex = True
            page.nofollow = page.nofollow or "nofollow" in directives
            page.noindex = page.noindex or "noindex" in directives
        elif name == "description" and not page.description:
            page.description = " ".join(content.split())
        elif name == "keywords" and not page.keywords:
            page.keywords = " ".join(content.split())

    def _resolve_links(self, found: list, resolver: _Resolver) -> list[Link]:
        """The scanner's ``(tag, href, text, nofollow)`` as Links: run for every link of every page, so lean."""
        links: list[Link] = []
        append = links.append
        obey = self.obey_nofollow
        cache = resolver.cache
        resolve = resolver.resolve
        for tag, href, text, nofollow in found:
            if nofollow and obey:
                continue
            # What follows the first "#" never changes the URL: "os.html#os.stat" and "os.html#os.open" are
            # resolved once, as "os.html#" (whose "#" keeps any white space before it, as the href would).
            hash_at = href.find("#")
            if hash_at >= 0:
                href = href[: hash_at + 1]
            target = cache.get(href, _MISSING)
            if target is _MISSING:
                target = cache[href] = resolve(href)
            if target is not None:
                append(_new_link(Link, (target, text, tag, len(links), nofollow)))
        return links


def _utf8(body: bytes, skip: int, encoding: str) -> bytes:
    """``body`` after its byte-order mark as valid UTF-8: what the scanner reads."""
    if encoding == "utf-8":
        source = body[skip:] if skip else body
        try:
            source.decode("utf-8")
        except UnicodeDecodeError:
            source = source.decode("utf-8", "replace").encode("utf-8")
        return source
    return to_unicode(body[skip:], encoding).encode("utf-8", "replace")


@functools.cache
def _writes_ascii(encoding: str) -> bool:
    """True if ``encoding`` writes the characters of plain references as ASCII does (UTF-16, UTF-7 do not)."""
    try:
        return _PLAIN_CHARACTERS.encode(encoding) == _PLAIN_CHARACTERS.encode("ascii")
    except (LookupError, UnicodeError):
        return False


def _is_plain_absolute(href: str) -> bool:
    """True if ``href`` is an http(s) URL that urljoin + safe_url_string would return as it is."""
    plain = _PLAIN_ABSOLUTE.fullmatch(href)
    if plain is None or href[-1] == "?":  # urljoin drops an empty query's "?"
        return False
    port = plain.group(1)
    return port is None or len(port) < 5 or port <= "65535"


def _is_plain_text(content_type: str | None) -> bool:
    return bool(content_type) and content_type.split(";", 1)[0].strip().lower() == "text/plain"


def _truncate(document: bytes, limit: int, html: bool) -> tuple[bytes, bool]:
    """``document`` cut to at most ``limit`` bytes, on a character boundary, never inside a tag or entity."""
    if len(document) <= limit:
        return document, False
    cut = limit
    while cut > 0 and document[cut] & 0xC0 == 0x80:  # a UTF-8 continuation byte
        cut -= 1
    if html:
        tag_start = document.rfind(b"<", 0, cut)
        if tag_start > document.rfind(b">", 0, cut):
            cut = tag_start
        entity_start = document.rfind(b"&", max(0, cut - 12), cut)
        if entity_start >= 0 and document.find(b";", entity_start, cut) < 0:
            cut = entity_start
    return document[:cut], True
