"""A site's part of a batch from what it can fetch in the batch's time (the planner's rules 4 and 5,
``planner.py``).

The harvester fetches a site one page at a time, with the site's wait between two fetches (WIRE's
``harvester/wait/normal``, ``big`` for sites of more than ``countbig`` pages, never less than the site's
Crawl-delay), so a site given n pages of a batch keeps the batch open for at least (n − 1) × its wait. A
batch shared by value alone gives the largest sites parts that take longer than every other site's, and
ends with one site fetched alone while every connection but one is idle; worse, the site that sets the
whole crawl's politeness bound (the most pages left × its wait) is idle between its batches.

``time_limits`` caps each site's part at what it can fetch in the batch's time T: 1 + floor(T / its wait)
pages. T is the larger of

* the even time: the largest T with Σ_sites min(candidates, 1 + floor(T / wait)) <= K, every site with
  candidates ending together;
* the pace of the slowest site: the time its candidates need, spread over the batches the known
  candidates need at least and half as many again (⌈Σ candidates / K × (1 + ``PACE_SLACK``)⌉), so that it
  is fetched in every batch, at a pace that ends it with the crawl. The slack is there because a crawl finds
  pages to its end: paced over the known candidates alone, the slowest site's last pages would come with the
  other sites' last known pages, and what those link to would be fetched after it, alone.

**The slowest site leads** (``site_time_limits`` with weights). T is also at least the time the slowest
site's own value share of the batch takes, so it is fetched as its pages are worth. The slowest site is the
one with the most time left at its wait, its pages left as the manager estimates them (``sites.pages_left``:
a large site shows its pages a section at a time).

* **Its reserve.** The lead takes no more than leaves the slowest site, after the batch, the next site's time
  left and ``LEAD_RESERVE`` of its own known pages' time: what the other sites' last pages link to must be
  fetched beside the slowest site's last pages, not after them. When jobs are queued on the collection the
  next batch follows at once, so in a batch that is not led the slowest site also holds that reserve back
  while the other sites have pages. A single job, or a cron recrawl's, fetches everything that fits rather
  than leave some of it to a next job that may come hours later.
* **Who may not idle** (``critical_sites``). The slowest site and the sites whose known time left is within
  T of the longest are given their whole limit in every batch: an idle stretch of theirs would end the crawl
  later. When those limits do not fit in the batch, T shrinks until they do, so that they end together. When
  the slowest site's share set T (the batch is *led*), the batch names them, and softmin
  (``harvester/batchend.py``) does not count them as stragglers of one another.

A site with a wait of 0 is not limited.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .shares import site_caps

PACE_SLACK = 0.5  # the slowest site is paced over this share more batches than its known candidates need
LEAD_RESERVE = (
    0.2  # the leading site keeps this share of its known pages' time beyond the next site's time left
)


def site_waits(
    pages: np.ndarray, crawl_delays: np.ndarray, wait_normal: float, wait_large: float, large_site_pages: int
) -> np.ndarray:
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


def batch_time(candidates: np.ndarray, waits: np.ndarray, size: int) -> float:
    """The batch's time T (the module docstring): the even time or the slowest site's pace, whichever is
    longer; ``inf`` when every candidate fits."""
    batches = math.ceil(int(np.asarray(candidates).sum()) / size * (1 + PACE_SLACK))
    pace = float(remaining_times(candidates, waits).max()) / batches
    return max(even_time(candidates, waits, size), pace)


def time_limits(candidates: np.ndarray, waits: np.ndarray, size: int) -> np.ndarray:
    """Most pages of each site in a batch of ``size`` (int64, aligned with ``candidates``, each site's pages
    that may go into it, and ``waits``, its wait in seconds): 1 + floor(T / wait), T ``batch_time``'s;
    a site with a wait of 0, or no candidates, gets its candidates."""
    candidates = np.asarray(candidates, dtype=np.int64)
    waits = np.asarray(waits, dtype=np.float64)
    if size < 1:
        raise ValueError("size must be >= 1")
    if np.any(~(waits >= 0)):
        raise ValueError("waits must be >= 0")
    if int(candidates.sum()) == 0:
        return candidates.copy()
    return limits_at(candidates, waits, batch_time(candidates, waits, size))


def limits_at(candidates: np.ndarray, waits: np.ndarray, t: float) -> np.ndarray:
    """1 + floor(``t`` / wait) for each site, at most its candidates; all of them for a wait of 0 or t
    ``inf``."""
    limits = np.asarray(candidates, dtype=np.int64).copy()
    if math.isinf(t):
        return limits
    limited = waits > 0
    limits[limited] = np.minimum(limits[limited], 1 + np.floor(t / waits[limited]).astype(np.int64))
    return limits


def remaining_times(pages: np.ndarray, waits: np.ndarray) -> np.ndarray:
    """Each site's crawl time left at its wait, from its pages left: (pages − 1) × wait (0 without)."""
    return np.maximum(np.asarray(pages, dtype=np.int64) - 1, 0) * np.asarray(waits, dtype=np.float64)


