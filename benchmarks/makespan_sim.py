"""Whole-crawl time at WIRE's scale, simulated: makespan against the politeness lower bound, before and after.

    python -m benchmarks.makespan_sim                       # 10,000 sites, Zipf sizes, K = 100,000 (seconds)
    python -m benchmarks.makespan_sim --sites 2000 --largest 5000 --batch 20000

A web of ``--sites`` sites whose sizes follow Zipf's law (site i has ``--largest`` / i^``--exponent`` pages,
at least 1) is crawled to the end in batches of ``--batch`` URLs by a harvester of ``--connections``
connections: a fetch takes ``--fetch`` seconds and holds a connection, then its site waits WIRE's wait
(``--wait``, 15 s; ``--wait-large``, 5 s, for sites of more than ``--large-pages`` pages) before its next
fetch; a ready site gets the next free connection in the order it became ready. Every cycle costs
``--manager`` seconds of manager run (and, for separate jobs, process start) before its harvest.

The lower bound no polite crawl beats: max over sites of n x (fetch + wait) - wait, and the connections'
bound, total pages x fetch / connections. Printed, per policy: cycles, makespan, makespan / bound.

Policies, each adding one change to the one before:

* ``before``     — the baseline manager: a batch is shared among the sites in proportion to their pages left
  (their share of the PageRank, at this scale), at most WIRE_BATCH_SAMESITE (500) of a site; a batch ends
  when its last page is fetched, and the manager runs then;
* ``time share`` — a site's part of the batch is what it can fetch in the batch's time: the largest T with
  Σ_sites min(pages left, T / (fetch + wait)) <= K, no other cap, so that every site of the batch ends
  together and the site that sets the bound is never idle;
* ``softmin``    — WIRE's harvester/nthreads/softmin and softmintime: the batch ends when fewer than
  ``--softmin`` sites still have pages to fetch and it has run ``--softmintime`` seconds; what is left goes
  back to the manager for the next batch;
* ``overlap``    — the manager plans the next batch while the current one finishes (its run hidden behind
  the harvest's tail), so a cycle costs no idle manager time.

The crawler's policies run its own code, not a model of it: the batch is the planner's share (``site_caps``,
in proportion to the pages left as the estimated PageRank share, at most samesite) within what each site can
fetch in the batch's time (``wirescrapy.manager.timeshare.time_limits``, from each site's wait):

* ``crawler``               — the time share, each cycle paying its manager run, no softmin;
* ``crawler+ahead``         — and WIRE_PLAN_AHEAD: the manager's run starts when ``plan_due`` says (the
  batch's pages left need less than twice its last run), so it is hidden behind the tail when the tail is
  long enough (the first one paid);
* ``crawler+softmin``       — the crawler without the planner's lead (``planner.py``, rule 5): ``crawler``
  with its softmin, on by default: ``softmin_due`` with WIRE_SOFTMIN and WIRE_SOFTMIN_TIME at their defaults
  (``wirescrapy.config``), looked at every ``batchend.TICK`` like the spider's timer, the restart a
  manager run;
* ``crawler+softmin+ahead`` — both. The restart softmin weighs is what the crawler measures: from the
  previous batch's end to this one's start, the part of the plan's run not hidden behind the tail, and a
  whole run more when softmin dropped pages the plan had left out (the crawler plans again then).
* ``crawler+softmin+lead`` — the crawler's defaults: ``crawler+softmin`` with the lead: the
  batch shared by the manager's ``site_time_limits`` (the slowest site's own share, by pages left, may set the
  batch's time, within its reserve; the critical sites take their whole limit), and a led batch's softmin
  weighing what its stragglers keep the slowest site idle in every cycle, its critical sites no stragglers of
  one another, as the spider does. At the default scale ``--samesite`` (500) caps every large site's share
  below its pace, so no batch is led and the crawl is ``crawler+softmin``'s; ``--samesite 25000`` lifts the
  cap.

These five run the harvest as the spider watches it (``harvest_watched``): a site is active while it has
pages queued or one in flight, and the pages left need ``time_left``, the politeness queue's estimate
(``PolitenessQueue.time_left``). They are one harvester of many cycles; with ``--jobs`` every cycle is a
job of its own (a harvester's last cycle), where softmin weighs what the stragglers keep the site the crawl
waits for longest idle (``critical_idle``, from each site's pages left for later batches).
"""

