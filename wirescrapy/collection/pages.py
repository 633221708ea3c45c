"""The page store: page contents by doc-id, with WIRE's content-seen test (thesis §7.3.2).

Pages are records of an ``ExtentStore`` (``extents.py``; files ``<name>.dat`` and ``<name>.idx``, formats
described in ``extentdata.py`` and ``extentindex.py``). Each record keeps the xxh3-64 hash and the length of
the *raw* page, so a page is checked against its hash when it is loaded, even when it is stored compressed.

Storing a page (``store``) follows WIRE's figure 7.4:

1. content-seen: the hash of the content names a candidate doc-id (the content-seen index); the
   candidate must still hold a page of that hash and length (it may have been replaced since), and
   its bytes must equal the new content. Then nothing is written and the *original* doc-id is
   returned: the caller marks the new document a duplicate of it. A page stored again unchanged
   under its own doc-id is "seen" the same way, so an unchanged page costs no write.
2. otherwise the page is written (zstd-compressed when a level is given and it helps), replacing
   any earlier page of that doc-id, whose space goes back to the free list.

Record flags (bits 8–15 of the index flags): the codec, 0 = raw, 1 = zstd. A zstd record is
``ENCODED``: its stored bytes are a zstd frame of the raw page.

The content-seen index (``fingerprints.FingerprintIndex``) maps hash → doc-id. It is not stored: on
open it is rebuilt from the hashes in the index records (one numpy sort), and pages stored since are
kept in a dict that is merged into the sorted arrays when it grows, so memory stays near 13 bytes per page
(8-byte hash, 4-byte doc-id, its share of the bucket table; ``benchmarks/pagestore.py`` measures it). A 64-bit
hash collision between different pages is caught by the byte comparison; the new page is then stored and
becomes the index's candidate for that hash.
"""

from __future__ import annotations

import os

import numpy as np
import zstandard
from xxhash import xxh3_64_intdigest

from .extents import ENCODED, LIVE, Extent, ExtentError, ExtentStore
from .fingerprints import FingerprintIndex

CODEC_MASK = 0xFF00
CODEC_ZSTD = 0x0100
_ZSTD_FLAGS = ENCODED | CODEC_ZSTD


