"""The commands as a person at the keyboard meets them: what ``scrapy`` lists, their help, and a mistake at
start (a bad setting or argument, a collection another process writes, a damaged batch) said in one line
with exit status 2. A ``scrapy`` subprocess takes about a second: the pure parts are tested directly."""

from __future__ import annotations

import argparse
import logging
import random
from pathlib import Path

import numpy as np
import pytest
from scrapy.cmdline import _get_commands_from_module
from scrapy.commands import ScrapyHelpFormatter
from scrapy.settings import Settings

from tests.e2e.test_diskfull import fill, small_disk  # noqa: F401 (a fixture)
from wirescrapy.collection import Collection
from wirescrapy.collection.lock import CollectionLockedError
from wirescrapy.commands.base import input_error_message
from wirescrapy.commands.demo import Command as Demo
from wirescrapy.commands.demo import previous_demo
from wirescrapy.config import WireSettingsError
from wirescrapy.manager.batch import BatchError
from wirescrapy.testing.process import ROOT, run_scrapy


def scrapy(*args, cwd=ROOT):
    return run_scrapy(*args, cwd=cwd)


def assert_one_line_error(run, message):
    assert run.returncode == 2, run.stderr[-3000:]
    # argparse's "PROG: error: …"; PROG is "scrapy", or "__main__.py" under python -m scrapy
    assert run.stderr.rstrip().splitlines()[-1].endswith(f": error: {message}")
    assert "Traceback" not in run.stderr and "Unhandled error" not in run.stderr
    assert "Usage" not in run.stderr  # Scrapy's usage text says nothing about a bad value


def test_only_real_commands_are_listed():
    assert set(_get_commands_from_module("wirescrapy.commands", inproject=True)) == {
        "crawl",
        "demo",
        "export",
        "ingest",
        "manager",
        "report",
        "seed",
        "status",
    }


def test_a_command_starts_without_warnings_a_user_can_do_nothing_about(tmp_path):
    run = scrapy("list")
    assert run.returncode == 0 and run.stdout.split() == ["harvester"]
    assert "Warning" not in run.stderr, run.stderr[-3000:]
    crawl = scrapy("crawl", "harvester", "-s", f"WIRE_COLLECTION_DIR={tmp_path / 'c'}")  # nothing to fetch
    assert crawl.returncode == 0 and "manager: no page to fetch" in crawl.stderr, crawl.stderr[-3000:]
    warnings = [line.split(" WARNING: ", 1)[1] for line in crawl.stderr.splitlines() if " WARNING: " in line]
    assert warnings == [
        f"The collection {tmp_path / 'c'} is empty: give seeds (-a seeds=FILE, or scrapy seed FILE)"
    ]
    assert "Warning" not in crawl.stderr, crawl.stderr[-3000:]


def test_demo_help_reads_as_written():
    parser = argparse.ArgumentParser(prog="scrapy demo", formatter_class=ScrapyHelpFormatter)
    demo = Demo()
    demo.settings = Settings()
    demo.add_options(parser)
    text = parser.format_help()
    assert "at most this many manager + harvester cycles" in text
    # Scrapy's formatter title-cases and underlines a line ending in ":" as a heading.
    assert "At Most" not in text and text.count("=====") == 2
    assert "--keep" in text and "starts clean and removes it" in " ".join(text.split())


def collection_of(directory: Path, *urls: str) -> Path:
    with Collection(directory) as collection:
        for url in urls:
            collection.add_url(url)
    return directory


def test_the_demo_knows_a_previous_demo_s_collection_from_anything_else(tmp_path):
    assert previous_demo(tmp_path / "absent") is None
    (tmp_path / "empty").mkdir()
    assert previous_demo(tmp_path / "empty") is None
    assert (
        previous_demo(
            collection_of(
                tmp_path / "demo", "http://site0.wire.test:8001/", "http://site1.wire.test:8001/page/4.html"
            )
        )
        is True
    )
    assert (
        previous_demo(
            collection_of(tmp_path / "crawl", "http://site0.wire.test:8001/", "https://www.uchile.cl/")
        )
        is False
    )  # a real crawl's: never removed
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "notes.txt").write_text("mine")
    assert previous_demo(tmp_path / "files") is False
    (tmp_path / "file").write_text("mine")
    assert previous_demo(tmp_path / "file") is False


def test_the_demo_refuses_a_directory_that_holds_anything_but_a_demo_s_collection(tmp_path):
    crawl = collection_of(tmp_path / "crawl", "https://www.uchile.cl/")
    run = scrapy("demo", "--dir", str(crawl), "--keep")
    assert_one_line_error(
        run,
        f"--dir {crawl} holds something other than a demo's collection; "
        "give the demo a new or empty directory",
    )
    with Collection(crawl, readonly=True) as collection:
        assert collection.urls.site_count == 1


