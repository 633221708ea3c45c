"""The report of a real crawl of the sample web, seen in a real browser; and ``scrapy export`` of it.

One demo crawls a sample web of four sites, of which the crawl accepts three
(``WIRE_ACCEPT_DOMAIN_SUFFIXES``): the links to the fourth are links out of the crawl, counted by top-level
domain. Headless Chromium opens the report: no console errors, every plot drawn with a size, the page as wide
as the window, a screenshot of the page and of each plot saved in ``tests/e2e/screenshots/``
(``WIRE_SCREENSHOTS`` to put them elsewhere) for a person to look at. A crawl of three pages, the first a
person tries, has a short report: no plot of a handful of points, and its ranking of pages lists its pages,
not its robots.txt.
"""

import csv
import functools
import io
import json
import os
import re
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.browser import Browser, chromium
from wirescrapy.testing.process import ROOT, run_scrapy

SECTIONS = ("documents", "scores", "sites", "structure", "languages", "outlinks", "harvests", "politeness")
# Three pages that link one another, and the site's robots.txt.
THREE_PAGES = {
    "index.html": '<title>Home</title><p>About tomatoes.</p><a href="a.html">A</a> <a href="b.html">B</a>',
    "a.html": '<title>A</title><p>Tomatoes need sun.</p><a href="/">home</a> <a href="b.html">B</a>',
    "b.html": '<title>B</title><p>Basil grows well beside tomatoes.</p><a href="/">home</a>',
    "robots.txt": "User-agent: *\nAllow: /\n",
}
SMALL_REPORT_HEIGHT = 12_000  # CSS pixels: a three-page crawl's tables and a few bar charts fit in it


