"""Fixed-size record files: WIRE's metadata layout (thesis §7.3.1).

A record file holds records of one numpy structured dtype. Record *i* lives at byte offset
``itemsize × i``; record 0 is the header, so there is no record with id 0 and id 0 stays free to mean
"none" or "error", as in WIRE.

Header (record 0, little-endian, the rest of the record is zero)::

    offset  size  field
    0       8     magic      b"WIRERECS"
    8       4     version    uint32, currently 1
    12      4     itemsize   uint32, must equal the dtype's itemsize
    16      8     count      uint64, number of records (the highest id in use)
    24      16    kind       ASCII name of the record kind, NUL padded ("document", "site", ...)

The file is memory-mapped and grows in steps as ids grow (``ensure``); bytes past ``count`` are zero.
The space a step adds is allocated on disk when the file grows (``posix_fallocate``), not when a record
is first written through the mapping: a full disk is an ``OSError`` from ``ensure``, never a ``SIGBUS``
from a write into a sparse page.

Ids: record 0 is the header and ids past ``count`` hold no record, so ``record(i)``, the way to write an
existing record, refuses both (``RecordIdError``): a caller with an id from somewhere else (another
collection's batch) is stopped before it overwrites the header or writes a record nobody counts.

Crash behaviour: records are written through a shared mapping, so a killed process loses nothing that
was assigned before the kill (the kernel keeps the dirty pages). One record is a single memory copy; a
kill during that copy can leave that one record torn. ``count`` is written after the records it covers,
so a record counted is a record completely written once.
"""

from __future__ import annotations

import errno
import mmap
import os
from pathlib import Path

import numpy as np

MAGIC = b"WIRERECS"
VERSION = 1
HEADER_DTYPE = np.dtype(
    [("magic", "S8"), ("version", "<u4"), ("itemsize", "<u4"), ("count", "<u8"), ("kind", "S16")]
)
_GROWTH_RECORDS = 1 << 12


class RecordFileError(Exception):
    """The file is not a record file of the expected kind, or is damaged."""


class RecordIdError(RecordFileError, IndexError):
    """A record id that names no record: 0 (the header) or past the last one."""


def allocate(fd: int, size: int) -> None:
    """Make the file ``size`` bytes long with its space allocated on disk (``OSError`` ENOSPC if full)."""
    current = os.fstat(fd).st_size
    if size > current:
        try:
            os.posix_fallocate(fd, current, size - current)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                os.ftruncate(fd, current)  # the file keeps the size its header's count fits
                raise
            os.ftruncate(fd, size)  # a filesystem that cannot allocate ahead: left sparse
    else:
        os.ftruncate(fd, size)


def _fill_holes(fd: int) -> None:
    """Allocate the space of a file written sparse (by an earlier wirescrapy), for the reason above."""
    size = os.fstat(fd).st_size
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            raise


