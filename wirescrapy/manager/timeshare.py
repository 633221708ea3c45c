"""A site's part of a batch from what it can fetch in the batch's time (``WIRE_BATCH_TIME_SHARE``).

The harvester fetches a site one page at a time, with the site's wait between two fetches (WIRE's
``harvester/wait/normal``, ``big`` for sites of more than ``countbig`` pages, never less than the site's
Crawl-delay), so a site given n pages of a batch keeps the batch open for at least (n − 1) × its wait. A
batch shared by PageRank alone gives the largest sites parts that take longer than every other site's, and
ends with one site fetched alone while every connection but one is idle; worse, the site that sets the
whole crawl's politeness bound (the largest site's pages × its wait) is idle between its batches.

``time_limits`` caps each site's part at what it can fetch in the batch's time T: 1 + floor(T / its wait)
pages. T is the larger of

* the even time: the largest T with Σ_sites min(candidates, 1 + floor(T / wait)) <= K, every site with
  candidates ending together;
* the pace of the slowest site: the time its candidates need, spread over the batches the known
  candidates need at least and half as many again (⌈Σ candidates / K × (1 + ``PACE_SLACK``)⌉), so that it
  is fetched in every batch, at a pace that ends it with the crawl, and no other site keeps a batch open
  longer than it does.

Why the slack: a crawl finds pages until its end, and the batches the known candidates need are fewer than
the crawl will take. Paced over those alone, the slowest site's last pages come in the batch that fetches the
other sites' last known pages, and what those link to comes after it, every connection but one idle (the
real-document web: one SQLite page among its last linked 300 dead pages, 15 s at the large-site wait after
the slowest site's last request). Paced over half as many batches again, the slowest site takes less of
each batch, the other sites take the rest by their share and are done before it, and what their last pages
find is fetched beside the slowest site's pages kept for it. The slowest site is still fetched in every
batch; the crawl may take more batches, each a batch start.

The limits go to ``select_batches`` as ``site_limits`` (with any other limits, the smaller wins): within
them, the batch is still shared by the sites' estimated PageRank. A site with a wait of 0 is not limited.
"""

from __future__ import annotations

import math

import numpy as np

PACE_SLACK = 0.5  # the slowest site is paced over this share more batches than its known candidates need


def site_waits(pages: np.ndarray, crawl_delays: np.ndarray, wait_normal: float, wait_large: float,
               large_site_pages: int) -> np.ndarray:
    """Each site's wait between two fetches, as the harvester's politeness sets it: the large-site wait
    above ``large_site_pages`` known documents, never below the site's Crawl-delay."""
    pages = np.asarray(pages)
    base = np.where(pages > large_site_pages, wait_large, wait_normal)
    return np.maximum(base, np.asarray(crawl_delays, dtype=np.float64))


def even_time(candidates: np.ndarray, waits: np.ndarray, size: int) -> float:
    """The largest T with Σ min(candidates, 1 + floor(T / wait)) <= ``size`` over sites with candidates and a
    wait > 0 (sites with a wait of 0 count their candidates whole); ``inf`` when everything fits."""
    candidates = np.asarray(candidates, dtype=np.int64)
    waits = np.asarray(waits, dtype=np.float64)
    free = waits <= 0
    budget = size - int(candidates[free].sum())
    live = (~free) & (candidates > 0)
    counts, waits = candidates[live], waits[live]
    if counts.sum() <= budget:
        return math.inf
    if len(counts) > budget:
        return 0.0

    def taken(t: float) -> int:
        return int(np.minimum(counts, 1 + np.floor(t / waits)).sum())

    # taken() steps up at the times m × wait: bisect between 0 and the time every site needs.
    low, high = 0.0, float(((counts - 1) * waits).max())
    for _ in range(64):
        middle = (low + high) / 2
        if middle <= low or middle >= high:
            break
        low, high = (middle, high) if taken(middle) <= budget else (low, middle)
    return low


def time_limits(candidates: np.ndarray, waits: np.ndarray, size: int) -> np.ndarray:
    """Most pages of each site in a batch of ``size`` (int64, aligned with ``candidates``, each site's pages
    that may go into it, and ``waits``, its wait in seconds): 1 + floor(T / wait), T as the module says;
    a site with a wait of 0, or no candidates, gets its candidates."""
    candidates = np.asarray(candidates, dtype=np.int64)
    waits = np.asarray(waits, dtype=np.float64)
    if size < 1:
        raise ValueError("size must be >= 1")
    if np.any(~(waits >= 0)):
        raise ValueError("waits must be >= 0")
    total = int(candidates.sum())
    if total == 0:
        return candidates.copy()
    batches = math.ceil(total / size * (1 + PACE_SLACK))
    pace = float((np.maximum(candidates - 1, 0) * waits).max()) / batches
    t = max(even_time(candidates, waits, size), pace)
    if math.isinf(t):
        return candidates.copy()
    limited = waits > 0
    limits = candidates.copy()
    limits[limited] = np.minimum(candidates[limited], 1 + np.floor(t / waits[limited]).astype(np.int64))
    return limits


def site_time_limits(site_ids: np.ndarray, candidates: np.ndarray, sites: np.ndarray, config,
                     count: int) -> np.ndarray | None:
    """``time_limits`` indexed by site-id, from the document records' ``site_ids``, which of them are
    ``candidates`` (bool) and the site records ``sites`` (``docs``, ``crawl_delay``; indexed by site-id);
    None when ``WIRE_BATCH_TIME_SHARE`` is off. ``count``: the highest site-id."""
    if not config.batch_time_share:
        return None
    per_site = np.bincount(np.asarray(site_ids, dtype=np.int64)[candidates], minlength=count + 1)
    pages = np.zeros(count + 1, dtype=np.int64)
    delays = np.zeros(count + 1, dtype=np.float64)
    if sites is not None:
        known = min(len(sites), count + 1)
        pages[:known] = sites["docs"][:known]
        delays[:known] = sites["crawl_delay"][:known]
    waits = site_waits(pages, delays, config.wait_normal, config.wait_large_site, config.large_site_pages)
    limits = time_limits(per_site, waits, config.batch_size)
    return np.maximum(limits, 1)
