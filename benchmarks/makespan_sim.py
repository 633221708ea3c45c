"""Whole-crawl time at WIRE's scale, simulated: makespan against the politeness lower bound, before and after.

    python benchmarks/makespan_sim.py                       # 10,000 sites, Zipf sizes, K = 100,000 (about a minute)
    python benchmarks/makespan_sim.py --sites 2000 --largest 5000 --batch 20000

A web of ``--sites`` sites whose sizes follow Zipf's law (site i has ``--largest`` / i^``--exponent`` pages,
at least 1) is crawled to the end in batches of ``--batch`` URLs by a harvester of ``--connections``
connections: a fetch takes ``--fetch`` seconds and holds a connection, then its site waits WIRE's wait
(``--wait``, 15 s; ``--wait-large``, 5 s, for sites of more than ``--large-pages`` pages) before its next
fetch; a ready site gets the next free connection in the order it became ready. Every cycle costs
``--manager`` seconds of manager run (and, for separate jobs, process start) before its harvest.

The lower bound no polite crawl beats: max over sites of n x (fetch + wait) - wait, and the connections'
bound, total pages x fetch / connections. Printed, per policy: cycles, makespan, makespan / bound.

Policies, each adding one change to the one before:

* ``before``     — today's manager: a batch is shared among the sites in proportion to their pages left
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

The last two run the crawler's own code, not a model of it: the batch is ``select_batches``' share
(``site_caps``, in proportion to the pages left as the estimated PageRank share, at most samesite) within
``WIRE_BATCH_TIME_SHARE``'s limits (``wirescrapy.manager.timeshare.time_limits``, from each site's wait):

* ``crawler``       — WIRE_BATCH_TIME_SHARE, each cycle paying its manager run;
* ``crawler+ahead`` — and WIRE_PLAN_AHEAD: the manager's run hidden behind the tail (the first one paid).
"""

from __future__ import annotations

import argparse
import heapq
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wirescrapy.manager.profit import site_caps
from wirescrapy.manager.timeshare import time_limits

POLICIES = ("before", "time share", "softmin", "overlap", "crawler", "crawler+ahead")


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
    caps = np.minimum(site_caps(size, samesite, counts, 1.0, left[live].astype(np.float64)), counts)
    batch = np.zeros_like(left)
    batch[live] = caps
    return batch


def harvest(batch: np.ndarray, waits: np.ndarray, fetch: float, connections: int, softmin: int,
            softmintime: float, not_before: np.ndarray) -> tuple[float, np.ndarray]:
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


def crawl(policy: str, sizes: np.ndarray, args: argparse.Namespace) -> tuple[int, float]:
    waits = waits_of(sizes, args)
    per_page = waits + args.fetch
    left = sizes.copy()
    step = POLICIES.index(policy)
    makespan, cycles = 0.0, 0
    not_before = np.zeros(len(sizes))
    while left.sum():
        if step == 0:
            batch = share_by_size(left, args.batch, args.samesite)
        elif step >= 4:
            batch = share_by_crawler(left, args.batch, args.samesite, waits)
        else:
            batch = share_by_time(left, args.batch, per_page)
        softmin = args.softmin if step in (2, 3) else 0
        seconds, fetched = harvest(batch, waits, args.fetch, args.connections, softmin, args.softmintime,
                                   not_before)
        left -= fetched
        cycles += 1
        # The manager runs between harvests; planned during the tail of the previous one, it costs nothing
        # (every cycle after the first).
        gap = seconds + (args.manager if step in (0, 1, 2, 4) or cycles == 1 else 0.0)
        makespan += gap
        not_before = np.maximum(not_before - gap, 0.0)
    return cycles, makespan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=int, default=10_000)
    parser.add_argument("--largest", type=int, default=25_000, help="pages of the largest site (default "
                        "25,000: WIRE's max-urls-per-site)")
    parser.add_argument("--exponent", type=float, default=1.0, help="Zipf exponent of the site sizes")
    parser.add_argument("--batch", type=int, default=100_000, help="K, URLs a batch (WIRE's default)")
    parser.add_argument("--samesite", type=int, default=500, help="WIRE_BATCH_SAMESITE (before)")
    parser.add_argument("--connections", type=int, default=300, help="WIRE_CONNECTIONS")
    parser.add_argument("--wait", type=float, default=15.0)
    parser.add_argument("--wait-large", type=float, default=5.0)
    parser.add_argument("--large-pages", type=int, default=100)
    parser.add_argument("--fetch", type=float, default=0.5, help="seconds a fetch takes")
    parser.add_argument("--manager", type=float, default=120.0, help="seconds of a manager run")
    parser.add_argument("--softmin", type=int, default=30, help="sites still active below which a batch "
                        "ends (softmin policy; default a tenth of the connections)")
    parser.add_argument("--softmintime", type=float, default=600.0, help="seconds a batch runs at least")
    parser.add_argument("--policies", default=",".join(POLICIES))
    args = parser.parse_args()
    policies = args.policies.split(",")
    if unknown := [p for p in policies if p not in POLICIES]:
        parser.error(f"unknown policies {unknown}; known: {', '.join(POLICIES)}")
    sizes = zipf_sizes(args.sites, args.largest, args.exponent)
    waits = waits_of(sizes, args)
    site_bound = float((sizes * (waits + args.fetch) - waits).max())
    connection_bound = sizes.sum() * args.fetch / args.connections
    bound = max(site_bound, connection_bound)
    print(f"{args.sites} sites, Zipf sizes {sizes[0]}..{sizes[-1]} (exponent {args.exponent}), {sizes.sum()} pages; "
          f"K = {args.batch}; waits {args.wait:g} s / {args.wait_large:g} s (over {args.large_pages} pages); fetch "
          f"{args.fetch:g} s; {args.connections} connections; manager {args.manager:g} s a cycle")
    print(f"lower bound {bound:,.0f} s (largest site {site_bound:,.0f} s, connections {connection_bound:,.0f} s)")
    print(f"{'policy':<12} {'cycles':>6} {'makespan s':>12} {'/bound':>7} {'sim s':>6}")
    for policy in policies:
        started = time.perf_counter()
        cycles, makespan = crawl(policy, sizes, args)
        print(f"{policy:<12} {cycles:6d} {makespan:12,.0f} {makespan / bound:7.2f} "
              f"{time.perf_counter() - started:6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
