"""What near-duplicates change in the manager's choices: pure functions over whole arrays.

A near-duplicate (``collection/nearduplicates.py``: a page whose fingerprint came within the threshold of a
page fetched before it, its cluster's representative) adds little to the collection once its representative
is stored, as a mirror adds little: fetching it again earns no profit. Its links still count in the link
graph, which this leaves alone.

A page whose content changed only within its cluster (its new fingerprint within the threshold of its last
one: a date, a counter, a session token) has not changed for freshness, so that such a page is not revisited
as if it changed at every visit.

Arrays are aligned as in ``profit.py``: position i is doc-id i + 1.
"""

from __future__ import annotations

import numpy as np

from wirescrapy.collection.nearduplicates import FINGERPRINTED, NO_EARLIER


def clusters_of(records: np.ndarray, n: int) -> np.ndarray:
    """Each page's cluster (its representative's doc-id; 0 none) for doc-ids 1..n, from the records of
    ``nearduplicates.rec`` (``NearDuplicateFile.records``, record 0 the header; it may be shorter than the
    document records: the pages past its end have none)."""
    out = np.zeros(n, np.int64)
    records = records[1 : n + 1]
    fingerprinted = records["state"] == FINGERPRINTED
    out[: len(records)][fingerprinted] = records["cluster"][fingerprinted]
    out[(out < 0) | (out > n)] = 0  # a record written after the documents were read
    return out


def represented(clusters: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Whether each page is a near-duplicate whose representative is stored (``stored``: per page, its
    content is in the page store): a page fetching which again earns nothing."""
    doc_ids = np.arange(1, len(clusters) + 1)
    member = (clusters > 0) & (clusters != doc_ids)
    out = np.zeros(len(clusters), dtype=bool)
    out[member] = stored[clusters[member] - 1]
    return out


def without_represented(profit: np.ndarray, clusters: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """``profit`` with the pages ``represented`` given none."""
    return np.where(represented(clusters, stored), 0.0, profit)


def changed_within_cluster(moved, distance: int):
    """Whether a visit's change stayed within the page's cluster: its fingerprint moved by no more than
    ``distance`` bits, or not at all (the markup or the site's template changed, not the page's own text).
    ``moved`` as the near-duplicate record keeps it; ``NO_EARLIER``: no earlier fingerprint to compare.
    Scalars or arrays."""
    moved = np.asarray(moved)
    within = (moved <= distance) & (moved != NO_EARLIER)
    return bool(within) if within.ndim == 0 else within


def counts_as_changed(changed: bool, moved: int, distance: int) -> bool:
    """A visit's change as freshness counts it: content-seen's, unless it stayed within the cluster."""
    return changed and not changed_within_cluster(moved, distance)
