"""URLs: their canonical form and their parts (site, host, path), the one place that knows either.

The bottom layer of wirescrapy, pure (no I/O, no state), as ``w3lib.url`` is for Scrapy: the seeder
canonicalises with it, the collection splits URLs into site and path with it, the harvester finds a
request's politeness unit and host with it.

**Parts.** A *site* is ``scheme://host[:port]`` of a canonical URL (WIRE's unit of politeness and of the
collection's site-ids); its *target* is the rest, path and query (``/`` at least). ``canonical_parts`` gives
both in the pass that canonicalises, and the seeder's decision carries them on, so that the URL of a link
is split once. ``split``, ``site_of``, ``host_of`` take a canonical URL apart without parsing it again.

**Canonical form.** ``canonicalize`` applies the normalisations of RFC 3986 §6.2.2–6.2.3 that never change
which resource a URL names, plus the usual crawler ones:

* scheme and host lower-cased; an international host mapped and converted to punycode as the URL Standard
  and browsers do (UTS #46, IDNA 2008: ``faß.example`` is ``xn--fa-hia.example``, where Python's IDNA 2003
  codec wrote ``fass.example``, another site); an IPv4 address in any of the forms browsers read written
  dotted-decimal (``0xc0.0250.01``, ``3232235521`` and ``192.168.1`` are all ``192.168.0.1``: one address,
  one site); a trailing dot on the host removed; an IPv6 address written in its RFC 5952 form;
* the user name and password dropped (a crawler sends no credentials it found in a link);
* the default port (80 for http, 443 for https, 21 for ftp) removed;
* percent-encoding normalised, byte by byte: an escaped unreserved character (``%41`` → ``A``, ``%7E`` →
  ``~``) is decoded, the hex digits of every other escape upper-cased, a ``%`` that starts no escape encoded
  as ``%25``, and every character not allowed where it stands (space, ``"<>[]{}|^`\\``, controls,
  non-ASCII as UTF-8) percent-encoded. Escaped reserved characters (``%2F``, ``%3D``, ``%26`` …) stay
  escaped, since decoding them would change the URL's meaning;
* dot segments resolved (RFC 3986 §5.2.4), after the decoding so that ``%2E%2E`` counts as ``..``;
* an empty path written ``/``; the query kept in its order (not sorted: servers may care), an empty query
  (a bare ``?``) dropped; the fragment dropped;
* for the special schemes http, https and ftp, the URL Standard's leniencies: ``\\`` read as ``/``, any
  number of slashes after the scheme, tabs and newlines inside the URL removed.

w3lib's ``canonicalize_url`` sorts the query and ``safe_url_string`` leaves needless escapes and lower-case
hex digits alone, so the percent-encoding is done here; the result is what ``safe_url_string`` would accept
unchanged. ``canonicalize`` is idempotent and raises nothing but ``BadURL``.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from typing import TYPE_CHECKING

import ada_url

if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}
SPECIAL_SCHEMES = frozenset(DEFAULT_PORTS)

_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_ASCII_HOST_RE = re.compile(r"[a-z0-9_\-.]+")
# Characters that end or split a host in a URL: never part of one after percent-decoding.
_HOST_DELIMITERS = frozenset("/?#@:\\[]")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SUB_DELIMS = b"!$&'()*+,;="
# RFC 3986 §3.3: pchar = unreserved / pct-encoded / sub-delims / ":" / "@"; a path also has its "/".
_PATH_SAFE = _UNRESERVED | frozenset(_SUB_DELIMS + b":@/")
_QUERY_SAFE = _PATH_SAFE | frozenset(b"?")
# Browsers escape "'" in the query of special schemes (URL Standard's special-query set); do as they do.
_SPECIAL_QUERY_SAFE = _QUERY_SAFE - frozenset(b"'")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_NUMBER_ENDS = _HEX_DIGITS | {"x", "X"}
_HEX_BYTES = frozenset(bytes([b]) for b in _HEX)
_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")


class BadURL(ValueError):
    """Not an absolute URL the crawler can fetch."""


def url_scheme(url: str) -> str:
    """The lower-cased scheme of ``url`` ("" if it has none), without parsing the rest."""
    match = _SCHEME_RE.match(url.strip(_C0_AND_SPACE))
    return match.group(1).lower() if match else ""


def canonicalize(url: str) -> str:
    """The canonical form of an absolute URL; ``BadURL`` if it is not one (see the module docstring)."""
    site, target = canonical_parts(url)
    return site + target


def canonical_parts(url: str) -> tuple[str, str]:
    """(site, target) of the canonical form of ``url``: ``canonicalize(url) == site + target``."""
    if not isinstance(url, str):
        raise BadURL(f"{url!r}: a URL must be text")
    text = _well_formed(url).strip(_C0_AND_SPACE).translate(_TAB_OR_NEWLINE)
    match = _SCHEME_RE.match(text)
    if not match:
        raise BadURL(f"{_short(url)}: not an absolute URL (no scheme)")
    scheme = match.group(1).lower()
    rest = text[match.end() :].partition("#")[0]
    before, has_query, query = rest.partition("?")
    if scheme in SPECIAL_SCHEMES:
        before = before.replace("\\", "/").lstrip("/")
    elif before.startswith("//"):
        before = before[2:]
    else:
        raise BadURL(f"{_short(url)}: no host")
    authority, slash, path = before.partition("/")
    netloc = _netloc(authority, scheme, url)
    path = remove_dot_segments(_normalize_escapes("/" + path, _PATH_SAFE)) if slash else "/"
    safe = _SPECIAL_QUERY_SAFE if scheme in SPECIAL_SCHEMES else _QUERY_SAFE
    query = _normalize_escapes(query, safe) if has_query else ""
    return f"{scheme}://{netloc}", f"{path}?{query}" if query else path


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 for an absolute path: ``/a/b/../c/./d`` → ``/a/c/d``."""
    if "/." not in path:  # a dot segment is "." or ".." after a "/"
        return path
    segments = path.split("/")[1:]
    output: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "..":
            if output:
                output.pop()
            if last:
                output.append("")
        elif segment == ".":
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/" + "/".join(output)


