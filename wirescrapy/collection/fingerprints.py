"""A map from 64-bit fingerprints to 32-bit ids: sorted arrays plus a small in-memory delta.

The URL store (``(site-id, path)`` fingerprint → doc-id) uses it; it is the "sorted 64-bit hashes" road to a
URL table of a few bytes per URL: 12 bytes an entry once merged (8-byte key, 4-byte value), where a Python
dict or LMDB spends several times that (``benchmarks/collection.py`` measures them).

Recent inserts go to a dict; when it holds ``merge_at`` entries (131,072 by default) it is merged into the
sorted arrays in one O(n) numpy pass, a small cost per insert once amortised. Lookups check the delta, then
the key's bucket: a table indexed by the top bits of the key (about one entry per four keys, one byte per
key) gives the slice of the sorted keys that can hold it, so a lookup costs one or two cache misses where a
binary search over 10M keys costs over a dozen; the batch form does this for all queries with a few numpy
operations.

Checkpoint file (``save``/``load``), little-endian::

    offset  size      field
    0       8         magic b"WIREFPI1"
    8       8         covered   uint64, how many log records the checkpoint reflects (set by the caller)
    16      8         n         uint64, number of entries
    24      8n        keys      uint64, sorted ascending
    24+8n   4n        values    uint32

It is written to a temporary name and renamed, so a kill leaves the old checkpoint or the new one.
"""

from __future__ import annotations

import bisect
import os
from pathlib import Path

import numpy as np

MAGIC = b"WIREFPI1"
_CHUNK = 1 << 16  # queries compared at once: bounds the temporary (queries × bucket width) arrays
_HEADER = np.dtype([("magic", "S8"), ("covered", "<u8"), ("n", "<u8")])


