"""Hostile servers benchmark: the peak RSS of ``scrapy crawl harvester`` fed by the hostile sites of
``wirescrapy.testing.hostile`` (memory is bounded whatever a server sends).

    python -m benchmarks.hostile                        # every case, 1 GB bombs, this checkout's code
    python -m benchmarks.hostile --before /work/main    # each case also with another checkout's code
    python -m benchmarks.hostile --smoke                # CI: 64 MB bombs, 3 sites at once

Each case is one harvester run (``settings.test``, ``-a seeds=… -a cycles=N``) in a subprocess of its own, so
that its peak RSS is its alone: the kernel's ``ru_maxrss`` of the process
(``wirescrapy.testing.process.measure``). The hostile web is
one asyncio server on 127.0.0.1 in this process, every site a host name ``<name>-N.wire.test``:

* **normal crawl**: 10 sites of small pages, 3 cycles (the baseline);
* **bomb page**: a page in ``Content-Encoding: gzip``, 1 MB on the wire, ``--bomb`` inflated (1 GB);
* **ten bomb sites**: ten such pages at once;
* **sitemap, Content-Encoding** / **sitemap, .xml.gz**: a sitemap named in robots.txt, bombed the same way;
* **endless headers**: header lines without end, until the crawler hangs up (or ``--endless`` seconds);
* **all at once**: ``--connections`` sites (300, ``WIRE_CONNECTIONS``), each feeding all of the above on its
  one connection: robots.txt naming both bombed sitemaps, then the bomb page and the endless headers.

A run is stopped (SIGKILL) past ``--limit`` seconds or ``--rss-cap`` MB, so that code without the bounds
(``--before``) cannot take the machine's memory; its figure is then printed with ``>``. Printed per case:
sites, requests the server saw, wall seconds and peak RSS, after (this checkout) and before; and whether the
goal holds, the all-at-once case under 1 GB. Nothing here asserts: the figures are for a person to read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from wirescrapy.testing.hostile import HostileWeb
from wirescrapy.testing.process import ROOT, measure, run_scrapy, scrapy_env

GOAL = 1 << 30


@dataclass
class Case:
    name: str
    sites: list[tuple[str, list[str]]]  # (site, seed paths)
    cycles: int = 1


@dataclass
class Run:
    peak: int  # bytes
    seconds: float
    requests: int
    stopped: str  # "", "time" or "rss"

    def rss(self) -> str:
        return (">" if self.stopped == "rss" else "") + f"{self.peak / (1 << 20):,.0f} MB"

    def wall(self) -> str:
        return (">" if self.stopped == "time" else "") + f"{self.seconds:.1f} s"


def cases(connections: int) -> list[Case]:
    return [
        Case("normal crawl", [(f"normal-{i}", ["/page/0.html"]) for i in range(10)], cycles=3),
        Case("bomb page", [("bomb-0", ["/bomb.html"])]),
        Case("ten bomb sites", [(f"bomb-{i}", ["/bomb.html"]) for i in range(10)]),
        Case("sitemap, Content-Encoding", [("ce-sitemap-0", ["/"])]),
        Case("sitemap, .xml.gz", [("gz-sitemap-0", ["/"])]),
        Case("endless headers", [("headers-0", ["/headers.html"])]),
        Case(
            f"all at once, {connections} sites",
            [(f"sitemap-{i}", ["/bomb.html", "/headers.html"]) for i in range(connections)],
        ),
    ]


def harvest(code: Path, web: HostileWeb, case: Case, workdir: Path, limit: float, rss_cap: int) -> Run:
    """One harvester run of ``case`` with the code of checkout ``code``."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    seeds = workdir / "seeds.txt"
    seeds.write_text("".join(web.url(site, path) + "\n" for site, paths in case.sites for path in paths))
    settings = {
        "WIRE_COLLECTION_DIR": workdir / "collection",
        "WIRE_LARGE_SITE_PAGES": 10000,
        "LOG_LEVEL": "WARNING",
    }
    before = len(web.requests)
    started = time.monotonic()
    with open(workdir / "stderr.txt", "w") as stderr:
        process = run_scrapy(
            "crawl",
            "harvester",
            "-a",
            f"seeds={seeds}",
            "-a",
            f"cycles={case.cycles}",
            settings=settings,
            cwd=code,
            env=scrapy_env(code=code),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            wait=False,
        )
    stopped = []
    watcher = threading.Thread(
        target=_watch, args=(process.pid, started + limit, rss_cap, stopped), daemon=True
    )
    watcher.start()
    usage = measure(process)
    seconds = time.monotonic() - started
    watcher.join()
    return Run(usage.peak_rss, seconds, len(web.requests) - before, stopped[0] if stopped else "")