def _netloc(authority: str, scheme: str, url: str) -> str:
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]")
        if end == -1:
            raise BadURL(f"{_short(url)}: unclosed '[' in the host")
        host, port_text = _ipv6(hostport[1:end], url), hostport[end + 1 :]
        if port_text and not port_text.startswith(":"):
            raise BadURL(f"{_short(url)}: junk after the IPv6 address")
        port_text = port_text[1:]
    else:
        host_text, _, port_text = hostport.partition(":")
        host = _host(host_text, url)
    if port_text:
        if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
            raise BadURL(f"{_short(url)}: bad port {port_text[:20]!r}")
        port = int(port_text)
        if port != DEFAULT_PORTS.get(scheme):
            return f"{host}:{port}"
    return host


def _host(text: str, url: str) -> str:
    if "%" in text:
        text = _unquote_host(text, url)
    if not text.isascii() or (ends_in_number(text) and not _dotted_decimal(text)):
        text = _whatwg_host(text, url)
    host = text.lower()
    host = host.removesuffix(".")
    if not host:
        raise BadURL(f"{_short(url)}: no host")
    if not _ASCII_HOST_RE.fullmatch(host):
        raise BadURL(f"{_short(url)}: bad character in host {host[:60]!r}")
    if len(host) > 253 or any(not 0 < len(label) < 64 for label in host.split(".")):
        raise BadURL(f"{_short(url)}: empty or too long label in host {host[:60]!r}")
    return host


def ends_in_number(host: str) -> bool:
    """The URL Standard's "ends in a number": the last label (before a final dot) is decimal digits or a
    0x number, so the host is an IPv4 address in one of its forms (or no valid host at all)."""
    if host[-1:] not in _NUMBER_ENDS and host[-2:-1] not in _NUMBER_ENDS:  # most hosts end in a letter
        return False
    label = host.removesuffix(".").rpartition(".")[2]
    if label.isascii() and label.isdigit():
        return True
    return label[:2] in ("0x", "0X") and all(char in _HEX_DIGITS for char in label[2:])


def _dotted_decimal(host: str) -> bool:
    """An IPv4 address already in its canonical form (four decimal bytes, no leading zeros)."""
    parts = host.split(".")
    return len(parts) == 4 and all(
        part.isascii()
        and part.isdigit()
        and len(part) <= 3
        and (part == "0" or part[0] != "0")
        and int(part) < 256
        for part in parts
    )


def _whatwg_host(text: str, url: str) -> str:
    """The URL Standard's host parser (ada's): UTS #46 for a domain, the IPv4 parser for a number."""
    if not _HOST_DELIMITERS.isdisjoint(text):
        raise BadURL(f"{_short(url)}: bad character in host {text[:60]!r}")
    try:
        return ada_url.URL(f"http://{text}/").hostname
    except ValueError:
        kind = "IPv4 address" if ends_in_number(text) else "international host name"
        raise BadURL(f"{_short(url)}: bad {kind} {text[:60]!r}") from None


