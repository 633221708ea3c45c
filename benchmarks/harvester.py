"""Harvester benchmark: ``scrapy crawl harvester`` end to end on the sample web, against plain Scrapy.

    python -m benchmarks.harvester              # full size
    python -m benchmarks.harvester --smoke      # CI: tiny sizes
    python -m benchmarks.harvester --only throughput --sites 100 --pages 200 --profile --profile-plain
    python -m benchmarks.harvester --only throughput --baselines 0   # the harvester alone
    python -m benchmarks.harvester --only throughput --baselines 0 --set NAME=VALUE   # a setting changed

Everything runs on this machine: the sample web (``wirescrapy.testing.sampleweb``, a Twisted server in a
subprocess on 127.0.0.1, every site a host name ``siteN.wire.test`` that
``wirescrapy.resolver.MappedResolver`` maps to 127.0.0.1), and each crawler in a subprocess of its own, so
that its CPU time and peak RSS are its alone (``wirescrapy.testing.process.measure``). The server's access log
(arrival and end of every request, per host) is the common measure of what each crawler fetched and when.

Printed, with the exact parameters:

0. **Server capacity**: requests/s the sample web answers to a minimal asyncio HTTP/1.1 keep-alive client
   (no parsing) and the server's CPU per request, to show whether the server bounds the crawls.
1. **Throughput, waits 0** (``--sites`` x ``--pages``, Crawl-delay 0, no slow page): the harvester
   (``settings.test``, ``WIRE_WAIT_NORMAL=0``, ``WIRE_WAIT_LARGE_SITE=0``: one connection per site is its only
   politeness) runs D + 1 cycles (manager + harvest; D = the deepest page of the ground truth, in links from
   the seeds) and stores everything (pages, content-seen, link graph, metadata). Plain Scrapy is a
   ``CrawlSpider`` with one ``LinkExtractor`` rule and the "Broad Crawls" settings of Scrapy's documentation
   (``DownloaderAwarePriorityQueue``, ``REACTOR_THREADPOOL_MAXSIZE=20``, cookies, retries and redirects off,
   ``DOWNLOAD_TIMEOUT=15``, ``AJAXCRAWL_ENABLED``, BFS: ``DEPTH_PRIORITY=1`` and FIFO queues),
   ``ROBOTSTXT_OBEY``, ``DEPTH_LIMIT=D`` (the same pages, traps cut at the same depth),
   ``CONCURRENT_REQUESTS`` = the harvester's ``WIRE_CONNECTIONS`` (300); it stores nothing. Baselines:
   ``CONCURRENT_REQUESTS_PER_DOMAIN=1`` (the fair one), the same with ``CONCURRENT_ITEMS=1`` (Scrapy tuned:
   see ``BASELINES``), and that with 8 per domain (Scrapy's default). Per crawler: fetches (every request the
   server logged), pages (HTML answered 200, robots.txt and sitemaps aside), the share of the ground truth's
   pages fetched, wall time, pages/s, CPU seconds of the crawler process (user + system; start-up and, for the
   harvester, the manager runs included) and per fetch, peak RSS, the server's CPU per request, and the cores
   other processes kept busy meanwhile; the harvester's CPU per fetch by thread, sampled while it runs (the
   reactor thread, the parse pool's feeder and result threads, the parse workers); then the ratios harvester /
   plain Scrapy, and per harvester cycle its batch, manager time, harvest time and rate (each batch's
   ``harvest.json``), so that the rate inside harvest phases can be told from the whole run's. ``--repeat``
   runs every crawl again and keeps the best; ``--set NAME=VALUE`` gives the harvester's crawls a setting;
   ``--profile`` / ``--profile-plain`` run the harvester / the first baseline once more under
   ``python -m cProfile`` and list their top costs.
2. **Politeness efficiency, waits > 0** (``--polite-sites`` x ``--polite-pages``, ``--wait``): a seeds file
   listing every page of the ground truth, ``scrapy seed`` and ``scrapy manager`` write one batch holding
   them all, and ``scrapy crawl harvester -a batch=...`` harvests it. From the access log: the makespan
   (first request's arrival to last response's end) against two lower bounds, A = max over sites of
   n x wait and B = max over sites of (n - 1) x wait + the site's fetch times as the server measured them,
   n counting every access to the site (robots.txt and sitemaps included); and per site the gaps between
   one response's end and the next request's arrival, less the wait.
3. **Scheduler at 1M queued URLs**: ``benchmarks.scheduler``'s functions (CPU per request and RSS per
   queued URL, against Scrapy's default scheduler), imported from it.

Nothing here asserts a time: the figures are printed for a person to read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pstats
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from wirescrapy.config import default_settings
from wirescrapy.testing.process import ROOT, measure, run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess

SETTINGS_MODULE = "settings.test"  # maps *.wire.test to 127.0.0.1 and allows loopback
DNS_HOSTS = {"wire.test": "127.0.0.1"}
NOT_PAGES = ("/robots.txt", "/sitemap.xml", "/robots.rdf")


# -- running a crawler in a subprocess ---------------------------------------------------------------


@dataclass
class Run:
    argv: list[str]
    log: Path
    returncode: int = 0
    started: float = 0.0  # Unix time
    ended: float = 0.0
    wall: float = 0.0
    cpu: float = 0.0  # user + system seconds of the process
    maxrss: int = 0  # bytes
    busy: float = 0.0  # CPU seconds used on the whole machine meanwhile, every process
    timed_out: bool = False
    split: CpuSplit | None = None  # where the process's CPU went, sampled while it ran


class CpuSplit:
    """The CPU seconds of a process's main thread (the reactor's), of its other threads (a worker pool's
    feeder and result threads) and of its child processes (the parse workers), sampled every ``interval``
    seconds while it runs: the last sample of each thread and process counts, so its last fraction of a
    second is missed."""

    def __init__(self, pid: int, interval: float = 0.25):
        self.pid, self.interval = pid, interval
        self.by_thread: dict[int, float] = {}
        self.children: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    @property
    def main(self) -> float:
        return self.by_thread.get(self.pid, 0.0)

    @property
    def threads(self) -> float:
        return sum(self.by_thread.values()) - self.main

    @property
    def workers(self) -> float:
        return sum(self.children.values())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        try:
            process = psutil.Process(self.pid)
        except psutil.Error:
            return
        while not self._stop.is_set():
            try:
                with process.oneshot():
                    threads = {t.id: t.user_time + t.system_time for t in process.threads()}
                    children = process.children(recursive=True)
            except psutil.Error:
                return
            self.by_thread.update(threads)
            for child in children:
                try:
                    times = child.cpu_times()
                except psutil.Error:
                    continue
                self.children[child.pid] = times.user + times.system
            self._stop.wait(self.interval)


def busy_cpu() -> float:
    times = psutil.cpu_times()
    return sum(getattr(times, name, 0.0) for name in ("user", "nice", "system", "irq", "softirq", "steal"))


def run_measured(
    args: list[str],
    log: Path,
    timeout: float,
    crawl: bool = False,
    module: str = "scrapy",
    profile: Path | None = None,
) -> Run:
    """Run ``python -m MODULE ARGS`` from the repository's root, under cProfile into ``profile`` if given,
    output to ``log``; its own CPU time and peak RSS. A ``crawl`` must have dumped its stats: ``scrapy crawl``
    exits 0 when its spider fails to start."""
    if profile is not None:
        args, module = ["-o", str(profile), "-m", module, *args], "cProfile"
    run = Run([sys.executable, "-m", module, *args], log)
    with open(log, "wb") as out:
        run.started, start, busy = time.time(), time.perf_counter(), busy_cpu()
        process = run_scrapy(
            *args,
            module=module,
            env=scrapy_env(SETTINGS_MODULE),
            stdout=out,
            stderr=subprocess.STDOUT,
            wait=False,
        )

        def kill() -> None:
            run.timed_out = True
            process.send_signal(signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        run.split = CpuSplit(process.pid)
        try:
            usage = measure(process)
        except BaseException:
            process.kill()
            process.wait()
            raise
        finally:
            timer.cancel()
            run.split.stop()
        run.wall, run.ended, run.busy = time.perf_counter() - start, time.time(), busy_cpu() - busy
        run.returncode = usage.returncode
    run.cpu = usage.cpu
    run.maxrss = usage.peak_rss
    if crawl and "Dumping Scrapy stats" not in log.read_text(errors="replace"):
        run.returncode = run.returncode or -1
    if run.returncode != 0 or run.timed_out:
        tail = log.read_text(errors="replace")[-3000:]
        ended = "timed out" if run.timed_out else f"exited {run.returncode}"
        raise RuntimeError(f"{' '.join(run.argv)} {ended} (log {log}):\n{tail}")
    return run


def wire_settings(collection: Path, wait: float, wait_large: float) -> list[str]:
    return [
        "-s",
        f"WIRE_COLLECTION_DIR={collection}",
        "-s",
        f"WIRE_WAIT_NORMAL={wait:g}",
        "-s",
        f"WIRE_WAIT_LARGE_SITE={wait_large:g}",
        "-s",
        "LOG_LEVEL=INFO",
    ]


def dumped_stats(log: Path) -> dict[str, float]:
    """The numeric entries of the last 'Dumping Scrapy stats' in a crawl's log."""
    text = log.read_text(errors="replace")
    at = text.rfind("Dumping Scrapy stats")
    stats = {}
    for key, value in re.findall(r"'([^']+)': (-?[0-9][0-9.e+-]*)[,}]", text[at:] if at >= 0 else ""):
        stats[key] = float(value)
    return stats


