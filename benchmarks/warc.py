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
   and with ``WIRE_WARC_DIR`` (``--repeat`` pairs), pages/s and the ratio on / off of every pair, of the best
   of each and the pairs' median. Also the harvester's CPU a page, the figure a loaded machine moves least,
   with the WARC writer's process (which the harvester reaps, so it counts) and without it, and the load
   average.
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
   section 1's sample pages are too small to show it. Then the CDXJ index of the same records: the lines the
   writer makes as it writes, against ``cdxj-indexer`` reading the file again (the time a 1,000 records).

4. **A recrawl of unchanged pages** (waits 0): a batch of every page harvested with ``WIRE_WARC_DIR``, then
   a second batch revisiting them all, archived into the same directory. Printed: the WARC bytes of
   the second crawl against the first's (the issue's goal: at most 0.1), and the revisit records by profile
   (server-not-modified for the 304s, identical-payload-digest for a payload the directory holds). On the
   sample web, and on Python's documentation (``python3-doc``, real pages, where installed) served by nginx,
   which answers 304s, and by Python's file server with no validators, which answers every revisit whole.

Nothing here asserts a time: the figures are printed for a person to read.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from benchmarks.harvester import dumped_stats
from wirescrapy.manager.batch import site_part
from wirescrapy.testing import nginx as nginx_server
from wirescrapy.testing.process import measure, run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess

DOCS = Path("/usr/share/doc/python3/html")
# Every page due again at the next cycle, changed or not.
REVISIT_ALL = {
    "WIRE_MINPERIOD_SUCCESSFUL_OK": 0,
    "WIRE_MINPERIOD_SUCCESSFUL_NOT_OK": 0,
    "WIRE_MINPERIOD_UNSUCCESSFUL": 0,
}


def scrapy(log: Path, *args: str, settings: dict | None = None, timeout: float = 1800) -> dict:
    """Run ``scrapy ARGS`` with the test settings, its log in ``log``; the stats it dumped, and ``cpu``: the
    process's own CPU seconds (its parse workers' not counted)."""
    with open(log, "w") as out:
        process = run_scrapy(
            *args,
            "-s",
            "LOG_LEVEL=INFO",
            settings=settings,
            env=scrapy_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            wait=False,
        )
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        try:
            usage = measure(process)
        finally:
            timer.cancel()
    if usage.returncode:
        sys.exit(f"scrapy {' '.join(args)} failed: see {log}")
    return {**dumped_stats(log), "cpu": usage.cpu}


def per_page(stats: dict, name: str) -> float:
    """The stat ``name`` (seconds) a page fetched, in ms."""
    return stats.get(name, 0.0) / max(stats.get("harvester/fetched/page", 0.0), 1.0) * 1000


def own_cpu(stats: dict) -> float:
    """The harvester process's CPU a page without its WARC writer's process (which it reaps), in ms."""
    return per_page(stats, "cpu") - per_page(stats, "warc/process_cpu")


def load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


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


FAST = {"WIRE_WAIT_NORMAL": 0, "WIRE_WAIT_LARGE_SITE": 0}  # waits 0: the harvester's own speed


def sample_web(options, directory: Path) -> SampleWebProcess:
    """The sample web of ``--sites`` x ``--pages``, quick to answer, no Crawl-delay."""
    return SampleWebProcess(
        workdir=directory,
        sites=options.sites,
        pages_per_site=options.pages,
        seed=options.seed,
        slow_delay=0.05,
        crawl_delay=0,
    )