def test_input_errors_are_one_line():
    assert input_error_message(WireSettingsError("WIRE_BATCH_SIZE: expected int")) == (
        "invalid setting: WIRE_BATCH_SIZE: expected int"
    )
    assert input_error_message(ValueError("cycles must be >= 1, got 0"), "harvester") == (
        "harvester: cycles must be >= 1, got 0"
    )
    assert input_error_message(BatchError("/b: no batch.json, not a batch"), "harvester") == (
        "/b: no batch.json, not a batch"
    )
    assert input_error_message(CollectionLockedError("collection /c is open for writing"), "harvester") == (
        "collection /c is open for writing"
    )


def test_ingest_of_no_harvest_s_warc_or_another_collection_s_is_one_line(tmp_path):
    from wirescrapy.manager.batch import BatchSite, BatchURL, write_batch
    from wirescrapy.warc.writer import WarcWriter

    (tmp_path / "empty").mkdir()
    collection = collection_of(tmp_path / "c", "http://site0.wire.test/")
    setting = f"WIRE_COLLECTION_DIR={collection}"
    assert_one_line_error(
        scrapy("ingest", str(tmp_path / "absent"), "-s", setting), f"{tmp_path / 'absent'}: no such directory"
    )
    assert_one_line_error(
        scrapy("ingest", str(tmp_path / "empty"), "-s", setting),
        f"{tmp_path / 'empty'}: no WARC files (*.warc.gz)",
    )
    # WARC of batch 1 part 0 of another collection, which this one never wrote
    write_batch(
        tmp_path / "other",
        1,
        [BatchURL(1, 1, 0, False, 1.0, 0.0, "http://site0.wire.test/")],
        [BatchSite(1, "http://site0.wire.test")],
    )
    writer = WarcWriter(tmp_path / "warc", 10**6, {"batch": 1, "part": 0, "parts": 1, "batch-created": 1.0})
    writer.open()
    writer.close()
    run = scrapy("ingest", str(tmp_path / "warc"), "-s", setting)
    assert_one_line_error(run, run.stderr.rstrip().splitlines()[-1].split(": error: ", 1)[1])
    assert "which this collection" in run.stderr and "did not write" in run.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-s", "WIRE_BATCH_SIZE=abc"],
            (
                "invalid setting: WIRE_BATCH_SIZE: expected int, got 'abc' "
                "(invalid literal for int() with base 10: 'abc')"
            ),
        ),
        (["-a", "cycles=x"], "harvester: cycles must be a whole number, got 'x'"),
        (["-a", "seeds=/no/such/seeds.txt"], "harvester: seeds file /no/such/seeds.txt does not exist"),
        (
            ["-s", "WIRE_WAIT_NORML=1"],
            "invalid setting: WIRE_WAIT_NORML: no such setting (did you mean WIRE_WAIT_NORMAL?)",
        ),
        (["-a", "cycle=5"], "harvester: -a cycle: no such argument (did you mean cycles?)"),
        (
            ["-a", "_job=1", "-a", "user_agent=x"],
            "harvester: -a user_agent: no such argument (its arguments: batch, cycles, seeds, warc)",
        ),
    ],
)
def test_crawl_with_a_bad_setting_or_argument_says_so_in_one_line(tmp_path, args, message):
    run = scrapy("crawl", "harvester", "-s", f"WIRE_COLLECTION_DIR={tmp_path}", *args)
    assert_one_line_error(run, message)
    assert run.stderr.count("\n") == 1, run.stderr[-3000:]  # found before Scrapy's start-up lines


@pytest.mark.parametrize(
    ("spider", "message"),
    [
        ("harvestor", "no spider named 'harvestor' in this project (did you mean harvester?)"),
        ("sitemap", "no spider named 'sitemap' in this project (its spiders: harvester)"),
    ],
)
def test_crawl_of_a_spider_the_project_has_not_says_so_in_one_line(tmp_path, spider, message):
    run = scrapy("crawl", spider, "-s", f"WIRE_COLLECTION_DIR={tmp_path}")
    assert_one_line_error(run, message)
    assert run.stderr.count("\n") == 1, run.stderr[-3000:]


