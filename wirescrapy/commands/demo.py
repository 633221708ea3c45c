"""``scrapy demo``: the offline demonstration on the sample web, with nothing but this machine.

It starts the sample web (``wirescrapy.testing.sampleweb``: several generated sites on 127.0.0.1 whose host
names ``*.wire.test`` reach loopback through ``WIRE_DNS_HOSTS``), seeds a collection with its home pages and
runs WIRE's cycle — manager, harvester, gatherer — until the manager has nothing left to fetch (or
``--cycles``), with the test settings' short waits (0.2 s between accesses to a site, 0.05 s for large sites).
Then it prints each batch's harvest and what the collection holds, writes the report of its crawl (``scrapy
report``) and prints its path.

Each run starts its own sample web, so a second demo into the same collection would mix two webs: the
demo's directory is its own, and a previous demo's collection there is removed first (saying so), unless
``--keep`` asks to add to it. A directory holding anything else is refused: the demo never touches it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from wirescrapy.collection import Collection
from wirescrapy.commands.base import InputError, WireCommand
from wirescrapy.commands.report import make_report
from wirescrapy.harvester.session import HARVEST_FILE
from wirescrapy.manager.batch import batch_numbers, read_batch
from wirescrapy.seeder.rules import SeederRules
from wirescrapy.seeder.seedfile import seed

DEMO_CRAWL_DELAY = 0.5  # site1's robots.txt Crawl-delay, seconds (the sample web's default is 1)
MIN_PAGES = 4  # the sample web's pages 1..3 of each site are its redirect, copy and mirror targets


class Command(WireCommand, ScrapyCommand):
    def syntax(self):
        return "[options]"

    def short_desc(self):
        return "Crawl the built-in sample web on loopback into ./demo/collection and report on it"

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument(
            "--dir", default="demo/collection", help="collection directory (default: %(default)s)"
        )
        parser.add_argument(
            "--sites", type=int, default=6, help="sites in the sample web (default: %(default)s)"
        )
        parser.add_argument(
            "--pages", type=int, default=40, help="pages per site, at least 4 (default: %(default)s)"
        )
        # No colon in a help text: Scrapy's help formatter takes a line ending in one for a heading.
        parser.add_argument(
            "--cycles",
            type=int,
            default=50,
            help="at most this many manager + harvester cycles (default %(default)s)",
        )
        parser.add_argument(
            "--report",
            default="",
            metavar="DIR",
            help="where to write the crawl's report (default: report/ beside --dir's collection/, "
            "else <dir>-report)",
        )
        parser.add_argument(
            "--keep",
            action="store_true",
            help="add to a previous demo's collection in --dir; without it the demo starts "
            "clean and removes it (a directory holding anything else is refused)",
        )

    def run(self, args, opts):
        # The demo talks to its own server on loopback only: allow loopback (WIRE refuses it by default). Its
        # politeness is by host name (WIRE_POLITENESS_GROUP): every sample site is on 127.0.0.1, which by
        # address would be one server, its sites fetched one at a time.
        self.settings.setmodule("settings.test", priority="project")
        self.settings.set("WIRE_COLLECTION_DIR", opts.dir, priority="cmdline")
        if args:
            raise UsageError("no arguments expected")
        if opts.cycles < 1:
            raise InputError("--cycles must be >= 1")
        if opts.sites < 1:
            raise InputError("--sites must be >= 1")
        if opts.pages < MIN_PAGES:
            raise InputError(f"--pages must be >= {MIN_PAGES}")
        # Imported here, not at every command's start (see commands/report.py).
        from wirescrapy.testing.sampleweb import SampleWebProcess

        config = self.wire_config()
        self._start(Path(opts.dir), opts.keep, config)
        workdir = Path(tempfile.mkdtemp(prefix="wirescrapy-demo-"))
        with SampleWebProcess(
            workdir=workdir, sites=opts.sites, pages_per_site=opts.pages, crawl_delay=DEMO_CRAWL_DELAY
        ) as web:
            print(
                f"sample web: {len(web.hosts)} sites on http://127.0.0.1:{web.port}/ "
                f"({len(web.truth.unique_pages)} distinct pages reachable from the seeds)"
            )
            with self.open_collection(config) as collection:
                report = seed(collection, web.seeds, add_root=config.add_root, rules=SeederRules(config))
                print(f"seeded {report.added} start URLs ({report.known} already known)")
            print(
                f"harvesting (up to {opts.cycles} cycles; waits {config.wait_normal} s / "
                f"{config.wait_large_site} s per site)...",
                flush=True,
            )
            self.crawl("harvester", cycles=opts.cycles)
        with Collection.from_config(config, readonly=True) as collection:
            print_batches(collection.dir / "batches")
            print_summary(collection)
        index = make_report(self, config, opts.report or report_dir(Path(opts.dir)))
        print(f"\nreport: {index.resolve()}")

    def _start(self, directory: Path, keep: bool, config) -> None:
        held = previous_demo(directory)
        if held is False:
            raise InputError(
                f"--dir {directory} holds something other than a demo's collection; "
                "give the demo a new or empty directory"
            )
        if held and keep:
            print(f"adding to the previous demo's collection in {directory} (--keep)")
        elif held:
            with self.open_collection(config):  # not while another demo writes it: its lock says so
                pass
            shutil.rmtree(directory)
            print(f"removed the previous demo's collection in {directory} (--keep adds to it instead)")


def report_dir(collection: Path) -> Path:
    """Where the demo writes its report: ``demo/report`` beside ``demo/collection``, else ``<dir>-report``."""
    if collection.name == "collection":
        return collection.with_name("report")
    return collection.with_name(collection.name + "-report")


def previous_demo(directory: Path) -> bool | None:
    """What ``directory`` holds before a demo: None nothing (absent or empty), True a demo's collection (every
    site on the sample web's domain), False anything else — which the demo neither removes nor adds to."""
    if not directory.exists():
        return None
    if not directory.is_dir():
        return False
    if not any(directory.iterdir()):
        return None
    try:
        with Collection(directory, readonly=True) as collection:
            urls = collection.urls
            hosts = [urlsplit(urls.site_name(i)).hostname or "" for i in range(1, urls.site_count + 1)]
    except Exception:  # noqa: BLE001 - whatever it is, it is not a collection the demo may remove
        return False
    from wirescrapy.testing.sampleweb import DOMAIN

    return all(host.endswith("." + DOMAIN) for host in hosts)


def print_batches(batches: Path) -> None:
    print(f"\n{'batch':>6} {'URLs':>6} {'fetched':>8} {'OK':>6} {'new URLs':>9} {'seconds':>8}")
    for number in batch_numbers(batches):
        path = batches / f"{number:06d}"
        harvest = path / HARVEST_FILE
        if not harvest.exists():
            print(f"{number:>6} {len(read_batch(path).urls):>6}  (not harvested)")
            continue
        done = json.loads(harvest.read_text(encoding="utf-8"))
        print(
            f"{number:>6} {done['urls']:>6} "
            f"{done['fetched']:>8} {done['ok']:>6} {done['new_urls']:>9} "
            f"{done['finished'] - done['started']:>8.1f}"
        )


def print_summary(collection: Collection) -> None:
    summary = collection.summary()
    print(f"\ncollection: {summary.pop('directory')}")
    width = max(map(len, summary))
    for key, value in summary.items():
        print(f"  {key.replace('_', ' '):<{width}}  {value:,}")
