"""Variable-size records indexed by doc-id: WIRE's page-store layout (thesis §7.3.2).

Both the page contents and the link graph are stored this way: one data file holding the records
anywhere, and one index with a fixed-size record per doc-id telling where its bytes are. Space freed
by a replaced or deleted record is reused first-fit (``allocator.FirstFitAllocator``).

Files (in one directory, named after the store; each format is described in its module)
    ``<name>.dat``, the data file (``extentdata.py``): a header, then the stored bytes of the records
    anywhere, each extent at a multiple of the granularity.

    ``<name>.idx``, the index (``extentindex.py``): record *i*, 40 bytes with a crc, tells where the
    bytes of doc-id *i* are, their length and hash, and whether they are live; all zero if none.

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
import os
import zlib
from pathlib import Path

import numpy as np
from xxhash import xxh3_64_intdigest

from .allocator import FirstFitAllocator, OverlapError
from .extentdata import DataFile, ExtentError, pread_all, pwrite_all
from .extentindex import (
    CRC,
    CRC_SPAN,
    EMPTY,
    ENCODED,
    FIELDS,
    INDEX_DTYPE,
    INDEX_KIND,
    LIVE,
    PLACE,
    RECORD,
    RECORD_SIZE,
    Extent,
    IndexArrays,
    intact,
    overlaps,
    record_crcs,
    scan,
)
from .records import RecordFile

logger = logging.getLogger(__name__)


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
        self._data = DataFile(self.data_path, readonly=readonly, granularity=granularity)
        self._fd = self._data.fd
        self.granularity = self._data.granularity
        self.base = self._data.base
        try:
            self._index = RecordFile(self.index_path, INDEX_DTYPE, INDEX_KIND, readonly=readonly)
        except BaseException:
            self._data.close()
            raise
        self._view: memoryview | None = None
        self.id_limit = None  # a callable: the highest doc-id writable (check_id); None: any
        self._take_view()
        self._buf = bytearray(RECORD_SIZE)
        self._crc_span = memoryview(self._buf)[:CRC_SPAN]
        self._bad: set[int] = set()
        self._alloc = None if readonly else FirstFitAllocator(self.granularity, self.base, max_class)
        try:
            self._open_index()
        except BaseException:
            self._release()
            raise

    # -- opening -----------------------------------------------------------------------------------

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
        ids, torn, damaged, highest = scan(records, self.granularity, self.base, self._data.size())
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
            if highest > self._index.count:  # noqa: PLR1730 -- setting the count writes the header
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
        pos = int(doc_id) * RECORD_SIZE
        fields = FIELDS.unpack_from(self._view, pos)
        if not fields[4] & LIVE:
            return None
        if self.readonly and (
            doc_id in self._bad
            or zlib.crc32(self._view[pos : pos + CRC_SPAN]) != CRC.unpack_from(self._view, pos + CRC_SPAN)[0]
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
        return self._data.size()

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
        data = pread_all(self._fd, rec.size, rec.offset) if rec.size else b""
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
        self.check_id(doc_id)
        doc_id = int(doc_id)  # numpy integers would overflow in the arithmetic below
        pos = doc_id * RECORD_SIZE
        old_offset, old_size, old_flags = PLACE.unpack_from(self._view, pos)
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
                    pwrite_all(self._fd, memoryview(data).cast("B")[written:], offset + written)
            except BaseException:
                self._alloc.free(offset, size)
                raise
        else:
            offset = 0
        buf = self._buf
        RECORD.pack_into(buf, 0, offset, size, length, hash, flags | LIVE, 0)
        CRC.pack_into(buf, CRC_SPAN, zlib.crc32(self._crc_span))
        self._view[pos : pos + RECORD_SIZE] = buf  # the commit
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
        pos = int(doc_id) * RECORD_SIZE
        old_offset, old_size, old_flags = PLACE.unpack_from(self._view, pos)
        if not old_flags & LIVE:
            return False
        self._view[pos : pos + RECORD_SIZE] = EMPTY  # the commit
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
        self.check_id(int(ordered[-1]))
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
            self._data.write_padded(data, starts, sizes, placed, block)
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

    def check_id(self, highest: int) -> None:
        if self.id_limit is not None and highest > (limit := self.id_limit()):
            raise ValueError(f"{self.index_path.name}: doc-id {highest} is past the last document ({limit})")

    def _grow_to(self, doc_id: int) -> None:
        if doc_id > self._capacity:
            self._grow(doc_id)

    # -- bulk access -------------------------------------------------------------------------------

    def index(self) -> IndexArrays:
        """All live index records as numpy arrays (a copy), by increasing doc-id."""
        records = self._index.records
        count = self._index.count
        ids = np.flatnonzero(records["flags"][1 : count + 1] & LIVE) + 1
        if self.readonly:
            if self._bad:
                ids = ids[~np.isin(ids, np.fromiter(self._bad, dtype=np.int64))]
            ids = intact(records, ids)
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
        return self._data.array()

    # -- checking ----------------------------------------------------------------------------------

    def problems(self, read=None) -> list[str]:
        """What is wrong with the store: overlapping live extents, or records whose bytes fail
        ``read(doc_id, record)`` (by default ``self.read``, which checks them against their hash)."""
        read = read or self.read
        found = []
        index = self.index()
        for start, next_start in overlaps(index, self.granularity):
            found.append(f"{self.data_path}: extents at {start} and {next_start} overlap")
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
        self._data.flush()
        self._index.flush()

    def close(self) -> None:
        if self._fd is None:
            return
        if not self.readonly:
            self._data.truncate(self._alloc.end)  # give back a freed tail (shrinking takes no room)
        self._release()

    def _release(self) -> None:
        self._drop_view()
        self._index.close()
        self._data.close()
        self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# The page store and the link graph take these from here.
__all__ = ["ENCODED", "LIVE", "Extent", "ExtentError", "ExtentStore"]
