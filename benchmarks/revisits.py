"""Conditional revisits, measured from the servers' side: what a revisit cycle costs when every page is
unchanged.

    python -m benchmarks.revisits [--sites 6] [--pages 40] [--docs-pages 200] [--no-nginx]

* **sample web**: ``scrapy crawl harvester`` crawls the sample web until nothing is left, then one more cycle
  with every page due again revisits it. Printed: the pages revisited, how many were answered 304, and the
  body bytes the server sent for them on the first visit (the baseline, same run) against the revisit.
* **nginx**: the same over Debian's Python documentation (``python3-doc``, ~530 real pages) served by a real
  nginx (``wirescrapy.testing.nginx``), at most ``--docs-pages`` pages of it (``WIRE_MAX_URLS_PER_SITE``).
  nginx answers 304 only to the exact Last-Modified string or the ETag it sent, and the harvester sends
  them back.

Figures are ratios within one run; nothing is timed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from wirescrapy.testing import nginx
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess

DOCS = Path("/usr/share/doc/python3/html")
FAST = {"WIRE_WAIT_NORMAL": 0, "WIRE_WAIT_LARGE_SITE": 0, "LOG_LEVEL": "WARNING"}
REVISIT = {
    "WIRE_MINPERIOD_SUCCESSFUL_OK": 0,
    "WIRE_MINPERIOD_SUCCESSFUL_NOT_OK": 0,
    "WIRE_MINPERIOD_UNSUCCESSFUL": 0,
}


def harvest(collection: Path, *args: str, settings: dict) -> None:
    settings = {"WIRE_COLLECTION_DIR": collection, **FAST, **settings}
    run = run_scrapy("crawl", "harvester", *args, settings=settings, env=scrapy_env(), timeout=None)
    if run.returncode != 0:
        sys.exit(f"harvest failed:\n{run.stderr[-3000:]}")


def last_harvest(collection: Path) -> dict:
    batches = sorted(p for p in (collection / "batches").iterdir() if p.name.isdigit())
    return json.loads((batches[-1] / "harvest.json").read_text())


def report(name: str, crawl: list[dict], revisit: list[dict], key, figures: dict) -> None:
    """Print the revisit of the pages fetched whole (200) in ``crawl``: 304s and bytes against their first
    visit. ``key``: a log record's page."""
    first = {key(r): r["bytes"] for r in crawl if r["status"] == 200 and not key(r).endswith("/robots.txt")}
    again = [r for r in revisit if key(r) in first]
    not_modified = [r for r in again if r["status"] == 304]
    before = sum(first[key(r)] for r in again)
    after = sum(r["bytes"] for r in again)
    print(
        f"{name}: {len(again):,} pages revisited, {len(not_modified):,} answered 304; body bytes "
        f"{before:,} on the first visit, {after:,} on the revisit ({1 - after / before:.1%} saved); "
        f"the harvester counted {figures.get('not_modified', 0):,} not modified, {figures['bytes']:,} bytes"
    )


def sample_web(workdir: Path, sites: int, pages: int) -> None:
    with SampleWebProcess(workdir=workdir / "web", sites=sites, pages_per_site=pages) as web:
        seeds = workdir / "seeds.txt"
        seeds.write_text("\n".join(web.seeds) + "\n")
        collection = workdir / "sample"
        harvest(collection, "-a", f"seeds={seeds}", "-a", "cycles=60", settings={})
        crawled = len(web.access_log())
        harvest(collection, settings=REVISIT)
        log = web.access_log()
    report(
        "sample web", log[:crawled], log[crawled:], lambda r: r["host"] + r["path"], last_harvest(collection)
    )


def nginx_docs(workdir: Path, pages: int) -> None:
    if nginx.binary() is None or not DOCS.is_dir():
        print(f"nginx: skipped ({'nginx' if nginx.binary() is None else DOCS} is not installed)")
        return
    with nginx.Nginx(
        [nginx.Server("docs.wire.test", "127.0.0.1", str(DOCS.resolve()))], workdir / "nginx"
    ) as server:
        seeds = workdir / "docs-seeds.txt"
        seeds.write_text(f"http://docs.wire.test:{server.port}/index.html\n")
        collection = workdir / "docs-collection"
        limits = {
            "WIRE_MAX_URLS_PER_SITE": pages,
            "WIRE_MAX_FILE_SIZE": 2_000_000,
            "WIRE_MAX_STORED_SIZE": 2_000_000,
        }
        harvest(collection, "-a", f"seeds={seeds}", "-a", "cycles=30", settings=limits)
        crawled = len(nginx.read_log(server.access_log))
        harvest(collection, settings={**limits, **REVISIT})
        log = [asdict(r) for r in nginx.read_log(server.access_log)]
    report("nginx (Python docs)", log[:crawled], log[crawled:], lambda r: r["uri"], last_harvest(collection))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=6, help="sample web sites")
    parser.add_argument("--pages", type=int, default=40, help="sample web pages per site")
    parser.add_argument("--docs-pages", type=int, default=200, help="most Python documentation pages crawled")
    parser.add_argument("--no-nginx", action="store_true", help="only the sample web")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wire-revisits-") as workdir:
        sample_web(Path(workdir), args.sites, args.pages)
        if not args.no_nginx:
            nginx_docs(Path(workdir), args.docs_pages)


if __name__ == "__main__":
    main()