class RecordFile:
    """Records of ``dtype`` in a memory-mapped file; ``self.records[i]`` is record *i*.

    ``records`` is re-created when the file grows: take it again after ``ensure``/``append``, never keep
    it across them.
    """

    def __init__(self, path: str | os.PathLike, dtype: np.dtype, kind: str, readonly: bool = False):
        self.path = Path(path)
        self.dtype = np.dtype(dtype)
        self.kind = kind
        self.readonly = readonly
        if self.dtype.itemsize < HEADER_DTYPE.itemsize:
            raise ValueError(f"record size {self.dtype.itemsize} is smaller than the header")
        if not self.path.exists():
            if readonly:
                raise FileNotFoundError(self.path)
            self._create()
        self._fd = os.open(self.path, os.O_RDONLY if readonly else os.O_RDWR)
        self._mmap = None
        if not readonly:
            try:
                _fill_holes(self._fd)
            except BaseException:
                os.close(self._fd)
                raise
        self._map()
        self._check_header()

    # -- file management ---------------------------------------------------------------------------

    def _create(self) -> None:
        header = np.zeros(1, dtype=self.dtype).view(np.uint8)
        head = np.zeros(1, dtype=HEADER_DTYPE)
        head["magic"], head["version"], head["itemsize"] = MAGIC, VERSION, self.dtype.itemsize
        head["kind"] = self.kind.encode("ascii")
        header[: HEADER_DTYPE.itemsize] = head.view(np.uint8)
        tmp = self.path.with_name(self.path.name + ".new")
        try:
            with open(tmp, "wb") as f:
                f.write(header.tobytes())
                f.flush()
                allocate(f.fileno(), self.dtype.itemsize * _GROWTH_RECORDS)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, self.path)  # a half-created file is never seen under the real name

    def _map(self) -> None:
        size = os.fstat(self._fd).st_size
        size -= size % self.dtype.itemsize
        if size < self.dtype.itemsize:
            raise RecordFileError(f"{self.path}: too short to hold a header")
        access = mmap.ACCESS_READ if self.readonly else mmap.ACCESS_WRITE
        self._mmap = mmap.mmap(self._fd, size, access=access)
        self.records = np.frombuffer(self._mmap, dtype=self.dtype)
        self._header = np.frombuffer(self._mmap, dtype=HEADER_DTYPE, count=1)

    def _check_header(self) -> None:
        head = self._header[0]
        if head["magic"] != MAGIC:
            raise RecordFileError(f"{self.path}: not a wirescrapy record file")
        if head["version"] != VERSION:
            raise RecordFileError(f"{self.path}: record file version {head['version']}, expected {VERSION}")
        if head["itemsize"] != self.dtype.itemsize or head["kind"] != self.kind.encode("ascii"):
            raise RecordFileError(
                f"{self.path}: holds {head['kind'].decode()!r} records of {head['itemsize']} bytes, "
                f"expected {self.kind!r} records of {self.dtype.itemsize} bytes"
            )

    @property
    def capacity(self) -> int:
        """Highest id that fits in the file as mapped now."""
        return len(self.records) - 1

    def ensure(self, record_id: int) -> None:
        """Grow the file so that ``record_id`` fits (zero-filled)."""
        if record_id <= self.capacity:
            return
        if self.readonly:
            raise RecordFileError(f"{self.path}: opened read-only")
        want = max(record_id + 1, (self.capacity + 1) * 5 // 4, self.capacity + 1 + _GROWTH_RECORDS)
        self._unmap()
        try:
            allocate(self._fd, want * self.dtype.itemsize)
        finally:
            self._map()

    def refresh(self) -> None:
        """Re-map after another process grew the file (readers)."""
        if os.fstat(self._fd).st_size // self.dtype.itemsize != len(self.records):
            self._unmap()
            self._map()

    def _unmap(self) -> None:
        self.records = None
        self._header = None
        mm, self._mmap = self._mmap, None
        if mm is not None:
            try:
                mm.close()
            except BufferError:
                # Record views handed out earlier still point into the mapping; it is unmapped when the
                # last of them is garbage-collected (writes through them remain valid until then).
                pass

    # -- count ---------------------------------------------------------------------------------------

    @property
    def count(self) -> int:
        return int(self._header[0]["count"])

    @count.setter
    def count(self, value: int) -> None:
        self.ensure(value)
        self._header["count"] = value

    # -- records -------------------------------------------------------------------------------------

    def record(self, record_id: int) -> np.void:
        """Record ``record_id`` of those counted, as a view to read and write its fields."""
        if not 0 < record_id <= self.count:
            raise RecordIdError(
                f"{self.path.name}: no record {record_id} "
                f"({'id 0 is the header' if record_id == 0 else f'{self.count} records'})"
            )
        return self.records[record_id]

    def append(self, values: np.ndarray | None = None) -> int:
        """Write one record after the last one and return its id."""
        record_id = self.count + 1
        self.ensure(record_id)
        if values is not None:
            self.records[record_id] = values
        self.count = record_id
        return record_id

    def flush(self) -> None:
        if self._mmap is not None and not self.readonly:
            self._mmap.flush()

    def close(self) -> None:
        if self._fd is None:
            return
        try:
            self.flush()
        finally:
            self._unmap()
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __len__(self) -> int:
        return self.count
