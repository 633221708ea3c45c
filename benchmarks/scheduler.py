"""Harvester scheduler benchmark: CPU and memory of WIRE's politeness queue, and how little time it wastes.

    python -m benchmarks.scheduler                          # 1M URLs over 50k sites (about a minute)
    python -m benchmarks.scheduler --urls 20000 --sites 1000 --cycles 20000    # smoke run

The batch is synthetic: doc k on site k mod S (sites interleave, as in a batch sorted by profit), URLs of
about 60 characters (``http://www.siteNNNNN.example.cl/sectionK/page-N.html``).

Printed:
  - CPU per scheduling cycle at 1M queued URLs, with a fake clock: the pure ``PolitenessQueue``
    (``pop_ready`` + ``finished`` + ``add``) and the Scrapy ``WireScheduler`` (``next_request``, which
    builds the Request from the compact row, + the release a download's end triggers), and
    ``enqueue_batch`` per URL; beside Scrapy's default scheduler (memory queue, no politeness)
    cycling ``next_request`` + ``enqueue_request`` of a new Request with 1M Requests queued;
  - RSS per queued URL at 1M URLs, each measured in a fresh subprocess: ``WireScheduler.enqueue_batch``
    against a dict of deques of Requests (one per URL, with the same meta) and Scrapy's default scheduler;
  - politeness efficiency: a simulated crawl (fake clock, fixed fetch time) of a few hundred sites of
    Pareto sizes with WIRE's waits (15 s, 5 s over 100 pages), its makespan against two lower bounds:
    max over sites of pages x wait (A), and max over sites of pages x (fetch + wait) - wait (B), which no
    schedule that waits after each fetch can beat.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import json
import logging
import random
import time
from math import inf

import psutil

from wirescrapy.harvester.meta import DOC_ID
from wirescrapy.harvester.politeness import PolitenessQueue, Waits
from wirescrapy.manager.batch import BatchURL
from wirescrapy.testing.process import run_scrapy


def batch_urls(urls: int, sites: int):
    for k in range(urls):
        site = k % sites
        yield BatchURL(
            k,
            site,
            1 + k % 5,
            False,
            0.0,
            0.0,
            f"http://www.site{site:05d}.example.cl/section{k % 37}/page-{k}.html",
        )


def rss() -> int:
    gc.collect()
    return psutil.Process().memory_info().rss


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def crawler(**settings):
    from scrapy import Spider
    from scrapy.utils.reactor import install_reactor, is_reactor_installed
    from scrapy.utils.test import get_crawler

    if not is_reactor_installed():
        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    logging.disable(logging.INFO)
    # By host: the benchmark's sites are names that resolve nowhere, and its clock is not the reactor's.
    return get_crawler(Spider, {"LOGSTATS_INTERVAL": 0, "WIRE_POLITENESS_GROUP": "host", **settings})


# -- CPU -----------------------------------------------------------------------------------------------


def cpu_core(urls: int, sites: int, cycles: int) -> float:
    """µs per pop_ready + finished + add, with ``urls`` queued over ``sites``."""
    queue = PolitenessQueue(Waits())
    keys = [f"http://www.site{s:05d}.example.cl" for s in range(sites)]
    for k in range(urls):
        queue.add(keys[k % sites], k)
    now, step = 0.0, 1e-3  # 1000 fetches a second: sites come back from their 15 s in time
    start = time.perf_counter()
    for _ in range(cycles):
        now += step
        popped = queue.pop_ready(now)
        if popped is None:
            now = queue.next_ready_time()
            popped = queue.pop_ready(now)
        site, item = popped
        queue.finished(site, now)
        queue.add(site, item)
    return (time.perf_counter() - start) / cycles * 1e6


def cpu_scheduler(urls: int, sites: int, cycles: int) -> tuple[float, float]:
    """(µs per enqueue_batch URL, µs per next_request + release), with ``urls`` queued."""
    from scrapy.dupefilters import BaseDupeFilter

    from wirescrapy.harvester.scheduler import WireScheduler

    clock = FakeClock()
    scheduler = WireScheduler(crawler(), BaseDupeFilter(), clock=clock)
    start = time.perf_counter()
    for _ in batch_urls(urls, sites):
        pass
    making = time.perf_counter() - start  # the input's own cost, not the scheduler's
    start = time.perf_counter()
    scheduler.enqueue_batch(batch_urls(urls, sites))
    per_url = (time.perf_counter() - start - making) / urls * 1e6
    start = time.perf_counter()
    for _ in range(cycles):
        clock.now += 1e-3
        request = scheduler.next_request()
        if request is None:
            clock.now = scheduler.queue.next_ready_time()
            request = scheduler.next_request()
        # What the downloader's signals do when the request reaches it and when its download ends.
        scheduler._reached_downloader(request, None)
        scheduler._left_downloader(request, None)
    return per_url, (time.perf_counter() - start) / cycles * 1e6


def cpu_scrapy_default(urls: int, sites: int, cycles: int) -> float:
    """µs per next_request + enqueue_request of Scrapy's default scheduler holding ``urls`` Requests."""
    from scrapy import Request, Spider
    from scrapy.core.scheduler import Scheduler

    scheduler = Scheduler.from_crawler(crawler())
    scheduler.open(Spider("bench"))
    for url in batch_urls(urls, sites):
        scheduler.enqueue_request(Request(url.url, dont_filter=True, meta={DOC_ID: url.doc_id}))
    new = batch_urls(cycles, sites)
    start = time.perf_counter()
    for url in new:
        scheduler.next_request()
        scheduler.enqueue_request(Request(url.url, dont_filter=True, meta={DOC_ID: url.doc_id}))
    return (time.perf_counter() - start) / cycles * 1e6


