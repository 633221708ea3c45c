"""The data file of an extent store: the stored bytes of every record, anywhere in one large file.

``<name>.dat``. Bytes 0–63 are a header (little-endian, the rest zero)::

    offset  size  field
    0       8     magic        b"WIREEXTD"
    8       4     version      uint32, currently 1
    12      4     granularity  uint32, every extent starts at a multiple of it

Records follow at offsets ≥ max(64, granularity). Offsets are 64-bit, so the file may grow past
2 GB (it is written with ``os.pwrite`` and read with ``os.pread``/``mmap``). Free space is not
recorded anywhere: it is whatever no live index record (``extentindex.py``) covers.

A new data file is written whole under a temporary name, then renamed: a half-created file is never
seen under the real name.
"""

from __future__ import annotations

import mmap
import os
import struct
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pathlib import Path

DATA_MAGIC = b"WIREEXTD"
DATA_VERSION = 1
DATA_HEADER_SIZE = 64
_WRITE_CHUNK = 1 << 24


class ExtentError(Exception):
    """The store is damaged (bytes not matching their hash, overlapping extents, bad header)."""


# The store reads and writes single records with these on ``DataFile.fd`` itself: on that path a method
# call more shows in the time of a ``put``.


def pwrite_all(fd: int, data, offset: int) -> None:
    """Write all of ``data`` at ``offset``, in as many system calls as it takes."""
    view = memoryview(data).cast("B")
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


def pread_all(fd: int, size: int, offset: int) -> bytes:
    """``size`` bytes at ``offset``, fewer if the file ends first."""
    data = os.pread(fd, size, offset)
    while len(data) < size:
        more = os.pread(fd, size - len(data), offset + len(data))
        if not more:
            break
        data += more
    return data


class DataFile:
    """``<name>.dat`` opened, created first unless ``readonly``; its header is checked."""

    def __init__(self, path: Path, *, readonly: bool = False, granularity: int = 64):
        self.path = path
        if not path.exists():
            if readonly:
                raise FileNotFoundError(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._create(granularity)
        self.fd = os.open(path, os.O_RDONLY if readonly else os.O_RDWR)
        try:
            self.granularity = self._read_header()
        except BaseException:
            os.close(self.fd)
            raise
        # Where the first extent may start: past the header, at a multiple of the granularity.
        self.base = -(-DATA_HEADER_SIZE // self.granularity) * self.granularity

    def _create(self, granularity: int) -> None:
        if granularity < 4 or granularity & (granularity - 1):
            raise ValueError(f"granularity must be a power of two ≥ 4, not {granularity}")
        header = bytearray(DATA_HEADER_SIZE)
        struct.pack_into("<8sII", header, 0, DATA_MAGIC, DATA_VERSION, granularity)
        tmp = self.path.with_name(self.path.name + ".new")
        with open(tmp, "wb") as f:
            f.write(header)
        os.replace(tmp, self.path)  # a half-created file is never seen under the real name

    def _read_header(self) -> int:
        header = os.pread(self.fd, DATA_HEADER_SIZE, 0)
        if len(header) < 16 or header[:8] != DATA_MAGIC:
            raise ExtentError(f"{self.path}: not a wirescrapy extent data file")
        version, granularity = struct.unpack_from("<II", header, 8)
        if version != DATA_VERSION:
            raise ExtentError(f"{self.path}: data file version {version}, expected {DATA_VERSION}")
        return granularity

    # -- verbs -------------------------------------------------------------------------------------

    def write_padded(self, data: memoryview, starts, sizes, placed, block: int) -> None:
        """Write records back to back from ``block``, record *k* (``data[starts[k]:starts[k + 1]]``)
        at ``block + placed[k]``, each padded to the granularity, in pieces of ≈ 16 MiB."""
        if (sizes % self.granularity == 0).all():
            for lo in range(0, len(data), _WRITE_CHUNK):
                pwrite_all(self.fd, data[lo : lo + _WRITE_CHUNK], block + lo)
            return
        src = np.frombuffer(data, dtype=np.uint8)
        n = len(sizes)
        i = 0
        while i < n:
            j = int(np.searchsorted(placed, placed[i] + _WRITE_CHUNK, side="right")) - 1
            j = min(max(j, i + 1), n)
            out = np.zeros(int(placed[j] - placed[i]), dtype=np.uint8)
            counts = sizes[i:j]
            shift = np.repeat(placed[i:j] - placed[i] - starts[i:j], counts)
            src_idx = np.arange(starts[i], starts[j], dtype=np.int64)
            out[src_idx + shift] = src[starts[i] : starts[j]]
            pwrite_all(self.fd, out, block + int(placed[i]))
            i = j

    def size(self) -> int:
        """Length of the file."""
        return os.fstat(self.fd).st_size

    def array(self) -> np.ndarray:
        """The whole file as a read-only uint8 array over a shared mapping (for bulk reads)."""
        mapping = mmap.mmap(self.fd, self.size(), access=mmap.ACCESS_READ)
        return np.frombuffer(mapping, dtype=np.uint8)

    # -- lifecycle ---------------------------------------------------------------------------------

    def flush(self) -> None:
        os.fsync(self.fd)

    def truncate(self, end: int) -> None:
        """Cut the file at ``end`` (a freed tail goes back to the file system)."""
        os.ftruncate(self.fd, end)

    def close(self) -> None:
        os.close(self.fd)
        self.fd = None
