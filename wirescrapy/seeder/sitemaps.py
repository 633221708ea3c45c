"""Sitemaps and robots.rdf: the pages a site lists, with their last-modification times.

Both come down to (URL, last-modified Unix time or None) pairs for ``rules.add_listed``:

* ``parse_sitemap`` reads a sitemap (sitemaps.org): an XML ``urlset`` of ``<url><loc>…<lastmod>…`` or a
  ``sitemapindex`` of ``<sitemap><loc>…`` naming other sitemaps to fetch (``SitemapDocument.is_index``),
  gzip-compressed or not, or a plain-text sitemap (one URL a line).
* ``parse_robots_rdf`` reads WIRE's robots.rdf (thesis §7.2.4: the paths of a site's documents with their
  modification times, for server cooperation). Its format was never fixed, so it is read tolerantly: any
  element with an ``about`` attribute (``rdf:about``) or a ``loc``/``link``/``url``/``path`` child names a
  document, and its date is the first ``date``, ``lastmod``, ``modified``, ``last-modified``, ``updated``
  or ``pubDate`` child or attribute (``dc:date``, ``dcterms:modified`` …: namespaces are ignored). RSS 1.0
  (an RDF), RSS 2.0 and Atom feeds are read the same way. Relative paths are resolved against the file's URL.

Safety: lxml parses with ``resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False`` (no
XXE, no entity expansion, no fetch); at most ``max_bytes`` are parsed (50 MB, the sitemap protocol's limit,
also the most a gzip body is inflated to) and ``max_entries`` entries kept (50,000, likewise). Broken XML
is parsed as far as it goes (``recover=True``); nothing here raises on bad input.
"""

from __future__ import annotations

import codecs
import email.utils
import itertools
import re
import urllib.parse
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import lxml.etree

MAX_ENTRIES = 50_000
MAX_BYTES = 50 * 1024 * 1024

_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_WBITS = 16 + zlib.MAX_WBITS
_PIECE = 64 * 1024
_BLANK = b"\xef\xbb\xbf \t\r\n"
_XML_OPTIONS = {
    "resolve_entities": False,
    "no_network": True,
    "huge_tree": False,
    "load_dtd": False,
    "recover": True,
    "remove_comments": True,
    "remove_pis": True,
}

_URL_NAMES = ("loc", "link", "url", "path")
_DATE_NAMES = ("lastmod", "date", "modified", "last-modified", "lastmodified", "updated", "pubdate")
_W3C_DATE = re.compile(
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?)?)?"
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    url: str
    last_modified: float | None = None  # Unix time


@dataclass
class SitemapDocument:
    kind: str  # urlset, sitemapindex, text, rdf, rss, feed … (the root element's name), or "" if unreadable
    entries: list[SitemapEntry] = field(default_factory=list)
    truncated: bool = False  # more than max_entries entries, or more than max_bytes
    error: str = ""

    @property
    def is_index(self) -> bool:
        """A sitemap index: its entries are sitemaps, not pages."""
        return self.kind == "sitemapindex"

    def pairs(self) -> list[tuple[str, float | None]]:
        return [(e.url, e.last_modified) for e in self.entries]


def robots_rdf_url(site: str) -> str:
    """The robots.rdf URL of a site (``scheme://host[:port]``), fetched when ``WIRE_ADD_ROBOTS_RDF`` is on."""
    return site.rstrip("/") + "/robots.rdf"


def parse_sitemap(
    body: bytes, base_url: str | None = None, *, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES
) -> SitemapDocument:
    """The entries of a sitemap or sitemap index (XML, gzip or plain text), read a piece at a time: a gzip
    body is inflated only as far as it is parsed, and each entry is dropped from the XML tree once read, so
    that neither the inflated text nor its tree is ever held whole."""
    pieces = _Pieces(body, max_bytes)
    stream = iter(pieces)
    head = b""
    for piece in stream:
        head += piece
        if head.lstrip(_BLANK):
            break
    if not head and pieces.error:
        return SitemapDocument("", error=pieces.error)
    rest = itertools.chain([head], stream)
    if not head.lstrip(_BLANK).startswith(b"<"):
        document = _text_sitemap(rest, base_url, max_entries)
    else:
        document = _xml_sitemap(rest, base_url, max_entries)
    document.truncated = document.truncated or pieces.truncated
    document.error = document.error or pieces.error
    return document


