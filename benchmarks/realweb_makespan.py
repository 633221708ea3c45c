"""Whole-crawl time on the web of real documents: makespan against the politeness lower bound.

    python -m benchmarks.realweb_makespan                      # repeated jobs, then one job of N cycles
    python -m benchmarks.realweb_makespan --mode jobs --wait 0.2 --wait-large 0.05
    python -m benchmarks.realweb_makespan --mode queued                  # jobs queued on the collection
    python -m benchmarks.realweb_makespan --mode cycles --real-sites apache,git,scrapy
    python -m benchmarks.realweb_makespan -s WIRE_PLAN_AHEAD=True       # the next batch planned in the tail
    python -m benchmarks.realweb_makespan --code /tmp/base --workdir W    # another checkout (a before/after)
    python -m benchmarks.realweb_makespan --mode cycles --latency          # the time between two requests
    python -m benchmarks.realweb_makespan --mode cycles --real-web web3     # another web of the bench

A real-document web (``wirescrapy.testing.realweb``: Debian documentation packages, one nginx, every site on
its own loopback address; ``--real-web`` names it, ``docs13`` by default) is crawled from its home pages to
the end, in batches of ``--batch-share`` x N URLs (N: the ground truth's pages), with WIRE's waits scaled down
(``--wait`` for small sites, ``--wait-large`` for sites of more than WIRE_LARGE_SITE_PAGES pages), in one of
three ways:

* ``jobs``   — one ``scrapy crawl harvester`` process per cycle (manager run + harvest), started again
  until one finds nothing more to fetch: what a scheduled recrawl (cron, Scrapyd) does;
* ``queued`` — one process per cycle too, but each started as soon as the one before holds the collection, and
  waiting for it (``WIRE_COLLECTION_WAIT``): what Scrapyd does with recrawl jobs scheduled ahead and more than
  one process slot. Its start-up (imports, the crawler) runs while the one before harvests;
* ``cycles`` — one process, ``-a cycles=N``.

Each crawl runs with ``settings.test`` (loopback allowed), but with the crawler's own default for what that
module pins for the tests (``DEFAULTS``: WIRE_SOFTMIN, off there so that a test's cycle fetches its whole
batch), as the checkout crawled defines it: the figures are the crawler's defaults'.

From nginx's access log: the makespan (first request's start to the last response's end; the processes'
start-up before the first request and after the last is not in it, and is printed apart as the wall
clock), the lower bound no polite crawler can beat — max over sites of (requests - 1) x the site's
smallest wait + the site's own fetch times — and the ratio; then the politeness check: per site,
requests that overlapped the previous one or started less than the wait after it ended (the large-site
wait for sites that received more than WIRE_LARGE_SITE_PAGES requests or that the crawl knew more documents
of, as the harvester counts a site's known documents, errors and robots.txt included; the normal wait for the
others). The machine's
load average is printed beside, as the ratio is what compares across runs. The exit status is 1 when a
crawl reached no page or broke politeness (CI runs the three small sites as a smoke run).

Where the time goes (``where:`` line, from the harvester's log, at millisecond resolution, and nginx's):
the bound's site's idle time (its makespan share not spent on its own requests and waits) split into
before its first request, across batch starts (the gap spanning the moment a batch was queued: the end of
the previous batch, the manager's run, a process start), inside batches, and after its last request; and per
batch, the mean tail (the batch's last request's end after the bound's site's last one in it), and per job the
mean time from the process's start to its batch queued (start-up, opening the collection, manager run); and
the median of the bound's site's gaps over its wait, with how many were 10 ms or more (nginx logs whole ms);
and the bound's site's idle time beyond its waits in each batch, from the batch queued to the next one queued
(``idle_per_batch``): a site that sets the bound should have none from its first known pages on.
And the CPU time the harvester processes used (user + system, from ``getrusage``): a crawl whose one process
is busy most of the makespan is bound by its CPU (parsing, storing), not by politeness.

With ``--latency`` (``latency:`` line), each job also writes its fetches (Scrapy's feed of the harvester's
items, ``fetches-MODE-JOB.jsonl``) and the bound's site's time between two requests inside a batch is split
three ways: the request on its way (harvester's ``started`` to nginx's start), the response on its way back
and read (nginx's end to the harvester's ``ended``, from which the wait counts), and the reactor late to send
the next (``ended`` + the wait to the next ``started``). nginx logs whole milliseconds from a clock it reads
once per event loop turn, so its end is the turn's start: the middle figure holds nginx's own time with a
request, and each is good to about a millisecond.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

from wirescrapy.collection import Collection
from wirescrapy.testing import nginx
from wirescrapy.testing.process import ROOT, run_scrapy
from wirescrapy.testing.realweb import RealWeb, webs
from wirescrapy.testing.realweb import sites as realweb_sites

LARGE_SITE_PAGES = 100  # WIRE_LARGE_SITE_PAGES' default
DEFAULTS = ("WIRE_SOFTMIN", "WIRE_PLAN_AHEAD")  # pinned by settings.test, the crawler's default here
LOG_FORMAT = "%(asctime)s.%(msecs)03d [%(name)s] %(levelname)s: %(message)s"
LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) ")


def harvester_command(
    args: argparse.Namespace, web: RealWeb, collection: Path, extra: list[str]
) -> list[str]:
    """The arguments of ``scrapy crawl harvester`` for one job."""
    return [
        "crawl", "harvester", *extra,
        "-s", f"WIRE_COLLECTION_DIR={collection}",
        "-s", f"WIRE_BATCH_SIZE={args.batch_size}",
        "-s", f"WIRE_WAIT_NORMAL={args.wait}", "-s", f"WIRE_WAIT_LARGE_SITE={args.wait_large}",
        "-s", f"WIRE_DNS_HOSTS={json.dumps(web.dns_hosts)}",
        "-s", f"WIRE_ACCEPT_DOMAIN_SUFFIXES={realweb_sites.DOMAIN}",
        "-s", "LOG_LEVEL=INFO", "-s", f"LOG_FORMAT={LOG_FORMAT}",
        *[arg for setting in (*code_defaults(args), *args.setting) for arg in ("-s", setting)],
    ]  # fmt: skip


def start_harvester(
    args: argparse.Namespace, command: list[str], log, profile_file: Path | None = None
) -> subprocess.Popen:
    """``scrapy COMMAND`` of the checkout crawled, under cProfile into ``profile_file`` if given."""
    code = Path(args.code).resolve() if args.code else ROOT
    module = "scrapy"
    if profile_file:
        command, module = ["-o", str(profile_file), "-m", module, *command], "cProfile"
    return run_scrapy(
        *command,
        module=module,
        cwd=code,
        env=code_env(args),
        stdout=log,
        stderr=subprocess.STDOUT,
        wait=False,
    )


def harvester(
    args: argparse.Namespace,
    web: RealWeb,
    collection: Path,
    extra: list[str],
    log,
    profile_file: Path | None = None,
) -> int:
    process = start_harvester(args, harvester_command(args, web, collection, extra), log, profile_file)
    try:
        return process.wait(timeout=args.timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def code_env(args: argparse.Namespace) -> dict:
    """The environment of a crawl of ``args.code``: its ``settings.test`` (loopback allowed), its modules."""
    env = dict(os.environ, SCRAPY_SETTINGS_MODULE="settings.test")
    code = Path(args.code).resolve() if args.code else ROOT
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))
    return env


@functools.cache
def _defaults(code: str) -> tuple[str, ...]:
    script = (
        "from wirescrapy.config import SETTINGS\n"
        f"print('\\n'.join(f'{{s.name}}={{s.default}}' for s in SETTINGS if s.name in {DEFAULTS!r}))"
    )
    env = code_env(argparse.Namespace(code=code))
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=code, env=env, capture_output=True, text=True, check=True
    )
    return tuple(run.stdout.split())


def code_defaults(args: argparse.Namespace) -> tuple[str, ...]:
    """``NAME=VALUE`` for the settings ``settings.test`` pins for the tests (``DEFAULTS``) that a crawl
    measured here runs with the crawler's own default, as that checkout (``--code``) defines it."""
    return _defaults(str(Path(args.code).resolve() if args.code else ROOT))