def server_process() -> psutil.Process:
    for child in psutil.Process().children():
        try:
            if "wirescrapy.testing.sampleweb" in " ".join(child.cmdline()):
                return child
        except psutil.Error:
            continue
    raise RuntimeError("sample web process not found")


def cpu_of(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


# -- what the server saw ---------------------------------------------------------------------------


@dataclass
class Served:
    """The access log's records of one crawl."""

    records: list[dict]
    port: int
    fetches: int = 0
    pages: set[str] = field(default_factory=set)  # HTML answered 200, as absolute URLs

    def __post_init__(self) -> None:
        self.fetches = len(self.records)
        for r in self.records:
            if r["status"] == 200 and r["path"] not in NOT_PAGES:
                self.pages.add(f"http://{r['host']}:{self.port}{r['path']}")

    @property
    def page_count(self) -> int:
        return sum(1 for r in self.records if r["status"] == 200 and r["path"] not in NOT_PAGES)


def served_since(web: SampleWebProcess, start: int) -> Served:
    return Served(web.access_log()[start:], web.port)


def depths(truth) -> dict[str, int]:
    """Links from the nearest seed of every URL a crawl can reach (redirects followed at the same depth,
    nofollow links not followed)."""
    depth = {seed: 0 for seed in truth.seeds}
    queue = deque(truth.seeds)
    while queue:
        url = queue.popleft()
        if url in truth.redirects:
            target = truth.redirects[url][1]
            if target not in depth:
                depth[target] = depth[url]
                queue.appendleft(target)
        nofollow = truth.nofollow.get(url, ())
        for link in truth.links.get(url, ()):
            if link not in depth and link not in nofollow:
                depth[link] = depth[url] + 1
                queue.append(link)
    return depth


# -- 0. server capacity ----------------------------------------------------------------------------


async def _client(port: int, targets: list[tuple[str, str]], counter: list[int], limit: int, deadline: float):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)  # loopback only
    try:
        while counter[0] < limit and time.perf_counter() < deadline:
            host, path = targets[counter[0] % len(targets)]
            counter[0] += 1
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode("latin-1"))
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
    finally:
        writer.close()


