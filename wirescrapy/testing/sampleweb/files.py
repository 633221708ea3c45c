"""The non-HTML files of the sample web: site 0's ``/files/`` and ``/notes.txt``.

Each is a small valid file of its type (a PNG, a baseline JPEG, a PDF, a stored ZIP), made once and the
same bytes on every run, except ``big.bin``: ``binary_size`` random bytes drawn from the seed.
"""

from __future__ import annotations

import io
import random
import struct
import zipfile
import zlib
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from wirescrapy.testing.sampleweb.config import SampleWebConfig

TEXT = "text/plain; charset=utf-8"
FILES = {
    "photo.png": "image/png",
    "photo.jpg": "image/jpeg",
    "report.pdf": "application/pdf",
    "archive.zip": "application/zip",
    "big.bin": "application/octet-stream",
}


def file_bytes(name: str, config: SampleWebConfig) -> bytes:
    """The bytes of ``/files/<name>``, ``name`` one of ``FILES``."""
    if name == "big.bin":
        return random.Random(f"{config.seed}:big.bin").randbytes(config.binary_size)
    return _FILE_MAKERS[name]()


def notes() -> bytes:
    """The bytes of ``/notes.txt``."""
    return b"Plain text notes.\nhttp://site0.wire.test/page/1.html is a URL in plain text, not a link.\n"


def _png() -> bytes:
    """A valid 16x16 RGB gradient."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(v for x in range(16) for v in (x * 16, y * 16, 128)) for y in range(16))
    header = struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)
    image = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + image


def _jpeg() -> bytes:
    """A valid baseline JPEG: one 8x8 grey block, one-symbol Huffman tables."""

    def seg(marker: bytes, data: bytes) -> bytes:
        return b"\xff" + marker + struct.pack(">H", len(data) + 2) + data

    one_symbol = bytes([1] + [0] * 15) + b"\x00"
    return (
        b"\xff\xd8"
        + seg(b"\xe0", b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
        + seg(b"\xdb", b"\x00" + b"\x01" * 64)
        + seg(b"\xc0", b"\x08\x00\x08\x00\x08\x01\x01\x11\x00")
        + seg(b"\xc4", b"\x00" + one_symbol)
        + seg(b"\xc4", b"\x10" + one_symbol)
        + seg(b"\xda", b"\x01\x01\x00\x00\x3f\x00")
        # DC difference 0 then end of block: bits "00", padded with ones.
        + b"\x3f"
        + b"\xff\xd9"
    )


def _pdf() -> bytes:
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R "
            b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
        ),
    ]
    stream = b"BT /F1 12 Tf 20 50 Td (WIRE sample report) Tj ET"
    objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _zip() -> bytes:
    buffer = io.BytesIO()
    # Stored, not deflated, and dated: the bytes stay the same on every run and zlib.
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        info = zipfile.ZipInfo("readme.txt", date_time=(2026, 1, 1, 0, 0, 0))
        archive.writestr(info, b"An archive in the WIRE sample web.\n" * 20)
    return buffer.getvalue()


_FILE_MAKERS: dict[str, Callable[[], bytes]] = {
    "photo.png": lru_cache(maxsize=1)(_png),
    "photo.jpg": lru_cache(maxsize=1)(_jpeg),
    "report.pdf": lru_cache(maxsize=1)(_pdf),
    "archive.zip": lru_cache(maxsize=1)(_zip),
}