def profile_file(args: argparse.Namespace, workdir: Path, mode: str, job: int) -> Path | None:
    return workdir / f"profile-{mode}-{job:03d}.prof" if args.profile else None


def fetch_log(args: argparse.Namespace, workdir: Path, mode: str, job: int) -> list[str]:
    """``--latency``: the harvester's items (one per fetch, with when it went and when its last byte came) as
    JSON lines in ``fetches-MODE-JOB.jsonl``, through Scrapy's feed exports, as a Scrapyd job's
    ``items_dir``."""
    if not args.latency:
        return []
    path = workdir / f"fetches-{mode}-{job:03d}.jsonl"
    return ["-s", "FEEDS=" + json.dumps({str(path): {"format": "jsonlines", "overwrite": True}})]


def print_profile(workdir: Path, mode: str, top: int = 30) -> None:
    """The harvesters' functions of most own time (``--profile``), summed over the mode's jobs."""
    import pstats

    files = sorted(str(path) for path in workdir.glob(f"profile-{mode}-*.prof"))
    if files:
        print(
            f"    profile ({len(files)} processes, the reactor thread; cProfile slows it down):", flush=True
        )
        pstats.Stats(*files, stream=sys.stdout).sort_stats("tottime").print_stats(top)
        pstats.Stats(*files, stream=sys.stdout).sort_stats("cumulative").print_stats(top)