def scrapy(*args, cwd=ROOT, timeout=180):
    return run_scrapy(*args, cwd=cwd, timeout=timeout, env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    base = tmp_path_factory.mktemp("report")
    accepted = ",".join(f"site{i}.wire.test" for i in range(3))
    run = scrapy(
        "demo",
        "--dir",
        str(base / "collection"),
        "--sites",
        "4",
        "--pages",
        "12",
        "-s",
        f"WIRE_ACCEPT_DOMAIN_SUFFIXES={accepted}",
    )
    assert run.returncode == 0, run.stderr
    return base, run


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    """The ``index.html`` of the report of a crawl of ``THREE_PAGES``, served on loopback."""
    base = tmp_path_factory.mktemp("small")
    (base / "web").mkdir()
    for name, text in THREE_PAGES.items():
        (base / "web" / name).write_text(text, encoding="utf-8")
    collection = base / "collection"
    handler = functools.partial(_Quiet, directory=str(base / "web"))
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            seeds = base / "seeds.txt"
            seeds.write_text(f"http://small.wire.test:{server.server_port}/\n", encoding="utf-8")
            env = {**os.environ, "PYTHONPATH": str(ROOT), "SCRAPY_SETTINGS_MODULE": "settings.test"}
            run = run_scrapy(
                "crawl",
                "harvester",
                "-a",
                f"seeds={seeds}",
                "-a",
                "cycles=3",
                timeout=180,
                settings={"WIRE_COLLECTION_DIR": collection},
                env=env,
            )
            assert run.returncode == 0, run.stderr[-3000:]
        finally:
            server.shutdown()
    run = scrapy("report", "--out", str(base / "report"), "-s", f"WIRE_COLLECTION_DIR={collection}")
    assert run.returncode == 0, run.stderr
    return base / "report" / "index.html"


@pytest.mark.timeout(240)
def test_the_demo_ends_with_its_report(crawl):
    base, run = crawl
    index = base / "report" / "index.html"
    assert f"report: {index}" in run.stdout.splitlines()[-1]
    page = index.read_text(encoding="utf-8")
    for key in SECTIONS:
        assert f'<section id="{key}">' in page
    assert "as of" in page and "<script" not in page and "http-equiv" not in page
    assert not re.search(r"""(src|href)=["']https?://(?!site\d\.wire\.test)""", page)  # self-contained
    linked = set(re.findall(r'href="(data/[^"]+\.csv)"', page))
    assert len(linked) > 40 and all((base / "report" / name).is_file() for name in linked)


@pytest.mark.timeout(240)
def test_the_report_holds_what_the_crawl_found(crawl):
    base, _ = crawl
    report = json.loads((base / "report" / "report.json").read_text())
    summary = report["summary"]
    assert summary["sites"] == 3 and summary["gathered"] > 20 and summary["links"] > 50
    assert (
        summary["languages"].get("en", 0) > 0.8 * summary["gathered"]
    )  # the sample web's filler is English-like
    sections = report["sections"]
    outlinks = sections["outlinks"]  # to site3, and from the pages of files
    assert outlinks["links_to_other_domains"] > 0 and outlinks["links_to_files_not_crawled"] > 0
    assert sections["structure"]["MAIN"] >= 2
    assert sections["harvests"]["harvested"] == sections["harvests"]["batches"] > 2
    data = base / "report" / "data"
    with open(data / "documents-depth-all.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["value", "documents", "fraction"]
    assert sum(int(r[1]) for r in rows[1:]) == summary["documents"]
    assert abs(sum(float(r[2]) for r in rows[1:]) - 1) < 1e-3
    with open(data / "outlinks-tld.csv") as f:
        assert next(csv.DictReader(f))["value"] == "test"
    with open(data / "harvests.csv") as f:
        harvests = list(csv.DictReader(f))
    # A batch's fetches count the redirect hops its pages led to (the sample web's /moved and /loop chains),
    # which it did not ask for: at most two a page asked.
    assert all(int(h["ok"]) <= int(h["fetched"]) <= 3 * int(h["pages_asked"]) for h in harvests)
    assert all(int(h["links_to_known"]) <= int(h["links_found"]) and int(h["sites"]) >= 1 for h in harvests)
    assert (
        sum(int(h["links_found"]) for h in harvests) > summary["links"]
    )  # links are found again on other pages
    assert sum(int(h["new_sites"]) for h in harvests) == 0  # the three sites were seeded
    assert sum(int(h["ok"]) for h in harvests) >= summary["gathered"]
    with open(data / "politeness.csv") as f:
        politeness = list(csv.DictReader(f))
    # The demo's waits are 0.2 s, as its harvests recorded; each gap is set against the site's wait.
    assert politeness and {float(p["wait_s"]) for p in politeness} == {0.2}
    for p in politeness:
        due = max(float(p["wait_s"]), float(p["crawl_delay_s"]))
        assert abs(float(p["gap_over_wait"]) - float(p["shortest_gap_s"]) / due) < 1e-3
    assert sorted(float(p["gap_over_wait"]) for p in politeness) == [
        float(p["gap_over_wait"]) for p in politeness
    ]


@pytest.mark.timeout(240)
def test_the_report_in_a_real_browser(crawl):
    executable = chromium()
    base, _ = crawl
    shots = Path(os.environ.get("WIRE_SCREENSHOTS", ROOT / "tests" / "e2e" / "screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    with Browser(executable) as browser:
        browser.open((base / "report" / "index.html").as_uri())
        assert browser.console_errors() == []
        plots = json.loads(
            browser.evaluate(
                "JSON.stringify([...document.querySelectorAll('figure.plot')].map(f => {"
                "const r = f.querySelector('svg').getBoundingClientRect(); "
                "return [f.id, r.width, r.height]; }))"
            )
        )
        assert len(plots) >= 10
        # Three sites make three points: their distributions are tables, not plots.
        left_out = {"plot-sites-size", "plot-sites-degree", "plot-politeness"}
        assert not left_out & {name for name, _, _ in plots}
        for name, width, height in plots:
            assert width > 300 and height > 150, name
        layout = browser.layout()
        assert layout["width"] <= layout["window"], layout  # no horizontal scrollbar
        browser.screenshot(shots / "report.png")
        for name, _, _ in plots:
            browser.screenshot(shots / f"{name}.png", f"#{name}")
    assert (shots / "report.png").stat().st_size > 10_000


@pytest.mark.timeout(240)
def test_the_report_of_three_pages_in_a_real_browser(small_report):
    with Browser(chromium()) as browser:
        browser.open(small_report.as_uri())
        assert browser.console_errors() == []
        layout = browser.layout()
        assert layout["width"] <= layout["window"] and layout["height"] < SMALL_REPORT_HEIGHT, layout
        drawn = browser.evaluate("[...document.querySelectorAll('figure.plot')].map(f => f.id)")
        # Bars of two kinds or more (robots.txt and pages, HTML and text); no curve through three points.
        assert set(drawn) <= {"plot-status", "plot-mime", "plot-languages", "plot-bowtie"}, drawn
        ranked = browser.evaluate(
            "[...[...document.querySelectorAll('h3')]"
            ".find(h => h.textContent === 'Pages with the highest PageRank')"
            ".nextElementSibling.querySelectorAll('td.url a')].map(a => a.href)"
        )
        assert len(ranked) == 3 and not [url for url in ranked if url.endswith("/robots.txt")], ranked


@pytest.mark.timeout(120)
def test_export_streams_what_was_asked(crawl):
    base, _ = crawl
    collection = f"WIRE_COLLECTION_DIR={base / 'collection'}"
    assert scrapy("export", "documents", "--site", "http://nowhere.test", "-s", collection).stdout == ""
    seeds = [json.loads(line) for line in scrapy("export", "seeds", "-s", collection).stdout.splitlines()]
    assert len(seeds) == 3 and all(s["url"].startswith("http://site") for s in seeds)
    site = seeds[1]["url"].rstrip("/")
    run = scrapy(
        "export",
        "documents",
        "--site",
        site,
        "--depth",
        "1-",
        "--format",
        "csv",
        "--content",
        "text",
        "-s",
        collection,
    )
    csv.field_size_limit(1 << 30)  # the sample web's big page
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    assert rows and all(r["url"].startswith(site) and int(r["depth"]) >= 1 for r in rows)
    assert any(r["language"] == "en" and len(r["content"]) > 100 for r in rows)
    edges = [
        json.loads(line)
        for line in scrapy("export", "links", "--docids", "1-3", "-s", collection).stdout.splitlines()
    ]
    assert edges and {e["source"] for e in edges} <= {1, 2, 3}
    run = scrapy(
        "export",
        "documents",
        "--url",
        "page/[0-9]+\\.html$",
        "-O",
        str(base / "pages.jsonl"),
        "-s",
        collection,
    )
    assert run.returncode == 0 and re.search(r"\d+ documents rows written", run.stderr)
    lines = (base / "pages.jsonl").read_text().splitlines()
    assert lines and all(re.search(r"page/\d+\.html$", json.loads(line)["url"]) for line in lines)
    bad = scrapy("export", "documents", "--docids", "9-2", "-s", collection)
    assert bad.returncode == 2 and "--docids" in bad.stderr
    # the stored pages as WARC: one record per stored page, a file warcio reads back
    run = scrapy("export", "--warc", str(base / "pages.warc.gz"), "-s", collection)
    assert run.returncode == 0, run.stderr
    written = int(re.search(r"([\d,]+) stored pages written", run.stderr)[1].replace(",", ""))
    with open(base / "pages.warc.gz", "rb") as stream:
        uris = [
            r.rec_headers.get_header("WARC-Target-URI")
            for r in ArchiveIterator(stream)
            if r.rec_type in ("response", "revisit")
        ]
    assert written == len(uris) > 10 and all(uri.startswith("http://site") for uri in uris)
    bad = scrapy("export", "documents", "--warc", str(base / "x.warc.gz"), "-s", collection)
    assert bad.returncode == 2 and "give no WHAT" in bad.stderr