def server_capacity(web: SampleWebProcess, requests: int, connections: int, seconds: float = 20.0):
    """(requests/s, server CPU µs per request) of ``requests`` GETs of the ground truth's pages."""
    targets = []
    for url in sorted(web.truth.pages):
        if url in web.truth.slow or url in web.truth.dropped or url in web.truth.big:
            continue
        split = urlsplit(url)
        targets.append((split.netloc, split.path + (f"?{split.query}" if split.query else "")))
    server = server_process()
    counter = [0]

    async def main() -> None:
        deadline = time.perf_counter() + seconds
        await asyncio.gather(
            *(_client(web.port, targets, counter, requests, deadline) for _ in range(connections))
        )

    cpu, start = cpu_of(server), time.perf_counter()
    asyncio.run(main())
    elapsed = time.perf_counter() - start
    return counter[0] / elapsed, (cpu_of(server) - cpu) / counter[0] * 1e6, counter[0]


# -- 1. throughput ---------------------------------------------------------------------------------


@dataclass
class CrawlResult:
    label: str
    run: Run
    served: Served
    server_cpu: float
    stats: dict = field(default_factory=dict)
    cycles: list[dict] = field(default_factory=list)

    @property
    def pages_per_s(self) -> float:
        return self.served.page_count / self.run.wall

    @property
    def cpu_per_fetch(self) -> float:
        return self.run.cpu / max(self.served.fetches, 1)

    @property
    def others(self) -> float:
        """Cores kept busy by other processes than this crawler and the server during the run."""
        return max(self.run.busy - self.run.cpu - self.server_cpu, 0.0) / self.run.wall


def measure_crawl(
    web,
    label: str,
    args: list[str],
    log: Path,
    timeout: float,
    module: str = "scrapy",
    profile: Path | None = None,
) -> CrawlResult:
    server = server_process()
    start, cpu = len(web.access_log()), cpu_of(server)
    run = run_measured(args, log, timeout, crawl=True, module=module, profile=profile)
    return CrawlResult(label, run, served_since(web, start), cpu_of(server) - cpu)


def harvest_cycles(collection: Path, records: list[dict]) -> list[dict]:
    """Per batch harvested: its number, URLs, harvest window and the fetches the server saw in it."""
    cycles = []
    for path in sorted((collection / "batches").glob("[0-9]" * 6)):
        done = path / "harvest.json"
        if not done.exists():
            continue
        harvest = json.loads(done.read_text())
        info = json.loads((path / "batch.json").read_text())
        start, end = harvest["started"], harvest["finished"]
        fetches = sum(1 for r in records if start <= r["start"] <= end)
        cycles.append(
            {
                "batch": info["batch"],
                "urls": info["urls"],
                "sites": info["sites"],
                "start": start,
                "end": end,
                "fetches": fetches,
            }
        )
    return cycles


def run_harvester(
    web,
    workdir: Path,
    name: str,
    seeds: Path,
    cycles: int,
    timeout: float,
    profile: Path | None = None,
    settings: list[str] = (),
) -> CrawlResult:
    collection = workdir / f"collection-{name}"
    shutil.rmtree(collection, ignore_errors=True)
    args = [
        "crawl",
        "harvester",
        "-a",
        f"seeds={seeds}",
        "-a",
        f"cycles={cycles}",
        *wire_settings(collection, 0, 0),
        *(arg for setting in settings for arg in ("-s", setting)),
    ]
    result = measure_crawl(web, "harvester", args, workdir / f"{name}.log", timeout, profile=profile)
    result.stats = dumped_stats(result.run.log)
    result.cycles = harvest_cycles(collection, result.served.records)
    return result


def plain_settings(depth: int, per_domain: int, connections: int) -> dict:
    """Scrapy's "Broad Crawls" settings, BFS, robots.txt obeyed, the sample web's names mapped."""
    return {
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
        "CONCURRENT_REQUESTS": connections,
        "CONCURRENT_REQUESTS_PER_DOMAIN": per_domain,
        "REACTOR_THREADPOOL_MAXSIZE": 20,
        "LOG_LEVEL": "INFO",
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 15,
        "REDIRECT_ENABLED": False,
        "AJAXCRAWL_ENABLED": True,
        "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        "DEPTH_LIMIT": depth,
        "ROBOTSTXT_OBEY": True,
        "TELNETCONSOLE_ENABLED": False,
        "DNS_RESOLVER": "wirescrapy.resolver.MappedResolver",
        "WIRE_DNS_HOSTS": DNS_HOSTS,
    }


