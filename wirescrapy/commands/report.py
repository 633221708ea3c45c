"""``scrapy report [--out DIR]``: what the crawl found, as WIRE's reports (``wirescrapy/report/``).

It opens the collection read-only and takes no lock, so it may run while a crawl writes: the report says as
of when it read the collection. It writes ``DIR/index.html`` (one self-contained page, plots inline),
``DIR/data/*.csv`` and ``DIR/report.json``, and prints the page's path. When the crawl's archive
(``WIRE_WARC_DIR``) has an index, the page says how to replay it in pywb, and links its top pages to their
replay at ``--replay URL``.
"""

from __future__ import annotations

import time
from pathlib import Path

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from wirescrapy.commands.base import InputError, WireCommand

REPLAY = "http://localhost:8080/crawl/"  # where README.md's command has pywb replay the archive


def make_report(
    command: WireCommand, config, out: str | Path, costs: bool = False, replay: str = REPLAY
) -> Path:
    """Build and write the report of ``config``'s collection into ``out``; the path of ``index.html``."""
    # Imported here: Scrapy imports every command module at the start of every command, a crawl's included,
    # and the report's modules (scipy's graph algorithms) are a good part of a crawl job's start-up.
    from wirescrapy.report import build_report
    from wirescrapy.report.render import write_report

    collection = command.read_collection(config)
    started = time.perf_counter()
    with collection:
        report = build_report(collection, config, replay=replay)
    try:
        index = write_report(report, out)
    except OSError as exc:
        raise InputError(f"cannot write the report into {out}: {exc}") from None
    if costs:
        for name, seconds in report.costs.items():
            print(f"  {name:<16} {seconds:8.2f} s")
        print(f"  {'total':<16} {time.perf_counter() - started:8.2f} s")
    return index


class Command(WireCommand, ScrapyCommand):
    def syntax(self):
        return "[--out DIR] [--replay URL]"

    def short_desc(self):
        return "Write the crawl's report: an HTML page with plots, its tables as CSV, the figures as JSON"

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("--out", default="report", help="directory to write into (default: %(default)s)")
        parser.add_argument(
            "--replay",
            default=REPLAY,
            metavar="URL",
            help="pywb's root of the replayed crawl, where the pages link when WIRE_WARC_DIR has an index "
            "(default: %(default)s)",
        )
        parser.add_argument("--costs", action="store_true", help="print what each section cost, in seconds")

    def run(self, args, opts):
        if args:
            raise UsageError("no arguments expected")
        config = self.wire_config()
        index = make_report(self, config, opts.out, costs=opts.costs, replay=opts.replay)
        print(f"report of {Path(config.collection_dir).resolve()} written: {index.resolve()}")