from __future__ import annotations

import argparse
import heapq
import math
import sys
import time
from dataclasses import dataclass

import numpy as np
from scrapy.settings import Settings

from wirescrapy.config import WireConfig, default_settings
from wirescrapy.harvester.batchend import TICK, critical_idle, plan_due, softmin_due
from wirescrapy.manager.shares import site_caps
from wirescrapy.manager.timeshare import site_time_limits, site_waits, time_limits

# The crawler's policies: whether softmin is on (at the crawler's defaults), whether it plans ahead, and
# whether the slowest site leads (the planner's rule 5).
CRAWLER = {
    "crawler": (False, False, False),
    "crawler+ahead": (False, True, False),
    "crawler+softmin": (True, False, False),
    "crawler+softmin+ahead": (True, True, False),
    "crawler+softmin+lead": (True, False, True),
}
POLICIES = ("before", "time share", "softmin", "overlap", *CRAWLER)


def zipf_sizes(sites: int, largest: int, exponent: float) -> np.ndarray:
    return np.maximum(1, np.round(largest / np.arange(1, sites + 1) ** exponent)).astype(np.int64)


def waits_of(sizes: np.ndarray, args: argparse.Namespace) -> np.ndarray:
    return np.where(sizes > args.large_pages, args.wait_large, args.wait)


def share_by_size(left: np.ndarray, size: int, samesite: int) -> np.ndarray:
    """Pages of each site in a batch, in proportion to its pages left, at most ``samesite``, at least 1 for a
    site with pages left: the largest c with Σ min(max(1, floor(c × left)), left, samesite) <= size."""
    full = np.minimum(left, samesite)
    if full.sum() <= size:
        return full
    low, high = 0.0, 1.0
    while np.minimum(np.maximum(np.floor(high * left), left > 0), full).sum() <= size:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        if np.minimum(np.maximum(np.floor(middle * left), left > 0), full).sum() <= size:
            low = middle
        else:
            high = middle
    return np.minimum(np.maximum(np.floor(low * left), left > 0), full).astype(np.int64)


def share_by_time(left: np.ndarray, size: int, per_page: np.ndarray) -> np.ndarray:
    """Pages of each site in a batch: what it can fetch in the batch's time T, the largest T with
    Σ min(left, max(1, floor(T / per_page))) <= size (each site with pages left gets at least 1)."""
    if left.sum() <= size:
        return left.copy()

    def pages(t: float) -> np.ndarray:
        return np.minimum(left, np.maximum(np.floor(t / per_page), left > 0)).astype(np.int64)

    low, high = 0.0, float(per_page.max() * left.max())
    for _ in range(60):
        middle = (low + high) / 2
        if pages(middle).sum() <= size:
            low = middle
        else:
            high = middle
    return pages(low)


def share_by_crawler(left: np.ndarray, size: int, samesite: int, waits: np.ndarray) -> np.ndarray:
    """Pages of each site in a batch as the crawler's manager shares it (``select_batches``): its cap in
    proportion to the pages left within the time limits."""
    live = np.flatnonzero(left)
    counts = np.minimum(left[live], time_limits(left[live], waits[live], size))
    caps = np.minimum(site_caps(size, samesite, counts, left[live].astype(np.float64)), counts)
    batch = np.zeros_like(left)
    batch[live] = caps
    return batch


def lead_config(args: argparse.Namespace) -> WireConfig:
    """The crawler's settings at the simulated web's batch size and waits."""
    settings = Settings(default_settings())
    settings.setdict(
        {
            "WIRE_BATCH_SIZE": args.batch,
            "WIRE_BATCH_SAMESITE": args.samesite,
            "WIRE_WAIT_NORMAL": args.wait,
            "WIRE_WAIT_LARGE_SITE": args.wait_large,
            "WIRE_LARGE_SITE_PAGES": args.large_pages,
        },
        priority="cmdline",
    )
    return WireConfig.from_settings(settings)