def nothing_left(log_file: Path, start: int) -> bool:
    """Whether the job whose log starts at byte ``start`` found no batch to harvest."""
    with open(log_file, "rb") as log:
        log.seek(start)
        text = log.read().decode("utf-8", errors="replace")
    return "URLs to fetch from" not in text


def holds_collection(collection: Path, pid: int) -> bool:
    """Whether process ``pid`` holds the collection's writer lock (``collection/lock.py`` writes its pid)."""
    try:
        return (collection / "lock").read_text(encoding="utf-8").startswith(f"pid {pid} ")
    except FileNotFoundError:
        return False


def queued_jobs(
    args: argparse.Namespace, web: RealWeb, collection: Path, seeds: Path, workdir: Path, starts: list[float]
) -> list[Path]:
    """``--mode queued``: a process per cycle, each started as soon as the one before holds the collection,
    and waiting for it with WIRE_COLLECTION_WAIT (two at a time: one harvesting, the next waiting). The
    jobs' log files, in order."""
    logs: list[Path] = []
    running: list[subprocess.Popen] = []
    waiting = ["-s", f"WIRE_COLLECTION_WAIT={args.timeout}"]
    deadline = time.monotonic() + args.timeout * args.max_cycles
    try:
        while len(logs) < args.max_cycles:
            job = len(logs)
            logs.append(workdir / f"queued-{job:03d}.log")
            extra = (
                (["-a", f"seeds={seeds}"] if job == 0 else [])
                + waiting
                + fetch_log(args, workdir, "queued", job)
            )
            command = harvester_command(args, web, collection, extra)
            starts.append(time.time())
            with open(logs[-1], "wb") as log:
                process = start_harvester(args, command, log, profile_file(args, workdir, "queued", job))
            running.append(process)
            while process.poll() is None and not holds_collection(collection, process.pid):
                if time.monotonic() > deadline:
                    raise TimeoutError("queued jobs: a harvester did not take the collection in time")
                time.sleep(0.005)
            if job:  # the one before has closed the collection: did it find anything to fetch?
                before = running[-2]
                before.wait(timeout=args.timeout)
                if before.returncode or nothing_left(logs[-2], 0):
                    break
        for process in running:
            process.wait(timeout=args.timeout)
    finally:
        for process in running:
            if process.poll() is None:
                process.kill()
                process.wait()
    return logs


