"""Canonical form of URLs, so that one page has one URL in the collection.

Lower-case scheme and host, IDN host to punycode, default port removed, dot segments resolved
(RFC 3986 §5.2.4), fragment dropped, percent-encoding normalised by w3lib (unsafe characters encoded,
non-ASCII as UTF-8), query kept in its order.
"""

from __future__ import annotations

import urllib.parse

from w3lib.url import safe_url_string

DEFAULT_PORTS = {"http": 80, "https": 443}


class BadURL(ValueError):
    """Not an absolute URL the crawler can fetch."""


def remove_dot_segments(path: str) -> str:
    output: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        if segment == ".":
            if i == len(segments) - 1:
                output.append("")
        elif segment == "..":
            if len(output) > 1:
                output.pop()
            if i == len(segments) - 1:
                output.append("")
        else:
            output.append(segment)
    result = "/".join(output)
    return result if result.startswith("/") else "/" + result


def canonicalize(url: str, encoding: str = "utf-8") -> str:
    """The canonical form of an absolute URL; ``BadURL`` if it has no scheme or host, or a bad port."""
    url = url.strip()
    try:
        safe = safe_url_string(url, encoding=encoding)
        parts = urllib.parse.urlsplit(safe)
        port = parts.port
    except ValueError as exc:
        raise BadURL(f"{url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if not scheme or not host:
        raise BadURL(f"{url!r}: not an absolute URL")
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != DEFAULT_PORTS.get(scheme):
        netloc += f":{port}"
    path = remove_dot_segments(parts.path or "/")
    return urllib.parse.urlunsplit((scheme, netloc, path, parts.query, ""))