class FingerprintIndex:
    def __init__(self, keys=None, values=None, merge_at: int = 1 << 17):
        keys = np.empty(0, np.uint64) if keys is None else np.asarray(keys, dtype=np.uint64)
        values = np.empty(0, np.uint32) if values is None else np.asarray(values, dtype=np.uint32)
        if keys.shape != values.shape:
            raise ValueError("keys and values differ in length")
        self.delta: dict[int, int] = {}
        self.merge_at = merge_at
        order = np.argsort(keys, kind="stable")
        self._set_sorted(keys[order], values[order])

    def _set_sorted(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Adopt sorted arrays and build the bucket table: bucket *b* (the top bits of a key) holds
        ``keys[start[b]:start[b + 1]]``, about four keys, so a lookup reads one or two cache lines of keys
        instead of binary-searching the whole array (23 dependent reads at 10M keys)."""
        self.keys, self.values = keys, values
        bits = max(1, (max(len(keys), 1) // 4).bit_length())
        self._int_shift = 64 - bits
        self._shift = np.uint64(self._int_shift)
        counts = np.bincount((keys >> self._shift).astype(np.intp), minlength=1 << bits)
        self._start = np.zeros((1 << bits) + 1, dtype=np.int64)
        np.cumsum(counts, out=self._start[1:])
        self._width = int(counts.max()) if len(keys) else 0
        self._columns = np.arange(self._width)

    def __len__(self) -> int:
        return len(self.keys) + len(self.delta)

    @property
    def nbytes(self) -> int:
        """Memory of the merged part (keys, values, bucket table); the delta dict is not counted."""
        return self.keys.nbytes + self.values.nbytes + self._start.nbytes

    # -- lookups -------------------------------------------------------------------------------------

    def get(self, key: int) -> int:
        """The value of ``key``, or 0."""
        value = self.delta.get(key)
        if value is not None:
            return value
        bucket = key >> self._int_shift
        lo, hi = int(self._start[bucket]), int(self._start[bucket + 1])
        candidates = self.keys[lo:hi].tolist()  # a handful of keys: Python compares beat numpy calls
        i = bisect.bisect_left(candidates, key)
        if i < len(candidates) and candidates[i] == key:
            return int(self.values[lo + i])
        return 0

    def get_many(self, keys: np.ndarray) -> np.ndarray:
        """Values of ``keys`` (uint64 array), 0 where absent."""
        keys = np.asarray(keys, dtype=np.uint64)
        out = np.zeros(len(keys), dtype=np.uint32)
        if len(self.keys):
            for first in range(0, len(keys), _CHUNK):
                query = keys[first : first + _CHUNK]
                bucket = (query >> self._shift).astype(np.intp)
                lo = self._start[bucket]
                size = self._start[bucket + 1] - lo
                # Compare each query with every key of its bucket at once (a few contiguous reads).
                slots = np.minimum(lo[:, None] + self._columns, len(self.keys) - 1)
                match = (self.keys[slots] == query[:, None]) & (self._columns < size[:, None])
                hit = match.any(axis=1)
                at = lo[hit] + match[hit].argmax(axis=1)
                out[first : first + _CHUNK][hit] = self.values[at]
        if self.delta:
            get = self.delta.get
            overlay = np.fromiter((get(k, 0) for k in keys.tolist()), dtype=np.uint32, count=len(keys))
            np.copyto(out, overlay, where=overlay != 0)
        return out

    # -- updates -------------------------------------------------------------------------------------

    def put(self, key: int, value: int) -> None:
        """Insert or replace (the newest value wins over the sorted arrays)."""
        self.delta[key] = value
        if len(self.delta) >= self.merge_at:
            self.merge()

    def put_many(self, keys: np.ndarray, values: np.ndarray) -> None:
        self.delta.update(zip(np.asarray(keys, dtype=np.uint64).tolist(), np.asarray(values).tolist()))
        if len(self.delta) >= self.merge_at:
            self.merge()

    def merge(self) -> None:
        """Fold the delta into the sorted arrays."""
        if not self.delta:
            return
        new_keys = np.fromiter(self.delta.keys(), dtype=np.uint64, count=len(self.delta))
        new_values = np.fromiter(self.delta.values(), dtype=np.uint32, count=len(self.delta))
        order = np.argsort(new_keys)
        new_keys, new_values = new_keys[order], new_values[order]
        if len(self.keys):
            pos = self.keys.searchsorted(new_keys)
            inside = pos < len(self.keys)
            replaced = np.zeros(len(new_keys), dtype=bool)
            replaced[inside] = self.keys[pos[inside]] == new_keys[inside]
            if replaced.any():
                self.values = self.values.copy()
                self.values[pos[replaced]] = new_values[replaced]
            fresh = ~replaced
            keys = np.insert(self.keys, pos[fresh], new_keys[fresh])
            values = np.insert(self.values, pos[fresh], new_values[fresh])
        else:
            keys, values = new_keys, new_values
        self.delta = {}
        self._set_sorted(keys, values)

    # -- persistence ---------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike, covered: int) -> None:
        self.merge()
        path = Path(path)
        tmp = path.with_name(path.name + ".new")
        header = np.array([(MAGIC, covered, len(self.keys))], dtype=_HEADER)
        try:
            with open(tmp, "wb") as f:
                f.write(header.tobytes())
                f.write(self.keys.astype("<u8", copy=False).tobytes())
                f.write(self.values.astype("<u4", copy=False).tobytes())
        except BaseException:
            tmp.unlink(
                missing_ok=True
            )  # on a full disk: the earlier checkpoint stays, the log replays the rest
            raise
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike, merge_at: int = 1 << 17) -> tuple[FingerprintIndex, int]:
        """The index and the number of log records it covers; an empty index and 0 if unusable."""
        index = cls(merge_at=merge_at)
        try:
            with open(path, "rb") as f:
                header = np.frombuffer(f.read(_HEADER.itemsize), dtype=_HEADER)
                if len(header) != 1 or header[0]["magic"] != MAGIC:
                    return index, 0
                n = int(header[0]["n"])
                if os.fstat(f.fileno()).st_size != _HEADER.itemsize + 12 * n:
                    return index, 0
                keys = np.fromfile(f, dtype="<u8", count=n)
                values = np.fromfile(f, dtype="<u4", count=n)
        except FileNotFoundError:
            return index, 0
        if len(keys) != n or len(values) != n:
            return index, 0
        index._set_sorted(keys.astype(np.uint64), values.astype(np.uint32))
        return index, int(header[0]["covered"])
