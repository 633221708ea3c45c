"""Sharing a batch among sites: water-filling with weights (``site_caps``).

A batch of K pages is shared among the sites that have candidates. A site that cannot fill its share
leaves the rest to the others, so the cap is the largest one whose pages, summed over the sites, fit in K
(water-filling); with weights, each site's cap is a common level times its weight. ``planner.py`` shares
every batch so, and ``timeshare.py`` asks what the slowest site's share would be.
"""

from __future__ import annotations

import numpy as np


def site_cap(size: int, samesite: int, counts: np.ndarray) -> int:
    """Most pages of one site in a batch of ``size`` drawn from sites with ``counts`` candidates each: the
    largest c <= ``samesite`` such that Σ min(c, count) <= size, at least 1 (water-filling)."""
    budget = size
    counts = np.minimum(counts, samesite)

    def taken(cap: int) -> int:
        return int(np.minimum(counts, cap).sum())

    if taken(samesite) <= budget:
        return samesite
    low, high = 1, samesite  # the answer is in [low, high): taken(high) > budget
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if taken(middle) <= budget else (low, middle)
    return low


def site_caps(size: int, samesite: int, counts: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Most pages of each site in a batch of ``size`` (int64 array aligned with ``counts``, the candidates
    of each site): with ``weights`` w (> 0, ``inf`` allowed) site s may get max(1, floor(c × w_s)) pages,
    never more than ``samesite``, for the largest c with Σ_s min(max(1, floor(c × w_s)), counts_s, samesite)
    <= size (water-filling on c); ``weights`` None or all equal: ``site_cap`` for every site."""
    counts = np.asarray(counts, dtype=np.int64)
    if weights is None or len(counts) == 0 or np.all(weights == weights[0]):
        return np.full(len(counts), site_cap(size, samesite, counts), dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    if np.any(~(weights > 0)):
        raise ValueError("site weights must be > 0")
    full = np.minimum(counts, samesite)
    budget = size
    unbounded = np.isinf(weights)
    finite = np.where(unbounded, 1.0, weights)

    def caps(c: float) -> np.ndarray:
        pages = np.where(unbounded, full, np.minimum(np.floor(c * finite), full))
        return np.maximum(np.minimum(pages, full), np.minimum(full, 1)).astype(np.int64)

    if full.sum() <= budget:
        return full
    # caps(c) is a non-decreasing step function of c, constant on [b, b') between two breakpoints m / w_s
    # and all at ``full`` from ``high`` on: bisect for the last c with Σ caps(c) <= budget.
    low, high = 0.0, float((full[~unbounded] / finite[~unbounded]).max(initial=0.0)) + 1.0
    if caps(low).sum() > budget:
        return caps(low)
    for _ in range(64):
        middle = (low + high) / 2
        if middle <= low or middle >= high:
            break
        low, high = (middle, high) if caps(middle).sum() <= budget else (low, middle)
    return caps(low)