# (label, CONCURRENT_REQUESTS_PER_DOMAIN, settings over the broad-crawl ones). CONCURRENT_ITEMS=1: Scrapy
# runs each callback's output through CONCURRENT_ITEMS (default 100) cooperative tasks and a DeferredList of
# as many, per response; a CrawlSpider's callback is an async generator, for which that machinery costs
# several times the rest of the crawl on small pages (see the report of --profile-plain).
BASELINES = (
    ("plain Scrapy, broad, 1/domain", 1, {}),
    ("plain Scrapy, +ITEMS=1, 1/domain", 1, {"CONCURRENT_ITEMS": 1}),
    ("plain Scrapy, +ITEMS=1, 8/domain", 8, {"CONCURRENT_ITEMS": 1}),
)


def plain_scrapy_child(spec_file: str) -> None:
    """In the child process: crawl with plain Scrapy, print the stats as one JSON line."""
    import warnings

    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    warnings.filterwarnings("ignore", message=".*AjaxCrawlMiddleware is deprecated.*")
    spec = json.loads(Path(spec_file).read_text())

    class PlainSpider(CrawlSpider):
        name = "plain"
        allowed_domains = ("wire.test",)
        # Not allow_domains: LinkExtractor compares it with the netloc, port included, so that
        # "site0.wire.test:PORT" would match nothing; OffsiteMiddleware (allowed_domains) uses the host.
        rules = (Rule(LinkExtractor(allow=[r"^https?://([^/:]+\.)?wire\.test(:[0-9]+)?/"]), follow=True),)

    process = CrawlerProcess(spec["settings"], install_root_handler=True)
    crawler = process.create_crawler(PlainSpider)
    process.crawl(crawler, start_urls=spec["seeds"])
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float))}
    print("BENCH-STATS " + json.dumps(stats), flush=True)


def run_plain(
    web, workdir: Path, name: str, label: str, settings: dict, timeout: float, profile: Path | None = None
) -> CrawlResult:
    spec = workdir / f"{name}.json"
    spec.write_text(json.dumps({"seeds": web.seeds, "settings": settings}))
    result = measure_crawl(
        web,
        label,
        ["--plain-child", str(spec)],
        workdir / f"{name}.log",
        timeout,
        module="benchmarks.harvester",
        profile=profile,
    )
    for line in result.run.log.read_text(errors="replace").splitlines():
        if line.startswith("BENCH-STATS "):
            result.stats = json.loads(line[len("BENCH-STATS ") :])
    return result