def share_by_lead(left: np.ndarray, sizes: np.ndarray, config: WireConfig) -> tuple[np.ndarray, np.ndarray]:
    """Pages of each site in a batch as the crawler's manager shares it with the lead (``site_time_limits``,
    the manager's own code, site-ids from 1; every page of a site, ``sizes``, is known, and its candidates are
    the ``left`` not fetched yet; the sites' pages left are their share and what the manager estimates they
    have left), the critical sites taking their whole limit; and which sites were critical (a led batch's,
    for softmin)."""
    count = len(left)
    site_ids = np.repeat(np.arange(1, count + 1), sizes)
    place = np.arange(len(site_ids)) - np.repeat(np.cumsum(sizes) - sizes, sizes)  # in its site
    candidates = place >= np.repeat(sizes - left, sizes)
    known = np.concatenate([[0], sizes])
    waits = site_waits(
        known, np.zeros(count + 1), config.wait_normal, config.wait_large_site, config.large_site_pages
    )
    weights = np.concatenate([[0.0], left.astype(np.float64)])
    shared = site_time_limits(
        site_ids,
        candidates,
        waits,
        size=config.batch_size,
        samesite=config.batch_samesite,
        weights=weights,
        left=np.concatenate([[0], left]),
    )
    live = np.flatnonzero(left)
    counts = np.minimum(left[live], shared.limits[1:][live])
    critical = shared.critical[1:] if shared.led else np.zeros(count, bool)
    caps = np.minimum(
        site_caps(
            config.batch_size,
            config.batch_samesite,
            counts,
            np.where(critical[live], np.inf, weights[1:][live]),
        ),
        counts,
    )
    batch = np.zeros_like(left)
    batch[live] = caps
    return batch, critical


def harvest(
    batch: np.ndarray,
    waits: np.ndarray,
    fetch: float,
    connections: int,
    softmin: int,
    softmintime: float,
    not_before: np.ndarray,
) -> tuple[float, np.ndarray]:
    """Seconds the harvest of ``batch`` (pages per site) takes, and the pages fetched per site: a discrete
    event simulation of the connections and each site's wait. With ``softmin`` > 0 it ends when fewer than
    that many sites have pages left and ``softmintime`` seconds have passed. ``not_before``: per site, the
    time from the batch's start before which it may not be fetched (its wait after the previous batch's
    last fetch); updated for the next batch, relative to this one's start."""
    left = batch.copy()
    fetched = np.zeros_like(batch)
    ready = [(float(not_before[site]), int(site)) for site in np.flatnonzero(batch)]  # (may fetch at, site)
    heapq.heapify(ready)
    busy: list[float] = []  # end times of fetches in flight
    active = len(ready)
    now = 0.0
    end = 0.0
    while ready:
        if softmin and active < softmin and now >= softmintime:
            break
        when, site = heapq.heappop(ready)
        if len(busy) >= connections:
            free = heapq.heappop(busy)
            when = max(when, free)
        now = max(now, when)
        finish = now + fetch
        heapq.heappush(busy, finish)
        end = max(end, finish)
        left[site] -= 1
        fetched[site] += 1
        not_before[site] = finish + waits[site]
        if left[site]:
            heapq.heappush(ready, (finish + waits[site], site))
        else:
            active -= 1
    return max(end, now), fetched


def time_left(at: float, left: np.ndarray, not_before: np.ndarray, waits: np.ndarray) -> float:
    """``PolitenessQueue.time_left`` at ``at``: over the sites with pages queued (``left``), the time until
    the site is ready (``not_before``, the end of its last fetch + its wait; its wait whole while a fetch is
    in flight) plus one wait per page after its first."""
    queued = np.flatnonzero(left)
    if not len(queued):
        return 0.0
    wait = waits[queued]
    return float((np.clip(not_before[queued] - at, 0.0, wait) + (left[queued] - 1) * wait).max())


def plan_threshold(plan_seconds: float) -> float:
    """The most time left at which ``plan_due`` starts a plan (it does for every less), found by asking it:
    the harvest skips the looks that could not start one."""
    low, high = 0.0, 1.0
    while plan_due(high, plan_seconds) and high < 1e12:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if plan_due(middle, plan_seconds) else (low, middle)
    return low