def known_site_docs(collection: Path) -> dict[str, int]:
    """Host -> the most documents of it the crawl knew: those a batch of ``collection`` listed
    (``sites.jsonl``'s ``docs``) or, higher, the collection's site record at the end (a site found large in
    the middle of a batch gets the large-site wait then, ``harvester/largesites.py``)."""
    docs: dict[str, int] = {}

    def known(origin: str, count: int) -> None:
        host = origin.split("//", 1)[-1].rsplit(":", 1)[0].lower()
        docs[host] = max(docs.get(host, 0), count)

    for path in [*collection.glob("batches/*/sites.jsonl"), *collection.glob("batches/*/part-*/sites.jsonl")]:
        for line in path.read_text(encoding="utf-8").splitlines():
            site = json.loads(line)
            known(site["origin"], int(site["docs"]))
    try:
        with Collection(collection, readonly=True) as stored:
            for site_id in range(1, stored.urls.site_count + 1):
                known(stored.urls.site_name(site_id), int(stored.sites.records[site_id]["docs"]))
    except FileNotFoundError:  # no collection: the crawl failed before its first batch
        pass
    return docs


def crawl(args: argparse.Namespace, web: RealWeb, mode: str, workdir: Path) -> dict:
    collection = workdir / f"collection-{mode}"
    shutil.rmtree(collection, ignore_errors=True)
    seeds = workdir / "seeds.txt"
    seeds.write_text("".join(seed + "\n" for seed in web.seeds), encoding="utf-8")
    log_file = workdir / f"{mode}.log"
    since = time.time()
    started = time.perf_counter()
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    jobs = 0
    starts: list[float] = []  # when each job was started
    with open(log_file, "wb") as log:
        if mode == "cycles":
            starts.append(time.time())
            jobs = 1
            harvester(
                args,
                web,
                collection,
                [
                    "-a",
                    f"seeds={seeds}",
                    "-a",
                    f"cycles={args.max_cycles}",
                    *fetch_log(args, workdir, mode, 0),
                ],
                log,
                profile_file(args, workdir, mode, 0),
            )
        elif mode == "queued":
            job_logs = queued_jobs(args, web, collection, seeds, workdir, starts)
            jobs = len(job_logs)
            log.writelines(path.read_bytes() for path in job_logs)
        else:
            while jobs < args.max_cycles:
                log.flush()
                start = log.tell()
                extra = (["-a", f"seeds={seeds}"] if jobs == 0 else []) + fetch_log(args, workdir, mode, jobs)
                starts.append(time.time())
                code = harvester(args, web, collection, extra, log, profile_file(args, workdir, mode, jobs))
                jobs += 1
                log.flush()
                if code or nothing_left(log_file, start):
                    break
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
    requests = web.requests(since)
    return {
        "mode": mode,
        "jobs": jobs,
        "wall": wall,
        "requests": requests,
        "log": log_file,
        "starts": starts,
        "cpu": cpu_seconds,
    }


def log_events(log_file: Path) -> list[tuple[float, str]]:
    """(time, kind) of the harvester log's events: "batch" (a batch queued), "manager" (a batch written),
    "closed" (a process's spider closed), at the log's millisecond resolution."""
    events = []
    with open(log_file, encoding="utf-8", errors="replace") as log:
        for line in log:
            match = LOG_TIME.match(line)
            if not match:
                continue
            kind = (
                "batch"
                if "URLs to fetch from" in line
                else "manager"
                if "manager: batch" in line
                else "closed"
                if "Spider closed" in line
                else ""
            )
            if kind:
                when = (
                    datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S").timestamp()
                    + int(match.group(2)) / 1000
                )
                events.append((when, kind))
    return events


def across_batch_start(previous: nginx.Request, request: nginx.Request, batches: list[float]) -> bool:
    """Whether a batch was queued between two requests of a site (the gap spans a batch start)."""
    return any(previous.end <= b <= request.start for b in batches)


