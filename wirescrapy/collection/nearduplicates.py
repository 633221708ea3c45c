"""Near-duplicates in the collection: each document's SimHash and cluster (``NearDuplicateFile``), and the
index that finds, for a fingerprint, the stored pages within a few bits of it (``NearDuplicateIndex``).

The fingerprints are a side file of fixed-size records by doc-id, ``nearduplicates.rec``, beside the document
records rather than inside them: the document record stays as small as it is, and a collection of an earlier
wirescrapy has no such file, which is the same as every page not fingerprinted yet (each gets one at its next
visit). Little-endian::

    offset     size  field
    0          8     magic     b"WIRENDUP"
    8          4     version   uint32, currently 1
    12         4     itemsize  uint32, 16
    16 * id    8     simhash   uint64, the page's fingerprint (gatherer/simhash.py)
    16 * id+8  4     cluster   uint32, the doc-id of its cluster's representative (its own if it is one)
    16 * id+12 1     state     uint8: 0 not fingerprinted, 1 fingerprinted, 2 too little text for one
    16 * id+13 1     moved     uint8, bits its fingerprint moved at its last visit (255: no earlier one)
    16 * id+14 2     pad

Record 0 is the header, as in ``records.py``. The file grows in steps, zero-filled, its space allocated on
disk when it grows (a full disk is an ``OSError`` there, not a ``SIGBUS`` later). Crash behaviour: records
are written through a shared mapping, so a kill loses nothing written before it; the record being written
may be torn, which is one page with a wrong fingerprint until its next visit.

The index holds the fingerprints in ``BANDS`` tables, one per 16-bit band (Manku, Jain and Das Sarma's
permuted tables, with four bands). Two fingerprints within 3 bits agree in at least one band whole: each
differing bit spoils one band at most. Within 7 bits, they agree in one band but for one bit at most. So a
lookup reads the query's bucket in each table, and for a threshold over 3 also the 16 buckets one bit away,
and compares their fingerprints whole. A bucket holds a 65,536th of the pages, so a lookup's time grows
with the collection by that fraction only. Fewer, wider bands would read fewer fingerprints but many more
buckets, and a lookup's time is the memory's latency, one miss a bucket: four is the layout that reads the
least at a threshold of 7 (``benchmarks/nearduplicates.py --index`` times others). The layout that reads
one bucket a table at 7 bits needs hundreds of tables: too much memory for millions of pages. Each table is
a bucket table over fingerprints sorted by bucket (numpy), as many buckets as pages up to a band's 16 bits;
the lookup is a small C loop (``_nearindex.c``) that puts the reads of all its buckets in flight at once.
The fingerprints added since the last merge are scanned whole. The index is built from the side file when a
crawl opens, so it needs no file of its own.
"""

from __future__ import annotations

import mmap
import os
from itertools import combinations
from pathlib import Path

import numpy as np

from ._nearindex import lookup
from .records import allocate

MAGIC = b"WIRENDUP"
VERSION = 1
FILE_NAME = "nearduplicates.rec"
RECORD_DTYPE = np.dtype(
    [("simhash", "<u8"), ("cluster", "<u4"), ("state", "u1"), ("moved", "u1"), ("pad", "V2")]
)
_HEADER_DTYPE = np.dtype([("magic", "S8"), ("version", "<u4"), ("itemsize", "<u4")])
_GROWTH_RECORDS = 1 << 10

NOT_FINGERPRINTED, FINGERPRINTED, NO_FINGERPRINT = 0, 1, 2
NO_EARLIER = 255  # ``moved`` of a page with no earlier fingerprint

BANDS = 4  # tables, one per band of the fingerprint: 16 bits each
MAX_DISTANCE = 7  # the largest threshold: the labelled real pages chose it (benchmarks/README.md)
EXACT_DISTANCE = BANDS - 1  # within this, a near fingerprint agrees with the query in a band whole
MAX_BUCKET_BITS = 21  # a band's top bits that choose its bucket, at most: a bucket table of 2**21 rows
MIN_BUCKET_BITS = 8


class NearDuplicateFileError(Exception):
    """The file is no near-duplicate file of this version."""


