"""The index of an extent store: one fixed-size record per doc-id, telling where its bytes are.

``<name>.idx``, a ``RecordFile`` (``records.py``) of kind ``"extents"``: record *i* describes doc-id *i*
(40 bytes, little-endian)::

    offset  size  field
    0       8     offset    uint64, where the stored bytes start in the data file
    8       4     size      uint32, number of stored bytes
    12      4     length    uint32, length of the raw content
    16      8     hash      uint64, xxh3-64 of the raw content
    24      4     flags     uint32: 1 = live, 2 = encoded (the stored bytes are not the raw
                            content, e.g. compressed); bits 8–31 belong to the user
    28      8     reserved  zero
    36      4     crc       zlib crc32 of bytes 0–35

An all-zero record is an empty slot (no such doc, or deleted). A record whose crc fails was torn by a
kill in the middle of its write. Opening a store checks every record's crc (``scan``), vectorized with
numpy (``record_crcs``), and every live record's place in the data file (``extentdata.py``); checking a
store also looks for live extents that overlap (``overlaps``).
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

import numpy as np

LIVE = 0x1
ENCODED = 0x2

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
# One record's parts, packed and unpacked in place by the store.
RECORD = struct.Struct("<QIIQIQ")  # everything the crc covers
CRC = struct.Struct("<I")
PLACE = struct.Struct("<QI12xI")  # offset, size, flags
FIELDS = struct.Struct("<QIIQI")  # offset, size, length, hash, flags
CRC_SPAN = RECORD.size
RECORD_SIZE = INDEX_DTYPE.itemsize
EMPTY = bytes(RECORD_SIZE)
# Records checked per numpy call (bounds the temporaries).
_SCAN_CHUNK = 1 << 20


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
# 18 table look-ups per record, which numpy does for all the records at once (benchmarks/pagestore.py
# times it).
_crc_tables: np.ndarray | None = None


def _crc_word_tables() -> np.ndarray:
    global _crc_tables
    if _crc_tables is None:
        zero = bytes(CRC_SPAN)
        crc0 = zlib.crc32(zero)
        byte_tables = np.empty((CRC_SPAN, 256), dtype=np.uint32)
        msg = bytearray(CRC_SPAN)
        for j in range(CRC_SPAN):
            for v in range(256):
                msg[j] = v
                byte_tables[j, v] = zlib.crc32(msg) ^ crc0
            msg[j] = 0
        words = np.arange(1 << 16)
        _crc_tables = np.stack(
            [
                byte_tables[2 * k][words & 0xFF] ^ byte_tables[2 * k + 1][words >> 8]
                for k in range(CRC_SPAN // 2)
            ]
        )
    return _crc_tables


def record_crcs(records: np.ndarray) -> np.ndarray:
    """crc32 of bytes 0–35 of each record of ``INDEX_DTYPE``, vectorized (equals ``zlib.crc32``)."""
    tables = _crc_word_tables()
    words = np.ascontiguousarray(records).view(np.uint16).reshape(len(records), RECORD_SIZE // 2)
    crcs = np.full(len(records), zlib.crc32(bytes(CRC_SPAN)), dtype=np.uint32)
    for k in range(CRC_SPAN // 2):
        crcs ^= tables[k][words[:, k]]
    return crcs


# -- checking the records --------------------------------------------------------------------------


def scan(
    records: np.ndarray, granularity: int, base: int, data_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Check every used record (doc-ids from 1): the doc-ids of the live records, of the torn ones
    (crc fails), of the damaged ones (live, but their extent is misaligned or lies outside
    ``[base, data_size)``), and the highest doc-id whose record is whole."""
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
        bad_place = (size > 0) & ((off % granularity != 0) | (off < base) | (off + size > data_size))
        damaged_ids.append(used[live & bad_place] + lo)
        live_ids.append(used[live & ~bad_place] + lo)
        if ok.any():
            highest = max(highest, int(used[ok][-1]) + lo)
    torn = np.concatenate(torn_ids) if torn_ids else np.empty(0, np.int64)
    damaged = np.concatenate(damaged_ids) if damaged_ids else np.empty(0, np.int64)
    ids = np.concatenate(live_ids) if live_ids else np.empty(0, np.int64)
    return ids, torn, damaged, highest


def intact(records: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Those of ``ids`` whose records pass their crc."""
    parts = np.split(ids, range(_SCAN_CHUNK, len(ids), _SCAN_CHUNK))
    return ids[np.concatenate([record_crcs(records[part]) == records["crc"][part] for part in parts])]


def overlaps(index: IndexArrays, granularity: int) -> list[tuple[int, int]]:
    """Live extents that overlap the next one in offset order (sizes rounded up to the granularity),
    as (offset, offset of the next one)."""
    used = index.size > 0
    order = np.argsort(index.offset[used], kind="stable")
    starts = index.offset[used][order].astype(np.int64)
    ends = starts + (index.size[used][order].astype(np.int64) + granularity - 1) // granularity * granularity
    return [(int(starts[i]), int(starts[i + 1])) for i in np.flatnonzero(starts[1:] < ends[:-1]).tolist()]