def throughput(options, workdir: Path) -> None:
    print(
        f"\n== 1. Throughput, waits 0: {options.sites} sites x {options.pages} pages, page_size "
        f"{options.page_size}, seed {options.seed}, Crawl-delay 0, slow page 0 s ==",
        flush=True,
    )
    started = time.perf_counter()
    with SampleWebProcess(
        workdir=workdir / "web-throughput",
        sites=options.sites,
        pages_per_site=options.pages,
        seed=options.seed,
        page_size=options.page_size,
        crawl_delay=0.0,
        slow_delay=0.0,
        broken_robots="malformed",
    ) as web:
        truth = web.truth
        depth_of = depths(truth)
        deepest = max(depth_of.get(page, 0) for page in truth.pages)
        # Cycle k fetches the pages k - 1 links from a seed (robots.txt holds its site until it is read).
        cycles = deepest + 1 + options.extra_cycles
        print(
            f"sample web on 127.0.0.1:{web.port}: {len(truth.pages):,} HTML pages reachable, the deepest "
            f"{deepest} links from a seed; harvester (settings {SETTINGS_MODULE}, WIRE_WAIT_NORMAL=0, "
            f"WIRE_WAIT_LARGE_SITE=0): {cycles} cycles (D + 1 + {options.extra_cycles}); plain Scrapy: "
            f"DEPTH_LIMIT={deepest}, CONCURRENT_REQUESTS={options.connections}"
        )

        rate, server_us, count = server_capacity(web, options.capacity_requests, 16)
        print(
            f"server capacity: {rate:,.0f} requests/s, {server_us:.0f} µs server CPU per request "
            f"({count:,} keep-alive GETs of its pages over 16 connections, a minimal asyncio client)",
            flush=True,
        )

        seeds = workdir / "seeds-throughput.txt"
        seeds.write_text("".join(url + "\n" for url in web.seeds))
        crawls = [
            (
                "harvester",
                lambda n: run_harvester(
                    web, workdir, f"harvester-{n}", seeds, cycles, options.timeout, settings=options.set
                ),
            )
        ]
        for number, (label, per_domain, extra) in enumerate(BASELINES[: options.baselines], 1):
            settings = {**plain_settings(deepest, per_domain, options.connections), **extra}
            crawls.append(
                (
                    label,
                    lambda n, label=label, settings=settings, number=number: run_plain(
                        web, workdir, f"plain{number}-{n}", label, settings, options.timeout
                    ),
                )
            )
        best: dict[str, CrawlResult] = {}
        for round_ in range(1, options.repeat + 1):
            for label, crawl in crawls:
                result = crawl(round_)
                print(
                    f"  round {round_}: {label} done in {result.run.wall:.1f} s "
                    f"({result.pages_per_s:.1f} pages/s, {result.cpu_per_fetch * 1e3:.2f} CPU ms/fetch, "
                    f"other processes {result.others:.2f} cores)",
                    flush=True,
                )
                if label not in best or result.pages_per_s > best[label].pages_per_s:
                    best[label] = result
        results = list(best.values())

        print(
            f"\n{'crawler' + (f' (best of {options.repeat})' if options.repeat > 1 else ''):33} "
            f"{'fetches':>7} {'pages':>7} {'truth':>6} {'wall s':>7} {'pages/s':>8} {'fetch/s':>8} "
            f"{'CPU s':>7} {'CPU ms/fetch':>12} {'RSS MB':>6} {'server µs/req':>13} {'others':>6}"
        )
        for r in results:
            served = r.served
            covered = len(served.pages & truth.pages) / len(truth.pages)
            print(
                f"{r.label:33} {served.fetches:>7,} {served.page_count:>7,} {covered:>6.1%} "
                f"{r.run.wall:>7.1f} {r.pages_per_s:>8.1f} {served.fetches / r.run.wall:>8.1f} "
                f"{r.run.cpu:>7.1f} {r.cpu_per_fetch * 1e3:>12.2f} {r.run.maxrss / 2**20:>6.0f} "
                f"{r.server_cpu / max(served.fetches, 1) * 1e6:>13.0f} {r.others:>6.2f}"
            )
        print(
            "fetches: every request the server logged (robots.txt, sitemaps, errors included); pages: HTML "
            "answered 200; truth: share of the ground truth's pages fetched; CPU: the crawler process, "
            "user + system, start-up included; others: cores kept busy by other processes meanwhile "
            "(a loaded machine slows every figure)"
        )

        harvester = results[0]
        split = harvester.run.split
        if split is not None:
            per_fetch = 1e3 / max(harvester.served.fetches, 1)
            print(
                f"harvester CPU ms/fetch by thread (sampled): reactor thread {split.main * per_fetch:.2f}, "
                f"its other threads (the parse pool's feeder and result threads) "
                f"{split.threads * per_fetch:.2f}, parse workers {split.workers * per_fetch:.2f}"
            )
        windows = harvester.cycles
        in_harvest = sum(c["end"] - c["start"] for c in windows)
        fetched_in = sum(c["fetches"] for c in windows)
        print(
            "\nharvester, per cycle (harvest window from its batch's harvest.json; manager = time before it):"
        )
        print(
            f"{'cycle':>5} {'batch':>6} {'URLs':>7} {'sites':>6} {'fetches':>8} {'manager s':>9} "
            f"{'harvest s':>9} {'fetch/s':>8}"
        )
        previous = harvester.run.started
        for number, c in enumerate(windows, 1):
            took = c["end"] - c["start"]
            print(
                f"{number:>5} {c['batch']:>6} {c['urls']:>7,} {c['sites']:>6} {c['fetches']:>8,} "
                f"{c['start'] - previous:>9.2f} {took:>9.2f} {c['fetches'] / took if took else 0:>8.1f}"
            )
            previous = c["end"]
        if windows:
            print(
                f"harvest phases: {in_harvest:.1f} s of {harvester.run.wall:.1f} s, {fetched_in:,} fetches, "
                f"{fetched_in / in_harvest:.1f} fetches/s; start-up and first manager "
                f"{windows[0]['start'] - harvester.run.started:.1f} s, later managers "
                f"{sum(b['start'] - a['end'] for a, b in pairwise(windows)):.1f} s, shut-down "
                f"{harvester.run.ended - windows[-1]['end']:.1f} s"
            )
        stats = harvester.stats
        print(
            f"harvester stats: harvester/fetched/page {stats.get('harvester/fetched/page', 0):,.0f}, "
            f"harvester/skipped/robots_not_ready {stats.get('harvester/skipped/robots_not_ready', 0):,.0f}, "
            f"gatherer/parsed {stats.get('gatherer/parsed', 0):,.0f}, gatherer/duplicates "
            f"{stats.get('gatherer/duplicates', 0):,.0f}, gatherer/links/found "
            f"{stats.get('gatherer/links/found', 0):,.0f}, elapsed_time_seconds "
            f"{stats.get('elapsed_time_seconds', 0):.1f}"
        )

        if results[1:]:
            print("\nratio harvester / plain Scrapy (goal: pages/s >= 1.0, storing everything)")
            print(
                f"{'baseline':33} {'pages/s':>8} {'fetch/s in harvest phases':>26} {'CPU per fetch':>14} "
                f"{'its pages the harvester fetched':>32}"
            )
        for base in results[1:]:
            base_fetch_rate = base.served.fetches / base.run.wall
            phase = (fetched_in / in_harvest) / base_fetch_rate if in_harvest else 0.0
            common = len(harvester.served.pages & base.served.pages) / max(len(base.served.pages), 1)
            print(
                f"{base.label:33} {harvester.pages_per_s / base.pages_per_s:>8.2f} {phase:>26.2f} "
                f"{harvester.cpu_per_fetch / base.cpu_per_fetch:>14.2f} {common:>32.1%}"
            )
        server_load = max(r.served.fetches / r.run.wall for r in results) / rate
        print(
            f"(the fastest crawl asked the server for {server_load:.0%} of its measured capacity; "
            "the phase ratio compares fetches/s inside the harvester's harvest windows with the baseline's "
            "whole run)"
        )

        if options.profile:
            out = workdir / "harvester.prof"
            result = run_harvester(
                web, workdir, "harvester-profiled", seeds, cycles, options.timeout * 3, out, options.set
            )
            print_profile("harvester", result, out, options.profile_top, own_code=True)
        if options.profile_plain:
            out = workdir / "plain.prof"
            label, per_domain, extra = BASELINES[0]
            settings = {**plain_settings(deepest, per_domain, options.connections), **extra}
            result = run_plain(web, workdir, "plain-profiled", label, settings, options.timeout * 3, out)
            print_profile(label, result, out, options.profile_top, own_code=False)
    print(f"[throughput section: {time.perf_counter() - started:.0f} s]", flush=True)