def _tick_at_or_after(seconds: float) -> int:
    """The spider's first look at or after ``seconds`` into the batch, as a count of ``TICK``: its timer
    starts with the batch, the first look one tick in."""
    return max(1, math.ceil(seconds / TICK - 1e-9))


@dataclass
class Harvested:
    """A batch's harvest: how long it took, the pages fetched per site, and the times (from its start) when
    softmin ended it and when the plan of the next batch began, if they did."""

    seconds: float
    fetched: np.ndarray
    dropped_at: float | None
    planned_at: float | None

    def next_restart(self, manager: float) -> float:
        """What starting the next batch takes, from this one's end, as the crawler measures it: a manager run;
        planned ahead, what of it was not over by the end, and a run more if softmin dropped pages the plan
        left out (``BatchEnd._planned_next`` plans again)."""
        if self.planned_at is None:
            return manager
        again = self.dropped_at is not None and self.planned_at < self.dropped_at
        return max(0.0, self.planned_at + manager - self.seconds) + (manager if again else 0.0)


def harvest_watched(
    batch: np.ndarray,
    waits: np.ndarray,
    fetch: float,
    connections: int,
    not_before: np.ndarray,
    *,
    softmin: int,
    softmin_time: float,
    restart: float,
    plan_seconds: float | None,
    later: np.ndarray | None = None,
    together: np.ndarray | None = None,
) -> Harvested:
    """``harvest`` (``softmin`` aside) watched as the spider's timer watches a batch (``BatchEnd._look``,
    every ``TICK`` seconds): softmin ends it when ``softmin_due`` says (``restart``: what starting it took),
    and with ``plan_seconds`` (the last manager run) the next batch's plan begins when ``plan_due`` says. With
    ``later`` (seconds by site: its pages left for later batches at its wait, ``BatchSite.left``) softmin
    weighs the time the stragglers keep the site the crawl waits for longest idle, as the spider does
    (``critical_idle``); without, the time the pages left need (WIRE's softmin). ``together``: a led batch's
    critical sites (bool).

    The looks that cannot change anything are skipped, not decided here: between two changes of the sites
    active (a fetch dispatched, a site's last fetch ending) and ``softmin_time``, only the time left changes,
    and it only falls (by at most the time gone by), so softmin is asked at the first look after each change,
    first with an unbounded time left (``softmin_due`` can only say yes to more), and the plan is asked no
    sooner than its time left could have fallen to what ``plan_due`` accepts."""
    left = batch.copy()
    fetched = np.zeros_like(batch)
    ready = [(float(not_before[site]), int(site)) for site in np.flatnonzero(batch)]  # (may fetch at, site)
    heapq.heapify(ready)
    busy: list[float] = []  # end times of fetches in flight
    last_ends: list[
        tuple[float, int]
    ] = []  # (end, site): last fetches in flight of sites with no page queued
    began_with, queued = len(ready), int(batch.sum())
    plans = plan_seconds is not None
    threshold = plan_threshold(plan_seconds) if plans else 0.0
    plan_tick = 1  # the plan's next look, in ticks
    tick = 1  # the next look not taken yet, in ticks
    dropped_at = planned_at = None
    now = end = 0.0
    later_seconds = {} if later is None else {int(site): float(later[site]) for site in np.flatnonzero(later)}
    alongside = frozenset() if together is None else frozenset(np.flatnonzero(together).tolist())

    def site_times(at: float) -> dict[int, float]:
        """``PolitenessQueue.site_times``: the active sites' queued pages' time, 0 for a last fetch in
        flight."""
        times = dict.fromkeys((site for _, site in last_ends), 0.0)
        sites = np.flatnonzero(left)
        wait = waits[sites]
        queued = np.clip(not_before[sites] - at, 0.0, wait) + (left[sites] - 1) * wait
        times.update(zip(sites.tolist(), queued.tolist()))
        return times

    def look(at: float) -> None:
        nonlocal dropped_at, planned_at, plan_tick
        while last_ends and last_ends[0][0] <= at:
            heapq.heappop(last_ends)
        if softmin and dropped_at is None:
            rule = (len(ready) + len(last_ends), queued, at, softmin, softmin_time)
            if softmin_due(*rule, began_with=began_with, time_left=math.inf, restart=restart) and softmin_due(
                *rule,
                began_with=began_with,
                restart=restart,
                time_left=time_left(at, left, not_before, waits)
                if later is None
                else critical_idle(site_times(at), later_seconds, alongside),
            ):
                dropped_at = at
        if plans and planned_at is None and (at >= plan_tick * TICK or dropped_at is not None):
            remaining = 0.0 if dropped_at is not None else time_left(at, left, not_before, waits)
            if plan_due(remaining, plan_seconds):
                planned_at = at
            else:
                plan_tick = max(_tick_at_or_after(at + remaining - threshold), round(at / TICK) + 1)

    def look_until(limit: float) -> None:
        """Take the looks before ``limit`` that may change something."""
        nonlocal tick
        while tick * TICK < limit and dropped_at is None:
            look(tick * TICK)
            changes = [plan_tick] if plans and planned_at is None else []
            if softmin:
                if last_ends:
                    changes.append(_tick_at_or_after(last_ends[0][0]))
                if softmin_time > tick * TICK:
                    changes.append(_tick_at_or_after(softmin_time))
            # else the next look that may change something is the first after the next dispatch
            tick = max(min(changes), tick + 1) if changes else math.inf

    watched = softmin > 0 or plans
    while ready:
        when, site = ready[0]
        at = max(now, when, busy[0] if len(busy) >= connections else 0.0)
        if watched:
            look_until(at)
        if dropped_at is not None:
            break
        heapq.heappop(ready)
        if len(busy) >= connections:
            heapq.heappop(busy)
        now = at
        tick = min(tick, _tick_at_or_after(now))
        finish = now + fetch
        heapq.heappush(busy, finish)
        end = max(end, finish)
        left[site] -= 1
        queued -= 1
        fetched[site] += 1
        not_before[site] = finish + waits[site]
        if left[site]:
            heapq.heappush(ready, (finish + waits[site], site))
        else:
            heapq.heappush(last_ends, (finish, site))
    seconds = max(end, now, dropped_at or 0.0)
    if watched and dropped_at is None:
        look_until(seconds)
    return Harvested(seconds, fetched, dropped_at, planned_at)


