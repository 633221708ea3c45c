"""Variable-size records indexed by doc-id: WIRE's page-store layout (thesis §7.3.2).

Both the page contents and the link graph are stored this way: one data file holding the records
anywhere, and one index with a fixed-size record per doc-id telling where its bytes are. Space freed
by a replaced or deleted record is reused first-fit (``allocator.FirstFitAllocator``).

Files (in one directory, named after the store)
    ``<name>.dat``, the data file. Bytes 0–63 are a header (little-endian, the rest zero)::

        offset  size  field
        0       8     magic        b"WIREEXTD"
        8       4     version      uint32, currently 1
        12      4     granularity  uint32, every extent starts at a multiple of it

    Records follow at offsets ≥ max(64, granularity). Offsets are 64-bit, so the file may grow past
    2 GB (it is written with ``os.pwrite`` and read with ``os.pread``/``mmap``). Free space is not
    recorded anywhere: it is whatever no live index record covers.

    ``<name>.idx``, a ``RecordFile`` of kind ``"extents"``: record *i* describes doc-id *i* (40 bytes,
    little-endian)::

        offset  size  field
        0       8     offset    uint64, where the stored bytes start in the data file
        8       4     size      uint32, number of stored bytes
        12      4     length    uint32, length of the raw content
        16      8     hash      uint64, xxh3-64 of the raw content
        24      4     flags     uint32: 1 = live, 2 = encoded (the stored bytes are not the raw
                                content, e.g. compressed); bits 8–31 belong to the user
        28      8     reserved  zero
        36      4     crc       zlib crc32 of bytes 0–35

    An all-zero record is an empty slot (no such doc, or deleted). Opening checks every record's
    crc (vectorized: ≈ 1 s for 10 million records).

Writing a record (``put``)
    1. first-fit allocation of a *free* extent (never one holding a live record, so the old bytes
       of the same doc-id stay intact);
    2. the bytes are written there;
    3. the index record is written: this is the commit;
    4. the old extent, if any, returns to the free list (in memory only).

Crash behaviour (``kill -9`` at any instant)
    Writes reach the kernel's page cache in the order above, and a killed process loses none of
    them. On reopen each index record is either the old one (the new bytes lie in what is free
    space again), the new one (the old extent is free again), or torn by the kill in the middle of
    step 3: its crc fails, and the record is cleared and logged, so that one doc-id loses its
    record. The free list is rebuilt from the live records, so live extents never overlap and no
    free space leaks. A record whose extent lies outside the data file is cleared too. ``delete``
    is a commit of an all-zero record; ``put_many`` commits record by record. ``close`` truncates
    the data file after the last live extent.
    The power-failure case is weaker: index pages may reach the disk before data pages, so records
    written since the last ``flush()`` may point at stale bytes; ``get`` and ``check`` find them by
    the hash.

Reading (``readonly=True``)
    Opens without writing anything and without an allocator; records with a bad crc count as absent.
"""

from __future__ import annotations

import logging
import mmap
import os
import struct
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
from xxhash import xxh3_64_intdigest

from .allocator import FirstFitAllocator, OverlapError
from .records import RecordFile

logger = logging.getLogger(__name__)

LIVE = 0x1
ENCODED = 0x2

DATA_MAGIC = b"WIREEXTD"
DATA_VERSION = 1
DATA_HEADER_SIZE = 64
INDEX_KIND = "extents"
INDEX_DTYPE = np.dtype(
    [
        ("offset", "<u8"),
        ("size", "<u4"),
        ("length", "<u4"),
        ("hash", "<u8"),
        ("flags", "<u4"),
        ("reserved", "<u8"),
        ("crc", "<u4"),
    ]
)
_RECORD = struct.Struct("<QIIQIQ")  # everything the crc covers
_CRC = struct.Struct("<I")
_OLD = struct.Struct("<QI12xI")  # offset, size, flags
_FIELDS = struct.Struct("<QIIQI")  # offset, size, length, hash, flags
_CRC_SPAN = _RECORD.size
_ITEMSIZE = INDEX_DTYPE.itemsize
_EMPTY = bytes(_ITEMSIZE)
_SCAN_CHUNK = 1 << 20
_WRITE_CHUNK = 1 << 24