def print_profile(label: str, result: CrawlResult, out: Path, top: int, own_code: bool) -> None:
    """The top costs of a profiled crawl: this project's functions (or Scrapy's) by cumulative time, and
    every function by own time. cProfile times wall seconds: other load on the machine inflates them."""
    fetches = max(result.served.fetches, 1)
    print(
        f"\n{label} under cProfile (python -m cProfile): {result.served.fetches:,} fetches in "
        f"{result.run.wall:.1f} s ({result.run.cpu:.1f} CPU s, other processes {result.others:.2f} cores); "
        f"profile {out}"
    )
    stats = pstats.Stats(str(out))
    total = stats.total_tt
    entries = [
        (filename, line, function, calls, own, cumulative)
        for (filename, line, function), (_cc, calls, own, cumulative, _callers) in stats.stats.items()
    ]
    # Shown relative to the project or to the interpreter's library directories.
    libraries = (path + "/" for path in sysconfig.get_paths().values())
    prefixes = sorted({str(ROOT) + "/", *libraries}, key=len, reverse=True)

    def name(filename: str, line: int, function: str) -> str:
        for prefix in prefixes:
            if filename.startswith(prefix):
                filename = filename[len(prefix) :]
                break
        return f"{filename}:{line}({function})"

    if own_code:
        chosen = [e for e in entries if e[0].startswith(str(ROOT)) and "/benchmarks/" not in e[0]]
        title = "this project's functions"
    else:
        chosen = [
            e
            for e in entries
            if "/scrapy/" in e[0] and "/cmdline.py" not in e[0] and "/crawler.py" not in e[0]
        ]
        title = "Scrapy's functions"
    print(f"top of {title} by cumulative time ({total:.1f} s profiled in all):")
    print(f"{'cumul. s':>8} {'%':>5} {'own s':>6} {'µs/fetch':>8} {'calls':>9}  function")
    for filename, line, function, calls, own, cumulative in sorted(chosen, key=lambda e: -e[5])[:top]:
        print(
            f"{cumulative:>8.2f} {cumulative / total:>5.1%} {own:>6.2f} {cumulative / fetches * 1e6:>8.0f} "
            f"{calls:>9,}  {name(filename, line, function)}"
        )
    print("top of all functions by own time:")
    print(f"{'own s':>8} {'%':>5} {'cumul. s':>8} {'calls':>9}  function")
    for filename, line, function, calls, own, cumulative in sorted(entries, key=lambda e: -e[4])[:top]:
        print(
            f"{own:>8.2f} {own / total:>5.1%} {cumulative:>8.2f} {calls:>9,}  "
            f"{name(filename, line, function)}"
        )


# -- 2. politeness efficiency ----------------------------------------------------------------------


