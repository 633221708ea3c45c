import re

import pytest

from wirescrapy.collection import Collection
from wirescrapy.testing.process import run_scrapy


@pytest.mark.timeout(180)
def test_the_readme_demo_crawls_the_sample_web_in_cycles(tmp_path):
    run = run_scrapy("demo", "--dir", tmp_path / "c", "--sites", "3", "--pages", "12", timeout=180)
    assert run.returncode == 0, run.stderr
    assert re.search(r"sample web: 3 sites on http://127\.0\.0\.1:\d+/", run.stdout)
    assert re.search(r"^\s+1\s+3\s+3\s+3\s+\d+", run.stdout, re.MULTILINE)  # batch 1: the 3 home pages
    with Collection(tmp_path / "c", readonly=True) as collection:
        summary = collection.summary()
        assert summary["ok"] > 30 and summary["pages_stored"] > 30 and summary["links"] > 100
        assert all(collection.url(i).startswith("http://site") for i in (1, 2, 3))
    batches = sorted((tmp_path / "c" / "batches").iterdir())
    assert len(batches) > 2 and all((b / "harvest.json").exists() for b in batches)
    assert re.search(rf"pages stored\s+{summary['pages_stored']}\n", run.stdout)
    assert run.stdout.rstrip().endswith(
        f"report: {tmp_path / 'c-report' / 'index.html'}"
    )  # the crawl's report


@pytest.mark.timeout(120)
def test_a_second_demo_starts_clean_and_says_so(tmp_path):
    with Collection(tmp_path / "c") as collection:  # a previous demo's, on another port
        collection.add_url("http://site5.wire.test:1/page/9.html")
    run = run_scrapy("demo", "--dir", tmp_path / "c", "--sites", "2", "--pages", "4", timeout=120)
    assert run.returncode == 0, run.stderr
    assert (
        f"removed the previous demo's collection in {tmp_path / 'c'} (--keep adds to it instead)"
        in run.stdout
    )
    with Collection(tmp_path / "c", readonly=True) as collection:
        assert collection.urls.site_count == 2 and not collection.lookup(
            "http://site5.wire.test:1/page/9.html"
        )
    assert re.search(r"^\s+1\s+2\s+2\s+2\s+\d+", run.stdout, re.MULTILINE)  # batch 1 of this web


@pytest.mark.timeout(120)
def test_a_log_file_that_cannot_be_written_is_one_line_and_the_crawl_goes_on(tmp_path):
    """/dev/full: every write fails with ENOSPC, as on a full disk. Python's logging would print a traceback
    for each line; the crawl says it once, counts what was lost, and fetches its pages. At INFO, so that there
    are lines to lose (the demo logs only warnings, which a small crawl may not have)."""
    run = run_scrapy(
        "demo",
        "--dir",
        tmp_path / "c",
        "--sites",
        "1",
        "--pages",
        "4",
        "--cycles",
        "2",
        "-s",
        "LOG_FILE=/dev/full",
        "-L",
        "INFO",
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "Logging error" not in run.stderr, run.stderr[-3000:]
    said = [line for line in run.stderr.splitlines() if line.startswith("wirescrapy: ")]
    assert said[0] == (
        "wirescrapy: log file /dev/full: disk full; the crawl goes on, its log lines are lost while "
        "the file cannot be written"
    ), run.stderr[-3000:]
    assert re.fullmatch(r"wirescrapy: [1-9]\d* log lines? could not be written to /dev/full", said[1]), said
    with Collection(tmp_path / "c", readonly=True) as collection:
        assert collection.summary()["ok"] > 1


@pytest.mark.timeout(60)
def test_the_manager_refuses_a_missing_collection(tmp_path):
    run = run_scrapy("manager", settings={"WIRE_COLLECTION_DIR": tmp_path / "no"}, timeout=60)
    assert run.returncode == 2 and "no collection in" in run.stderr
    assert not (tmp_path / "no").exists()
