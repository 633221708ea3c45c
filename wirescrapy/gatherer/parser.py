"""The gatherer's parser (WIRE §7.2.3): links, cleaned document and text of a page, in one parse.

WIRE parsed pages with an event-oriented parser tolerant of malformed markup, and kept a cleaned copy of
each page: document structure, logical and physical formatting (``gatherer/keep``) without colours, fonts,
widths and other visual markup, and without scripts and styles (``gatherer/discard``) — a fraction of the
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

Links are resolved against the first valid ``<base href>`` or the page's URL as a browser resolves them
(``resolve.py``: the WHATWG URL Standard, by ada); only http and https links are kept, without their
fragment, and each distinct href of a page is resolved once. Canonicalisation beyond that is the seeder's job.

Where the time goes: ``python -m benchmarks.gatherer --steps``.
"""

from __future__ import annotations

from collections.abc import Iterable

from w3lib.encoding import to_unicode

from wirescrapy.config import WireConfig, default_settings
from wirescrapy.gatherer._scanner import Scanner
from wirescrapy.gatherer.encoding import check_charset, detect_encoding
from wirescrapy.gatherer.resolve import Resolver
from wirescrapy.items import Link, ParsedPage

__all__ = ["Parser"]


# Builds a Link without the Python-level __new__ of a NamedTuple, a large part of its cost, for every link of
# every page.
_new_link = tuple.__new__

_MISSING = object()


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
        self._scanner = Scanner(
            self.link_attributes, sorted(self.keep_tags), sorted(self.keep_attributes), sorted(self.discard)
        )

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
        return ParsedPage(
            url=url,
            base_url=url,
            encoding=encoding,
            is_html=False,
            document=document,
            text=text,
            truncated=truncated,
            original_size=len(body),
        )

    def _parse_html(self, body: bytes, url: str, content_type: str | None) -> ParsedPage:
        encoding, skip = detect_encoding(body, content_type, self.default_charset)
        page = ParsedPage(url=url, base_url=url, encoding=encoding, is_html=True, original_size=len(body))
        document, page.text, page.title, base, found, metas = self._scanner.scan(_utf8(body, skip, encoding))
        for name, content in metas:
            self._read_meta(name, content, page)
        if base is not None:
            page.base_url = Resolver(url, encoding).resolve(base) or url
        if not (page.nofollow and self.obey_nofollow):
            page.links = self._resolve_links(found, Resolver(page.base_url, encoding))
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

    def _resolve_links(self, found: list, resolver: Resolver) -> list[Link]:
        """The scanner's ``(tag, href, text, nofollow)`` as Links: run for every link of every page, so
        lean."""
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
