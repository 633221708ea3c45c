"""Politeness to servers: the harvester's scheduler on webs of virtual hosts, from nginx's access log.

    python -m benchmarks.politeness                          # the figures of benchmarks/README.md
    python -m benchmarks.politeness --pages 2 --repeats 1    # smoke run

Each crawl is the harvester's scheduler (``WireScheduler``) and Scrapy's downloader fetching one batch from a
real nginx on loopback addresses, in a child process; the server's access log says what it saw. Printed:

  - the shared-hosting web (50 virtual hosts on one address, 5 hosts on addresses of their own), crawled
    with ``WIRE_POLITENESS_GROUP = ip``: its makespan against the per-address bound, the time the shared
    address needs at the least (its pages one at a time, the wait after each, nginx's own time counted),
    the most requests in flight at once on one address, and the gaps shorter than the wait;
  - the same crawl keyed by host (``host``): the same figures, to show the connections a server gets;
  - a web of distinct addresses (one host per address): its harvest rate (pages a second) before and
    after, where *before* is the scheduler of ``--before`` (a commit; its tree is taken with ``git archive``)
    and *after* this tree's, by address and by host, the three taking turns; its wait is ``--distinct-wait``,
    so that the rate is the one politeness allows. The ratio after/before is the figure (goal >= 0.95).

Each figure is the median of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

from wirescrapy.testing import nginx
from wirescrapy.testing.process import ROOT, run_scrapy

BEFORE = "f983b3c"  # the last commit whose scheduler kept politeness per site only


# -- the child: one batch through the scheduler ----------------------------------------------------------


def child(plan_path: str) -> None:
    import scrapy
    from scrapy.crawler import CrawlerProcess

    from wirescrapy.harvester.scheduler import WireScheduler
    from wirescrapy.manager.batch import BatchSite, BatchURL

    plan = json.loads(Path(plan_path).read_text())

    class BatchSpider(scrapy.Spider):
        name = "politeness-bench"

        async def start(self):
            urls = [BatchURL(doc, site, 0, False, 0.0, 0.0, url) for doc, site, url in plan["batch"]]
            sites = {site_id: BatchSite(site_id, origin) for site_id, origin in plan["sites"]}
            WireScheduler.of(self.crawler).enqueue_batch(urls, sites=sites, callback=self.parse)
            return
            yield

        def parse(self, response):
            self.crawler.stats.inc_value("bench/ok", response.status == 200)

        def closed(self, reason):
            Path(plan["out"]).write_text(json.dumps({"ok": self.crawler.stats.get_value("bench/ok", 0)}))

    process = CrawlerProcess(
        {
            "SCHEDULER": "wirescrapy.harvester.scheduler.WireScheduler",
            "DNS_RESOLVER": "wirescrapy.resolver.MappedResolver",
            "DOWNLOAD_DELAY": 0,
            "CONCURRENT_REQUESTS": 300,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 300,
            "ROBOTSTXT_OBEY": False,
            "RETRY_ENABLED": False,
            "HTTPERROR_ALLOW_ALL": True,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "WARNING",
            **plan["settings"],
        }
    )
    process.crawl(BatchSpider)
    process.start()


# -- the webs and their crawls -----------------------------------------------------------------------------


def shared_hosting() -> list[tuple[str, str]]:
    """(host, address): 50 virtual hosts on 127.0.0.2, 5 hosts on 127.0.0.3-7."""
    return [(f"v{i:02d}.shared.test", "127.0.0.2") for i in range(50)] + [
        (f"own{i}.test", f"127.0.0.{3 + i}") for i in range(5)
    ]


def distinct() -> list[tuple[str, str]]:
    """(host, address): 50 hosts, each on an address of its own (127.0.1.1-50)."""
    return [(f"d{i:02d}.test", f"127.0.1.{1 + i}") for i in range(50)]


def crawl(workdir: Path, web, pages: int, wait: float, settings: dict, tree: Path, name: str) -> dict:
    """One crawl of ``web`` by the code of ``tree``: the server's figures."""
    root = workdir / "pages"
    root.mkdir(exist_ok=True)
    for n in range(pages):
        (root / f"{n}.html").write_text(f"<html><body><p>page {n}</p></body></html>")
    servers = [nginx.Server(host, address, str(root)) for host, address in web]
    with nginx.Nginx(servers, workdir / f"nginx-{name}") as server:
        batch, sites = [], []
        for site_id, (host, _) in enumerate(web, 1):
            origin = f"http://{host}:{server.port}"
            sites.append([site_id, origin])
            batch += [[len(batch) + n + 1, site_id, f"{origin}/{n}.html"] for n in range(pages)]
        plan = {
            "batch": batch,
            "sites": sites,
            "out": str(workdir / f"{name}.json"),
            "settings": {
                "WIRE_DNS_HOSTS": {host: address for host, address in web},
                "WIRE_WAIT_NORMAL": wait,
                "WIRE_WAIT_LARGE_SITE": wait,
                **settings,
            },
        }
        plan_path = workdir / f"{name}-plan.json"
        plan_path.write_text(json.dumps(plan))
        env = {**os.environ, "PYTHONPATH": str(tree)}
        run = run_scrapy("--child", plan_path, module="benchmarks.politeness", cwd=tree, env=env, timeout=900)
        if run.returncode != 0:
            raise SystemExit(f"{name}: the crawl failed: {run.stderr[-2000:]}")
        requests = nginx.read_log(server.access_log)
    ok = json.loads(Path(plan["out"]).read_text())["ok"]
    by_address: dict[str, list[nginx.Request]] = {}
    for request in requests:
        by_address.setdefault(request.address, []).append(request)
    makespan = max(r.end for r in requests) - min(r.start for r in requests)
    # The least time the busiest address needs: its requests one at a time as nginx took them, a wait between.
    bound = max(sum(r.end - r.start for r in rs) + (len(rs) - 1) * wait for rs in by_address.values())
    return {
        "pages": len(requests),
        "ok": ok,
        "makespan": makespan,
        "bound": bound,
        "in_flight": max(in_flight(rs) for rs in by_address.values()),
        "short_gaps": sum(short_gaps(rs, wait) for rs in by_address.values()),
    }