# -- memory (each kind in its own process) -----------------------------------------------------------------


def measure_rss(kind: str, urls: int, sites: int) -> dict:
    from collections import deque

    from scrapy import Request, Spider
    from scrapy.dupefilters import BaseDupeFilter

    from wirescrapy.harvester.meta import DEPTH, SITE_ID
    from wirescrapy.harvester.scheduler import WireScheduler
    from wirescrapy.url import origin

    made = crawler()  # import and build everything before the first reading
    if kind == "scrapy":
        from scrapy.core.scheduler import Scheduler

        holder = Scheduler.from_crawler(made)
        holder.open(Spider("bench"))
    before = rss()
    if kind == "wire":
        holder = WireScheduler(made, BaseDupeFilter())
        holder.enqueue_batch(batch_urls(urls, sites))
    elif kind == "requests":
        holder = {}
        for url in batch_urls(urls, sites):
            request = Request(
                url.url, dont_filter=True, meta={DOC_ID: url.doc_id, SITE_ID: url.site_id, DEPTH: url.depth}
            )
            holder.setdefault(origin(url.url), deque()).append(request)
    elif kind == "scrapy":
        for url in batch_urls(urls, sites):
            holder.enqueue_request(
                Request(
                    url.url,
                    dont_filter=True,
                    meta={DOC_ID: url.doc_id, SITE_ID: url.site_id, DEPTH: url.depth},
                )
            )
    after = rss()
    return {"kind": kind, "bytes_per_url": (after - before) / urls, "rss_mb": after / 2**20}


def rss_in_subprocess(kind: str, urls: int, sites: int) -> dict:
    run = run_scrapy(
        "--rss", kind, "--urls", urls, "--sites", sites, module="benchmarks.scheduler", timeout=None
    )
    run.check_returncode()
    return json.loads(run.stdout.strip().splitlines()[-1])


# -- politeness efficiency ---------------------------------------------------------------------------


