"""The batch planner: which pages one batch of a manager run holds (thesis §7.2.1, paper §2.1).

The objective. Fetch as much of the final PageRank as early as possible over the whole crawl, within what
each site can serve at its politeness wait, and never leave idle the site that sets the crawl's politeness
bound (the most time left at its wait): the crawl cannot end before that site's pages are fetched.

``plan_batches`` is a pure function of what the manager knows: each page's profit, site and whether it was
fetched, each site's estimates (``SiteState``: its share of the PageRank and its pages left, from
``sites.py``; its wait) and the batch size. Each rule has one reason:

1. **Value.** A batch is shared among the sites in proportion to each site's estimated share of the final
   PageRank, by what it is short of that share of all pages fetched so far (``site_catchup``): early
   estimates are the worst, and a deficit rule returns what the first batches gave the wrong sites. Inside
   its share, a site's pages are taken by profit.
2. **Exploration** (``WIRE_BATCH_EXPLORE``, ε). A part ε of every batch is shared by the sites' frontiers
   (their known pages not fetched yet), whatever their estimated value (``explore``). A site is valued by
   the links seen on its fetched pages; one whose pages have not been fetched has few links seen and a low
   value, which rule 1 alone would keep low. docs/planner.md says why this and not an upper-confidence share.
3. **Slow start** (``WIRE_BATCH_SITE_GROWTH``). A site gets at most a multiple of the pages fetched from it
   (``site_growth``): what the manager knows of a site comes from its fetched pages, so early batches stay
   short per site, and the next run decides with more of each site seen.
4. **Capacity.** A site gets no more than it can fetch in the batch's time at its wait (``timeshare.py``).
5. **The bound site leads.** The site with the most time left is given its whole capacity in every batch,
   and the batch's time is at least what its value share takes, keeping a reserve of its pages for the
   crawl's end (``timeshare.py``): its idle time is the crawl's lost time.
6. WIRE's own cap: at most ``WIRE_BATCH_SAMESITE`` pages of a site.

Further batches of the same run (``WIRE_BATCH_COUNT``) take the next best, disjoint from the earlier ones.
What each rule is worth, on webs it was not tuned on, is measured by ``benchmarks/crawl_order.py`` and
``benchmarks/realweb_makespan.py`` (benchmarks/README.md).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .profit import rank_in_group
from .shares import site_caps
from .timeshare import TimeShare, site_time_limits

CATCHUP_BASE = 0.25  # site_catchup: the part of a site's plain share it keeps, whatever its shortfall


class SiteState(NamedTuple):
    """What the planner knows of each site, indexed by site-id (entry 0 unused)."""

    value: np.ndarray  # estimated share of the final PageRank (> 0)
    left: np.ndarray | None  # estimated pages left to fetch (None: its candidates)
    waits: np.ndarray  # seconds between two fetches (0: not limited by time)
    groups: np.ndarray | None = None  # its server group (``collection.groups``; None: each site its own)


class Batches(NamedTuple):
    """``plan_batches``' answer: the batches (indices into the pages, each in decreasing profit) and, by
    site-id, the sites planned to fetch through a led batch (rule 5; None when the batch is not led)."""

    batches: list[np.ndarray]
    critical: np.ndarray | None


def plan_batches(
    profits: np.ndarray,
    site_ids: np.ndarray,
    candidates: np.ndarray,
    visited: np.ndarray,
    sites: SiteState,
    *,
    size: int,
    samesite: int,
    count: int = 1,
    explore: float = 0.0,
    growth: float = 0.0,
    start: np.ndarray | None = None,
    queued: bool = False,
    max_sites_per_group: int = 0,
) -> Batches:
    """The next ``count`` batches of ``size`` (the module docstring's rules). Per-page arrays are aligned:
    ``profits``, ``site_ids``, ``candidates`` (may go into a batch), ``visited`` (fetched before), ``start``
    (seeds, for rule 3). ``queued``: jobs are queued on the collection, so the next batch follows at once
    and the bound site may keep its reserve back (``timeshare.site_time_limits``). ``max_sites_per_group``:
    most sites of one server group in a batch (0: no limit; ``group_limits``)."""
    site_ids = np.asarray(site_ids, dtype=np.int64)
    count_sites = len(sites.value) - 1
    weights = site_catchup(sites.value, site_ids, visited, candidates & ~visited, size * count)
    weights = explore_share(weights, site_ids, candidates & ~visited, explore)
    limits = site_growth(site_ids, visited, growth, count_sites, start=start)
    if sites.groups is not None and len(np.unique(sites.groups[1:])) < count_sites:
        shared = group_limits(
            site_ids, candidates, sites, weights, limits, size, samesite, queued, max_sites_per_group
        )
    else:
        shared = site_time_limits(
            site_ids,
            candidates,
            sites.waits,
            size=size,
            samesite=samesite,
            weights=weights,
            limits=limits,
            left=sites.left,
            queued=queued,
        )
    limits = shared.limits if limits is None else np.minimum(limits, shared.limits)
    if shared.critical.any():  # the bound site and those near it take their whole limit
        weights = np.where(shared.critical, np.inf, weights)
    chosen = select_batches(
        profits,
        site_ids,
        candidates,
        size=size,
        samesite=samesite,
        count=count,
        site_weights=weights,
        site_limits=limits,
    )
    return Batches(chosen, shared.critical if shared.led else None)


def group_limits(
    site_ids: np.ndarray,
    candidates: np.ndarray,
    sites: SiteState,
    weights: np.ndarray,
    limits: np.ndarray | None,
    size: int,
    samesite: int,
    queued: bool,
    max_sites: int,
) -> TimeShare:
    """Rules 4 and 5 by server group: sites that share a server share its one connection (the harvester's
    politeness by group, ``WIRE_POLITENESS_GROUP``), so capacity, the bound and the lead are a group's. Each
    group is planned as one site (its candidates, value, pages left and growth limits summed; its wait the
    longest of its sites'), and its part is then shared among its sites by their weights (``site_caps``),
    at most ``max_sites`` of them (those of highest weight; 0: all). Indexed by site-id, like
    ``timeshare.site_time_limits``' answer."""
    count = len(sites.value) - 1
    group_of = np.asarray(sites.groups, dtype=np.int64)[: count + 1]
    groups = int(group_of.max(initial=0)) + 1
    # Group 0 is reserved, as site-id 0 is: groups are numbered from 1 here.
    page_groups = group_of[site_ids] + 1
    waits = np.zeros(groups + 1)
    np.maximum.at(waits, group_of[1:] + 1, np.asarray(sites.waits, dtype=np.float64)[1:])

    def sum_by(values: np.ndarray) -> np.ndarray:
        return np.bincount(group_of[1:] + 1, weights=values[1:], minlength=groups + 1)

    per_site = np.bincount(site_ids[candidates], minlength=count + 1)[: count + 1]
    group_limits = None if limits is None else sum_by(np.minimum(limits, per_site).astype(np.float64))
    shared = site_time_limits(
        page_groups,
        candidates,
        waits,
        size=size,
        samesite=samesite * count,  # WIRE's cap is on a site: applied to each site below, not to a group
        weights=np.maximum(sum_by(np.asarray(weights, dtype=np.float64)), np.finfo(np.float64).tiny),
        limits=None if group_limits is None else np.maximum(group_limits, 1).astype(np.int64),
        left=None if sites.left is None else sum_by(np.asarray(sites.left, dtype=np.float64)),
        queued=queued,
    )
    # Each group's part, shared among its sites with candidates by weight: most groups are one site, which
    # takes the whole part; in the others the sites of highest weight come first, no more of them than the
    # part has pages (each site of a batch gets one at least) nor than ``max_sites``.
    capped = per_site if limits is None else np.minimum(per_site, np.maximum(limits, 1))
    live = np.flatnonzero(per_site[1:] > 0) + 1
    order = live[np.lexsort((-np.asarray(weights, dtype=np.float64)[live], group_of[live]))]
    rank = rank_in_group(group_of[order])
    part = shared.limits[group_of[order] + 1]
    keep = rank < part
    if max_sites:
        keep &= rank < max_sites
    order = order[keep]
    members = np.bincount(group_of[order], minlength=groups)
    out = np.zeros(count + 1, dtype=np.int64)
    alone = members[group_of[order]] == 1
    out[order[alone]] = np.minimum(capped[order[alone]], part[keep][alone])
    shared_groups = order[~alone]  # still sorted by group
    starts = np.flatnonzero(np.diff(group_of[shared_groups], prepend=-1))
    for sites_of in np.split(shared_groups, starts[1:]):
        if not len(sites_of):
            continue
        group = group_of[sites_of[0]]
        out[sites_of] = site_caps(
            int(shared.limits[group + 1]), samesite, capped[sites_of], np.asarray(weights)[sites_of]
        )
    critical = shared.critical[group_of + 1] & (out > 0)
    critical[0] = False
    return TimeShare(out, critical, shared.led)


def explore_share(weights: np.ndarray, site_ids: np.ndarray, frontier: np.ndarray, part: float) -> np.ndarray:
    """Rule 2: ``weights`` (indexed by site-id) normalised and mixed with each site's share of the
    ``frontier`` (per page: known, eligible, never fetched), ``part`` of it: (1 − ε) w_s / Σw + ε F_s / ΣF.
    Unchanged when ``part`` is 0 or there is no frontier."""
    weights = np.asarray(weights, dtype=np.float64)
    if part <= 0:
        return weights
    pages = np.bincount(np.asarray(site_ids, dtype=np.int64), weights=frontier, minlength=len(weights))
    pages = pages[: len(weights)]
    if pages[1:].sum() <= 0:
        return weights
    out = np.zeros(len(weights))
    out[1:] = (1 - part) * weights[1:] / weights[1:].sum() + part * pages[1:] / pages[1:].sum()
    return np.maximum(out, np.finfo(np.float64).tiny)


def site_catchup(
    weights: np.ndarray,
    site_ids: np.ndarray,
    visited: np.ndarray,
    waiting: np.ndarray,
    size: int,
    base: float = CATCHUP_BASE,
) -> np.ndarray:
    """Weights for a batch of ``size`` (indexed by site-id, like ``weights``, each site's estimated share of
    the PageRank) that make up for the earlier batches (rule 1 of the module docstring): each site's
    shortfall w_s × (F + ``size``) − f_s (w normalised to sum 1, f_s the pages fetched from the site so far,
    ``visited``, and F their total), at least 0 and at most its pages ``waiting`` (eligible, never fetched),
    plus ``base`` × w_s × ``size``: a crawl with nothing left to catch up (revisits only) is split by the
    estimate itself."""
    weights = np.asarray(weights, dtype=np.float64)
    share = np.zeros(len(weights))
    share[1:] = weights[1:] / weights[1:].sum()
    site_ids = np.asarray(site_ids, dtype=np.int64)
    fetched = np.bincount(site_ids, weights=np.asarray(visited, dtype=np.float64), minlength=len(weights))
    left = np.bincount(site_ids, weights=np.asarray(waiting, dtype=np.float64), minlength=len(weights))
    fetched, left = fetched[: len(weights)], left[: len(weights)]
    shortfall = np.clip(share * (fetched.sum() + size) - fetched, 0, left)
    out = np.zeros(len(weights))
    out[1:] = np.maximum(shortfall[1:] + base * share[1:] * size, np.finfo(np.float64).tiny)
    return out


def site_growth(
    site_ids: np.ndarray, visited: np.ndarray, growth: float, sites: int, start: np.ndarray | None = None
) -> np.ndarray | None:
    """Most pages of each site in a batch (indexed by site-id; rule 3 of the module docstring): ``growth``
    times the pages fetched from it so far, at least 1 and at least its pages not fetched yet among
    ``start`` (seeds, pages added at depth 0: a person asked for them); None when ``growth`` is 0."""
    if growth <= 0:
        return None
    site_ids = np.asarray(site_ids, dtype=np.int64)
    fetched = np.bincount(site_ids, weights=visited, minlength=sites + 1)
    limits = np.maximum(np.floor(growth * fetched), 1).astype(np.int64)
    if start is not None:
        waiting = np.bincount(
            site_ids,
            weights=np.asarray(start, dtype=bool) & ~np.asarray(visited, dtype=bool),
            minlength=sites + 1,
        )
        limits = np.maximum(limits, waiting.astype(np.int64))
    return limits


def select_batches(
    profits: np.ndarray,
    site_ids: np.ndarray,
    candidates: np.ndarray,
    *,
    size: int,
    samesite: int,
    count: int = 1,
    site_weights: np.ndarray | None = None,
    site_limits: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Up to ``count`` disjoint batches of indices into ``profits``, each the ``size`` candidates of highest
    profit with at most ``site_caps`` of one site, in decreasing profit; a batch is smaller, and batches are
    fewer, when candidates run out (no empty batch is returned). Ties go to the lower index.

    ``site_weights`` (indexed by site-id) share the batch among the sites that still have candidates
    (``site_caps``: water-filling, the slots a site cannot fill go to the others; without weights, an even
    share); ``site_limits`` (indexed by site-id, >= 1) bound each site on top of its share, and a site's
    unused share goes to the others only up to their limits, so a batch may come out short. The share is
    rounded down, so a batch can also come out up to S − 1 pages short of ``size`` (S sites)."""
    if size < 1 or samesite < 1 or count < 1:
        raise ValueError("size, samesite and count must be >= 1")
    pool = np.flatnonzero(candidates)
    # Sort once by (site, profit descending, index): for profits >= 0 the float32 bits order as the values.
    bits = np.maximum(np.asarray(profits, dtype=np.float32)[pool], 0).view(np.uint32)
    key = (site_ids[pool].astype(np.uint64) << np.uint64(32)) | (np.uint32(0xFFFFFFFF) - bits).astype(
        np.uint64
    )
    pool = pool[np.argsort(key, kind="stable")]
    del key, bits
    batches = []
    for _ in range(count):
        ranks = rank_in_group(site_ids[pool])
        starts = np.flatnonzero(ranks == 0)
        counts = np.diff(np.append(starts, len(pool))).astype(np.int64)  # candidates per site
        runs = counts
        if site_limits is not None:
            counts = np.minimum(counts, np.asarray(site_limits)[site_ids[pool[starts]]])
        weights = None if site_weights is None else np.asarray(site_weights)[site_ids[pool[starts]]]
        caps = site_caps(size, samesite, counts, weights)
        if site_limits is not None:
            caps = np.minimum(caps, counts)
        capped = pool[ranks < np.repeat(caps, runs)]
        if len(capped) > size:
            # Highest profit first, lower index on ties: sort by (−profit, index).
            top = np.argpartition(-profits[capped], size - 1)[:size]
            threshold = profits[capped[top]].min()
            above = capped[profits[capped] > threshold]
            at = np.sort(capped[profits[capped] == threshold])[: size - len(above)]
            capped = np.concatenate([above, at])
        if len(capped) == 0:
            break
        chosen = capped[np.lexsort((capped, -profits[capped]))]
        batches.append(chosen)
        taken = np.zeros(len(profits), dtype=bool)
        taken[chosen] = True
        pool = pool[~taken[pool]]
    return batches