def in_flight(requests: list[nginx.Request]) -> int:
    """The most requests to one address at once (nginx's clock is in milliseconds: a request that started in
    the millisecond another ended is counted as overlapping it)."""
    events = sorted(
        [(r.start, 1) for r in requests] + [(r.end, -1) for r in requests], key=lambda e: (e[0], -e[1])
    )
    peak = now = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def short_gaps(requests: list[nginx.Request], wait: float, slack: float = 0.002) -> int:
    ordered = sorted(requests, key=lambda r: r.start)
    return sum(after.start - before.end < wait - slack for before, after in pairwise(ordered))


def median_of(runs: list[dict]) -> dict:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def before_tree(workdir: Path, commit: str) -> Path:
    """The tree of ``commit`` with this benchmark in it (its child runs there)."""
    tree = workdir / f"before-{commit}"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    shutil.copy(Path(__file__), tree / "benchmarks" / "politeness.py")
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=4, help="pages per host")
    parser.add_argument("--wait", type=float, default=0.05, help="WIRE_WAIT_NORMAL, seconds")
    parser.add_argument("--distinct-wait", type=float, default=1.0, help="the wait on the distinct web")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each crawl; figures are medians")
    parser.add_argument("--before", default=BEFORE, help="the commit whose scheduler is 'before'")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    if nginx.binary() is None:
        raise SystemExit("nginx is not installed (apt-get install nginx-light)")
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; "
        f"{args.pages} pages a host, wait {args.wait} s"
    )
    with tempfile.TemporaryDirectory(prefix="wire-politeness-") as tmp:
        workdir = Path(tmp)
        before = before_tree(workdir, args.before)

        def runs(web, settings, tree, name):
            return median_of(
                [
                    crawl(workdir, web, args.pages, args.wait, settings, tree, f"{name}-{k}")
                    for k in range(args.repeats)
                ]
            )

        for mode in ("ip", "host"):
            started = time.monotonic()
            figures = runs(shared_hosting(), {"WIRE_POLITENESS_GROUP": mode}, ROOT, f"shared-{mode}")
            print(
                f"shared hosting, by {mode}: {figures['ok']:.0f}/{figures['pages']:.0f} pages OK; makespan "
                f"{figures['makespan']:.2f} s, per-address bound {figures['bound']:.2f} s "
                f"({figures['makespan'] / figures['bound']:.3f}x); at most {figures['in_flight']:.0f} "
                f"in flight on one address; {figures['short_gaps']:.0f} gaps under the wait "
                f"[{time.monotonic() - started:.0f} s]"
            )
        # Before and after take turns, so that the machine's drift falls on both alike.
        variants = {"before": ({}, before), "ip": ({"WIRE_POLITENESS_GROUP": "ip"}, ROOT)}
        variants["host"] = ({"WIRE_POLITENESS_GROUP": "host"}, ROOT)
        rates: dict[str, list[float]] = {name: [] for name in variants}
        peaks: dict[str, int] = dict.fromkeys(variants, 0)
        for k in range(args.repeats):
            for name, (settings, tree) in variants.items():
                run = crawl(
                    workdir, distinct(), args.pages, args.distinct_wait, settings, tree, f"d-{name}-{k}"
                )
                rates[name].append(run["ok"] / run["makespan"])
                peaks[name] = max(peaks[name], run["in_flight"])
        rate_before = statistics.median(rates["before"])
        print(
            f"distinct addresses, wait {args.distinct_wait} s, before ({args.before}): "
            f"{rate_before:.1f} pages/s"
        )
        for name in ("ip", "host"):
            rate = statistics.median(rates[name])
            print(
                f"distinct addresses, after, by {name}: {rate:.1f} pages/s "
                f"({rate / rate_before:.3f}x before); at most {peaks[name]} in flight on one address"
            )


if __name__ == "__main__":
    main()
