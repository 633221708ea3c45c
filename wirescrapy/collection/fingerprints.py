"""A map from 64-bit fingerprints to 32-bit ids: sorted arrays plus a small in-memory delta.

The URL store (``(site-id, path)`` fingerprint → doc-id) uses it; it is the "sorted 64-bit hashes" road to a
URL table of a few bytes per URL: 12 bytes an entry once merged (8-byte key, 4-byte value), against about
100 bytes for a Python dict entry and 130 for LMDB.

Recent inserts go to a dict; when it holds ``merge_at`` entries (by default a quarter of the sorted part,
at least 65,536) it is merged into the sorted arrays in one O(n) numpy pass, so the amortised cost of an
insert stays near a dict insert. Lookups check the delta and
binary-search the sorted keys; the batch form sorts its queries first so that numpy's searchsorted walks the
keys in order, which turns most of the random memory reads into sequential ones. With ``prefilter`` a
byte map of the keys' top bits (2 bytes a key) answers most single lookups of absent keys without the
binary search: the content-seen test, where most pages are new, uses it.

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

import os
from pathlib import Path

import numpy as np

MAGIC = b"WIREFPI1"
_HEADER = np.dtype([("magic", "S8"), ("covered", "<u8"), ("n", "<u8")])


class FingerprintIndex:
    def __init__(self, keys=None, values=None, merge_at: int | None = None, prefilter: bool = False):
        keys = np.empty(0, np.uint64) if keys is None else np.asarray(keys, dtype=np.uint64)
        values = np.empty(0, np.uint32) if values is None else np.asarray(values, dtype=np.uint32)
        if keys.shape != values.shape:
            raise ValueError("keys and values differ in length")
        self.delta: dict[int, int] = {}
        self._fixed_merge_at = merge_at
        self._prefilter = prefilter
        order = np.argsort(keys, kind="stable")
        self._set_sorted(keys[order], values[order])

    def _set_sorted(self, keys: np.ndarray, values: np.ndarray) -> None:
        self.keys, self.values = keys, values
        self.merge_at = self._fixed_merge_at or max(1 << 16, len(keys) // 4)
        self._shift = None
        if self._prefilter and len(keys):
            bits = max(16, (2 * len(keys) - 1).bit_length())
            self._shift = 64 - bits
            present = np.zeros(1 << bits, dtype=np.uint8)
            present[keys >> np.uint64(self._shift)] = 1
            self._present = present.tobytes()

    def __len__(self) -> int:
        return len(self.keys) + len(self.delta)

    # -- lookups -------------------------------------------------------------------------------------

    def get(self, key: int) -> int:
        """The value of ``key``, or 0."""
        value = self.delta.get(key)
        if value is not None:
            return value
        if self._shift is not None and not self._present[key >> self._shift]:
            return 0
        keys = self.keys
        i = int(keys.searchsorted(np.uint64(key)))
        if i < len(keys) and keys[i] == key:
            return int(self.values[i])
        return 0

    def get_many(self, keys: np.ndarray) -> np.ndarray:
        """Values of ``keys`` (uint64 array), 0 where absent."""
        keys = np.asarray(keys, dtype=np.uint64)
        out = np.zeros(len(keys), dtype=np.uint32)
        if len(self.keys) and len(keys):
            order = np.argsort(keys, kind="stable") if len(keys) > 64 else None
            query = keys[order] if order is not None else keys
            pos = self.keys.searchsorted(query)
            pos[pos == len(self.keys)] = 0
            hit = self.keys[pos] == query
            found = np.where(hit, self.values[pos], 0).astype(np.uint32)
            if order is not None:
                out[order] = found
            else:
                out = found
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
        with open(tmp, "wb") as f:
            f.write(header.tobytes())
            f.write(self.keys.astype("<u8", copy=False).tobytes())
            f.write(self.values.astype("<u4", copy=False).tobytes())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike, merge_at: int | None = None) -> tuple["FingerprintIndex", int]:
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