def politeness(options, workdir: Path) -> None:
    wait, wait_large = options.wait, min(options.wait_large, options.wait)
    print(
        f"\n== 2. Politeness efficiency: {options.polite_sites} sites x {options.polite_pages} pages, "
        f"WIRE_WAIT_NORMAL={wait:g} WIRE_WAIT_LARGE_SITE={wait_large:g}, Crawl-delay {options.crawl_delay:g} "
        f"(site1), slow page {options.slow:g} s, seed {options.seed} ==",
        flush=True,
    )
    started = time.perf_counter()
    with SampleWebProcess(
        workdir=workdir / "web-politeness",
        sites=options.polite_sites,
        pages_per_site=options.polite_pages,
        seed=options.seed,
        page_size=options.page_size,
        crawl_delay=options.crawl_delay,
        slow_delay=options.slow,
        broken_robots="malformed",
    ) as web:
        truth = web.truth
        collection = workdir / "collection-politeness"
        shutil.rmtree(collection, ignore_errors=True)
        seeds = workdir / "seeds-politeness.txt"
        seeds.write_text("".join(url + "\n" for url in sorted(truth.pages)))
        settings = wire_settings(collection, wait, wait_large)
        seeded = run_measured(["seed", str(seeds), *settings], workdir / "seed.log", options.timeout)
        managed = run_measured(["manager", *settings], workdir / "manager.log", options.timeout)
        batch = collection / "batches" / "000001"
        info = json.loads((batch / "batch.json").read_text())
        print(
            f"sample web on 127.0.0.1:{web.port}: {len(truth.pages):,} HTML pages, all seeded "
            f"(scrapy seed {seeded.wall:.1f} s); scrapy manager ({managed.wall:.1f} s) wrote batch "
            f"{info['batch']:06d}: {info['urls']:,} URLs of {info['sites']} sites",
            flush=True,
        )

        start = len(web.access_log())
        run = run_measured(
            ["crawl", "harvester", "-a", f"batch={batch}", *settings],
            workdir / "harvester-politeness.log",
            options.timeout,
            crawl=True,
        )
        records = web.access_log()[start:]
    if not records:
        print("the harvester fetched nothing")
        return

    # The wait the harvester applies to each site: WIRE_WAIT_LARGE_SITE above WIRE_LARGE_SITE_PAGES documents
    # (the batch's "docs"), never less than its Crawl-delay.
    large_pages = default_settings()["WIRE_LARGE_SITE_PAGES"]
    docs = {}
    for line in (batch / "sites.jsonl").read_text().splitlines():
        if line.strip():
            site = json.loads(line)
            docs[urlsplit(site["origin"]).hostname] = site["docs"]
    by_host: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_host[r["host"]].append(r)
    first = min(r["start"] for r in records)
    last = max(r["end"] for r in records)
    makespan = last - first
    bound_a = bound_b = 0.0
    site_a = site_b = ""
    excess_means, excess_all, spans, short, overlaps, fetch_total = [], [], [], 0, 0, 0.0
    for host, accesses in by_host.items():
        accesses.sort(key=lambda r: r["start"])
        base = wait_large if docs.get(host, 0) > large_pages else wait
        effective = max(base, truth.crawl_delays.get(host, 0.0))
        fetch = sum(r["end"] - r["start"] for r in accesses)
        fetch_total += fetch
        a = len(accesses) * effective
        b = (len(accesses) - 1) * effective + fetch
        if a > bound_a:
            bound_a, site_a = a, host
        if b > bound_b:
            bound_b, site_b = b, host
        gaps = [nxt["start"] - prev["end"] for prev, nxt in pairwise(accesses)]
        overlaps += sum(1 for g in gaps if g < 0)
        short += sum(1 for g in gaps if 0 <= g < effective - 1e-3)
        if gaps:
            excess = [g - effective for g in gaps]
            excess_all += excess
            excess_means.append(sum(excess) / len(excess))
            spans.append((accesses[-1]["end"] - accesses[0]["start"]) / b)
    counts = sorted(len(a) for a in by_host.values())
    stats = dumped_stats(run.log)
    print(
        f"harvest: {len(records):,} accesses to {len(by_host)} hosts ({counts[0]}-{counts[-1]} each, "
        f"robots.txt and sitemaps included), mean fetch {fetch_total / len(records) * 1e3:.1f} ms at the "
        f"server; process wall {run.wall:.1f} s, CPU {run.cpu:.1f} s, other processes "
        f"{max(run.busy - run.cpu, 0.0) / run.wall:.2f} cores (the server included); harvester/fetched/page "
        f"{stats.get('harvester/fetched/page', 0):,.0f}, harvester/skipped/robots_not_ready "
        f"{stats.get('harvester/skipped/robots_not_ready', 0):,.0f}"
    )
    print(f"\n{'makespan s':>10} {'bound A s':>10} {'bound B s':>10} {'makespan/A':>10} {'makespan/B':>10}")
    print(
        f"{makespan:>10.2f} {bound_a:>10.2f} {bound_b:>10.2f} {makespan / bound_a:>10.3f} "
        f"{makespan / bound_b:>10.3f}"
    )
    print(
        f"makespan: first request's arrival to last response's end at the server. A = max over sites of "
        f"n x wait ({site_a}); B = max over sites of (n - 1) x wait + its fetch times ({site_b}); n counts "
        f"every access to the site. Goal: makespan/B <= 1.05"
    )
    if excess_all:
        excess_means.sort()
        spans.sort()
        print(
            f"per site, its own span (first arrival to last end) / its own bound B: mean "
            f"{sum(spans) / len(spans):.3f}, median {spans[len(spans) // 2]:.3f}, max {spans[-1]:.3f}"
        )
        print(
            f"gap - wait per site (s), gap = next request's arrival - previous response's end: mean over "
            f"sites {sum(excess_means) / len(excess_means):.4f}, "
            f"median site {excess_means[len(excess_means) // 2]:.4f}, "
            f"max over sites {excess_means[-1]:.4f}; largest single gap - wait {max(excess_all):.4f}; "
            f"gaps shorter than the wait: {short}; overlapping requests on one host: {overlaps}"
        )
    print(f"[politeness section: {time.perf_counter() - started:.0f} s]", flush=True)


# -- 3. the scheduler at 1M URLs -------------------------------------------------------------------


def scheduler_figures(options) -> None:
    print(
        f"\n== 3. Scheduler: {options.urls:,} URLs queued over {options.queue_sites:,} sites, "
        f"{options.cycles:,} cycles (benchmarks.scheduler) ==",
        flush=True,
    )
    # Imported here: the plain Scrapy child runs this module too, and must not load the scheduler's imports.
    from benchmarks import scheduler as bench

    started = time.perf_counter()
    core = bench.cpu_core(options.urls, options.queue_sites, options.cycles)
    per_url, cycle = bench.cpu_scheduler(options.urls, options.queue_sites, options.cycles)
    default = bench.cpu_scrapy_default(options.urls, options.queue_sites, options.cycles)
    print("CPU per request, µs (fake clock)")
    for label, value in (
        ("PolitenessQueue: pop_ready + finished + add", core),
        ("WireScheduler: next_request + release", cycle),
        ("WireScheduler: enqueue_batch, per URL", per_url),
        ("WireScheduler: enqueue + next_request + release", cycle + per_url),
        ("Scrapy Scheduler: next_request + enqueue_request", default),
    ):
        print(f"  {label:52} {value:7.2f}")
    print(
        f"  ratio WireScheduler (enqueue + next + release) / Scrapy Scheduler: "
        f"{(cycle + per_url) / default:.2f}"
    )
    print(f"RSS per queued URL at {options.urls:,} URLs (each in a fresh process)")
    rss = {}
    for kind, label in (
        ("wire", "WireScheduler.enqueue_batch (compact)"),
        ("requests", "dict of deques of Request"),
        ("scrapy", "Scrapy Scheduler, memory queue"),
    ):
        rss[kind] = bench.rss_in_subprocess(kind, options.urls, options.queue_sites)
        print(
            f"  {label:40} {rss[kind]['bytes_per_url']:7.1f} bytes/URL   "
            f"(process RSS {rss[kind]['rss_mb']:.0f} MB)"
        )
    print(
        f"  ratio WireScheduler / Scrapy Scheduler: "
        f"{rss['wire']['bytes_per_url'] / rss['scrapy']['bytes_per_url']:.2f}"
    )
    print(f"[scheduler section: {time.perf_counter() - started:.0f} s]", flush=True)


