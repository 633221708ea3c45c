"""The URL store: site name → site-id, (site-id, path) → doc-id, and back (thesis §7.3.3).

As in WIRE, a URL is split into its site and its path. The site name is the URL's origin
(``scheme://host[:port]``, the unit robots.txt applies to); the path is everything after it (path and
query, never the fragment). Ids start at 1; 0 means "none".

Files (all little-endian):

``sites.log``
    One site name per line, in site-id order (line *i* is site-id *i*). Site names hold no newline.

``urls.log``
    One record per document, in doc-id order: ``site_id uint32, length uint16, path bytes``. Paths are
    at most 65,535 bytes.

``urls.blk``
    uint64 offset in ``urls.log`` of every ``BLOCK``-th record (doc-ids 1, 1+BLOCK, ...): the reverse
    lookup reads one block and walks to its record, for half a byte per URL instead of eight.

``urls.fpi``
    Checkpoint of the fingerprint index (``fingerprints.py``): sorted xxh3-64 fingerprints of
    (site-id, path) → doc-id, and how many log records it covers.

The logs are the truth; everything else is derived and rebuilt from them. Fingerprints are 64-bit, as in
Mercator: at 10M URLs the chance that two different URLs share one is about 3·10⁻⁶.

Crash behaviour: each ``add`` reaches the kernel in one ``write`` before it returns, so a killed process
loses nothing acknowledged. On open, a torn last record (or line) is cut off, ``urls.blk`` is completed from
the log, and records past the checkpoint are replayed into the index. A second writer is kept out by the
collection's lock, not here.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import NamedTuple

import numpy as np
from xxhash import xxh3_64_intdigest

from .fingerprints import FingerprintIndex
from .writes import short_write

BLOCK = 16
MAX_PATH = 0xFFFF
PATH_PAD = 16  # zero bytes around those ``URLStore.path_arrays`` reads
_RECORD = struct.Struct("<IH")


class URLStoreError(Exception):
    pass


class PathArrays(NamedTuple):
    """The site-ids and paths of consecutive documents as arrays (``URLStore.path_arrays``): the *i*-th of
    them (from 0) is of site ``site_ids[i]`` (uint32) and has the path ``data[starts[i] : starts[i] +
    lengths[i]]`` (int64 positions in the uint8 array ``data``, which may hold other bytes between paths)."""

    site_ids: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    data: np.ndarray


def fingerprint(site_id: int, path: bytes) -> int:
    """xxh3-64 of the URL's record in ``urls.log`` (site-id, length, path), so replay hashes log bytes as
    they lie.

    The site-id goes into the hashed bytes, not into xxh3's seed: for inputs of 4 to 8 bytes xxh3 only
    XORs the seed in, so short paths of nearby sites would collide.
    """
    if len(path) > MAX_PATH:
        raise ValueError(f"path of {len(path)} bytes is longer than {MAX_PATH}")
    return xxh3_64_intdigest(_RECORD.pack(site_id, len(path)) + path)


def _unaligned(data: np.ndarray, dtype: str, at: int) -> np.ndarray:
    """A view of ``data`` whose element *i* is the ``dtype`` value in its bytes from *i* + ``at`` on (the
    log's fields lie at any byte)."""
    dtype = np.dtype(dtype)
    return np.ndarray((len(data) - at - dtype.itemsize + 1,), dtype, data, at, (1,))


class URLStore:
    def __init__(self, directory: str | os.PathLike, readonly: bool = False, merge_at: int = 1 << 17):
        self.dir = Path(directory)
        self.readonly = readonly
        self._site_ids: dict[str, int] = {}
        self._site_names: list[str] = [""]
        self._open_sites()
        self._open_urls(merge_at)

    # -- opening and recovery ------------------------------------------------------------------------

    def _open_sites(self) -> None:
        path = self.dir / "sites.log"
        data = path.read_bytes() if path.exists() else b""
        complete = data.rfind(b"\n") + 1
        if complete < len(data) and not self.readonly:
            with open(path, "r+b") as f:  # a torn last line: the site being added at a kill
                f.truncate(complete)
        for name in data[:complete].decode("utf-8").splitlines():
            self._site_names.append(name)
            self._site_ids[name] = len(self._site_names) - 1
        self._sites_fd = None if self.readonly else os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    def _open_urls(self, merge_at: int) -> None:
        log_path, blk_path = self.dir / "urls.log", self.dir / "urls.blk"
        flags = os.O_RDONLY if self.readonly else os.O_RDWR | os.O_CREAT
        self._log_fd = os.open(log_path, flags)
        blocks = np.fromfile(blk_path, dtype="<u8") if blk_path.exists() else np.empty(0, "<u8")
        size = os.fstat(self._log_fd).st_size
        blocks = blocks[blocks < max(size, 1)]
        if len(blocks) == 0:
            blocks = np.zeros(1, dtype="<u8")
        # Re-walk from the last block start: counts the records and finds a torn tail.
        start = int(blocks[-1])
        tail = os.pread(self._log_fd, size - start, start)
        count = (len(blocks) - 1) * BLOCK
        pos, new_blocks = 0, []
        while pos + _RECORD.size <= len(tail):
            _, length = _RECORD.unpack_from(tail, pos)
            if pos + _RECORD.size + length > len(tail):
                break
            if count % BLOCK == 0 and count // BLOCK == len(blocks) + len(new_blocks):
                new_blocks.append(start + pos)
            pos += _RECORD.size + length
            count += 1
        end = start + pos
        if end < size and not self.readonly:
            os.ftruncate(self._log_fd, end)
        self._blocks = list(np.concatenate([blocks, np.array(new_blocks, dtype="<u8")]).tolist())
        self.count = count
        self._log_end = end
        if not self.readonly:
            with open(blk_path, "wb") as f:
                f.write(np.array(self._blocks, dtype="<u8").tobytes())
            self._blk_fd = os.open(blk_path, os.O_WRONLY | os.O_APPEND)
        self.index, covered = FingerprintIndex.load(self.dir / "urls.fpi", merge_at)
        if covered > count:
            self.index, covered = FingerprintIndex(merge_at=merge_at), 0
        self._replay(covered + 1)

    def _replay(self, first: int) -> None:
        """Put records ``first``..count into the fingerprint index."""
        if first > self.count:
            return
        data = self._read_from(first)
        pos, keys = 0, []
        for _ in range(first, self.count + 1):
            _, length = _RECORD.unpack_from(data, pos)
            start = pos + _RECORD.size
            keys.append(xxh3_64_intdigest(data[pos : start + length]))  # fingerprint(site_id, path)
            pos = start + length
        self.index.put_many(np.array(keys, dtype=np.uint64), np.arange(first, self.count + 1))

    def _offset(self, doc_id: int) -> tuple[int, int, int]:
        """Start and end offsets of the block holding ``doc_id``, and how many records to skip in it."""
        block, skip = divmod(doc_id - 1, BLOCK)
        end = self._blocks[block + 1] if block + 1 < len(self._blocks) else self._log_end
        return self._blocks[block], end, skip

    def _read_from(self, doc_id: int, last: int | None = None) -> bytes:
        start, _, skip = self._offset(doc_id)
        end = self._log_end if last is None or last >= self.count else self._offset(last)[1]
        data = os.pread(self._log_fd, end - start, start)
        pos = 0
        for _ in range(skip):
            pos += _RECORD.size + _RECORD.unpack_from(data, pos)[1]
        return data[pos:]

    # -- sites ---------------------------------------------------------------------------------------

    @property
    def site_count(self) -> int:
        return len(self._site_names) - 1

    def site_id(self, name: str) -> int:
        return self._site_ids.get(name, 0)

    def site_name(self, site_id: int) -> str:
        if not 1 <= site_id <= self.site_count:
            raise KeyError(site_id)
        return self._site_names[site_id]

    def add_site(self, name: str) -> tuple[int, bool]:
        """The site's id, and whether it was added now."""
        site_id = self._site_ids.get(name)
        if site_id:
            return site_id, False
        if self.readonly:
            raise URLStoreError("URL store opened read-only")
        if not name or "\n" in name or "\r" in name:
            raise ValueError(f"bad site name {name!r}")
        self._write_all(self._sites_fd, name.encode("utf-8") + b"\n", "sites.log")
        self._site_names.append(name)
        site_id = self._site_ids[name] = len(self._site_names) - 1
        return site_id, True

    # -- documents -----------------------------------------------------------------------------------

    def lookup(self, site_id: int, path: str | bytes) -> int:
        if isinstance(path, str):
            path = path.encode("utf-8")
        return self.index.get(fingerprint(site_id, path))

    def lookup_many(self, site_ids, paths) -> np.ndarray:
        """Doc-ids (uint32, 0 if unknown) of ``paths`` (bytes) in ``site_ids`` (one id or a sequence)."""
        return self.index.get_many(self._fingerprints(site_ids, paths))

    @staticmethod
    def _fingerprints(site_ids, paths) -> np.ndarray:
        if isinstance(site_ids, int):
            if any(len(p) > MAX_PATH for p in paths):
                raise ValueError(f"a path is longer than {MAX_PATH} bytes")
            pack, site_id = _RECORD.pack, site_ids
            keys = (xxh3_64_intdigest(pack(site_id, len(p)) + p) for p in paths)
        else:
            keys = map(fingerprint, site_ids, paths)
        return np.fromiter(keys, dtype=np.uint64, count=len(paths))

    def add(self, site_id: int, path: str | bytes) -> tuple[int, bool]:
        """The document's id, and whether it was added now."""
        if isinstance(path, str):
            path = path.encode("utf-8")
        key = fingerprint(site_id, path)
        doc_id = self.index.get(key)
        if doc_id:
            return doc_id, False
        self._check_new(site_id, path)
        self._append(_RECORD.pack(site_id, len(path)) + path, [len(path)])
        self.index.put(key, self.count)
        return self.count, True

    def add_many(self, site_ids, paths: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Doc-ids for ``paths`` (bytes), adding the unknown ones; and a mask of those added now."""
        keys = self._fingerprints(site_ids, paths)
        doc_ids = self.index.get_many(keys)
        added = np.zeros(len(paths), dtype=bool)
        missing = np.flatnonzero(doc_ids == 0)
        if len(missing) == 0:
            return doc_ids, added
        sites = [site_ids] * len(paths) if isinstance(site_ids, int) else site_ids
        first_new = self.count + 1
        new_ids: dict[int, int] = {}
        records, lengths = [], []
        for i in missing.tolist():
            key = int(keys[i])
            doc_id = new_ids.get(key)
            if doc_id is None:  # the same URL twice in one call gets one id
                path, site_id = paths[i], int(sites[i])
                self._check_new(site_id, path)
                doc_id = new_ids[key] = first_new + len(records)
                records.append(_RECORD.pack(site_id, len(path)) + path)
                lengths.append(len(path))
                added[i] = True
            doc_ids[i] = doc_id
        self._append(b"".join(records), lengths)
        self.index.put_many(
            np.fromiter(new_ids.keys(), np.uint64, len(new_ids)),
            np.fromiter(new_ids.values(), np.uint32, len(new_ids)),
        )
        return doc_ids, added

    def _check_new(self, site_id: int, path: bytes) -> None:
        if self.readonly:
            raise URLStoreError("URL store opened read-only")
        if not 1 <= site_id <= self.site_count:
            raise ValueError(f"unknown site-id {site_id}")
        if len(path) > MAX_PATH:
            raise ValueError(f"path of {len(path)} bytes is longer than {MAX_PATH}")

    def _append(self, data: bytes, lengths: list[int]) -> None:
        """Write records in one call (the commit), then extend the block offsets. A write the disk cannot
        take whole is cut back, so that the log ends with its last whole record (``writes.py``)."""
        written = 0
        try:
            written = os.pwrite(self._log_fd, data, self._log_end)
        finally:
            if written != len(data):
                os.ftruncate(self._log_fd, self._log_end)
        if written != len(data):
            raise short_write(self.dir / "urls.log", written, len(data))
        new_blocks, pos = [], self._log_end
        for length in lengths:
            if self.count % BLOCK == 0 and self.count // BLOCK == len(self._blocks) + len(new_blocks):
                new_blocks.append(pos)
            self.count += 1
            pos += _RECORD.size + length
        self._log_end = pos
        if new_blocks:
            self._blocks.extend(new_blocks)
            self._write_all(self._blk_fd, np.array(new_blocks, dtype="<u8").tobytes(), "urls.blk")

    def _write_all(self, fd: int, data: bytes, name: str) -> None:
        """Append ``data`` to a file opened with O_APPEND; cut back what a full disk took of it."""
        end = os.fstat(fd).st_size
        written = 0
        try:
            written = os.write(fd, data)
        finally:
            if written != len(data):
                os.ftruncate(fd, end)
        if written != len(data):
            raise short_write(self.dir / name, written, len(data))

    def url(self, doc_id: int) -> tuple[int, bytes]:
        """(site-id, path) of a document."""
        if not 1 <= doc_id <= self.count:
            raise KeyError(doc_id)
        start, end, skip = self._offset(doc_id)
        data = os.pread(self._log_fd, end - start, start)
        pos = 0
        for _ in range(skip):
            pos += _RECORD.size + _RECORD.unpack_from(data, pos)[1]
        site_id, length = _RECORD.unpack_from(data, pos)
        pos += _RECORD.size
        return site_id, data[pos : pos + length]

    def iter_urls(self, first: int = 1, last: int | None = None):
        """(doc-id, site-id, path) for every document from ``first`` on (to ``last``, if given), in one
        sequential read."""
        last = self.count if last is None else min(last, self.count)
        if first > last:
            return
        data = self._read_from(first, last)
        pos = 0
        for doc_id in range(first, last + 1):
            site_id, length = _RECORD.unpack_from(data, pos)
            pos += _RECORD.size
            yield doc_id, site_id, data[pos : pos + length]
            pos += length

    def path_arrays(self, first: int = 1, last: int | None = None) -> PathArrays:
        """The site-ids and paths of the documents from ``first`` on (to ``last``, if given) as arrays, from
        one sequential read: for code that handles every URL with numpy, where ``iter_urls`` yields them one
        by one. ``data`` holds the log's bytes as they lie (headers between the paths) between ``PATH_PAD``
        zero bytes on each side, so that such code may read a few bytes past a path's ends without a copy."""
        last = self.count if last is None else min(last, self.count)
        if first > last:
            empty = np.zeros(0, np.int64)
            return PathArrays(np.zeros(0, np.uint32), empty, empty, np.zeros(2 * PATH_PAD, np.uint8))
        start = self._offset(first)[0]
        end = self._log_end if last >= self.count else self._offset(last)[1]
        padded = np.zeros(PATH_PAD + end - start + PATH_PAD, np.uint8)
        data = padded[PATH_PAD:-PATH_PAD]
        done = 0
        while done < len(data):  # one call may read less than asked (Linux caps a read)
            read = os.preadv(self._log_fd, [memoryview(data)[done:]], start + done)
            if read <= 0:
                raise URLStoreError(f"urls.log ends before byte {start + len(data)}")
            done += read
        # The offsets of every BLOCK-th record are known; the others follow from the lengths before them, a
        # step for many blocks at once, while their bytes are in the processor's caches.
        blocks = np.array(self._blocks[(first - 1) // BLOCK : (last - 1) // BLOCK + 1], np.int64) - start
        offsets = np.empty((BLOCK, len(blocks)), np.int64)  # record i of block b at [i, b]
        offsets[0] = blocks
        length_at = _unaligned(data, "<u2", 4)
        for lo in range(0, len(blocks), 1 << 12):
            rows = offsets[:, lo : lo + (1 << 12)]
            for step in range(1, BLOCK):
                # Past the last record, any offset will do: those are cut off below.
                header = np.minimum(rows[step - 1], len(data) - _RECORD.size)
                rows[step] = rows[step - 1] + _RECORD.size + length_at[header]
        skip = (first - 1) % BLOCK
        offsets = offsets.T.ravel()[skip : skip + last - first + 1]
        return PathArrays(
            _unaligned(data, "<u4", 0)[offsets],
            offsets + PATH_PAD + _RECORD.size,
            length_at[offsets].astype(np.int64),
            padded,
        )

    # -- lifecycle -----------------------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Save the fingerprint index so the next open replays nothing."""
        if not self.readonly:
            self.index.save(self.dir / "urls.fpi", self.count)

    def close(self) -> None:
        if self._log_fd is None:
            return
        try:
            self.checkpoint()
        finally:
            for fd in (self._log_fd, getattr(self, "_blk_fd", None), self._sites_fd):
                if fd is not None:
                    os.close(fd)
            self._log_fd = None