class NearDuplicateFile:
    """The fingerprint records, ``records[doc_id]``; ids past ``capacity`` have none yet (all zero)."""

    def __init__(self, directory: str | os.PathLike, readonly: bool = False):
        self.path = Path(directory) / FILE_NAME
        self.readonly = readonly
        self._mmap: mmap.mmap | None = None
        self._fd: int | None = None
        if not self.path.exists():
            if readonly:
                self.records = np.zeros(1, RECORD_DTYPE)  # an earlier collection: nothing fingerprinted
                return
            self._create()
        self._fd = os.open(self.path, os.O_RDONLY if readonly else os.O_RDWR)
        self._map()
        head = self.records[:1].view(_HEADER_DTYPE)[0]
        if head["magic"] != MAGIC or head["version"] != VERSION or head["itemsize"] != RECORD_DTYPE.itemsize:
            self.close()
            raise NearDuplicateFileError(f"{self.path}: not a near-duplicate file of version {VERSION}")

    def _create(self) -> None:
        header = np.zeros(1, RECORD_DTYPE)
        header.view(_HEADER_DTYPE)[0] = (MAGIC, VERSION, RECORD_DTYPE.itemsize)
        tmp = self.path.with_name(self.path.name + ".new")
        try:
            with open(tmp, "wb") as f:
                f.write(header.tobytes())
                f.flush()
                # Only the header: the space for records is allocated as they come (``ensure``), so that
                # opening a collection on a nearly full disk takes none of the room its pages need.
                os.fsync(f.fileno())
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, self.path)  # a half-created file is never seen under the real name

    def _map(self) -> None:
        size = os.fstat(self._fd).st_size // RECORD_DTYPE.itemsize * RECORD_DTYPE.itemsize
        if size < RECORD_DTYPE.itemsize:
            raise NearDuplicateFileError(f"{self.path}: too short to hold a header")
        access = mmap.ACCESS_READ if self.readonly else mmap.ACCESS_WRITE
        self._mmap = mmap.mmap(self._fd, size, access=access)
        self.records = np.frombuffer(self._mmap, RECORD_DTYPE)

    def _unmap(self) -> None:
        self.records = None
        mapped, self._mmap = self._mmap, None
        if mapped is not None:
            try:
                mapped.close()
            except BufferError:
                pass  # a record view handed out still points into it: unmapped when that view goes

    @property
    def capacity(self) -> int:
        return len(self.records) - 1

    def ensure(self, doc_id: int) -> None:
        """Grow the file so that ``doc_id`` has a record (zero: not fingerprinted)."""
        if doc_id <= self.capacity:
            return
        if self.readonly:
            raise NearDuplicateFileError(f"{self.path}: opened read-only")
        want = max(doc_id + 1, (self.capacity + 1) * 5 // 4, self.capacity + 1 + _GROWTH_RECORDS)
        self._unmap()
        try:
            allocate(self._fd, want * RECORD_DTYPE.itemsize)
        finally:
            self._map()

    def get(self, doc_id: int) -> np.void | None:
        """The record of ``doc_id``, or None if it has none yet."""
        return self.records[doc_id] if 0 < doc_id <= self.capacity else None

    def put(self, doc_id: int, simhash: int | None, cluster: int, moved: int) -> None:
        if doc_id < 1:
            raise ValueError(f"no document {doc_id}")
        self.ensure(doc_id)
        state = NO_FINGERPRINT if simhash is None else FINGERPRINTED
        self.records[doc_id] = (simhash or 0, cluster, state, moved, b"\0\0")

    def flush(self) -> None:
        if self._mmap is not None and not self.readonly:
            self._mmap.flush()

    def close(self) -> None:
        self.flush()
        self._unmap()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class NearDuplicateIndex:
    """Fingerprint → doc-ids within ``distance`` bits (at most ``MAX_DISTANCE``). ``add`` one at a time;
    ``build`` from arrays. An entry whose doc-id has since moved to another fingerprint is the caller's to
    skip (``query`` returns what was added). ``bands``: the tables; fewer, wider bands read fewer
    fingerprints a lookup but more buckets (``BANDS`` is the layout chosen)."""

    def __init__(self, distance: int = MAX_DISTANCE, merge_at: int = 1 << 14, bands: int = BANDS):
        if not 0 <= distance <= MAX_DISTANCE:
            raise ValueError(f"distance must be 0 to {MAX_DISTANCE}, got {distance!r}")
        if not 3 <= bands <= 8:
            raise ValueError(f"bands must be 3 to 8, got {bands!r}")
        self.distance = distance
        self.merge_at = merge_at
        self.bands = bands
        # The bands cover the 64 bits, the last ones a bit wider when 64 does not divide evenly.
        width, wider = divmod(64, bands)
        widths = [width + (band >= bands - wider) for band in range(bands)]
        offsets = np.cumsum([0, *widths[:-1]])
        # Pigeonhole: fingerprints within ``distance`` bits differ in at most ``distance // bands`` bits in
        # some band, so a lookup reads, in each table, the buckets of the query's band with that many bits
        # flipped or fewer.
        radius = distance // bands
        self._flips = [np.array(_masks(width, radius), np.uint64) for width in widths]
        self._max_bits = min(MAX_BUCKET_BITS, *widths)
        self._widths = np.array(widths, np.int64)
        self._offsets = offsets.astype(np.uint64)
        self._pending = np.empty(merge_at, np.uint64)  # added since the last merge, scanned whole
        self._pending_ids = np.empty(merge_at, np.uint32)
        self._count = 0
        self._set(np.empty(0, np.uint64), np.empty(0, np.uint32))

    def __len__(self) -> int:
        return self._size + self._count

    @property
    def nbytes(self) -> int:
        return self._hashes.nbytes + self._ids.nbytes + self._start.nbytes + self._pending.nbytes * 3 // 2

    def build(self, simhashes: np.ndarray, doc_ids: np.ndarray) -> None:
        """Replace the contents with these fingerprints and their doc-ids."""
        self._set(np.asarray(simhashes, np.uint64), np.asarray(doc_ids, np.uint32))
        self._count = 0

    def _bits_for(self, size: int) -> int:
        # About a fingerprint a bucket, up to MAX_BUCKET_BITS: the bucket table grows with the collection.
        return min(self._max_bits, max(MIN_BUCKET_BITS, size.bit_length()))

    def _buckets(self, simhashes: np.ndarray, band: int) -> np.ndarray:
        """The bucket of each fingerprint in ``band``'s table: the band's top bits."""
        value = simhashes >> self._offsets[band]
        shift = self._widths[band] - self._bucket_bits
        return ((value & np.uint64((1 << int(self._widths[band])) - 1)) >> np.uint64(shift)).astype(np.int64)

    def _set(self, simhashes: np.ndarray, doc_ids: np.ndarray) -> None:
        size = len(simhashes)
        self._bucket_bits = self._bits_for(size)
        buckets = 1 << self._bucket_bits
        self._start = np.zeros((self.bands, buckets + 1), np.int64)
        hashes = np.empty(self.bands * size, np.uint64)  # band b's table is hashes[b * size : (b + 1) * size]
        ids = np.empty(self.bands * size, np.uint32)
        for band in range(self.bands):
            keys = self._buckets(simhashes, band)
            order = np.argsort(keys, kind="stable")
            hashes[band * size : (band + 1) * size] = simhashes[order]
            ids[band * size : (band + 1) * size] = doc_ids[order]
            np.cumsum(np.bincount(keys, minlength=buckets), out=self._start[band, 1:])
            self._start[band] += band * size
        self._hashes, self._ids, self._size = hashes, ids, size
        self._start_flat = self._start.ravel()
        self._row_offsets = (np.arange(self.bands, dtype=np.int64) * (buckets + 1))[:, None]
        # The buckets a lookup reads in each table: its band's bucket, XOR each flip cut to the bucket's bits
        # (flips of the bits below them lead to one bucket, read once).
        flips = [
            np.unique(f >> np.uint64(width - self._bucket_bits))
            for f, width in zip(self._flips, self._widths)
        ]
        band_of = np.concatenate([np.full(len(f), band) for band, f in enumerate(flips)])
        self._probe_flip = np.concatenate(flips)
        self._probe_offset = self._offsets[band_of]
        self._probe_mask = ((np.uint64(1) << self._widths.astype(np.uint64)) - np.uint64(1))[band_of]
        self._probe_shift = (self._widths - self._bucket_bits).astype(np.uint64)[band_of]
        self._probe_row = band_of.astype(np.int64) * (buckets + 1)

    def add(self, simhash: int, doc_id: int) -> None:
        self._pending[self._count] = simhash
        self._pending_ids[self._count] = doc_id
        self._count += 1
        if self._count >= self.merge_at:
            self.merge()

    def merge(self) -> None:
        """Fold the fingerprints added one at a time into the tables: each goes at the end of its bucket in
        every table, one copy of the tables for all of them (amortised over ``merge_at``). When the
        collection has grown into wider buckets, the tables are built again."""
        if not self._count:
            return
        new, new_ids = self._pending[: self._count].copy(), self._pending_ids[: self._count].copy()
        count, self._count = len(new), 0
        size = self._size + count
        if self._bits_for(size) != self._bucket_bits:
            self._set(
                np.concatenate((self._hashes[: self._size], new)),
                np.concatenate((self._ids[: self._size], new_ids)),
            )
            return
        keys = np.stack([self._buckets(new, band) for band in range(self.bands)])
        rows = keys + self._row_offsets  # each new entry's bucket, as a row of the bucket table
        where = self._start_flat[(rows + 1).ravel()]  # the end of its bucket, in the old tables
        order = np.lexsort((keys.ravel(), where))  # new entries meeting at one place go in bucket order
        self._hashes = np.insert(self._hashes, where[order], np.tile(new, self.bands)[order])
        self._ids = np.insert(self._ids, where[order], np.tile(new_ids, self.bands)[order])
        for band in range(self.bands):
            added = np.bincount(keys[band], minlength=1 << self._bucket_bits)
            self._start[band, 1:] += np.cumsum(added) + band * count
            self._start[band, 0] += band * count
        self._size = size

    def query(self, simhash: int) -> list[tuple[int, int]]:
        """``(distance, doc_id)`` of the fingerprints within the index's distance, nearest first (then the
        lowest doc-id); a doc-id once per fingerprint it was added with."""
        found: dict[int, int] = {}
        query = np.uint64(simhash)
        if self._size:
            # Every bucket to read, at once: each table's bucket of the query's band with each flip.
            for distance, doc_id in lookup(
                self._hashes,
                self._ids,
                self._start_flat,
                self._probe_offset,
                self._probe_mask,
                self._probe_shift,
                self._probe_flip,
                self._probe_row,
                simhash,
                self.distance,
            ):
                found[doc_id] = min(found.get(doc_id, 64), distance)
        if self._count:
            distances = np.bitwise_count(self._pending[: self._count] ^ query)
            near = np.flatnonzero(distances <= self.distance)
            for doc_id, distance in zip(
                self._pending_ids[near].tolist(), distances[near].tolist(), strict=True
            ):
                found[doc_id] = min(found.get(doc_id, 64), distance)
        return sorted((distance, doc_id) for doc_id, distance in found.items())


def _masks(width: int, bits: int) -> list[int]:
    """Every mask of ``width`` bits with at most ``bits`` of them set, 0 first."""
    return [
        sum(1 << bit for bit in chosen) for n in range(bits + 1) for chosen in combinations(range(width), n)
    ]


def load_index(file: NearDuplicateFile, distance: int = MAX_DISTANCE) -> NearDuplicateIndex:
    """The index of every fingerprinted page of ``file``."""
    index = NearDuplicateIndex(distance)
    records = file.records[1:]
    ids = np.flatnonzero(records["state"] == FINGERPRINTED) + 1
    index.build(records["simhash"][ids - 1], ids)
    return index


def assign(
    index: NearDuplicateIndex, file: NearDuplicateFile, doc_id: int, simhash: int | None
) -> tuple[int, int]:
    """Record ``doc_id``'s new fingerprint: its cluster is that of the nearest stored page within the index's
    distance (its representative was fetched first), or its own if none is near. Returns ``(cluster, moved)``,
    ``moved`` the bits its fingerprint moved since its last visit (``NO_EARLIER`` if it had none)."""
    old = file.get(doc_id)
    earlier = old is not None and old["state"] == FINGERPRINTED
    if simhash is None:
        file.put(doc_id, None, 0, NO_EARLIER)
        return 0, NO_EARLIER
    moved = ((int(old["simhash"]) ^ simhash).bit_count()) if earlier else NO_EARLIER
    cluster = doc_id
    if earlier and moved <= index.distance:
        cluster = int(old["cluster"])  # a change within its cluster: it stays, representative or not
    else:
        for _, other in index.query(simhash):
            record = file.get(other)
            if other == doc_id or record is None or record["state"] != FINGERPRINTED:
                continue
            if (int(record["simhash"]) ^ simhash).bit_count() > index.distance:
                continue  # the entry is an older fingerprint of that page
            cluster = int(record["cluster"]) or other
            break
    file.put(doc_id, simhash, cluster, moved)
    if not earlier or moved:
        index.add(simhash, doc_id)
    return cluster, moved