def idle_per_batch(
    requests: list[nginx.Request], host: str, wait: float, batches: list[float]
) -> list[float]:
    """The idle time of ``host`` beyond its waits in each batch: from the batch queued (``batches``, the
    times) to the next one queued, the last to the crawl's last response. Idle is the time it spends neither
    fetching nor waiting ``wait`` after a fetch: before its first request (from the crawl's first), between
    two requests beyond the wait, and after its last request."""
    first, last = min(r.start for r in requests), max(r.end for r in requests)
    own = sorted((r for r in requests if r.host == host), key=lambda r: r.start)
    if not own:
        return [0.0 for _ in batches]
    gaps = [
        (first, own[0].start),
        *((previous.end + wait, request.start) for previous, request in pairwise(own)),
        (own[-1].end, last),
    ]
    starts = sorted(batches)
    ends = [*starts[1:], max(last, starts[-1])] if starts else []
    return [
        sum(max(min(end, to) - max(start, since), 0.0) for since, to in gaps)
        for start, end in zip(starts, ends)
    ]


def where_time_goes(
    requests: list[nginx.Request],
    host: str,
    wait: float,
    events: list[tuple[float, str]],
    starts: list[float],
) -> str:
    """The ``where:`` line (see the module's docstring)."""
    first, last = min(r.start for r in requests), max(r.end for r in requests)
    own = sorted((r for r in requests if r.host == host), key=lambda r: r.start)
    batches = [when for when, kind in events if kind == "batch"]
    before, after = own[0].start - first, last - own[-1].end
    across = inside = 0.0
    for previous, request in pairwise(own):
        idle = max(request.start - previous.end - wait, 0.0)
        if across_batch_start(previous, request, batches):
            across += idle
        else:
            inside += idle
    tails, startups = [], []
    for i, b in enumerate(batches):
        following = batches[i + 1] if i + 1 < len(batches) else float("inf")
        mine = [r.end for r in own if b <= r.start < following]
        rest = [r.end for r in requests if b <= r.start < following]
        if mine and rest:
            tails.append(max(rest) - max(mine))
    exits = []  # a job's spider closed to the next job's process started: its exit and the next one's spawn
    closed = [when for when, kind in events if kind == "closed"]
    for start in starts:
        queued = [b for b in batches if b >= start]
        if queued:
            startups.append(queued[0] - start)
        earlier = [c for c in closed if c <= start]
        if earlier and len(starts) > 1:
            exits.append(start - earlier[-1])

    def mean(values: list[float]) -> str:
        return f"{sum(values) / len(values):.2f} s" if values else "-"

    over = sorted(request.start - previous.end - wait for previous, request in pairwise(own))
    long = [gap for gap in over if gap >= 0.010]
    gaps = (
        (
            f"; its gaps over the wait: median {over[len(over) // 2] * 1e3:.0f} ms, "
            f"{len(long)} of 10 ms or more (sum {sum(long):.1f} s)"
        )
        if over
        else ""
    )
    idle = idle_per_batch(requests, host, wait, batches)
    return (
        f"where: {host} idle {before + across + inside + after:.1f} s = {before:.1f} before its first "
        f"request + {across:.1f} across {len(batches)} batch starts + {inside:.1f} inside batches + "
        f"{after:.1f} after its last; per batch: tail without it {mean(tails)} (sum {sum(tails):.1f} s); "
        f"per job: start to batch queued {mean(startups)} (sum {sum(startups):.1f} s), spider closed to "
        f"the next started {mean(exits)} (sum {sum(exits):.1f} s){gaps}; its idle beyond its waits in each "
        f"batch: {' '.join(f'{seconds:.1f}' for seconds in idle)} s (sum {sum(idle):.1f} s)"
    )


