"""Decoding a downloaded page to Unicode: which encoding, in which order of evidence.

The order is the HTML Standard's (§13.2.3 "Determining the character encoding"), built from w3lib's pieces
(the same ones ``w3lib.encoding.html_to_unicode`` chains, and Scrapy's ``TextResponse`` uses):

1. a byte-order mark (UTF-8, UTF-16, UTF-32) wins over everything, the HTTP header included;
2. the ``charset`` of the ``Content-Type`` header;
3. for HTML, a ``<meta charset>`` or ``<meta http-equiv=content-type>`` in the first 4 KB (w3lib's prescan)
   — a meta that names UTF-16 or UTF-32 means UTF-8, since the page was readable as ASCII to find it;
4. detection: a body that is valid UTF-8 (a character cut by the harvester's size limit at the very end
   is allowed) is UTF-8;
5. otherwise WIRE's ``gatherer/defaultcharset`` (``WIRE_DEFAULT_CHARSET``, windows-1252 by default).

Labels are resolved the WHATWG way by w3lib (``latin-1`` and ``ascii`` are windows-1252, ``shift_jis`` is
cp932, ``gb2312`` is gb18030). Bytes that are invalid in the chosen encoding become U+FFFD: decoding never
fails.
"""

from __future__ import annotations

from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
    to_unicode,
)

_WIDE = ("utf-16", "utf-16-be", "utf-16-le", "utf-32", "utf-32-be", "utf-32-le")


def check_charset(label: str) -> str:
    """The codec name of an encoding label, or ValueError (for validating ``WIRE_DEFAULT_CHARSET``)."""
    name = resolve_encoding(label)
    if name is None:
        raise ValueError(f"unknown encoding {label!r}")
    return name


def detect_encoding(
    body: bytes, content_type: str | None, default: str, html: bool = True
) -> tuple[str, int]:
    """The encoding of ``body`` and the length of its byte-order mark (0 without one)."""
    bom_encoding, bom = read_bom(body)
    if bom_encoding is not None and bom is not None:
        return bom_encoding, len(bom)
    encoding = http_content_type_encoding(content_type)
    if encoding is None and html:
        encoding = html_body_declared_encoding(body)
        if encoding in _WIDE:
            # A meta tag found by reading the bytes as ASCII cannot be telling the truth about UTF-16.
            encoding = "utf-8"
    if encoding is None:
        return ("utf-8" if is_utf8(body) else default), 0
    if encoding in ("utf-16", "utf-32"):
        # A header label without a BOM: the WHATWG Encoding Standard reads "utf-16" as little-endian.
        encoding += "-le"
    return encoding, 0


def is_utf8(body: bytes) -> bool:
    """True if ``body`` is valid UTF-8, allowing one character cut short at the end (a truncated page)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(body) - 3 and exc.reason == "unexpected end of data"
    return True


def decode(body: bytes, content_type: str | None, default: str, html: bool = True) -> tuple[str, str]:
    """``(encoding, text)`` of a page; invalid bytes become U+FFFD."""
    encoding, skip = detect_encoding(body, content_type, default, html)
    return encoding, to_unicode(body[skip:] if skip else body, encoding)