class ExtentError(Exception):
    """The store is damaged (bytes not matching their hash, overlapping extents, bad header)."""


class Extent(NamedTuple):
    """One index record."""

    offset: int
    size: int
    length: int
    hash: int
    flags: int


class IndexArrays(NamedTuple):
    """The live index records as parallel numpy arrays, by increasing doc-id."""

    ids: np.ndarray
    offset: np.ndarray
    size: np.ndarray
    length: np.ndarray
    hash: np.ndarray
    flags: np.ndarray


# -- crc32 of many records at once --------------------------------------------------------------
# crc32 is affine over GF(2) for a fixed message length: crc(m) = crc(0) ^ XOR_j T_j[m_j], where
# T_j[v] is the crc change made by byte value v at position j. Taken two bytes at a time, that is
# 18 table look-ups per record, which numpy does for millions of records in a fraction of a second.
_crc_tables: np.ndarray | None = None


def _crc_word_tables() -> np.ndarray:
    global _crc_tables
    if _crc_tables is None:
        zero = bytes(_CRC_SPAN)
        crc0 = zlib.crc32(zero)
        byte_tables = np.empty((_CRC_SPAN, 256), dtype=np.uint32)
        msg = bytearray(_CRC_SPAN)
        for j in range(_CRC_SPAN):
            for v in range(256):
                msg[j] = v
                byte_tables[j, v] = zlib.crc32(msg) ^ crc0
            msg[j] = 0
        words = np.arange(1 << 16)
        _crc_tables = np.stack(
            [byte_tables[2 * k][words & 0xFF] ^ byte_tables[2 * k + 1][words >> 8] for k in range(_CRC_SPAN // 2)]
        )
    return _crc_tables


def record_crcs(records: np.ndarray) -> np.ndarray:
    """crc32 of bytes 0–35 of each record of ``INDEX_DTYPE``, vectorized (equals ``zlib.crc32``)."""
    tables = _crc_word_tables()
    words = np.ascontiguousarray(records).view(np.uint16).reshape(len(records), _ITEMSIZE // 2)
    crcs = np.full(len(records), zlib.crc32(bytes(_CRC_SPAN)), dtype=np.uint32)
    for k in range(_CRC_SPAN // 2):
        crcs ^= tables[k][words[:, k]]
    return crcs


def _pwrite_all(fd: int, data, offset: int) -> None:
    view = memoryview(data).cast("B")
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


def _pread_all(fd: int, size: int, offset: int) -> bytes:
    data = os.pread(fd, size, offset)
    while len(data) < size:
        more = os.pread(fd, size - len(data), offset + len(data))
        if not more:
            break
        data += more
    return data


class ExtentStore:
    """Variable-size records by doc-id (ids from 1) in ``<directory>/<name>.dat`` and ``.idx``."""

    def __init__(
        self,
        directory: str | os.PathLike,
        name: str,
        *,
        readonly: bool = False,
        granularity: int = 64,
        max_class: int = 1 << 16,
    ):
        directory = Path(directory)
        self.readonly = readonly
        self.data_path = directory / f"{name}.dat"
        self.index_path = directory / f"{name}.idx"
        if not self.data_path.exists():
            if readonly:
                raise FileNotFoundError(self.data_path)
            directory.mkdir(parents=True, exist_ok=True)
            self._create_data(granularity)
        self._fd = os.open(self.data_path, os.O_RDONLY if readonly else os.O_RDWR)
        try:
            self.granularity = self._read_data_header()
            self.base = -(-DATA_HEADER_SIZE // self.granularity) * self.granularity
            self._index = RecordFile(self.index_path, INDEX_DTYPE, INDEX_KIND, readonly=readonly)
        except BaseException:
            os.close(self._fd)
            raise
        self._view: memoryview | None = None
        self._take_view()
        self._buf = bytearray(_ITEMSIZE)
        self._crc_span = memoryview(self._buf)[:_CRC_SPAN]
        self._bad: set[int] = set()
        self._alloc = None if readonly else FirstFitAllocator(self.granularity, self.base, max_class)
        try:
            self._open_index()
        except BaseException:
            self._release()
            raise

    # -- opening -----------------------------------------------------------------------------------

    def _create_data(self, granularity: int) -> None:
        if granularity < 4 or granularity & (granularity - 1):
            raise ValueError(f"granularity must be a power of two ≥ 4, not {granularity}")
        header = bytearray(DATA_HEADER_SIZE)
        struct.pack_into("<8sII", header, 0, DATA_MAGIC, DATA_VERSION, granularity)
        tmp = self.data_path.with_name(self.data_path.name + ".new")
        with open(tmp, "wb") as f:
            f.write(header)
        os.replace(tmp, self.data_path)  # a half-created file is never seen under the real name

    def _read_data_header(self) -> int:
        header = os.pread(self._fd, DATA_HEADER_SIZE, 0)
        if len(header) < 16 or header[:8] != DATA_MAGIC:
            raise ExtentError(f"{self.data_path}: not a wirescrapy extent data file")
        version, granularity = struct.unpack_from("<II", header, 8)
        if version != DATA_VERSION:
            raise ExtentError(f"{self.data_path}: data file version {version}, expected {DATA_VERSION}")
        return granularity

    def _take_view(self) -> None:
        self._view = memoryview(self._index.records).cast("B")
        self._capacity = self._index.capacity

    def _drop_view(self) -> None:
        if self._view is not None:
            self._view.release()
            self._view = None

    def _grow(self, doc_id: int) -> None:
        if isinstance(doc_id, bool) or not isinstance(doc_id, (int, np.integer)) or doc_id < 1:
            raise ValueError(f"doc-id must be a positive integer, not {doc_id!r}")
        if self.readonly:
            raise PermissionError(f"{self.index_path}: opened read-only")
        if doc_id <= self._capacity:
            return
        self._drop_view()
        self._index.ensure(int(doc_id))
        self._take_view()

    def _open_index(self) -> None:
        """Check every index record, clear torn ones, and rebuild the free list from the live ones."""
        records = self._index.records
        data_size = os.fstat(self._fd).st_size
        highest = 0
        live_ids, torn_ids, damaged_ids = [], [], []
        for lo in range(1, len(records), _SCAN_CHUNK):
            chunk = records[lo : lo + _SCAN_CHUNK]
            used = np.flatnonzero(chunk.view(np.uint64).reshape(len(chunk), -1).any(axis=1))
            if not len(used):
                continue
            rows = chunk[used]
            ok = record_crcs(rows) == rows["crc"]
            torn_ids.append(used[~ok] + lo)
            live = ok & (rows["flags"] & LIVE != 0)
            off, size = rows["offset"].astype(np.int64), rows["size"].astype(np.int64)
            bad_place = (size > 0) & ((off % self.granularity != 0) | (off < self.base) | (off + size > data_size))
            damaged_ids.append(used[live & bad_place] + lo)
            live_ids.append(used[live & ~bad_place] + lo)
            if ok.any():
                highest = max(highest, int(used[ok][-1]) + lo)
        torn = np.concatenate(torn_ids) if torn_ids else np.empty(0, np.int64)
        damaged = np.concatenate(damaged_ids) if damaged_ids else np.empty(0, np.int64)
        ids = np.concatenate(live_ids) if live_ids else np.empty(0, np.int64)
        for what, bad in (("torn", torn), ("damaged", damaged)):
            if len(bad):
                logger.warning(
                    "%(path)s: %(count)d %(what)s index record(s) %(action)s (doc-ids %(ids)s)",
                    {
                        "path": self.index_path,
                        "count": len(bad),
                        "what": what,
                        "action": "ignored" if self.readonly else "cleared",
                        "ids": bad[:20].tolist(),
                    },
                )
        if self.readonly:
            self._bad = set(torn.tolist()) | set(damaged.tolist())
        else:
            if len(torn) or len(damaged):
                records[np.concatenate((torn, damaged))] = np.zeros(1, INDEX_DTYPE)
            if highest > self._index.count:
                self._index.count = highest  # records written just before a kill, ahead of the count
        self._count = self._index.count
        offsets = records["offset"][ids].astype(np.int64)
        sizes = records["size"][ids].astype(np.int64)
        self._live_count = len(ids)
        self._live_bytes = int(sizes.sum())
        if self._alloc is not None:
            try:
                self._alloc.rebuild(offsets, sizes)
            except OverlapError as exc:
                raise ExtentError(f"{self.index_path}: {exc}") from None

    # -- records -----------------------------------------------------------------------------------

    def record(self, doc_id: int) -> Extent | None:
        """The index record of a live doc-id, or None."""
        if not 0 < doc_id <= self._capacity:
            if self.readonly and doc_id > 0:
                self.refresh()
                if doc_id <= self._capacity:
                    return self.record(doc_id)
            return None
        pos = int(doc_id) * _ITEMSIZE
        fields = _FIELDS.unpack_from(self._view, pos)
        if not fields[4] & LIVE:
            return None
        if self.readonly and (
            doc_id in self._bad
            or zlib.crc32(self._view[pos : pos + _CRC_SPAN]) != _CRC.unpack_from(self._view, pos + _CRC_SPAN)[0]
        ):
            return None
        return Extent(*fields)

    def __contains__(self, doc_id: int) -> bool:
        return self.record(doc_id) is not None

    def __len__(self) -> int:
        """Number of live records."""
        return self._live_count

    @property
    def max_id(self) -> int:
        """Highest doc-id that has had a record (the index count)."""
        return self._count

    @property
    def live_bytes(self) -> int:
        """Stored bytes of the live records."""
        return self._live_bytes

    @property
    def end(self) -> int:
        """Used length of the data file: allocator end when writing, file size when reading."""
        if self._alloc is not None:
            return self._alloc.end
        return os.fstat(self._fd).st_size

    @property
    def allocator(self) -> FirstFitAllocator | None:
        return self._alloc

    def get(self, doc_id: int) -> bytes | None:
        """The stored bytes of ``doc_id``, or None. Raises ``ExtentError`` if they fail their hash."""
        rec = self.record(doc_id)
        if rec is None:
            return None
        return self.read(doc_id, rec)

    def read(self, doc_id: int, rec: Extent, verify: bool = True) -> bytes:
        """The stored bytes of a record got from ``record``, checked against its hash (unless encoded
        or ``verify`` is false: a caller comparing them with content of that hash needs no check)."""
        data = _pread_all(self._fd, rec.size, rec.offset) if rec.size else b""
        if len(data) != rec.size or (
            verify and not rec.flags & ENCODED and xxh3_64_intdigest(data) != rec.hash
        ):
            raise ExtentError(f"{self.data_path}: doc-id {doc_id}: stored bytes do not match the index")
        return data

    def put(self, doc_id: int, data, *, length: int = -1, hash: int | None = None, flags: int = 0) -> None:
        """Store ``data`` (bytes-like) as the record of ``doc_id``, replacing any previous one.

        ``hash`` and ``length`` describe the raw content; by default they are computed from ``data``.
        Encoded data (``flags`` has ``ENCODED``) must give them.
        """
        if not 0 < doc_id <= self._capacity or self.readonly:
            self._grow(doc_id)
        doc_id = int(doc_id)  # numpy integers would overflow in the arithmetic below
        pos = doc_id * _ITEMSIZE
        old_offset, old_size, old_flags = _OLD.unpack_from(self._view, pos)
        size = len(data)
        if hash is None:
            hash = xxh3_64_intdigest(data)
            length = size
        elif length < 0:
            raise ValueError("a record given its hash must also be given its length")
        if size:
            offset = self._alloc.allocate(size)
            try:
                written = os.pwrite(self._fd, data, offset)
                if written != size:
                    _pwrite_all(self._fd, memoryview(data).cast("B")[written:], offset + written)
            except BaseException:
                self._alloc.free(offset, size)
                raise
        else:
            offset = 0
        buf = self._buf
        _RECORD.pack_into(buf, 0, offset, size, length, hash, flags | LIVE, 0)
        _CRC.pack_into(buf, _CRC_SPAN, zlib.crc32(self._crc_span))
        self._view[pos : pos + _ITEMSIZE] = buf  # the commit
        if doc_id > self._count:
            self._count = self._index.count = doc_id
        if old_flags & LIVE:
            self._alloc.free(old_offset, old_size)
            self._live_bytes += size - old_size
        else:
            self._live_count += 1
            self._live_bytes += size

    def delete(self, doc_id: int) -> bool:
        """Remove the record of ``doc_id``; False if it had none."""
        if self.readonly:
            raise PermissionError(f"{self.index_path}: opened read-only")
        if not 0 < doc_id <= self._capacity:
            return False
        pos = int(doc_id) * _ITEMSIZE
        old_offset, old_size, old_flags = _OLD.unpack_from(self._view, pos)
        if not old_flags & LIVE:
            return False
        self._view[pos : pos + _ITEMSIZE] = _EMPTY  # the commit
        self._alloc.free(old_offset, old_size)
        self._live_count -= 1
        self._live_bytes -= old_size
        return True

    def put_many(self, doc_ids, data, sizes, *, flags: int = 0) -> None:
        """Store many records at once: ``data`` is their bytes concatenated, ``sizes`` their lengths.

        The records go to one extent allocated first-fit for all of them, written with one system
        call per 16 MiB; the index records are then written together. Meant for bulk loads: a kill
        in the middle commits some of the records, each wholly, except possibly one torn record
        (cleared on open).
        """
        if self.readonly:
            raise PermissionError(f"{self.index_path}: opened read-only")
        ids = np.asarray(doc_ids, dtype=np.int64).ravel()
        sizes = np.asarray(sizes, dtype=np.int64).ravel()
        data = memoryview(data).cast("B")
        if ids.shape != sizes.shape:
            raise ValueError("doc_ids and sizes differ in length")
        if not len(ids):
            return
        if ids.min() < 1 or (sizes < 0).any() or int(sizes.sum()) != len(data):
            raise ValueError("doc-ids must be ≥ 1 and sizes ≥ 0, summing to the length of data")
        ordered = np.sort(ids)
        if (ordered[1:] == ordered[:-1]).any():
            raise ValueError("doc_ids must be distinct")
        starts = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=starts[1:])
        hashes = np.fromiter(
            (xxh3_64_intdigest(data[a:b]) for a, b in zip(starts[:-1].tolist(), starts[1:].tolist())),
            dtype=np.uint64,
            count=len(ids),
        )
        g = self.granularity
        rounded = (sizes + g - 1) // g * g
        placed = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(rounded, out=placed[1:])
        total = int(placed[-1])
        block = self._alloc.allocate(total) if total else 0
        try:
            self._write_padded(data, starts, sizes, placed, block)
        except BaseException:
            self._alloc.free(block, total)
            raise
        self._grow_to(int(ids.max()))
        records = self._index.records
        old = records[ids]
        new = np.zeros(len(ids), dtype=INDEX_DTYPE)
        new["offset"] = np.where(sizes > 0, block + placed[:-1], 0)
        new["size"] = sizes
        new["length"] = sizes
        new["hash"] = hashes
        new["flags"] = (flags & ~LIVE) | LIVE
        new["crc"] = record_crcs(new)
        records[ids] = new  # the commits, in order
        if ids.max() > self._count:
            self._count = self._index.count = int(ids.max())
        replaced = old["flags"] & LIVE != 0
        for offset, size in zip(old["offset"][replaced].tolist(), old["size"][replaced].tolist()):
            self._alloc.free(offset, size)
        self._live_count += int((~replaced).sum())
        self._live_bytes += int(sizes.sum()) - int(old["size"][replaced].sum(dtype=np.int64))

    def _grow_to(self, doc_id: int) -> None:
        if doc_id > self._capacity:
            self._grow(doc_id)

    def _write_padded(self, data: memoryview, starts, sizes, placed, block: int) -> None:
        """Write the records back to back, each padded to the granularity, in pieces of ≈ 16 MiB."""
        if (sizes % self.granularity == 0).all():
            for lo in range(0, len(data), _WRITE_CHUNK):
                _pwrite_all(self._fd, data[lo : lo + _WRITE_CHUNK], block + lo)
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
            _pwrite_all(self._fd, out, block + int(placed[i]))
            i = j

    # -- bulk access -------------------------------------------------------------------------------

    def index(self) -> IndexArrays:
        """All live index records as numpy arrays (a copy), by increasing doc-id."""
        records = self._index.records
        count = self._index.count
        ids = np.flatnonzero(records["flags"][1 : count + 1] & LIVE) + 1
        if self.readonly:
            if self._bad:
                ids = ids[~np.isin(ids, np.fromiter(self._bad, dtype=np.int64))]
            parts = np.split(ids, range(_SCAN_CHUNK, len(ids), _SCAN_CHUNK))
            ids = ids[np.concatenate([record_crcs(records[part]) == records["crc"][part] for part in parts])]
        return IndexArrays(ids, *(records[field][ids] for field in IndexArrays._fields[1:]))

    def records(self, doc_ids) -> np.ndarray:
        """The index records (``INDEX_DTYPE``) of many doc-ids; all-zero where there is none."""
        ids = np.asarray(doc_ids, dtype=np.int64).ravel()
        out = np.zeros(len(ids), dtype=INDEX_DTYPE)
        inside = (ids >= 1) & (ids <= self._capacity)
        out[inside] = self._index.records[ids[inside]]
        if self.readonly:
            bad = record_crcs(out) != out["crc"]
            if self._bad:
                bad |= np.isin(ids, np.fromiter(self._bad, dtype=np.int64))
            out[bad] = np.zeros(1, INDEX_DTYPE)
        return out

    def data_array(self) -> np.ndarray:
        """The whole data file as a read-only uint8 array over a shared mapping (for bulk reads)."""
        size = os.fstat(self._fd).st_size
        mapping = mmap.mmap(self._fd, size, access=mmap.ACCESS_READ)
        return np.frombuffer(mapping, dtype=np.uint8)

    # -- checking ----------------------------------------------------------------------------------

    def problems(self, read=None) -> list[str]:
        """What is wrong with the store: overlapping live extents, or records whose bytes fail
        ``read(doc_id, record)`` (by default ``self.read``, which checks them against their hash)."""
        read = read or self.read
        found = []
        index = self.index()
        used = index.size > 0
        order = np.argsort(index.offset[used], kind="stable")
        starts = index.offset[used][order].astype(np.int64)
        g = self.granularity
        ends = starts + (index.size[used][order].astype(np.int64) + g - 1) // g * g
        for i in np.flatnonzero(starts[1:] < ends[:-1]).tolist():
            found.append(f"{self.data_path}: extents at {starts[i]} and {starts[i + 1]} overlap")
        for doc_id in index.ids.tolist():
            try:
                read(doc_id, self.record(doc_id))
            except ExtentError as exc:
                found.append(str(exc))
        return found

    def check(self, read=None) -> None:
        """Raise ``ExtentError`` naming the first problems, if ``problems`` finds any."""
        found = self.problems(read)
        if found:
            raise ExtentError(f"{len(found)} problem(s): " + "; ".join(found[:5]))

    # -- lifecycle ---------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-map the index after another process grew it (readers)."""
        self._drop_view()
        self._index.refresh()
        self._take_view()
        self._count = self._index.count

    def flush(self) -> None:
        """Push everything to disk: the data first, then the index that points into it."""
        if self.readonly or self._fd is None:
            return
        os.fsync(self._fd)
        self._index.flush()

    def close(self) -> None:
        if self._fd is None:
            return
        if not self.readonly:
            os.ftruncate(self._fd, self._alloc.end)  # give back a freed tail
        self._release()

    def _release(self) -> None:
        self._drop_view()
        self._index.close()
        os.close(self._fd)
        self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


__all__ = [
    "ENCODED",
    "INDEX_DTYPE",
    "LIVE",
    "Extent",
    "ExtentError",
    "ExtentStore",
    "IndexArrays",
    "record_crcs",
]