def crawl(policy: str, sizes: np.ndarray, args: argparse.Namespace) -> tuple[int, float]:
    if policy in CRAWLER:
        cycles, makespan, _ = crawl_as_crawler(policy, sizes, args)
        return cycles, makespan
    waits = waits_of(sizes, args)
    per_page = waits + args.fetch
    left = sizes.copy()
    step = POLICIES.index(policy)
    makespan, cycles = 0.0, 0
    not_before = np.zeros(len(sizes))
    while left.sum():
        if step == 0:
            batch = share_by_size(left, args.batch, args.samesite)
        else:
            batch = share_by_time(left, args.batch, per_page)
        softmin = args.softmin if step in (2, 3) else 0
        seconds, fetched = harvest(
            batch, waits, args.fetch, args.connections, softmin, args.softmintime, not_before
        )
        left -= fetched
        cycles += 1
        # The manager runs between harvests; planned during the tail of the previous one, it costs nothing
        # (every cycle after the first).
        gap = seconds + (args.manager if step in (0, 1, 2) or cycles == 1 else 0.0)
        makespan += gap
        not_before = np.maximum(not_before - gap, 0.0)
    return cycles, makespan


def crawl_as_crawler(
    policy: str, sizes: np.ndarray, args: argparse.Namespace
) -> tuple[int, float, np.ndarray]:
    """The crawl of ``policy`` (one of ``CRAWLER``) to its end: cycles, makespan and the pages fetched per
    site. A cycle costs its restart (the first: a manager run from the process's start) then its harvest."""
    softmin_on, ahead, lead = CRAWLER[policy]
    config = lead_config(args) if lead else None
    defaults = default_settings()
    softmin = defaults["WIRE_SOFTMIN"] if softmin_on else 0
    softmin_time = defaults["WIRE_SOFTMIN_TIME"]
    waits = waits_of(sizes, args)
    left = sizes.copy()
    done = np.zeros_like(sizes)
    makespan, cycles = 0.0, 0
    not_before = np.zeros(len(sizes))
    restart = args.manager
    while left.sum():
        together = None
        if config is None:
            batch = share_by_crawler(left, args.batch, args.samesite, waits)
        else:
            batch, together = share_by_lead(left, sizes, config)
        # A led batch is weighed by what its stragglers keep the slowest site idle in every cycle, as the
        # spider does.
        watch_idle = args.jobs or (together is not None and together.any())
        end = harvest_watched(
            batch,
            waits,
            args.fetch,
            args.connections,
            not_before,
            softmin=softmin,
            softmin_time=softmin_time,
            restart=restart,
            plan_seconds=args.manager if ahead else None,
            later=(left - batch) * waits if watch_idle else None,
            together=together,
        )
        left -= end.fetched
        done += end.fetched
        cycles += 1
        makespan += restart + end.seconds
        restart = end.next_restart(args.manager)
        # Politeness across the boundary: each site's next visit, from the next batch's start.
        not_before = np.maximum(not_before - end.seconds - restart, 0.0)
    return cycles, makespan, done