def request_latency(
    requests: list[nginx.Request],
    host: str,
    wait: float,
    events: list[tuple[float, str]],
    fetches: list[dict],
) -> str:
    """The ``latency:`` line (``--latency``): the bound's site's requests inside batches, each matched with
    the harvester's item of its URL (``started``: when the request went to the network; ``ended``: when its
    last byte came, which the site's wait counts from). Means, in ms: nginx's start after ``started`` (the
    request on its way), the harvester's ``ended`` after nginx's end (the response on its way and read), and
    the next request's ``started`` after ``ended`` + the wait (the reactor late, busy with other work), with
    how many of those were 5 ms or more and their sum. nginx logs whole milliseconds: each figure is within a
    millisecond."""
    items: dict[str, dict] = {}
    for item in fetches:
        split = urlsplit(item.get("url", ""))
        if (split.hostname or "") == host and item.get("started") and item.get("ended"):
            items[split.path + (f"?{split.query}" if split.query else "")] = item
    own = sorted((r for r in requests if r.host == host and r.uri in items), key=lambda r: r.start)
    batches = [when for when, kind in events if kind == "batch"]
    sent, read, late = [], [], []
    for request in own:
        item = items[request.uri]
        sent.append(request.start - item["started"])
        read.append(item["ended"] - request.end)
    for previous, request in pairwise(own):
        if not across_batch_start(previous, request, batches):
            late.append(items[request.uri]["started"] - items[previous.uri]["ended"] - wait)
    if not late:
        return f"latency: no fetch of {host} matched in the harvester's items"
    slow = [value for value in late if value >= 0.005]

    def ms(values: list[float]) -> str:
        return f"{sum(values) / len(values) * 1e3:.2f} ms"

    return (
        f"latency: {host}, {len(own)} requests: sent to nginx's start {ms(sent)}; nginx's end to the last "
        f"byte read {ms(read)} (sum {sum(read):.1f} s); the wait's end to the next sent {ms(late)} (sum "
        f"{sum(late):.1f} s; {len(slow)} of 5 ms or more, sum {sum(slow):.1f} s); inside batches, nginx's "
        f"whole ms"
    )


def read_fetches(workdir: Path, mode: str) -> list[dict]:
    fetches = []
    for path in sorted(workdir.glob(f"fetches-{mode}-*.jsonl")):
        with open(path, encoding="utf-8") as lines:
            fetches.extend(json.loads(line) for line in lines if line.strip())
    return fetches


