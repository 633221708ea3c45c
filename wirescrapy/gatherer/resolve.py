"""A page's links resolved as a browser resolves them: each href against the base URL, by the WHATWG URL
Standard.

The Standard's parser is ada (``ada_url``, the URL parser of Node.js), so an href means here what it means
in a browser: a backslash is a slash (``\\x`` is ``/x``), ``///host/path`` names a host, ``http:path`` and
``http:/path`` are relative to a base of the same scheme, hosts are mapped by UTS #46 (IDNA 2008:
``faß.example`` is ``xn--fa-hia.example``), an IPv4 address in any numeric form is written dotted-decimal
(``0xc0.0250.01`` is ``192.168.0.1``), dot segments go (``%2e`` ones too), and the path and query are
percent-encoded as the Standard says. Only http and https URLs are links. The fragment never changes the URL
and is dropped; an href that is empty or only a fragment is a link to the page itself, so none.

The query is encoded in the page's encoding, as the Standard says (UTF-8 for a UTF-16 page): ada knows only
UTF-8, so a non-ASCII query of a page in another encoding is percent-encoded here first.

Most hrefs (``../library/os.html``, ``https://example.org/x``) need none of the Standard's harder steps: they
are resolved by a few string operations that give what ada gives (tests/test_parser_fuzz.py checks it), and
ada takes the rest.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import quote_from_bytes

import ada_url

from wirescrapy.url import ends_in_number

__all__ = ["Resolver"]

_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
_ASCII = bytes(range(0x80))
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Characters the Standard leaves as they are in a path and a query of an http(s) URL (no percent-encoding,
# no "\", no "#"). "%" is among them: an escape stays as it is, but "%2e" is a dot, so hrefs holding "%2"
# take ada's way.
_PLAIN_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&()*+,=:@/?%"
_PLAIN_REFERENCE = re.compile(f"[{re.escape(_PLAIN_CHARACTERS)}]+")
# Absolute URLs that the Standard leaves as they are: lower-case scheme and ASCII host (not one that is an
# IPv4 address, not punycode, which is checked), a port that is not the default and has no leading zero,
# a path of plain characters with no dot segment.
_PLAIN_ABSOLUTE = re.compile(
    rf"(https?)://([a-z0-9.\-]++)(?::([1-9][0-9]{{0,4}}))?+/[{re.escape(_PLAIN_CHARACTERS)}]*+"
)
_DEFAULT_PORTS = {"http": "80", "https": "443"}


class Resolver:
    """Resolves a page's hrefs against its base URL; ``cache`` is for the caller: pages repeat their links."""

    __slots__ = ("base", "cache", "directory", "encoding", "joined", "origin", "path", "plain", "query")

    def __init__(self, base: str, encoding: str):
        base = base.split("#", 1)[0]
        self.encoding = encoding if _writes_ascii(encoding) else "utf-8"
        self.cache: dict[
            str, str | None
        ] = {}  # href up to its first "#" -> resolve(href), kept by the caller
        self.joined: dict[str, str | None] = {}  # href without fragment -> URL
        try:
            url = ada_url.URL(base)
        except ValueError:
            url = None
        self.plain = url is not None and url.protocol in ("http:", "https:")
        self.base = url.href.split("#", 1)[0] if url is not None else base
        if self.plain:
            # scheme://[user info@]host[:port]: a relative reference keeps the base's user info
            self.origin = self.base[: len(self.base) - len(url.pathname) - len(url.search)]
            self.path = url.pathname
            self.query = url.search
            # The base's directory: its path segments but the last (the Standard's "shorten").
            self.directory = self.path.split("/")[1:-1]
        else:
            self.origin = self.path = self.query = ""
            self.directory = []

    def resolve(self, href: str) -> str | None:
        """The absolute http(s) URL of ``href`` without its fragment, or None if it is not one."""
        # URL parsing: leading and trailing C0 controls and spaces go, tabs and newlines anywhere go.
        href = href.strip(_C0_AND_SPACE)
        if "\t" in href or "\n" in href or "\r" in href:
            href = href.translate(_TAB_NEWLINE)
        hash_at = href.find("#")
        if hash_at >= 0:
            # the "#" stays after white space, which it keeps from being stripped as the end of the href
            href = href[: hash_at + 1] if hash_at and href[hash_at - 1] <= " " else href[:hash_at]
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
            if (
                self.plain
                and not href.startswith("//")
                and "%2" not in href
                and _PLAIN_REFERENCE.fullmatch(href)
            ):
                return self._join_plain(href)
        elif _is_plain_absolute(href):
            return href
        elif scheme.group().lower() not in ("http:", "https:"):
            return None  # javascript:, mailto:, data:, tel:, ftp:...
        if self.encoding != "utf-8" and not href.isascii():
            href = _encode_query(href, self.encoding)
        try:
            url = ada_url.join_url(self.base, href)
        except ValueError:
            return None
        if not url.startswith(("http://", "https://")):
            return None
        hash_at = url.find("#")
        return url[:hash_at] if hash_at >= 0 else url

    def _join_plain(self, href: str) -> str:
        """The Standard's relative resolution for a reference of plain characters without "//" or "%2"."""
        query_at = href.find("?")
        if query_at >= 0:
            path, query = href[:query_at], href[query_at:]
        else:
            path, query = href, ""
        if not path:
            return self.origin + self.path + query  # "?q": the base's path, the new query
        if path[0] == "/":
            resolved: list[str] = []
            segments = path[1:].split("/")
        else:
            resolved = self.directory.copy()
            segments = path.split("/")
        last = len(segments) - 1
        for i, segment in enumerate(segments):
            if segment == "..":
                if resolved:
                    resolved.pop()
                if i == last:
                    resolved.append("")
            elif segment == ".":
                if i == last:
                    resolved.append("")
            else:
                resolved.append(segment)
        return self.origin + "/" + "/".join(resolved) + query


@functools.cache
def _writes_ascii(encoding: str) -> bool:
    """True if ``encoding`` writes ASCII as ASCII does (UTF-16 does not: the Standard then uses UTF-8)."""
    try:
        return _PLAIN_CHARACTERS.encode(encoding) == _PLAIN_CHARACTERS.encode("ascii")
    except (LookupError, UnicodeError):
        return False


def _is_plain_absolute(href: str) -> bool:
    """True if ``href`` is an http(s) URL that the URL Standard's parser returns as it is."""
    plain = _PLAIN_ABSOLUTE.fullmatch(href)
    if plain is None or "/." in href or "%2" in href:
        return False
    scheme, host, port = plain.groups()
    if not host or "xn--" in host or ends_in_number(host):
        return False
    return port is None or (port != _DEFAULT_PORTS[scheme] and (len(port) < 5 or port <= "65535"))


def _encode_query(href: str, encoding: str) -> str:
    """``href`` with the non-ASCII characters of its query percent-encoded in ``encoding`` (the Standard's
    query encoding; a character the encoding lacks is written as an HTML reference, ``&#8364;``, whose "#"
    is escaped: the href has no other but a last one, its fragment being cut)."""
    query_at = href.find("?")
    if query_at < 0:
        return href
    end = len(href) - 1 if href.endswith("#") else len(href)  # the "#" kept after white space stays
    data = href[query_at + 1 : end].encode(encoding, "xmlcharrefreplace").replace(b"#", b"%23")
    return href[: query_at + 1] + quote_from_bytes(data, safe=_ASCII) + href[end:]