# -- command line ----------------------------------------------------------------------------------

SECTIONS = ("throughput", "politeness", "scheduler")
SMOKE = {
    "sites": 8,
    "pages": 20,
    "polite_sites": 20,
    "polite_pages": 5,
    "wait": 0.2,
    "wait_large": 0.2,
    "slow": 0.1,
    "urls": 20_000,
    "queue_sites": 1000,
    "cycles": 20_000,
    "capacity_requests": 2000,
    "timeout": 120.0,
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes for CI")
    parser.add_argument(
        "--only", action="append", choices=SECTIONS, help="run this section only (repeatable)"
    )
    parser.add_argument(
        "--workdir",
        help="keep the sample webs, collections and logs here (default: a "
        "temporary directory, removed at the end)",
    )
    size = parser.add_argument_group("1. throughput")
    size.add_argument("--sites", type=int, default=100)
    size.add_argument("--pages", type=int, default=100, help="pages per site")
    size.add_argument("--page-size", type=int, default=2048, help="bytes of text on a page, roughly")
    size.add_argument(
        "--connections",
        type=int,
        default=300,
        help="plain Scrapy's CONCURRENT_REQUESTS (the harvester's WIRE_CONNECTIONS is 300)",
    )
    size.add_argument("--capacity-requests", type=int, default=20_000, help="requests of the server check")
    size.add_argument("--extra-cycles", type=int, default=0, help="harvester cycles beyond D + 1")
    size.add_argument(
        "--baselines",
        type=int,
        default=len(BASELINES),
        choices=range(len(BASELINES) + 1),
        help="plain Scrapy crawls to run beside the harvester, in BASELINES' order (0: the harvester "
        "alone, to compare two versions of it run one after the other)",
    )
    size.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds of the crawls, one after the other; the best pages/s of each counts",
    )
    size.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting of the harvester's crawls (scrapy crawl -s; repeatable), to compare a change of "
        "settings with the harvester as it is, run one after the other",
    )
    size.add_argument("--profile", action="store_true", help="run the harvester once more under cProfile")
    size.add_argument(
        "--profile-plain",
        action="store_true",
        help="run the first plain Scrapy baseline once more under cProfile",
    )
    size.add_argument("--profile-top", type=int, default=30)
    polite = parser.add_argument_group("2. politeness")
    polite.add_argument("--polite-sites", type=int, default=300)
    polite.add_argument("--polite-pages", type=int, default=15, help="pages per site")
    polite.add_argument("--wait", type=float, default=0.5, help="WIRE_WAIT_NORMAL, seconds")
    polite.add_argument("--wait-large", type=float, default=0.5, help="WIRE_WAIT_LARGE_SITE, seconds")
    polite.add_argument("--crawl-delay", type=float, default=0.0, help="Crawl-delay of site1's robots.txt")
    polite.add_argument("--slow", type=float, default=0.2, help="seconds site3's /slow.html takes")
    queue = parser.add_argument_group("3. scheduler")
    queue.add_argument("--urls", type=int, default=1_000_000)
    queue.add_argument("--queue-sites", type=int, default=50_000)
    queue.add_argument("--cycles", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1, help="sample web seed")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds any one crawl may take")
    parser.add_argument("--plain-child", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.plain_child:
        plain_scrapy_child(options.plain_child)
        return
    if options.smoke:
        given = {arg.split("=")[0] for arg in (sys.argv[1:] if argv is None else argv)}
        explicit = {action.dest for action in parser._actions if given & set(action.option_strings)}
        for key, value in SMOKE.items():
            if key not in explicit:
                setattr(options, key, value)
    sections = options.only or SECTIONS

    print(
        f"harvester benchmark{' (smoke)' if options.smoke else ''}: sections {', '.join(sections)}; "
        f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"settings {SETTINGS_MODULE}; Python {sys.version.split()[0]}",
        flush=True,
    )
    started = time.perf_counter()
    workdir = (
        Path(options.workdir) if options.workdir else Path(tempfile.mkdtemp(prefix="wire-bench-harvester-"))
    )
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        if "throughput" in sections:
            throughput(options, workdir)
        if "politeness" in sections:
            politeness(options, workdir)
        if "scheduler" in sections:
            scheduler_figures(options)
    finally:
        if not options.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"\ntotal {time.perf_counter() - started:.0f} s; load average after "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