def _watch(pid: int, deadline: float, rss_cap: int, stopped: list[str]) -> None:
    """Kill ``pid`` past the deadline or the RSS cap; return once it has ended."""
    status = Path(f"/proc/{pid}/status")
    while True:
        try:
            text = status.read_text()
        except OSError:
            return
        if "State:\tZ" in text:
            return
        rss = next(
            (int(line.split()[1]) * 1024 for line in text.splitlines() if line.startswith("VmRSS:")), 0
        )
        reason = "rss" if rss > rss_cap else "time" if time.monotonic() > deadline else ""
        if reason:
            stopped.append(reason)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="CI: 64 MB bombs, 3 sites at once, short limits")
    parser.add_argument("--before", type=Path, help="another checkout whose harvester runs each case too")
    parser.add_argument("--bomb", type=int, default=1 << 30, help="bytes a bomb inflates to (default 1 GB)")
    parser.add_argument("--connections", type=int, default=300, help="sites of the all-at-once case")
    parser.add_argument(
        "--endless", type=float, default=120.0, help="seconds the endless headers last at most"
    )
    parser.add_argument(
        "--limit", type=float, default=150.0, help="seconds a run may take before it is killed"
    )
    parser.add_argument("--rss-cap", type=int, default=4000, help="MB of RSS at which a run is killed")
    parser.add_argument("--only", help="run the cases whose name contains this")
    args = parser.parse_args()
    if args.smoke:
        args.bomb, args.connections, args.endless, args.limit = 64 << 20, 3, 20.0, 40.0
    chosen = [case for case in cases(args.connections) if not args.only or args.only in case.name]
    codes = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    print(
        f"bombs inflate to {args.bomb >> 20} MB; endless headers last {args.endless:.0f} s at most; "
        f"each run stopped past {args.limit:.0f} s or {args.rss_cap:,} MB RSS"
    )
    results: dict[tuple[str, str], Run] = {}
    with (
        tempfile.TemporaryDirectory(prefix="hostile-") as tmp,
        HostileWeb(bomb_size=args.bomb, endless_seconds=args.endless, pages=30) as web,
    ):
        print(f"page bomb {len(web.page_bomb):,} bytes on the wire, sitemap bomb {len(web.sitemap_bomb):,}")
        for case in chosen:
            for label, code in codes:
                run = harvest(code, web, case, Path(tmp) / "run", args.limit, args.rss_cap << 20)
                results[case.name, label] = run
                print(
                    f"  {case.name} ({label}): peak RSS {run.rss()}, {run.wall()}, {run.requests} requests",
                    flush=True,
                )
    print()
    header = f"{'case':<32} {'sites':>5} {'requests':>8} {'wall':>8} {'peak RSS':>10}"
    if args.before:
        header += f" {'wall before':>12} {'RSS before':>11} {'before/after':>12}"
    print(header)
    for case in chosen:
        after = results[case.name, "after"]
        line = f"{case.name:<32} {len(case.sites):>5} {after.requests:>8} {after.wall():>8} {after.rss():>10}"
        if args.before:
            before = results[case.name, "before"]
            line += f" {before.wall():>12} {before.rss():>11} {before.peak / after.peak:>11.1f}x"
        print(line)
    worst = results[chosen[-1].name, "after"] if chosen[-1].name.startswith("all at once") else None
    if worst:
        verdict = "holds" if worst.peak < GOAL and worst.stopped != "rss" else "does NOT hold"
        note = ", the peak until the run was stopped at the time limit" if worst.stopped == "time" else ""
        print(f"\ngoal (all at once under 1 GB, {args.connections} sites): {verdict} ({worst.rss()}{note})")


if __name__ == "__main__":
    main()