def _unquote_host(text: str, url: str) -> str:
    raw = bytearray()
    data = text.encode("utf-8")
    i = 0
    while i < len(data):
        if data[i] == 0x25 and data[i + 1 : i + 2] in _HEX_BYTES and data[i + 2 : i + 3] in _HEX_BYTES:
            raw.append(int(data[i + 1 : i + 3], 16))
            i += 3
        else:
            raw.append(data[i])
            i += 1
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadURL(f"{_short(url)}: host is not UTF-8 after percent-decoding") from None


def _ipv6(text: str, url: str) -> str:
    if "%" in text:  # a zone id names an interface of this machine: not a crawlable host
        raise BadURL(f"{_short(url)}: IPv6 zone id in the host")
    try:
        return f"[{ipaddress.IPv6Address(text)}]"
    except ValueError:
        raise BadURL(f"{_short(url)}: bad IPv6 address {text[:60]!r}") from None


@functools.cache
def _as_bytes(safe: frozenset[int]) -> bytes:
    return bytes(sorted(safe))


def _normalize_escapes(text: str, safe: frozenset[int]) -> str:
    data = text.encode("utf-8")
    if not data.translate(None, _as_bytes(safe)):  # every byte safe as it is ("%" and non-ASCII never are)
        return text
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        byte = data[i]
        if byte == 0x25:  # "%"
            if i + 2 < n and data[i + 1] in _HEX and data[i + 2] in _HEX:
                value = int(data[i + 1 : i + 3], 16)
                if value in _UNRESERVED:
                    out.append(value)
                else:
                    out += b"%%%02X" % value
                i += 3
                continue
            out += b"%25"
        elif byte in safe:
            out.append(byte)
        else:
            out += b"%%%02X" % byte
        i += 1
    return out.decode("ascii")


def _well_formed(text: str) -> str:
    """Lone surrogates (from a broken decoder) become U+FFFD, as the URL Standard's USVString does."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _short(url: str) -> str:
    return repr(url if len(url) <= 200 else url[:200] + "…")


# -- parts of a canonical URL ------------------------------------------------------------------------


def split(url: str) -> tuple[str, str]:
    """(site, target) of a canonical URL: ``http://a.cl:81/b?c`` → ``("http://a.cl:81", "/b?c")``."""
    start = url.find("://")
    end = url.find("/", start + 3) if start != -1 else -1
    if end == -1:
        raise BadURL(f"{_short(url)}: not a canonical URL")
    return url[:end], url[end:]


def site_of(url: str) -> str:
    """The site of a canonical URL, ``scheme://host[:port]``, as the collection names sites."""
    return split(url)[0]


def host_of(url: str) -> str:
    """The host of a canonical URL or site, without the port; an IPv6 address keeps its brackets."""
    start = url.find("://")
    if start == -1:
        raise BadURL(f"{_short(url)}: not a canonical URL")
    netloc = url[start + 3 :].partition("/")[0]
    if netloc.startswith("["):
        return netloc[: netloc.index("]") + 1]
    return netloc.partition(":")[0]


def root_url(url: str) -> str:
    """The home page of a canonical URL's site: ``http://a.cl/b/c?d`` → ``http://a.cl/``."""
    return site_of(url) + "/"


def robots_txt_url(site: str) -> str:
    """The robots.txt of a site (``scheme://host[:port]``): ``http://a.cl/robots.txt``."""
    return site.rstrip("/") + "/robots.txt"


def origin(url: str) -> str:
    """The site of any absolute URL, canonical or not (``HTTP://A.CL:80/x`` → ``http://a.cl``): the
    politeness unit of a request. ``BadURL`` (a ``ValueError``) if it has no host."""
    return canonical_parts(url)[0]


def request_host(url: str) -> str:
    """The host a request for ``url`` connects to (what DNS resolves): no user info, port or brackets;
    ``""`` if the URL has none. Tolerant: any URL a request may hold, canonical or not."""
    start = url.find("://")
    if start == -1:
        return ""
    rest = url[start + 3 :]
    for end, char in enumerate(rest):
        if char in "/?#":
            rest = rest[:end]
            break
    rest = rest.rpartition("@")[2]
    if rest.startswith("["):
        return rest[1 : rest.find("]")] if "]" in rest else ""
    return rest.partition(":")[0]


def host_name(name: str) -> str:
    """A host name as a key of ``WIRE_DNS_HOSTS``: no surrounding space, no final dot, lower case."""
    return name.strip().rstrip(".").lower()


def mapped_address(hosts: Mapping[str, str], name: str) -> str | None:
    """The address ``name`` maps to in ``hosts`` (keys as :func:`host_name` writes them; the longest mapped
    parent name wins), or None."""
    name = host_name(name)
    while True:
        if name in hosts:
            return hosts[name]
        if "." not in name:
            return None
        name = name.split(".", 1)[1]
