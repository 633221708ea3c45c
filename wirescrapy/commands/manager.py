"""``scrapy manager``: rank the collection's pages and write the next batch (WIRE's manager program)."""

from __future__ import annotations

import time
from pathlib import Path

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from wirescrapy.collection import Collection
from wirescrapy.commands.base import InputError, WireCommand
from wirescrapy.manager.batch import BatchError, discard_batch


class Command(WireCommand, ScrapyCommand):
    def syntax(self):
        return "[options]"

    def short_desc(self):
        return "Compute scores, freshness and profit, and write the next batch(es) of URLs to fetch"

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument(
            "--batches", type=int, default=None, help="batches to write (default: WIRE_BATCH_COUNT)"
        )
        parser.add_argument(
            "--parts",
            type=int,
            default=1,
            help="split each batch by site into this many parts, one per harvester",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="compute and report, but write no batch and no score"
        )
        parser.add_argument(
            "--discard-batch",
            type=int,
            metavar="NUMBER",
            help="set batch NUMBER aside (a damaged one), so that the next harvest does not "
            "resume it; ranks nothing",
        )

    def run(self, args, opts):
        if args:
            raise UsageError("no arguments expected")
        if opts.batches is not None and opts.batches < 1:
            raise InputError("--batches must be >= 1")
        if opts.parts < 1:
            raise InputError("--parts must be >= 1")
        config = self.wire_config()
        if opts.discard_batch is not None:
            with self.writing(config):
                discard(self.open_collection(config), opts.discard_batch)
            return
        if not (Path(config.collection_dir) / "urls.log").exists():
            raise InputError(f"no collection in {config.collection_dir}: seed one first (scrapy seed FILE)")
        # Imported here: every scrapy command loads this module, and a harvester job should not pay for scipy.
        from wirescrapy.manager.run import manage

        started = time.perf_counter()
        with self.writing(config), self.open_collection(config, readonly=opts.dry_run) as collection:
            report = manage(collection, config, batches=opts.batches, parts=opts.parts, dry_run=opts.dry_run)
            print_report(report, collection, time.perf_counter() - started, opts.dry_run)


def discard(collection: Collection, number: int) -> None:
    # The collection's write lock keeps a harvester from reading the batch while it is set aside.
    with collection:
        try:
            path = discard_batch(collection.dir / "batches", number)
        except BatchError as exc:
            raise InputError(str(exc)) from None
    print(
        f"batch {number:06d} set aside as {path}; the next harvest resumes the batch before it if that "
        f"one is unfinished, else asks the manager for a new batch"
    )


def print_report(report, collection, seconds: float, dry_run: bool) -> None:
    plan = report.plan
    sizes = [len(ids) for ids in plan.batches]
    print(
        f"{report.documents:,} documents, {report.eligible:,} eligible now "
        f"({int(plan.visited.sum()):,} downloaded before)"
    )
    if not sizes:
        print("no page to fetch: no batch written")
    for number, size in zip(report.numbers, sizes):
        print(f"batch {number:06d}: {size:,} URLs")
    print(f"{report.sites:,} sites in {'the batch' if len(sizes) == 1 else 'the batches'}")
    if dry_run:
        print("dry run: nothing written")
    else:
        for path in report.paths:
            print(f"written: {path}")
    if report.top:
        print("top URLs by profit:")
        for value, url in report.top:
            print(f"  {value:.4f}  {url}")
    scores = ", ".join(f"{name} {count} iterations" for name, count in plan.iterations.items())
    print(f"{scores + '; ' if scores else ''}{seconds:.2f} s")