class PageStore:
    """Page contents by doc-id with content-seen duplicate detection, in ``<directory>/<name>.*``.

    ``compression`` is a zstd level (0 stores pages raw).
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        name: str = "pages",
        *,
        compression: int = 0,
        readonly: bool = False,
        granularity: int = 64,
    ):
        self.extents = ExtentStore(directory, name, readonly=readonly, granularity=granularity)
        self.compression = compression
        self._compressor = zstandard.ZstdCompressor(level=compression) if compression else None
        self._decompressor = zstandard.ZstdDecompressor()
        index = self.extents.index()
        self._seen = FingerprintIndex(index.hash, index.ids.astype(np.uint32))

    @property
    def id_limit(self):
        """The highest doc-id a page may be stored under (a callable), or None: no bound."""
        return self.extents.id_limit

    @id_limit.setter
    def id_limit(self, value) -> None:
        self.extents.id_limit = value

    # -- content-seen ------------------------------------------------------------------------------

    def seen(self, content) -> int:
        """Doc-id of a stored page equal to ``content``, or 0."""
        return self._original(content, xxh3_64_intdigest(content), len(content))

    def seen_many(self, contents) -> np.ndarray:
        """``seen`` for many contents at once, as a uint32 array (0 = not seen).

        Contents repeated inside the batch are not seen unless already stored.
        """
        contents = list(contents)
        hashes = np.fromiter(map(xxh3_64_intdigest, contents), dtype=np.uint64, count=len(contents))
        candidates = self._seen.get_many(hashes)
        hits = np.flatnonzero(candidates)
        if len(hits):
            records = self.extents.records(candidates[hits])
            lengths = np.fromiter((len(contents[i]) for i in hits.tolist()), dtype=np.int64, count=len(hits))
            same = (
                (records["hash"] == hashes[hits])
                & (records["length"] == lengths)
                & (records["flags"] & LIVE != 0)
            )
            candidates[hits[~same]] = 0
            for i in hits[same].tolist():
                doc_id = int(candidates[i])
                if not self._holds(doc_id, self.extents.record(doc_id), contents[i]):
                    candidates[i] = 0
        return candidates

    def _original(self, content, hash: int, length: int) -> int:
        candidate = self._seen.get(hash)
        if not candidate:
            return 0
        rec = self.extents.record(candidate)
        if rec is None or rec.hash != hash or rec.length != length:
            return 0  # the candidate has been replaced or deleted since
        if not self._holds(candidate, rec, content):
            return 0  # a hash collision
        return candidate

    def _holds(self, doc_id: int, rec: Extent, content) -> bool:
        """Whether the page of ``doc_id`` (record ``rec``, of the content's hash) equals ``content``."""
        # Equal bytes have the record's hash, so the page needs no check of its own here.
        page = self._decode(doc_id, rec, verify=False)
        if type(content) is not bytes:
            content = bytes(content)  # comparing bytes with a memoryview is far slower
        return page == content

    # -- verbs -------------------------------------------------------------------------------------

    def store(self, doc_id: int, content) -> int:
        """Store ``content`` as the page of ``doc_id``, unless already seen.

        Returns the doc-id holding this content: ``doc_id`` itself, or the original of which the
        new document is a duplicate (nothing was written then).
        """
        if doc_id < 1:
            raise ValueError(f"{self.extents.index_path.name}: doc-id {doc_id}: doc-ids start at 1")
        self.extents.check_id(doc_id)
        length = len(content)
        hash = xxh3_64_intdigest(content)
        original = self._original(content, hash, length)
        if original:
            return original
        if self._compressor is not None:
            packed = self._compressor.compress(content)
            if len(packed) < length:
                self.extents.put(doc_id, packed, length=length, hash=hash, flags=_ZSTD_FLAGS)
                self._seen.put(hash, doc_id)
                return doc_id
        self.extents.put(doc_id, content, length=length, hash=hash)
        self._seen.put(hash, doc_id)
        return doc_id

    def load(self, doc_id: int) -> bytes | None:
        """The raw content of ``doc_id``'s page, or None. Raises ``ExtentError`` if it is damaged."""
        rec = self.extents.record(doc_id)
        if rec is None:
            return None
        return self._decode(doc_id, rec)

    def _decode(self, doc_id: int, rec: Extent, verify: bool = True) -> bytes:
        data = self.extents.read(doc_id, rec, verify)
        codec = rec.flags & CODEC_MASK
        if not codec:
            return data
        if codec != CODEC_ZSTD:
            raise ExtentError(f"{self.extents.data_path}: doc-id {doc_id}: unknown codec {codec >> 8}")
        try:
            data = self._decompressor.decompress(data, max_output_size=rec.length)
        except zstandard.ZstdError as exc:
            raise ExtentError(f"{self.extents.data_path}: doc-id {doc_id}: {exc}") from None
        if len(data) != rec.length or (verify and xxh3_64_intdigest(data) != rec.hash):
            raise ExtentError(f"{self.extents.data_path}: doc-id {doc_id}: page does not match its hash")
        return data

    def delete(self, doc_id: int) -> bool:
        """Remove the page of ``doc_id``; False if it had none."""
        return self.extents.delete(doc_id)

    def __contains__(self, doc_id: int) -> bool:
        return doc_id in self.extents

    def __len__(self) -> int:
        return len(self.extents)

    def count(self) -> int:
        """Number of stored pages."""
        return len(self.extents)

    def check(self) -> None:
        """Raise ``ExtentError`` if extents overlap or a page does not decode to its hash."""
        self.extents.check(self._decode)

    # -- lifecycle ---------------------------------------------------------------------------------

    def flush(self) -> None:
        self.extents.flush()

    def close(self) -> None:
        self.extents.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