def test_a_crawl_takes_scrapyd_s_arguments_and_logs_its_summary_last(tmp_path):
    """Scrapyd gives every job ``-a _job=ID`` (and ``-a _version=V`` when one was asked for). The harvest's
    summary comes after Scrapy's stats dump, where a person reads it first."""
    run = scrapy(
        "crawl",
        "harvester",
        "-a",
        "_job=6487ec79",
        "-a",
        "_version=r1",
        "-s",
        f"WIRE_COLLECTION_DIR={tmp_path / 'c'}",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stderr.splitlines()
    dumped = next(n for n, line in enumerate(lines) if "Dumping Scrapy stats" in line)
    closed = next(n for n, line in enumerate(lines) if "Spider closed (finished)" in line)
    assert dumped < closed == len(lines) - 2
    assert " [harvester] INFO: Harvest summary (finished): 0 cycle(s), 0 page fetches" in lines[-1]


def test_a_scrapyd_job_s_misspelled_argument_is_said_in_its_log(tmp_path):
    log = tmp_path / "job.log"
    run = scrapy(
        "crawl",
        "harvester",
        "-a",
        "_job=6487ec79",
        "-a",
        "cycle=5",
        "-s",
        f"WIRE_COLLECTION_DIR={tmp_path / 'c'}",
        "-s",
        f"LOG_FILE={log}",
    )
    message = "harvester: -a cycle: no such argument (did you mean cycles?)"
    assert_one_line_error(run, message)
    assert f"ERROR: The crawl failed at start: {message}" in log.read_text(encoding="utf-8")


def test_a_scrapyd_job_s_bad_setting_is_said_in_its_log(tmp_path):
    log = tmp_path / "job.log"
    run = scrapy(
        "crawl",
        "harvester",
        "-s",
        f"WIRE_COLLECTION_DIR={tmp_path / 'c'}",
        "-s",
        f"LOG_FILE={log}",
        "-s",
        "WIRE_WAIT_NORML=1",
    )
    message = "invalid setting: WIRE_WAIT_NORML: no such setting (did you mean WIRE_WAIT_NORMAL?)"
    assert_one_line_error(run, message)
    assert f"ERROR: The crawl failed at start: {message}" in log.read_text(encoding="utf-8")


def test_a_command_called_the_wrong_way_keeps_scrapy_s_usage_text(tmp_path):
    run = scrapy("manager", "extra", "-s", f"WIRE_COLLECTION_DIR={tmp_path}")
    assert run.returncode == 2 and run.stderr.rstrip().splitlines()[-1].endswith(
        ": error: no arguments expected"
    )
    assert "Usage" in run.stderr and "scrapy manager [options]" in run.stderr
    run = scrapy("manager", "--batches", "0", "-s", f"WIRE_COLLECTION_DIR={tmp_path}")  # a value: one line
    assert_one_line_error(run, "--batches must be >= 1")


def test_a_collection_another_process_writes_is_one_line_for_crawl_and_seed(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://a.example/\n")
    with Collection(tmp_path / "c"):
        crawl = scrapy("crawl", "harvester", "-s", f"WIRE_COLLECTION_DIR={tmp_path / 'c'}")
        seed = scrapy("seed", str(seeds), "-s", f"WIRE_COLLECTION_DIR={tmp_path / 'c'}")
    for run in (crawl, seed):
        assert run.returncode == 2, run.stderr[-3000:]
        assert "open for writing by pid" in run.stderr.splitlines()[-1]
        assert "Traceback" not in run.stderr and "Unhandled error" not in run.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cycles", "0"], "--cycles must be >= 1"),
        (["--pages", "2"], "--pages must be >= 4"),
    ],
)
def test_demo_refuses_impossible_options_in_one_line(tmp_path, args, message):
    assert_one_line_error(scrapy("demo", "--dir", str(tmp_path / "demo"), *args), message)


def test_a_part_of_another_collection_s_batch_is_refused_in_one_line(tmp_path):
    """Issue 14 §1: ``manager --parts 2`` on one collection, then part-1 harvested into a fresh one wrote the
    batch's doc-ids over the fresh collection's records (pages stored under other URLs, record 0 the
    header)."""
    owner = collection_of(
        tmp_path / "owner", "http://a.example/", "http://b.example/", "http://c.example/", "http://d.example/"
    )
    manager = scrapy("manager", "--parts", "2", "-s", f"WIRE_COLLECTION_DIR={owner}")
    assert manager.returncode == 0, manager.stderr[-3000:]
    fresh = tmp_path / "fresh"
    run = scrapy(
        "crawl",
        "harvester",
        "-a",
        f"batch={owner / 'batches' / '000001' / 'part-1'}",
        "-s",
        f"WIRE_COLLECTION_DIR={fresh}",
    )
    with Collection(owner, readonly=True) as collection:
        owner_id = collection.id
    assert_one_line_error(
        run,
        f"{owner / 'batches' / '000001' / 'part-1'}: batch 000001 belongs to the collection "
        f"{owner} (id {owner_id}), not to {fresh} (id {(fresh / 'id').read_text().strip()})",
    )
    with Collection(fresh, readonly=True) as collection:
        assert collection.documents.count == 0 and collection.pages.count() == 0


def visited(directory: Path) -> list[str]:
    """The URLs the collection at ``directory`` records a visit of, by document id."""
    with Collection(directory, readonly=True) as collection:
        visits = collection.documents.records[: collection.documents.count + 1]["visits"]
        return [collection.url(int(doc_id)) for doc_id in np.flatnonzero(visits)]


