"""Report benchmark: ``scrapy report`` end to end on a large collection, with the cost of each section.

    python -m benchmarks.report                          # 1M documents, 10M links
    python -m benchmarks.report --pages 10000000         # 10M documents, 100M links
    python -m benchmarks.report --smoke                  # 20,000 documents, for CI
    python -m benchmarks.report --all-scores             # the manager stores every link score first

The collection is built once into ``--dir`` (default: a directory under /tmp named by its size, reused by
later runs) through the collection's own stores: the URL store (``add_many``), the document and site
records, the link store (``set_links_many``: the lists as the gatherer writes them, in page order, with
repeats), 200 harvested batches and the links-out-of-the-crawl counts; then one manager run with the default
weights, which stores PageRank and stamps it with the link graph (``manager/scorefile.py``), as a crawl's
collection has it. The graph and the records are those
of ``benchmarks.manager`` (Pareto site sizes, geometric out-degrees, 80 % of the links inside the site,
power-law in-degrees), with languages, MIME types, lengths and Last-Modified added.

The report then runs in a fresh process, as ``scrapy report`` does (read-only open, every section, CSV,
plots and HTML), and prints the seconds of each step and its peak RSS (``ru_maxrss`` of that process).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import time
from pathlib import Path

import numpy as np
from scrapy.settings import Settings

from benchmarks.manager import NOW, web_graph, web_records
from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import SITE_DTYPE
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.manager.run import manage
from wirescrapy.testing.process import run_scrapy

LANGUAGES = np.array([b"en", b"es", b"pt", b"fr", b"de", b"", b"it", b"la"])
LANGUAGE_SHARE = np.array([0.5, 0.25, 0.08, 0.05, 0.04, 0.04, 0.02, 0.02])
MIMES = np.array([b"text/html", b"text/plain", b"application/xhtml+xml"])
LINK_SCORES = ("pagerank", "hub", "authority", "wlrank", "siterank")  # those the report shows


def build(directory: Path, pages: int, links_per_page: float) -> dict:
    """Write a collection of ``pages`` documents into ``directory``; what it holds."""
    start = time.perf_counter()
    counts, site_of, sites, stored = web_graph(pages, links_per_page)
    records = web_records(site_of, counts)
    rng = np.random.default_rng(3)
    docs = records[1:]
    ok = docs["status"] == 200
    docs["language"] = np.where(ok, LANGUAGES[rng.choice(len(LANGUAGES), pages, p=LANGUAGE_SHARE)], b"")
    docs["mime"] = np.where(docs["visits"] > 0, MIMES[rng.choice(3, pages, p=[0.9, 0.08, 0.02])], b"")
    docs["raw_length"] = np.where(ok, np.minimum(rng.lognormal(9.5, 1.2, pages), 4e6), 0).astype(np.uint32)
    docs["stored_length"] = (docs["raw_length"] * 0.8).astype(np.uint32)
    docs["last_modified"] = np.where(
        ok & (rng.random(pages) < 0.6), docs["last_visit"] - rng.exponential(200 * 86400, pages), 0
    )
    with Collection(directory) as collection:
        for site in range(1, sites + 1):
            collection.urls.add_site(f"http://www{site}.example.cl")
        step = 1 << 18
        for lo in range(1, pages + 1, step):
            hi = min(lo + step, pages + 1)
            paths = [f"/page/{i}.html".encode() for i in range(lo, hi)]
            collection.urls.add_many(site_of[lo:hi].tolist(), paths)
        collection.documents.ensure(pages)
        collection.documents.records[1 : pages + 1] = docs
        collection.documents.count = pages
        collection.sites.ensure(sites)
        site_records = np.zeros(sites, dtype=SITE_DTYPE)
        site_records["siteid"] = np.arange(1, sites + 1)
        site_records["crawl_delay"] = np.where(rng.random(sites) < 0.05, 30, 0)
        collection.sites.records[1 : sites + 1] = site_records
        collection.sites.count = sites
        # The link store as the gatherer leaves it: each page's list, a link repeated as often as drawn.
        repeats = counts.data.astype(np.int64)
        targets = np.repeat(counts.indices, repeats)
        ends = np.zeros(len(counts.indptr), np.int64)
        np.cumsum(
            np.add.reduceat(repeats, counts.indptr[:-1].clip(max=len(repeats) - 1))
            * (np.diff(counts.indptr) > 0),
            out=ends[1:],
        )
        linked = np.flatnonzero(np.diff(counts.indptr) > 0)
        collection.links.set_links_many(linked, np.concatenate([[0], ends[linked + 1]]), targets)
        for ext, n in ((".pdf", 1200), (".jpg", 5400), (".zip", 300)):
            collection.outlinks.count("extension", ext, n * pages // 100_000)
        for tld, n in (("com", 9000), ("org", 2100), ("net", 800), ("ar", 300)):
            collection.outlinks.count("tld", tld, n * pages // 100_000)
    batches = directory / "batches"
    per_batch = max(pages // 200, 1)
    for number in range(1, 201):
        path = batches / f"{number:06d}"
        path.mkdir(parents=True, exist_ok=True)
        began = NOW - (200 - number) * 3600
        (path / "batch.json").write_text(json.dumps({"batch": number, "urls": per_batch, "sites": 100}))
        (path / "harvest.json").write_text(
            json.dumps(
                {
                    "batch": number,
                    "started": began,
                    "finished": began + 3000,
                    "urls": per_batch,
                    "fetched": per_batch,
                    "ok": int(per_batch * 0.9),
                    "bytes": per_batch * 20000,
                    "new_urls": per_batch,
                    "links_found": per_batch * 30,
                    "links_known": per_batch * 25,
                    "sites": 100,
                    "new_sites": 3,
                    "scores": {"pagerank": 1 / 200, "wlrank": 1 / 200},
                    "waits": {"normal": 15, "large_site": 5, "large_site_pages": 100},
                }
            )
        )
    built = time.perf_counter() - start
    managed = run_manager(directory)
    return {"pages": pages, "sites": sites, "links": int(stored), "seconds": built, "manager": managed}


def run_manager(directory: Path, weights: dict | None = None) -> float:
    """One manager run over the collection, as a crawl's collection has had: it stores the link scores its
    weights ask for and their stamp (scores.json), which the report reads instead of computing them again.
    Returns its seconds."""
    settings = default_settings()
    if weights:
        settings["WIRE_SCORE_WEIGHTS"] = {**settings["WIRE_SCORE_WEIGHTS"], **weights}
    start = time.perf_counter()
    with Collection(directory) as collection:
        manage(collection, WireConfig.from_settings(Settings(settings)), NOW)
    return time.perf_counter() - start


def run_report(directory: Path, out: Path) -> None:
    """In this process: the report as ``scrapy report`` makes it; prints each step's cost and the peak RSS."""
    from scrapy.settings import BaseSettings

    from wirescrapy.config import WireConfig
    from wirescrapy.report import build_report
    from wirescrapy.report.data import CrawlData
    from wirescrapy.report.render import write_report

    config = WireConfig.from_settings(BaseSettings())
    start = time.perf_counter()
    with Collection(directory, readonly=True) as collection:
        report = build_report(collection, config)
    write_report(report, out)
    total = time.perf_counter() - start
    with Collection(directory, readonly=True) as collection:
        stored = CrawlData(collection, config).stored_scores
    print(
        json.dumps(
            {
                "costs": report.costs,
                "stored": stored,
                "cpu": report.cpu,
                "total": total,
                "total_cpu": time.process_time(),
                "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--links-per-page", type=float, default=10.0)
    parser.add_argument("--dir", type=Path, help="collection to build or reuse")
    parser.add_argument("--smoke", action="store_true", help="20,000 documents, a fresh collection")
    parser.add_argument(
        "--all-scores",
        action="store_true",
        help="run the manager first with every link score weighed, so that it stores them all",
    )
    parser.add_argument("--run", type=Path, help=argparse.SUPPRESS)  # the child: report this collection
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_report(args.run, args.out)
        return
    pages = 20_000 if args.smoke else args.pages
    directory = args.dir or Path(f"/tmp/wirescrapy-report-bench-{pages}")
    if args.smoke and directory.exists():
        shutil.rmtree(directory)
    if not (directory / "urls.log").exists():
        shutil.rmtree(directory, ignore_errors=True)
        built = build(directory, pages, args.links_per_page)
        print(
            f"built {directory}: {built['pages']:,} documents, {built['sites']:,} sites, "
            f"{built['links']:,} links in {built['seconds']:.1f} s, then a manager run in "
            f"{built['manager']:.1f} s"
        )
    else:
        print(f"reusing {directory}")
    if args.all_scores:
        seconds = run_manager(directory, dict.fromkeys(LINK_SCORES, 1))
        print(f"a manager run weighing every link score: {seconds:.1f} s")
    out = directory.with_name(directory.name + "-out")
    child = run_scrapy(
        "--run", directory.resolve(), "--out", out.resolve(), module="benchmarks.report", timeout=None
    )
    child.check_returncode()
    result = json.loads(child.stdout.strip().splitlines()[-1])
    with Collection(directory, readonly=True) as collection:
        links = collection.links.count_links()
        print(
            f"report of {collection.documents.count:,} documents, {collection.sites.count:,} sites, "
            f"{links:,} links; link scores the manager stored and the report read: "
            f"{', '.join(result['stored']) or 'none'}"
        )
    print(f"  {'step':<16} {'seconds':>8} {'CPU s':>8}")
    for name, seconds in result["costs"].items():
        print(f"  {name:<16} {seconds:8.2f} {result['cpu'][name]:8.2f}")
    print(
        f"  {'total':<16} {result['total']:8.2f} {result['total_cpu']:8.2f}   peak RSS "
        f"{result['peak_rss'] / 2**30:.2f} GiB "
        f"(goal at 10M documents / 100M links: <= 30 s, <= 4 GiB)"
    )
    print(
        f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: seconds above CPU seconds are "
        f"time spent waiting for a core"
    )
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(
        f"  written: {out}/index.html and {len(list((out / 'data').iterdir()))} CSV files, "
        f"{size / 2**20:.1f} MiB"
    )


if __name__ == "__main__":
    main()