def archiving(options, workdir: Path) -> None:
    print(
        f"\n== 1, 2. WARC on / off and ingest: {options.sites} sites x {options.pages} pages, waits 0, "
        f"best of {options.repeat}; load average {load()} ==",
        flush=True,
    )
    with sample_web(options, workdir / "web") as web:
        seeded = prepare(web, workdir, "seeded", FAST)
        batch = seeded / "batches" / "000001"
        best = {"off": (0.0, {}), "on": (0.0, {})}
        runs: dict[str, list[dict]] = {"off": [], "on": []}
        for attempt in range(options.repeat):
            for mode in ("off", "on"):
                collection = workdir / f"{mode}-{attempt}"
                shutil.copytree(seeded, collection)
                settings = {**FAST, "WIRE_COLLECTION_DIR": collection}
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
                runs[mode].append(stats)
                if rate(stats) > best[mode][0]:
                    best[mode] = (rate(stats), stats)
        off, on = best["off"][0], best["on"][0]
        warc_bytes = sum(f.stat().st_size for f in workdir.glob("warc-0/*.warc.gz"))
        # Each pair ran one after the other: its ratio is the figure least moved by the machine's other jobs.
        for attempt, (stats_off, stats_on) in enumerate(zip(runs["off"], runs["on"], strict=True)):
            print(
                f"pair {attempt + 1}: off {rate(stats_off):7.1f} pages/s, on {rate(stats_on):7.1f} pages/s, "
                f"ratio {rate(stats_on) / rate(stats_off) if rate(stats_off) else 0:.3f}; "
                f"CPU a page off {per_page(stats_off, 'cpu'):.3f} ms, on {per_page(stats_on, 'cpu'):.3f} ms, "
                f"the WARC writer's process {per_page(stats_on, 'warc/process_cpu'):.3f} ms of it: the "
                f"harvester's own {own_cpu(stats_on):.3f} ms "
                f"({own_cpu(stats_on) / max(per_page(stats_off, 'cpu'), 1e-9):.3f} of off)",
                flush=True,
            )
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
        ratios = sorted(rate(b) / rate(a) for a, b in zip(runs["off"], runs["on"], strict=True) if rate(a))
        print(
            f"ratio on / off: best of each {on / off if off else 0:.3f}, pairs' median "
            f"{ratios[len(ratios) // 2] if ratios else 0:.3f}  (goal >= 0.9)"
        )
        # CPU time of the harvester's own process, its parse workers' left out but the WARC writer's process
        # counted (the harvester reaps it): what archiving adds, which a loaded machine's wall clock hides.
        cpu = {mode: min(per_page(stats, "cpu") for stats in runs[mode]) for mode in ("off", "on")}
        own = min(own_cpu(stats) for stats in runs["on"])
        print(
            f"harvester CPU a page, WARC off: {cpu['off']:.3f} ms, on: {cpu['on']:.3f} ms "
            f"(+{cpu['on'] - cpu['off']:.3f} ms, ratio {cpu['on'] / cpu['off']:.3f}); on, without the WARC "
            f"writer's process: {own:.3f} ms (ratio {own / cpu['off']:.3f}); the least of {options.repeat}; "
            f"load average {load()}",
            flush=True,
        )

        outdir = workdir / "detached-warc"
        detached = scrapy(
            workdir / "detached.log",
            "crawl",
            "harvester",
            "-a",
            f"batch={batch}",
            "-a",
            f"warc={outdir}",
            settings={**FAST, "WIRE_COLLECTION_DIR": workdir / "none"},
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


def recrawl(options, workdir: Path) -> None:
    print(
        f"\n== 4. A recrawl of unchanged pages into the same WARC directory: {options.sites} sites x "
        f"{options.pages} pages; {options.docs_pages} pages of Python's documentation ==",
        flush=True,
    )
    with sample_web(options, workdir / "recrawl-web") as web:
        recrawl_ratio("sample web", workdir / "recrawl-sample", sorted(web.truth.pages), FAST)
    if nginx_server.binary() is None or not DOCS.is_dir():
        print(
            f"Python's documentation: skipped ({'nginx' if nginx_server.binary() is None else DOCS} missing)"
        )
        return
    with nginx_server.Nginx(
        [nginx_server.Server("docs.wire.test", "127.0.0.1", str(DOCS.resolve()))], workdir / "recrawl-nginx"
    ) as server:
        pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.html"))[: options.docs_pages]
        urls = [f"http://docs.wire.test:{server.port}/{page}" for page in pages]
        limits = {
            **FAST,
            "WIRE_MAX_FILE_SIZE": 2_000_000,
            "WIRE_MAX_STORED_SIZE": 2_000_000,
            "WIRE_ACCEPT_DOMAIN_SUFFIXES": ".wire.test",  # not its links to python.org
        }
        recrawl_ratio("Python's documentation", workdir / "recrawl-docs", urls, limits)
    # The same pages from a server that ignores validators: every revisit is a 200 with the same payload.
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_NoValidators, directory=str(DOCS)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        urls = [f"http://docs.wire.test:{server.server_port}/{page}" for page in pages]
        recrawl_ratio("the same, no validators", workdir / "recrawl-plain", urls, limits)
    finally:
        server.shutdown()
        server.server_close()


class _NoValidators(SimpleHTTPRequestHandler):
    """Python's file server, answering every GET whole: no Last-Modified, so no conditional request."""

    def end_headers(self):
        self._headers_buffer = [h for h in self._headers_buffer if not h.lower().startswith(b"last-modified")]
        super().end_headers()

    def log_message(self, *args):
        pass


def recrawl_ratio(name: str, directory: Path, urls: list[str], settings: dict) -> None:
    """Seed ``urls`` and harvest one batch of them all, then a second batch revisiting them all, both archived
    into one directory. The links found are refused (``WIRE_MAX_URLS_PER_SITE``: the seeds fill it), so that
    both batches fetch the same pages."""
    directory.mkdir()
    collection, archive, seeds = directory / "collection", directory / "warc", directory / "seeds.txt"
    seeds.write_text("".join(url + "\n" for url in urls))
    per_site: dict[str, int] = {}
    for url in urls:
        per_site[url.split("/")[2]] = per_site.get(url.split("/")[2], 0) + 1
    settings = {
        **settings,
        "WIRE_COLLECTION_DIR": collection,
        "WIRE_WARC_DIR": archive,
        "WIRE_MAX_URLS_PER_SITE": max(per_site.values()) + 1,  # and robots.txt
    }
    scrapy(directory / "seed.log", "seed", str(seeds), settings=settings)
    crawls = []
    for n, extra in enumerate(({}, REVISIT_ALL)):
        scrapy(directory / f"manager-{n}.log", "manager", settings={**settings, **extra})
        batch = max(p for p in (collection / "batches").iterdir() if p.name.isdigit())
        before = set(archive.glob("*.warc.gz"))
        stats = scrapy(
            directory / f"crawl-{n}.log", "crawl", "harvester", "-a", f"batch={batch}", settings=settings
        )
        files = sorted(set(archive.glob("*.warc.gz")) - before)
        crawls.append((stats, sum(f.stat().st_size for f in files), files))
    (_, first_bytes, _), (second, second_bytes, recrawled) = crawls
    fetched = [stats.get("warc/fetched/page", 0) for stats, _, _ in crawls]
    first_page = first_bytes / max(fetched[0], 1)
    print(
        f"{name}: first crawl {fetched[0]:.0f} pages, {first_bytes / 1e6:.3f} MB of WARC "
        f"({first_bytes / max(fetched[0], 1) / 1000:.1f} kB a page); recrawl {fetched[1]:.0f} pages, "
        f"{second_bytes / 1e6:.3f} MB ({second_bytes / max(fetched[1], 1) / 1000:.1f} kB a page), "
        f"{second.get('warc/revisits/server-not-modified', 0):.0f} server-not-modified and "
        f"{second.get('warc/revisits/identical-payload-digest', 0):.0f} identical-payload-digest revisits"
    )
    print(
        f"{name}: recrawl bytes / first crawl's: {second_bytes / first_bytes if first_bytes else 0:.3f} "
        "(goal <= 0.1)",
        flush=True,
    )
    kinds, floor = breakdown(recrawled)
    print(
        f"{name}: the recrawl by record, gzip member bytes: "
        + ", ".join(f"{kind} {count} x {size / count:.0f}" for kind, (count, size) in sorted(kinds.items()))
    )
    if floor:
        print(
            f"{name}: a revisit cut to WARC/1.1's mandatory fields, its profile and WARC-Refers-To-Date, "
            f"gzipped: {sum(floor) / len(floor):.0f} bytes, {sum(floor) / len(floor) / first_page:.3f} of "
            "the first crawl's bytes a page; the floor of one record a visit",
            flush=True,
        )


# What no revisit can go without: the fields WARC/1.1 requires of every record, its profile and the original's
# date. No HTTP headers, no digest and no fields of ours, which pywb (an identical payload's digest and URI)
# and ``scrapy ingest`` need: a floor below what any useful revisit weighs.
FLOOR_FIELDS = (
    b"WARC-Type",
    b"WARC-Record-ID",
    b"WARC-Date",
    b"WARC-Target-URI",
    b"WARC-Profile",
    b"WARC-Refers-To-Date",
)


def breakdown(files: list[Path]) -> tuple[dict[str, tuple[int, int]], list[int]]:
    """The gzip members of ``files`` by record type (and revisit profile): their count and bytes; and the
    size of each revisit cut to ``FLOOR_FIELDS``, gzipped as the writer does."""
    from wirescrapy.warc.writer import GZIP_LEVEL

    kinds: dict[str, tuple[int, int]] = {}
    floor = []
    for file in files:
        data = file.read_bytes()
        while data:
            inflate = zlib.decompressobj(zlib.MAX_WBITS + 16)
            record = inflate.decompress(data)
            size = len(data) - len(inflate.unused_data)
            data = inflate.unused_data
            head = record.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
            fields = dict(line.split(b": ", 1) for line in head[1:] if b": " in line)
            kind = fields.get(b"WARC-Type", b"?").decode()
            if kind == "revisit":
                kind += " " + fields.get(b"WARC-Profile", b"").decode().rsplit("/", 1)[-1]
                kept = [head[0]] + [b"%s: %s" % (n, fields[n]) for n in FLOOR_FIELDS if n in fields]
                minimal = b"\r\n".join([*kept, b"Content-Length: 0"]) + b"\r\n\r\n\r\n\r\n"
                floor.append(len(zlib.compress(minimal, GZIP_LEVEL, wbits=zlib.MAX_WBITS + 16)))
            count, total = kinds.get(kind, (0, 0))
            kinds[kind] = (count + 1, total + size)
    return kinds, floor


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
    indexing(fetches, workdir, options.repeat)


def indexing(fetches: list, workdir: Path, repeat: int) -> None:
    """The CDXJ index: the writer's lines, made as it writes, against cdxj-indexer reading the file again."""
    from wirescrapy.warc import index as warc_index
    from wirescrapy.warc import writer as warc_writer

    made = warc_index.cdxj_line
    spent = [0.0]

    def timed(*args):
        started = time.perf_counter()
        line = made(*args)
        spent[0] += time.perf_counter() - started
        return line

    inline, again = float("inf"), float("inf")
    for _ in range(repeat):
        directory = workdir / "records-index"
        shutil.rmtree(directory, ignore_errors=True)
        writer = warc_writer.WarcWriter(directory, 10**12, {"batch": 1})
        spent[0] = 0.0
        warc_index.cdxj_line = timed
        try:
            for fetch in fetches:
                writer.write(fetch)
        finally:
            warc_index.cdxj_line = made
        writer.close()
        lines = sum(len(warc_index.index_path(f).read_text().splitlines()) for f in writer.files)
        started = time.perf_counter()
        for file in writer.files:
            warc_index.index_file(file)
        again = min(again, time.perf_counter() - started)
        inline = min(inline, spent[0])
    per_thousand = 1000 * 1000 / lines  # ms per 1,000 records of seconds for all
    print(
        f"CDXJ index of {lines} records: as written {inline * per_thousand:.1f} ms per 1,000 records; "
        f"cdxj-indexer reading the file again {again * per_thousand:.1f} ms (ratio {inline / again:.3f})",
        flush=True,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes for CI")
    parser.add_argument(
        "--only", choices=("records", "archiving", "nodes", "recrawl"), help="run this section only"
    )
    parser.add_argument("--record-pages", type=int, default=400, help="pages written in section 0")
    parser.add_argument("--sites", type=int, default=50)
    parser.add_argument("--pages", type=int, default=100, help="pages per site (sections 1, 2)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--node-sites", type=int, default=20)
    parser.add_argument("--node-pages", type=int, default=20, help="pages per site (section 3)")
    parser.add_argument("--wait", type=float, default=0.2, help="WIRE_WAIT_NORMAL of section 3")
    parser.add_argument("--docs-pages", type=int, default=300, help="most pages of section 4's documentation")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", help="keep everything here (default: a temporary directory)")
    options = parser.parse_args(argv)
    if options.smoke:
        options.sites, options.pages, options.repeat = 6, 15, 1
        options.node_sites, options.node_pages, options.wait = 4, 6, 0.1
        options.record_pages, options.docs_pages = 40, 30
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
        if options.only in (None, "recrawl"):
            recrawl(options, workdir)
    finally:
        if not options.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