def parse_robots_rdf(
    body: bytes, base_url: str | None = None, *, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES
) -> SitemapDocument:
    """The documents listed in a robots.rdf (or an RSS/Atom feed), read tolerantly."""
    data, truncated, error = _inflate(body, max_bytes)
    if error:
        return SitemapDocument("", error=error)
    root, error = _parse_xml(data)
    if root is None:
        return SitemapDocument("", error=error)
    document = SitemapDocument(_local(root.tag), truncated=truncated)
    collector = _Collector(document, base_url, max_entries)
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        url = _attribute(element, ("about",))
        date = _attribute(element, _DATE_NAMES)
        for child in element:
            if not isinstance(child.tag, str):
                continue
            name = _local(child.tag).lower()
            if name in _URL_NAMES and url is None:
                url = child.text if child.text and child.text.strip() else child.get("href")
            elif name in _DATE_NAMES and date is None:
                date = child.text
        if url and url.strip() and not collector.add(url, date):
            break
    return document


def parse_date(text: str | None) -> float | None:
    """Unix time of a W3C datetime (``2004-10-01``, ``2004-10-01T18:23:17+00:00`` …), an RFC 822 date
    (RSS) or a Unix time; None if it is none of them. A date without a zone is UTC."""
    if not text:
        return None
    text = text.strip()
    if text.isdigit() and len(text) >= 9:
        return float(text)
    match = _W3C_DATE.fullmatch(text)
    try:
        if match:
            year, month, day, hour, minute, second, fraction, zone = match.groups()
            moment = datetime(
                int(year),
                int(month or 1),
                int(day or 1),
                int(hour or 0),
                int(minute or 0),
                int(second or 0),
                int((fraction or "0")[:6].ljust(6, "0")),
                tzinfo=UTC,
            )
            return (moment - _offset(zone)).timestamp()
        moment = email.utils.parsedate_to_datetime(text)
    except (ValueError, TypeError, OverflowError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.timestamp()
    except (ValueError, OverflowError):
        return None


class _Collector:
    """Entries resolved, de-duplicated (the latest date kept) and capped."""

    def __init__(self, document: SitemapDocument, base_url: str | None, max_entries: int):
        self.document = document
        self.base_url = base_url
        self.max_entries = max_entries
        self.index: dict[str, int] = {}
        self.seen: set[tuple[str, str | None]] = set()  # entries as written: a repeat costs no parsing

    def add(self, url: str, date: str | None) -> bool:
        """Add one entry; False once the cap is reached."""
        if (url, date) in self.seen:
            return True
        self.seen.add((url, date))
        url = url.strip()
        if self.base_url:
            try:
                url = urllib.parse.urljoin(self.base_url, url)
            except ValueError:
                return True
        when = parse_date(date)
        entries = self.document.entries
        if url in self.index:
            i = self.index[url]
            if when is not None and (entries[i].last_modified or 0) < when:
                entries[i] = SitemapEntry(url, when)
            return True
        if len(entries) >= self.max_entries:
            self.document.truncated = True
            return False
        self.index[url] = len(entries)
        entries.append(SitemapEntry(url, when))
        return True


def _inflate(body: bytes, max_bytes: int) -> tuple[bytes, bool, str]:
    """The body, gunzipped if it is gzip, cut at ``max_bytes``; (data, truncated, error)."""
    pieces = _Pieces(body, max_bytes)
    data = b"".join(pieces)
    if pieces.error and not data:
        return b"", False, pieces.error
    return data, pieces.truncated, ""


class _Pieces:
    """The body, gunzipped if it is gzip, as pieces of at most 64 KiB and at most ``max_bytes`` in all (then
    ``truncated``); a bad gzip stream ends the pieces with ``error`` set. Whatever the ratio, no more than one
    piece is inflated ahead of the reader."""

    def __init__(self, body: bytes, max_bytes: int):
        self.body = body
        self.max_bytes = max_bytes
        self.truncated = False
        self.error = ""

    def __iter__(self) -> Iterator[bytes]:
        body, left = self.body, self.max_bytes
        if body[:2] != _GZIP_MAGIC:
            self.truncated = len(body) > left
            for start in range(0, min(len(body), left), _PIECE):
                yield body[start : min(start + _PIECE, left)]
            return
        inflater = zlib.decompressobj(_GZIP_WBITS)
        pending = body
        try:
            while pending:
                piece = inflater.decompress(pending, _PIECE)
                pending = inflater.unconsumed_tail
                if inflater.eof:  # a gzip file may hold several members; anything else after one is padding
                    pending = inflater.unused_data if inflater.unused_data[:2] == _GZIP_MAGIC else b""
                    inflater = zlib.decompressobj(_GZIP_WBITS)
                if len(piece) > left:
                    self.truncated = True
                    yield piece[:left]
                    return
                left -= len(piece)
                yield piece
        except zlib.error as exc:
            self.error = f"bad gzip data: {exc}"


def _parse_xml(data: bytes):
    parser = lxml.etree.XMLParser(**_XML_OPTIONS)
    try:
        root = lxml.etree.fromstring(data, parser=parser)
    except (lxml.etree.LxmlError, ValueError) as exc:
        return None, f"not XML: {exc}"
    if root is None:
        return None, "not XML"
    return root, ""


def _xml_sitemap(pieces: Iterable[bytes], base_url, max_entries: int) -> SitemapDocument:
    document = SitemapDocument("")
    reader = _EntryReader(document, _Collector(document, base_url, max_entries), max_entries)
    parser = lxml.etree.XMLPullParser(events=("end",), **_XML_OPTIONS)
    try:
        for piece in pieces:
            parser.feed(piece)
            if not reader.read(parser):
                return document
        parser.close()  # ends the elements left open (recover): a cut sitemap keeps its last entry
        reader.read(parser)
    except (lxml.etree.LxmlError, ValueError) as exc:
        document.error = f"not XML: {exc}"
    if not document.kind and not document.error:
        document.error = "not XML"
    return document


class _EntryReader:
    """The ``url`` and ``sitemap`` entries of an XML parse, read as their elements end. Each ended element
    leaves the tree once read (an entry's ``loc`` and ``lastmod`` with the entry), so the tree holds no more
    than the path being parsed. The protocol's cap counts every entry, repeated ones too, and elements are
    capped at ``ELEMENTS_PER_ENTRY`` an entry: a bomb of repeated or foreign elements costs no more than a
    full sitemap to read."""

    ELEMENTS_PER_ENTRY = 10

    def __init__(self, document: SitemapDocument, collector: _Collector, max_entries: int):
        self.document = document
        self.collector = collector
        self.entries_left = max_entries
        self.elements_left = max_entries * self.ELEMENTS_PER_ENTRY

    def read(self, parser) -> bool:
        """The entries ended since the last call; False once a cap is reached."""
        document = self.document
        for _, element in parser.read_events():
            parent = element.getparent()
            if parent is None:
                document.kind = document.kind or _local(element.tag)
                continue
            if not document.kind:
                document.kind = _local(element.getroottree().getroot().tag)
            self.elements_left -= 1
            if self.elements_left < 0:
                document.truncated = True
                return False
            name = _local(element.tag) if isinstance(element.tag, str) else ""
            grandparent = parent.getparent()
            if grandparent is not None and grandparent.getparent() is None and name in ("loc", "lastmod"):
                continue  # read with its entry
            parent.remove(element)
            if grandparent is not None or name not in ("url", "sitemap"):
                continue
            if not self._entry(element):
                return False
        return True

    def _entry(self, element) -> bool:
        self.entries_left -= 1
        if self.entries_left < 0:
            self.document.truncated = True
            return False
        url = date = None
        for child in element:
            name = _local(child.tag) if isinstance(child.tag, str) else ""
            if name == "loc" and url is None:
                url = child.text
            elif name == "lastmod" and date is None:
                date = child.text
        return not url or self.collector.add(url, date)


def _text_sitemap(pieces: Iterable[bytes], base_url, max_entries: int) -> SitemapDocument:
    document = SitemapDocument("text")
    collector = _Collector(document, base_url, max_entries)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    rest, overlong = "", False
    for piece in itertools.chain(pieces, [None]):
        text = rest + (decoder.decode(piece) if piece is not None else decoder.decode(b"", final=True))
        lines = text.lstrip("\ufeff").splitlines(keepends=True)
        rest = lines.pop() if piece is not None and lines and not lines[-1].endswith(("\n", "\r")) else ""
        if overlong and lines:
            lines, overlong = lines[1:], False  # the end of a line too long to be a URL
        if len(rest) > _PIECE:
            rest, overlong = "", True
        for line in lines:
            line = line.strip()
            if line.lower().startswith(("http://", "https://")) and not collector.add(line, None):
                return document
    return document


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _attribute(element, names: tuple[str, ...]) -> str | None:
    for key, value in element.attrib.items():
        if _local(key).lower() in names and value.strip():
            return value
    return None


def _offset(zone: str | None) -> timedelta:
    if not zone or zone.upper() == "Z":
        return timedelta(0)
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    return sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