def detached_part(directory: Path, warc: Path, pages: int, size: int = 0) -> tuple[Path, Path, Path]:
    """A collection at ``directory`` with batch 1, and in ``warc`` that batch's ``pages`` pages (of ``size``
    bytes more) as a detached harvest archives them, finished; the collection, WARC and part directories."""
    from tests.test_warc import HTML, page
    from wirescrapy.manager.batch import BatchSite, BatchURL, read_batch, write_batch
    from wirescrapy.warc.writer import WarcWriter

    urls = [f"http://site0.wire.test/{n}.html" for n in range(pages)]
    collection_of(directory, *urls)
    with Collection(directory) as collection:
        ids = [collection.lookup(url) for url in urls]
    (part,) = write_batch(
        directory / "batches",
        1,
        [BatchURL(doc_id, 1, 0, False, 1.0, 0.0, url) for doc_id, url in zip(ids, urls)],
        [BatchSite(1, "http://site0.wire.test")],
    )
    info = {"batch": 1, "part": 0, "parts": 1, "batch-created": read_batch(part).info["created"]}
    writer = WarcWriter(warc, 10**9, info)
    for n, (doc_id, url) in enumerate(zip(ids, urls)):
        text = bytes(f"<p>page {n}: ", "ascii") + bytes(random.Random(n).choices(range(97, 123), k=size))
        writer.write(page(url, HTML.replace(b"</body>", text + b"</p></body>"), doc_id=doc_id))
    writer.close()
    (warc / "harvest.json").write_text("{}")  # a finished harvest: the part would be complete
    return directory, warc, part


def test_an_ingest_stops_at_a_failed_write_in_one_line_keeping_what_is_stored(tmp_path, caplog):
    import asyncio
    import errno

    from scrapy.utils.log import LogCounterHandler
    from scrapy.utils.reactor import install_reactor, is_reactor_installed
    from scrapy.utils.test import get_crawler

    from tests.components import REACTOR
    from wirescrapy.commands.ingest import IngestSpider
    from wirescrapy.signals import write_failed

    directory, warc, part = detached_part(tmp_path / "c", tmp_path / "warc", 3)

    if not is_reactor_installed():
        install_reactor(REACTOR)
    crawler = get_crawler(IngestSpider, {"WIRE_COLLECTION_DIR": str(directory)})
    spider = IngestSpider.from_crawler(crawler, dirs=[str(warc)])
    spider.crawler = crawler

    async def read() -> list:
        fetches, stream = [], spider.start()
        async for fetch in stream:
            fetches.append(fetch)
            full = OSError(errno.ENOSPC, "No space left on device", str(directory / "pages"))
            crawler.signals.send_catch_log(write_failed, exc=full)
            crawler.signals.send_catch_log(write_failed, exc=full)  # said once
        return fetches

    assert len(asyncio.run(read())) == 1  # no fetch read after the failed write
    stopped = [r.getMessage() for r in caplog.records if "the ingest stops" in r.getMessage()]
    said = (
        f"collection {directory}: disk full (writing {directory / 'pages'}): the ingest stops; what is "
        "stored is kept, and an ingest run again once there is room goes on where it stopped"
    )
    assert stopped == [said]
    assert crawler.stats.get_value("harvester/stopped") == f"collection {directory}: disk full"
    spider._closed("finished")
    for handler in logging.root.handlers[:]:  # get_crawler's log counter, left for the engine to remove
        if isinstance(handler, LogCounterHandler) and handler.crawler is crawler:
            logging.root.removeHandler(handler)
    assert not (part / "harvest.json").exists()  # not in whole: an ingest run again goes on
    with Collection(directory) as collection:
        assert collection.documents.count == 3


def test_an_ingest_onto_a_full_disk_stops_in_one_line_and_goes_on_once_there_is_room(
    tmp_path,
    small_disk,  # noqa: F811 (the fixture imported above)
):
    directory, warc, part = detached_part(small_disk / "c", tmp_path / "warc", 12, size=40_000)
    filler = fill(small_disk, 60 * 1024)
    run = scrapy("ingest", str(warc), "-s", f"WIRE_COLLECTION_DIR={directory}")
    assert run.returncode == 1, run.stderr[-3000:]
    said = [line for line in run.stderr.splitlines() if "the ingest stops" in line]
    assert len(said) == 1 and f"collection {directory}: disk full" in said[0], run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert not (part / "harvest.json").exists()
    assert 0 < len(visited(directory)) < 12

    filler.unlink()
    again = scrapy("ingest", str(warc), "-s", f"WIRE_COLLECTION_DIR={directory}")
    assert again.returncode == 0, again.stderr[-3000:]
    assert (part / "harvest.json").exists()
    assert visited(directory) == [f"http://site0.wire.test/{n}.html" for n in range(12)]