def simulate(sizes: list[int], fetch: float, connections: int, waits: Waits) -> float:
    """Makespan of a crawl of sites of ``sizes`` pages, each fetch taking ``fetch`` seconds."""
    queue = PolitenessQueue(waits)
    for site, pages in enumerate(sizes):
        queue.set_pages(str(site), pages)
        for page in range(pages):
            queue.add(str(site), page)
    now, ends = 0.0, []  # (end time, site) of the fetches in flight
    while len(queue) or ends:
        while len(ends) < connections and (popped := queue.pop_ready(now)) is not None:
            heapq.heappush(ends, (now + fetch, popped[0]))
        ready = queue.next_ready_time() if len(ends) < connections else None
        now = max(now, min(ends[0][0] if ends else inf, ready if ready is not None else inf))
        while ends and ends[0][0] <= now:
            end, site = heapq.heappop(ends)
            queue.finished(site, end)
    return now


def efficiency(sites: int, seed: int = 1) -> None:
    waits = Waits()
    rng = random.Random(seed)
    sizes = [min(int(rng.paretovariate(1.1) * 3), 2000) for _ in range(sites)]
    wait = [waits.of(n, 0) for n in sizes]
    print(
        f"\npoliteness efficiency: {sites} sites, {sum(sizes)} pages, largest {max(sizes)} "
        f"(waits {waits.normal:g} s, {waits.large_site:g} s over {waits.large_site_pages} pages)"
    )
    print(
        f"{'fetch s':>8} {'connections':>11} {'makespan s':>11} {'bound A s':>10} {'bound B s':>10} "
        f"{'/A':>6} {'/B':>6}"
    )
    for fetch in (0.1, 0.25, 1.0):
        for connections in (300, 50):
            makespan = simulate(sizes, fetch, connections, waits)
            bound_a = max(n * w for n, w in zip(sizes, wait))
            bound_b = max(n * (fetch + w) - w for n, w in zip(sizes, wait))
            print(
                f"{fetch:>8g} {connections:>11} {makespan:>11.1f} {bound_a:>10.1f} {bound_b:>10.1f} "
                f"{makespan / bound_a:>6.3f} {makespan / bound_b:>6.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--sites", type=int, default=50_000)
    parser.add_argument("--cycles", type=int, default=200_000)
    parser.add_argument("--sim-sites", type=int, default=300)
    parser.add_argument("--rss", choices=["wire", "requests", "scrapy"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss:
        print(json.dumps(measure_rss(args.rss, args.urls, args.sites)))
        return

    print(
        f"CPU per request, µs ({args.urls:,} URLs queued over {args.sites:,} sites, {args.cycles:,} cycles, "
        "fake clock)"
    )
    core = cpu_core(args.urls, args.sites, args.cycles)
    per_url, cycle = cpu_scheduler(args.urls, args.sites, args.cycles)
    default = cpu_scrapy_default(args.urls, args.sites, args.cycles)
    rows = (
        ("PolitenessQueue: pop_ready + finished + add", core),
        ("WireScheduler: next_request (builds the Request) + release", cycle),
        ("WireScheduler: enqueue_batch, per URL", per_url),
        ("WireScheduler: enqueue + next_request + release (the two above)", cycle + per_url),
        ("Scrapy Scheduler: next_request + enqueue_request (no politeness)", default),
    )
    for label, value in rows:
        print(f"  {label:66} {value:7.2f}")

    print(f"\nRSS per queued URL at {args.urls:,} URLs (each in a fresh process)")
    for kind, label in (
        ("wire", "WireScheduler.enqueue_batch (compact)"),
        ("requests", "dict of deques of Request"),
        ("scrapy", "Scrapy Scheduler, memory queue"),
    ):
        result = rss_in_subprocess(kind, args.urls, args.sites)
        print(
            f"  {label:40} {result['bytes_per_url']:7.1f} bytes/URL   (process RSS {result['rss_mb']:.0f} MB)"
        )

    efficiency(args.sim_sites)


if __name__ == "__main__":
    main()
