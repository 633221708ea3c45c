"""The link graph: forward adjacency lists of doc-ids (thesis §7.3.4).

As in WIRE, the lists are stored like the page contents (an ``ExtentStore``, files ``<name>.dat`` and
``<name>.idx``), without the duplicate check: the record of doc-id *i* holds the doc-ids *i* links to,
as uint32 little-endian, in the order given (repeated links are kept). An empty record means "the
page has no links"; no record means "not parsed". Only forward links are stored: link analysis reads
the whole graph at once (``to_csr``) and iterates over forward links, as WIRE's Algorithm 1 does.

Lists are small (≈ 40 bytes for ten links), so the store uses a 16-byte granularity.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from .extents import ExtentError, ExtentStore

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

MAX_DOC_ID = (1 << 31) - 1  # the CSR matrix indexes with int32
_GATHER_CHUNK = 1 << 23  # links gathered per numpy call in to_csr (bounds its temporary memory)


def _as_targets(targets) -> np.ndarray:
    targets = np.asarray(targets)
    if targets.size == 0:
        return np.empty(0, dtype="<u4")
    if targets.dtype.kind not in "iu":
        raise ValueError(f"link targets must be integer doc-ids, not {targets.dtype}")
    if targets.min() < 1 or targets.max() > MAX_DOC_ID:
        raise ValueError(f"link targets must be doc-ids in 1..{MAX_DOC_ID}")
    return targets.astype("<u4", copy=False).ravel()


class LinkGraph:
    """Forward adjacency lists by doc-id in ``<directory>/<name>.*``."""

    def __init__(self, directory: str | os.PathLike, name: str = "links", *, readonly: bool = False):
        self.extents = ExtentStore(directory, name, readonly=readonly, granularity=16)

    @property
    def id_limit(self):
        """The highest doc-id a list may be of or link to (a callable, the collection's document count), or
        None: no bound but ``MAX_DOC_ID``."""
        return self.extents.id_limit

    @id_limit.setter
    def id_limit(self, value) -> None:
        self.extents.id_limit = value

    def _check_targets(self, targets: np.ndarray) -> np.ndarray:
        limit = self.extents.id_limit
        if limit is not None and targets.size and int(targets.max()) > (last := limit()):
            raise ValueError(
                f"{self.extents.index_path.name}: link target {int(targets.max())} is past the last "
                f"document ({last})"
            )
        return targets

    def set_links(self, doc_id: int, targets) -> None:
        """Store the doc-ids that ``doc_id`` links to, replacing its earlier list."""
        self.extents.put(doc_id, self._check_targets(_as_targets(targets)).tobytes())

    def set_links_many(self, doc_ids, indptr, targets) -> None:
        """``set_links`` for many documents at once, in CSR form: document ``doc_ids[k]`` links to
        ``targets[indptr[k]:indptr[k + 1]]``. The lists go to one extent (a bulk load)."""
        doc_ids = np.asarray(doc_ids, dtype=np.int64).ravel()
        indptr = np.asarray(indptr, dtype=np.int64).ravel()
        if len(indptr) != len(doc_ids) + 1 or indptr[0] != 0 or (np.diff(indptr) < 0).any():
            raise ValueError("indptr must start at 0, be non-decreasing and have one more entry than doc_ids")
        targets = self._check_targets(_as_targets(targets))
        if len(targets) != indptr[-1]:
            raise ValueError("indptr does not end at the number of targets")
        self.extents.put_many(doc_ids, targets, np.diff(indptr) * 4)

    def links(self, doc_id: int) -> np.ndarray:
        """The doc-ids that ``doc_id`` links to (a read-only uint32 array, empty if none)."""
        data = self.extents.get(doc_id)
        return np.frombuffer(data or b"", dtype="<u4")

    def delete(self, doc_id: int) -> bool:
        """Forget the list of ``doc_id``; False if it had none."""
        return self.extents.delete(doc_id)

    def __contains__(self, doc_id: int) -> bool:
        return doc_id in self.extents

    def __len__(self) -> int:
        """Number of documents with a list."""
        return len(self.extents)

    def count_links(self) -> int:
        """Number of links in all the lists."""
        return self.extents.live_bytes // 4

    def check(self) -> None:
        """Raise ``ExtentError`` if extents overlap or a list does not match its hash or length."""

        def read(doc_id, rec):
            if rec.size % 4:
                raise ExtentError(
                    f"{self.extents.data_path}: doc-id {doc_id}: {rec.size} bytes is not a list"
                )
            self.extents.read(doc_id, rec)

        self.extents.check(read)

    def to_csr(self, n_docs: int | None = None, ordered: bool = False) -> csr_matrix:
        """The whole graph as a sparse matrix: entry (i, j) is the number of links from i to j.

        The shape is (n + 1, n + 1), with n = ``n_docs`` or else the highest doc-id seen, so that
        row and column indices are doc-ids (row and column 0 stay empty). Entries are float32
        counts: a link repeated in a list counts twice. Indices are sorted within each row, unless
        ``ordered``: then each row is the stored list as it is, in page order with its repeats (one
        entry of 1.0 per link; the weighted link rank needs a link's position in its page).

        The data file is read through one mapping and the lists are gathered with numpy, so memory
        is the matrix itself (8 bytes per link) plus bounded temporaries.
        """
        from scipy.sparse import csr_matrix  # loaded by what analyses links, not by every harvester

        index = self.extents.index()
        counts = index.size.astype(np.int64) // 4
        starts = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        total = int(starts[-1])
        indices = np.empty(total, dtype=np.int32)
        if total:
            data = self.extents.data_array()
            words = data[: len(data) // 4 * 4].view("<u4")
            sources = index.offset.astype(np.int64) // 4
            lo = 0
            while lo < len(counts):
                hi = int(np.searchsorted(starts, starts[lo] + _GATHER_CHUNK, side="right")) - 1
                hi = min(max(hi, lo + 1), len(counts))
                shift = np.repeat(sources[lo:hi] - starts[lo:hi], counts[lo:hi])
                shift += np.arange(starts[lo], starts[hi], dtype=np.int64)
                indices[starts[lo] : starts[hi]] = words[shift].view(np.int32)
                lo = hi
            del words, data
        highest = max(int(index.ids[-1]) if len(index.ids) else 0, int(indices.max()) if total else 0)
        if n_docs is None:
            n_docs = highest
        elif highest > n_docs:
            raise ValueError(f"the graph names doc-id {highest}, beyond n_docs={n_docs}")
        index_type = np.int32 if total < (1 << 31) else np.int64
        indptr = np.zeros(n_docs + 2, dtype=index_type)
        indptr[index.ids + 1] = counts
        np.cumsum(indptr, out=indptr)
        matrix = csr_matrix(
            (np.ones(total, dtype=np.float32), indices.astype(index_type, copy=False), indptr),
            shape=(n_docs + 1, n_docs + 1),
        )
        if not ordered:
            matrix.sum_duplicates()
        return matrix

    # -- lifecycle ---------------------------------------------------------------------------------

    def flush(self) -> None:
        self.extents.flush()

    def close(self) -> None:
        self.extents.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