def bound(requests: list[nginx.Request], wait_of: dict[str, float]) -> tuple[float, str]:
    """Max over sites of (requests - 1) x wait + the site's fetch times, and the site reaching it."""
    per_site: dict[str, list[nginx.Request]] = {}
    for request in requests:
        per_site.setdefault(request.host, []).append(request)
    best, where = 0.0, ""
    for host, items in per_site.items():
        value = (len(items) - 1) * wait_of[host] + sum(r.end - r.start for r in items)
        if value > best:
            best, where = value, host
    return best, where


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--mode", choices=("jobs", "queued", "cycles", "both"), default="both", help="both: jobs, then cycles"
    )
    parser.add_argument(
        "--real-web",
        default=webs.DEFAULT,
        choices=list(webs.WEBS),
        help=f"the real web crawled (default {webs.DEFAULT}, the web tuned on; held out of tuning: "
        f"{', '.join(webs.held_out())})",
    )
    parser.add_argument("--real-sites", help="comma-separated sites of the real web (default: all)")
    parser.add_argument("--wait", type=float, default=0.2, help="WIRE_WAIT_NORMAL (default 0.2)")
    parser.add_argument("--wait-large", type=float, default=0.05, help="WIRE_WAIT_LARGE_SITE (default 0.05)")
    parser.add_argument("--batch-share", type=float, default=0.05, help="K as a share of N (default 0.05)")
    parser.add_argument("--max-cycles", type=int, default=200, help="most cycles (jobs) of a crawl")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one process may take")
    parser.add_argument(
        "--setting",
        "-s",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra Scrapy setting for every process (repeatable)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="run each harvester under cProfile (the reactor thread: where its CPU goes; the "
        "makespan is then not comparable) and print its functions of most own time",
    )
    parser.add_argument(
        "--latency",
        action="store_true",
        help="log every fetch (Scrapy's feed of the harvester's items) and print where the bound's "
        "site's time goes between two of its requests",
    )
    parser.add_argument("--workdir", help="keep collections, logs and nginx's files here")
    parser.add_argument(
        "--code",
        help="checkout of the crawler to run (default: this one), e.g. a worktree of "
        "an earlier commit, for a before/after with the same benchmark",
    )
    args = parser.parse_args()
    try:
        chosen = webs.select(args.real_web, args.real_sites)
    except ValueError as error:
        parser.error(str(error))
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="wire-realweb-makespan-"))
    workdir.mkdir(parents=True, exist_ok=True)
    modes = ["jobs", "cycles"] if args.mode == "both" else [args.mode]
    problems = 0  # crawls that reached no page or broke politeness: the exit status says so
    try:
        with RealWeb(workdir / "web", chosen, web=args.real_web) as web:
            n = len(web.truth.pages)
            args.batch_size = max(1, round(args.batch_share * n))
            site_pages = {site.host: web.truth.site_pages(web.origin(site)) for site in chosen}
            print(
                f"real web {args.real_web}{' (held out of tuning)' if web.held_out else ''}: {len(chosen)} "
                f"sites, N = {n} pages, nginx on 127.0.0.x:{web.port}; "
                f"K = {args.batch_size} ({args.batch_share:.0%} of N); waits {args.wait} s / "
                f"{args.wait_large} s (sites of more than {LARGE_SITE_PAGES} pages); "
                f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
                flush=True,
            )
            for mode in modes:
                result = crawl(args, web, mode, workdir)
                requests = result["requests"]
                if not requests:
                    print(f"{mode}: no request reached nginx, see {result['log']}")
                    problems += 1
                    continue
                first = min(r.start for r in requests)
                last = max(r.end for r in requests)
                makespan = last - first
                # The harvester gives a site the large-site wait once the crawl knows more than
                # WIRE_LARGE_SITE_PAGES of its documents (errors, files and robots.txt too): judged here by
                # the requests the site received, or by the documents the crawl knew (a crawl cut short by
                # --max-cycles may know more than it fetched).
                counts = known_site_docs(workdir / f"collection-{mode}")
                for request in requests:
                    counts[request.host] = counts.get(request.host, 0) + 1
                wait_of = {
                    host: args.wait_large if counts.get(host, 0) > LARGE_SITE_PAGES else args.wait
                    for host in site_pages
                }
                lower, where = bound(requests, wait_of)
                report = nginx.politeness(requests, wait_of)
                overlaps = sum(p.overlaps for p in report)
                short = sum(p.short_gaps for p in report)
                pages = sum(1 for r in requests if r.status == 200)
                print(
                    f"{mode:<7} {result['jobs']:4d} {'job ' if mode == 'cycles' else 'jobs'}, "
                    f"{len(requests)} requests ({pages} answered 200): makespan {makespan:.1f} s, "
                    f"lower bound {lower:.1f} s ({where}): {makespan / lower:.2f} x the bound; "
                    f"wall clock {result['wall']:.1f} s; politeness: {overlaps} overlapping requests, "
                    f"{short} started before the site's wait; load average {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                print(
                    f"    CPU: the harvester processes used {result['cpu']:.1f} s of CPU (user + system), "
                    f"{result['cpu'] / makespan:.0%} of the makespan; the bound's site waits and fetches "
                    f"{lower:.1f} s",
                    flush=True,
                )
                print(
                    "    "
                    + where_time_goes(
                        requests, where, wait_of[where], log_events(result["log"]), result["starts"]
                    ),
                    flush=True,
                )
                if args.latency:
                    print(
                        "    "
                        + request_latency(
                            requests,
                            where,
                            wait_of[where],
                            log_events(result["log"]),
                            read_fetches(workdir, mode),
                        ),
                        flush=True,
                    )
                problems += bool(overlaps or short)
                if args.profile:
                    print_profile(workdir, mode)
                for entry in report:
                    if entry.overlaps or entry.short_gaps:
                        print(
                            f"    {entry.host}: {entry.requests} requests, {entry.overlaps} overlaps, "
                            f"{entry.short_gaps} short gaps, smallest gap {entry.smallest_gap:.3f} s "
                            f"(wait {wait_of.get(entry.host, 0)} s)"
                        )
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if problems:
        print(f"problem: {problems} crawl(s) reached no page or broke politeness (above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