def options() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sites", type=int, default=10_000)
    parser.add_argument(
        "--largest",
        type=int,
        default=25_000,
        help="pages of the largest site (default 25,000: WIRE's max-urls-per-site)",
    )
    parser.add_argument("--exponent", type=float, default=1.0, help="Zipf exponent of the site sizes")
    parser.add_argument("--batch", type=int, default=100_000, help="K, URLs a batch (WIRE's default)")
    parser.add_argument("--samesite", type=int, default=500, help="WIRE_BATCH_SAMESITE (before)")
    parser.add_argument("--connections", type=int, default=300, help="WIRE_CONNECTIONS")
    parser.add_argument("--wait", type=float, default=15.0)
    parser.add_argument("--wait-large", type=float, default=5.0)
    parser.add_argument("--large-pages", type=int, default=100)
    parser.add_argument("--fetch", type=float, default=0.5, help="seconds a fetch takes")
    parser.add_argument("--manager", type=float, default=120.0, help="seconds of a manager run")
    parser.add_argument(
        "--softmin",
        type=int,
        default=30,
        help="sites still active below which a batch "
        "ends (the softmin and overlap policies; default a tenth of the connections; the crawler's "
        "policies use WIRE_SOFTMIN's default)",
    )
    parser.add_argument(
        "--softmintime",
        type=float,
        default=600.0,
        help="seconds a batch runs at least (softmin and "
        "overlap; the crawler's policies use WIRE_SOFTMIN_TIME's default)",
    )
    parser.add_argument(
        "--jobs",
        action="store_true",
        help="the crawler's policies as one job a cycle (a "
        "harvester's last cycle: softmin weighs critical_idle), not one harvester of many cycles",
    )
    parser.add_argument("--policies", default=",".join(POLICIES))
    return parser


def main() -> int:
    parser = options()
    args = parser.parse_args()
    policies = args.policies.split(",")
    if unknown := [p for p in policies if p not in POLICIES]:
        parser.error(f"unknown policies {unknown}; known: {', '.join(POLICIES)}")
    sizes = zipf_sizes(args.sites, args.largest, args.exponent)
    waits = waits_of(sizes, args)
    site_bound = float((sizes * (waits + args.fetch) - waits).max())
    connection_bound = sizes.sum() * args.fetch / args.connections
    bound = max(site_bound, connection_bound)
    print(
        f"{args.sites} sites, Zipf sizes {sizes[0]}..{sizes[-1]} (exponent {args.exponent}), "
        f"{sizes.sum()} pages; K = {args.batch}; waits {args.wait:g} s / {args.wait_large:g} s "
        f"(over {args.large_pages} pages); fetch {args.fetch:g} s; {args.connections} connections; "
        f"manager {args.manager:g} s a cycle"
    )
    print(
        f"lower bound {bound:,.0f} s (largest site {site_bound:,.0f} s, "
        f"connections {connection_bound:,.0f} s)"
    )
    print(f"{'policy':<21} {'cycles':>6} {'makespan s':>12} {'/bound':>7} {'sim s':>6}")
    for policy in policies:
        started = time.perf_counter()
        cycles, makespan = crawl(policy, sizes, args)
        print(
            f"{policy:<21} {cycles:6d} {makespan:12,.0f} {makespan / bound:7.2f} "
            f"{time.perf_counter() - started:6.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