def critical_sites(
    left: np.ndarray, waits: np.ndarray, t: float, whole: np.ndarray, size: int, leader: int
) -> tuple[np.ndarray, float]:
    """Which sites (bool, aligned with ``left``, each site's known pages left, and ``waits``) must be fetched
    through the whole of a led batch of time ``t``, and the batch's time they fit in: the ``leader`` and the
    sites whose crawl time left is within ``t`` of the longest. Any of them idle for part of the batch would
    then set the crawl's end; the others have that much slack and may idle. Their ``whole`` parts of the batch
    (aligned too) must fit in its ``size``: when they do not, the time shrinks to their even time, so that
    they still end together (dropping one of them would leave it idle with as much to fetch as the others).
    Known pages, not estimates: a site that has just shown many pages linked once is estimated to have many
    more, and the site next to it would be left idle for them."""
    times = remaining_times(left, waits)
    whole = np.asarray(whole)
    if not len(times) or times.max() <= 0 or math.isinf(t):
        return np.zeros(len(times), dtype=bool), t
    critical = (times > 0) & (times.max() - times < t)
    critical[leader] = True
    critical &= whole > 0
    if int(whole[critical].sum()) > size:
        t = min(t, even_time(np.where(critical, whole, 0), waits, size))
    return critical, t


class TimeShare(NamedTuple):
    """``site_time_limits``' answer, indexed by site-id: ``limits``, most pages of each site in the batch;
    ``critical``, the sites given their whole limit (``critical_sites``)."""

    limits: np.ndarray
    critical: np.ndarray
    led: bool = False  # the slowest site's share set the batch's time


def site_time_limits(
    site_ids: np.ndarray,
    candidates: np.ndarray,
    waits: np.ndarray,
    *,
    size: int,
    samesite: int,
    weights: np.ndarray | None = None,
    limits: np.ndarray | None = None,
    left: np.ndarray | None = None,
    queued: bool = False,
) -> TimeShare:
    """``time_limits`` indexed by site-id, from the pages' ``site_ids``, which of them are ``candidates``
    (bool) and each site's wait (``waits``, indexed by site-id: ``site_waits``). With ``weights`` (indexed by
    site-id: how the batch is shared among sites, ``select_batches``' ``site_weights``), the slowest site
    leads (the module docstring): ``limits``, any other limits by site-id (``site_growth``), bound its own
    share; ``left``, each site's pages left to fetch as the manager estimates them (indexed by site-id;
    default its candidates; never fewer), which site is slowest and what it keeps (which sites are critical
    goes by their candidates). ``queued``: the next batch follows at once (jobs queued on the collection),
    so the slowest site keeps its reserve back while the others have pages."""
    waits = np.asarray(waits, dtype=np.float64)
    count = len(waits) - 1
    per_site = np.bincount(np.asarray(site_ids, dtype=np.int64)[candidates], minlength=count + 1)[: count + 1]
    critical = np.zeros(count + 1, dtype=bool)
    if not per_site.any():
        return TimeShare(np.maximum(per_site, 1), critical)
    lead = weights is not None
    wanted = reserve = 0.0
    slowest = 0
    if lead:
        need = per_site.copy()
        if left is not None:
            given = np.asarray(left)[: count + 1]
            need[: len(given)] = np.maximum(need[: len(given)], given)
        times = remaining_times(need, waits)
        slowest = int(np.argmax(times))
        known = np.bincount(np.asarray(site_ids, dtype=np.int64), minlength=count + 1)[slowest]
        reserve = LEAD_RESERVE * float(known * waits[slowest])
        if per_site[slowest]:  # its share of the batch, at its wait
            live = np.flatnonzero(per_site)
            counts = per_site if limits is None else np.minimum(per_site, np.maximum(limits, 1))
            shares = site_caps(size, samesite, counts[live], np.asarray(weights, dtype=np.float64)[live])
            wanted = (int(shares[np.searchsorted(live, slowest)]) - 1) * float(waits[slowest])
            # ... within the reserve it keeps for the crawl's end: the next site's time left and a share of
            # its own.
            keep = np.delete(times, slowest).max(initial=0.0) + reserve
            wanted = min(wanted, float(times[slowest] - keep))
    base = batch_time(per_site, waits, size)
    led = lead and wanted > base  # the slowest site's share sets the batch's time
    t = max(base, wanted)
    timed = limits_at(per_site, waits, t)
    if not led and lead and queued and per_site[slowest] and np.delete(per_site, slowest).any():
        # While other sites have pages to fetch, what they link to may come yet: the slowest site takes no
        # more than its pages beyond its reserve, or the time the other sites need in the batch.
        known = remaining_times(per_site, waits)
        spare = float(known[slowest]) - reserve
        kept = min(t, max(float(np.delete(known, slowest).max()), spare))
        if kept < t:
            t = kept
            timed = limits_at(per_site, waits, t)
    if lead:
        # Led or not, the slowest site and those near it are fetched through the whole batch.
        whole = timed if limits is None else np.minimum(timed, np.maximum(limits, 1))
        critical, t = critical_sites(per_site, waits, t, whole, size, slowest)
        timed = limits_at(per_site, waits, t)
    return TimeShare(np.maximum(timed, 1), critical, led)
