"""WARC benchmark: what archiving costs the harvester, how fast ``scrapy ingest`` gathers, and a batch in two
parts on two Scrapyd nodes against one harvester.

    python -m benchmarks.warc            # full size (a few minutes)
    python -m benchmarks.warc --smoke    # CI: tiny sizes

Everything runs on this machine: the sample web (``wirescrapy.testing.sampleweb``) on 127.0.0.1 and each crawl
in a ``scrapy`` subprocess with ``settings.test``. Every page of the ground truth is seeded and
``scrapy manager`` writes one batch holding them all, so that every harvest below fetches the same pages.
Rates are Scrapy's own figures from each process's stats dump: ``harvester/fetched/page`` over
``elapsed_time_seconds`` (the crawl, without the interpreter's start-up).

1. **WARC on against off** (waits 0): the batch harvested into copies of the collection, alternately without
   and with ``WIRE_WARC_DIR`` (``--repeat`` times each, the best kept), pages/s and the ratio on / off.
2. **Ingest against gathering** (waits 0): the batch harvested detached (``-a warc=OUTDIR``, no collection),
   then ``scrapy ingest OUTDIR`` into a copy of the collection: its pages/s against the local harvest's of
   section 1 (WARC off), which gathers as it fetches.
3. **Two Scrapyd nodes against one harvester** (waits > 0: ``--wait``): ``scrapy manager --parts 2`` and each
   part scheduled on its own local Scrapyd (deployed with ``scrapyd-deploy -a``, the machinery of
   ``wirescrapy.testing.scrapyd``), against ``scrapy crawl harvester`` on the whole batch. Makespan: from the
   access log, the first request's arrival to the last response's end; also each run's wall time from
   scheduling to the last job's end (the nodes' job start-up included). The ratio parts / whole is bounded
   below by politeness: the largest site takes as long wherever it is fetched.

0. **Writing the records** (no crawl): :class:`~wirescrapy.warc.writer.WarcWriter` on pages of real HTML (the
   Apache manual and Python's documentation, where installed: ``apt-get install apache2-doc python3-doc``),
   ms a fetch and bytes, at warcio's own gzip level (9) and at ours (``writer.GZIP_LEVEL``), alternately, the
   best of ``--repeat``. The writer runs in the reactor thread, so this is time the harvest's sites may wait;
   section 1's sample pages are too small to show it.

Nothing here asserts a time: the figures are printed for a person to read.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harvester import dumped_stats
from wirescrapy.manager.batch import site_part
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess


def scrapy(log: Path, *args: str, settings: dict | None = None, timeout: float = 1800) -> dict:
    """Run ``scrapy ARGS`` with the test settings, its log in ``log``; the stats it dumped."""
    with open(log, "w") as out:
        run = run_scrapy(
            *args,
            "-s",
            "LOG_LEVEL=INFO",
            settings=settings,
            env=scrapy_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
    if run.returncode:
        sys.exit(f"scrapy {' '.join(args)} failed: see {log}")
    return dumped_stats(log)


def rate(stats: dict) -> float:
    seconds = stats.get("elapsed_time_seconds", 0.0)
    return stats.get("harvester/fetched/page", 0.0) / seconds if seconds else 0.0


def prepare(web, workdir: Path, name: str, settings: dict) -> Path:
    """A collection with every page of the web seeded and one batch holding them all."""
    collection = workdir / name
    seeds = workdir / f"{name}-seeds.txt"
    seeds.write_text("".join(url + "\n" for url in sorted(web.truth.pages)))
    scrapy(
        workdir / f"{name}-seed.log",
        "seed",
        str(seeds),
        settings={**settings, "WIRE_COLLECTION_DIR": collection},
    )
    scrapy(
        workdir / f"{name}-manager.log",
        "manager",
        *(["--parts", "2"] if name == "parts" else []),
        settings={**settings, "WIRE_COLLECTION_DIR": collection},
    )
    return collection


def archiving(options, workdir: Path) -> None:
    fast = {"WIRE_WAIT_NORMAL": 0, "WIRE_WAIT_LARGE_SITE": 0}
    print(
        f"\n== 1, 2. WARC on / off and ingest: {options.sites} sites x {options.pages} pages, waits 0, "
        f"best of {options.repeat} ==",
        flush=True,
    )
    with SampleWebProcess(
        workdir=workdir / "web",
        sites=options.sites,
        pages_per_site=options.pages,
        seed=options.seed,
        slow_delay=0.05,
        crawl_delay=0,
    ) as web:
        seeded = prepare(web, workdir, "seeded", fast)
        batch = seeded / "batches" / "000001"
        best = {"off": (0.0, {}), "on": (0.0, {})}
        for attempt in range(options.repeat):
            for mode in ("off", "on"):
                collection = workdir / f"{mode}-{attempt}"
                shutil.copytree(seeded, collection)
                settings = {**fast, "WIRE_COLLECTION_DIR": collection}
                if mode == "on":
                    settings["WIRE_WARC_DIR"] = workdir / f"warc-{attempt}"
                stats = scrapy(
                    workdir / f"{mode}-{attempt}.log",
                    "crawl",
                    "harvester",
                    "-a",
                    f"batch={collection / 'batches' / '000001'}",
                    settings=settings,
                )
                if rate(stats) > best[mode][0]:
                    best[mode] = (rate(stats), stats)
        off, on = best["off"][0], best["on"][0]
        warc_bytes = sum(f.stat().st_size for f in workdir.glob("warc-0/*.warc.gz"))
        print(
            f"harvester, WARC off: {off:8.1f} pages/s "
            f"({best['off'][1].get('harvester/fetched/page', 0):.0f} pages "
            f"in {best['off'][1].get('elapsed_time_seconds', 0):.2f} s)"
        )
        print(
            f"harvester, WARC on:  {on:8.1f} pages/s "
            f"({best['on'][1].get('harvester/fetched/page', 0):.0f} pages "
            f"in {best['on'][1].get('elapsed_time_seconds', 0):.2f} s; {warc_bytes / 1e6:.1f} MB of WARC)"
        )
        print(f"ratio on / off: {on / off if off else 0:.3f}  (goal >= 0.9)")

        outdir = workdir / "detached-warc"
        detached = scrapy(
            workdir / "detached.log",
            "crawl",
            "harvester",
            "-a",
            f"batch={batch}",
            "-a",
            f"warc={outdir}",
            settings={**fast, "WIRE_COLLECTION_DIR": workdir / "none"},
        )
        ingest_into = shutil.copytree(seeded, workdir / "ingested")
        ingest = scrapy(
            workdir / "ingest.log", "ingest", str(outdir), settings={"WIRE_COLLECTION_DIR": ingest_into}
        )
        detached_rate = detached.get("warc/fetched/page", 0) / max(
            detached.get("elapsed_time_seconds", 0), 1e-9
        )
        print(
            f"detached harvest: {detached_rate:8.1f} pages/s into WARC; scrapy ingest: {rate(ingest):8.1f} "
            f"pages/s ({ingest.get('harvester/fetched/page', 0):.0f} pages in "
            f"{ingest.get('elapsed_time_seconds', 0):.2f} s)"
        )
        print(
            f"ratio ingest / local gathering (the harvest with WARC off): "
            f"{rate(ingest) / off if off else 0:.3f}  (goal >= 1.0)",
            flush=True,
        )


def nodes(options, workdir: Path) -> None:
    from wirescrapy.testing.scrapyd import (
        JOB_SETTINGS,
        PROJECT,
        Scrapyd,
        clean_env,
        copy_project,
        project_url,
        script,
    )

    wait = {"WIRE_WAIT_NORMAL": options.wait, "WIRE_WAIT_LARGE_SITE": options.wait}
    print(
        f"\n== 3. Two Scrapyd nodes, a part each, against one harvester: {options.node_sites} sites x "
        f"{options.node_pages} pages, WIRE_WAIT_NORMAL={options.wait:g} ==",
        flush=True,
    )
    home = workdir / "home"
    home.mkdir()
    env = clean_env(home)
    servers = []
    try:
        for n in range(2):
            (workdir / f"node-{n}").mkdir()
            servers.append(Scrapyd(workdir / f"node-{n}", env).start())
        (home / ".scrapy.cfg").write_text(
            "".join(f"[deploy:node-{n}]\nurl = {project_url(s.port)}\n\n" for n, s in enumerate(servers))
        )
        project = copy_project(workdir / "project")
        subprocess.run(
            [script("scrapyd-deploy"), "-a"],
            cwd=project,
            env=env,
            check=True,
            capture_output=True,
            timeout=300,
        )
        with SampleWebProcess(
            workdir=workdir / "web-nodes",
            sites=options.node_sites,
            pages_per_site=options.node_pages,
            seed=options.seed,
            slow_delay=0.05,
            crawl_delay=options.wait,
        ) as web:
            whole = prepare(web, workdir, "whole", wait)
            start = len(web.access_log())
            began = time.monotonic()
            scrapy(
                workdir / "whole.log",
                "crawl",
                "harvester",
                "-a",
                f"batch={whole / 'batches' / '000001'}",
                settings={**wait, "WIRE_COLLECTION_DIR": whole},
            )
            whole_wall = time.monotonic() - began
            whole_records = web.access_log()[start:]

            parts = prepare(web, workdir, "parts", wait)
            settings = [("setting", f"{name}={value}") for name, value in {**JOB_SETTINGS, **wait}.items()]
            start = len(web.access_log())
            began = time.monotonic()
            jobs = []
            for n, server in enumerate(servers):
                answer = server.post(
                    "schedule",
                    [
                        ("project", PROJECT),
                        ("spider", "harvester"),
                        ("batch", str(parts / "batches" / "000001" / f"part-{n}")),
                        ("warc", str(workdir / f"node-warc-{n}")),
                        *settings,
                    ],
                )
                jobs.append((server, answer["jobid"]))
            for server, job in jobs:
                server.wait(job, timeout=1800)
            parts_wall = time.monotonic() - began
            parts_records = web.access_log()[start:]
            port = web.port
    finally:
        for server in servers:
            server.stop()

    def makespan(records):
        return max(r["end"] for r in records) - min(r["start"] for r in records) if records else 0.0

    pages = [
        sum(1 for r in records if r["path"] != "/robots.txt") for records in (whole_records, parts_records)
    ]
    print(
        f"one harvester, whole batch: makespan {makespan(whole_records):7.2f} s, wall {whole_wall:6.2f} s, "
        f"{pages[0]} accesses"
    )
    print(
        f"two nodes, a part each:    makespan {makespan(parts_records):7.2f} s, wall {parts_wall:6.2f} s, "
        f"{pages[1]} accesses"
    )
    # each node's own span (its sites are those of its part), apart from when Scrapyd happened to start
    # its job
    by_node = [
        [r for r in parts_records if site_part(f"http://{r['host']}:{port}", 2) == n] for n in range(2)
    ]
    spans = [makespan(records) for records in by_node]
    if all(by_node):
        skew = (
            "start skew "
            f"{abs(min(r['start'] for r in by_node[0]) - min(r['start'] for r in by_node[1])):.2f} s"
        )
    else:  # the sites' names and this run's port hashed every site into one part: legitimate, nothing to skew
        skew = f"node {by_node.index([])} had no site in its part this run"
    print(f"  each node's own span: {', '.join(f'{span:.2f} s' for span in spans)}; {skew}")
    print(
        f"makespan ratio parts / whole: {makespan(parts_records) / max(makespan(whole_records), 1e-9):.3f} "
        f"(the slower node's own span / whole: {max(spans) / max(makespan(whole_records), 1e-9):.3f}); "
        f"wall ratio {parts_wall / whole_wall:.3f}",
        flush=True,
    )


REAL_HTML = ("/usr/share/doc/apache2-doc/manual/en", "/usr/share/doc/python3/html/library")


def records(options: argparse.Namespace, workdir: Path) -> None:
    from wirescrapy.items import Exchange, Fetch, Kind
    from wirescrapy.warc import writer as warc_writer

    files = sorted(path for root in REAL_HTML for path in Path(root).rglob("*.html"))[: options.record_pages]
    if not files:
        print(
            f"\n== 0. Writing the records: skipped, no real HTML in {', '.join(REAL_HTML)} (apt-get install "
            "apache2-doc python3-doc) ==",
            flush=True,
        )
        return
    bodies = [path.read_bytes() for path in files]
    fetches = [
        Fetch(
            Kind.PAGE,
            f"http://site.wire.test/{i}.html",
            i + 1,
            1,
            1,
            started=1.7e9,
            ended=1.7e9 + 0.1,
            status=200,
            mime="text/html",
            content_type="text/html; charset=utf-8",
            body=body,
            raw_length=len(body),
            ip="127.0.0.1",
            exchange=Exchange(
                b"GET",
                [(b"Host", b"site.wire.test")],
                "HTTP/1.1",
                200,
                [
                    (b"Content-Type", b"text/html; charset=utf-8"),
                    (b"Content-Length", str(len(body)).encode()),
                ],
                body,
            ),
        )
        for i, body in enumerate(bodies)
    ]
    print(
        f"\n== 0. Writing the records: {len(fetches)} pages of real HTML, "
        f"{sum(map(len, bodies)) / len(bodies) / 1000:.0f} kB on average, best of {options.repeat} ==",
        flush=True,
    )
    ours = warc_writer.GZIP_LEVEL
    best: dict[int, tuple[float, int]] = {}
    try:
        for _ in range(options.repeat):
            for level in (9, ours):
                warc_writer.GZIP_LEVEL = level
                directory = workdir / f"records-{level}"
                shutil.rmtree(directory, ignore_errors=True)
                writer = warc_writer.WarcWriter(directory, 10**12, {"batch": 1})
                started = time.perf_counter()
                for fetch in fetches:
                    writer.write(fetch)
                seconds = time.perf_counter() - started
                writer.close()
                if seconds < best.get(level, (float("inf"), 0))[0]:
                    best[level] = (seconds, writer.bytes)
    finally:
        warc_writer.GZIP_LEVEL = ours
    for level, (seconds, size) in best.items():
        label = "warcio's level" if level == 9 else "our level (GZIP_LEVEL)"
        print(f"{label:24s} {level}: {seconds / len(fetches) * 1000:6.3f} ms a fetch, {size / 1e6:7.2f} MB")
    (base, base_size), (mine, size) = best[9], best[ours]
    print(f"ratio ours / warcio's: time {mine / base:.3f}, bytes {size / base_size:.3f}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes for CI")
    parser.add_argument("--only", choices=("records", "archiving", "nodes"), help="run this section only")
    parser.add_argument("--record-pages", type=int, default=400, help="pages written in section 0")
    parser.add_argument("--sites", type=int, default=50)
    parser.add_argument("--pages", type=int, default=100, help="pages per site (sections 1, 2)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--node-sites", type=int, default=20)
    parser.add_argument("--node-pages", type=int, default=20, help="pages per site (section 3)")
    parser.add_argument("--wait", type=float, default=0.2, help="WIRE_WAIT_NORMAL of section 3")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", help="keep everything here (default: a temporary directory)")
    options = parser.parse_args(argv)
    if options.smoke:
        options.sites, options.pages, options.repeat = 6, 15, 1
        options.node_sites, options.node_pages, options.wait = 4, 6, 0.1
        options.record_pages = 40
    workdir = Path(options.workdir or tempfile.mkdtemp(prefix="wire-warc-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"WARC benchmark{' (smoke)' if options.smoke else ''}: work directory {workdir}", flush=True)
    try:
        if options.only in (None, "records"):
            records(options, workdir)
        if options.only in (None, "archiving"):
            archiving(options, workdir)
        if options.only in (None, "nodes"):
            nodes(options, workdir)
    finally:
        if not options.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
