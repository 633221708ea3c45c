"""End to end: ``scrapy crawl harvester`` against the hostile sites of ``wirescrapy.testing.hostile``: memory
stays bounded whatever a server sends, and every fetch is recorded.

One crawl, its peak RSS taken from the kernel (``wirescrapy.testing.process.measure``): a gzip-bombed page,
two gzip-bombed sitemaps (``Content-Encoding`` and raw ``.xml.gz``), endless response headers, too many header
lines, and a normal site beside them. Each bomb is smaller on the wire than ``WIRE_MAX_FILE_SIZE`` and 768 MB
inflated, so only the inflated bytes can trip a limit, and one bomb held whole would take the harvester far
past ``PEAK_RSS``.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.e2e.test_harvester import SETTINGS
from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.items import FetchError
from wirescrapy.testing.hostile import HostileWeb
from wirescrapy.testing.process import measure, run_scrapy, scrapy_env

BOMB = 768 << 20
ENDLESS = 40.0  # seconds the endless headers go on, unless the crawler hangs up
# A small crawl's harvester peaks near 220 MB, half of it the language identifier's model (py3langid, loaded
# with the first page); one bomb inflated whole would add 768 MB.
PEAK_RSS = 450 << 20
MAX_FILE_SIZE = 1_000_000
SITES = {
    "bomb": "/bomb.html",
    "headers": "/headers.html",
    "many": "/many-headers.html",
    "ce-sitemap": "/",
    "gz-sitemap": "/",
    "normal": "/page/0.html",
}


@pytest.fixture(scope="module")
def hostile_crawl(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("hostile")
    with HostileWeb(bomb_size=BOMB, endless_seconds=ENDLESS, pages=5) as web:
        assert len(web.page_bomb) < MAX_FILE_SIZE
        seeds = workdir / "seeds.txt"
        seeds.write_text("".join(web.url(site, path) + "\n" for site, path in SITES.items()))
        collection = workdir / "collection"
        settings = {
            "WIRE_COLLECTION_DIR": collection,
            "WIRE_MAX_FILE_SIZE": MAX_FILE_SIZE,
            "WIRE_CONNECTION_TIMEOUT": 20,
            **SETTINGS,
        }
        started = time.monotonic()
        with open(workdir / "stderr.txt", "w+") as stderr:
            process = run_scrapy(
                "crawl",
                "harvester",
                "-a",
                f"seeds={seeds}",
                "-a",
                "cycles=2",
                settings=settings,
                env=scrapy_env(),
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                wait=False,
            )
            try:
                usage = measure(process)
            finally:
                if process.poll() is None:
                    process.kill()
            stderr.seek(0)
            log = stderr.read()
        elapsed = time.monotonic() - started
        assert usage.returncode == 0, log[-4000:]
        assert "Traceback" not in log, log[-4000:]
        yield web, collection, usage.peak_rss, elapsed


def record(collection: Collection, url: str):
    doc = collection.lookup(url)
    assert doc, url
    return collection.documents.records[doc]


@pytest.mark.timeout(180)
def test_peak_memory_stays_bounded(hostile_crawl):
    *_, peak, _ = hostile_crawl
    assert peak < PEAK_RSS, f"peak RSS {peak >> 20} MB"


@pytest.mark.timeout(180)
def test_a_gzip_bomb_page_is_kept_cut_at_the_max_file_size(hostile_crawl):
    web, directory, *_ = hostile_crawl
    with Collection(directory, readonly=True) as collection:
        bomb = record(collection, web.url("bomb", "/bomb.html"))
        assert (bomb["status"], bomb["error"]) == (200, 0)
        assert bomb["flags"] & DocFlag.TRUNCATED
        assert 0 < bomb["raw_length"] < len(web.page_bomb)  # stopped on the wire once inflated past the limit
        assert collection.load_page(int(bomb["docid"]))
        normal = record(collection, web.url("normal", "/page/3.html"))
        assert normal["status"] == 200 and not normal["flags"] & DocFlag.TRUNCATED


@pytest.mark.timeout(180)
def test_bombed_sitemaps_are_read_as_far_as_their_limit(hostile_crawl):
    web, directory, *_ = hostile_crawl
    assert ("ce-sitemap", "/sitemap.xml") in web.requests and (
        "gz-sitemap",
        "/sitemap.xml.gz",
    ) in web.requests
    with Collection(directory, readonly=True) as collection:
        for site in ("ce-sitemap", "gz-sitemap"):  # what they list is added, and fetched in the next cycle
            assert record(collection, web.url(site, "/listed.html"))["status"] == 200, site


@pytest.mark.timeout(180)
def test_endless_or_too_many_headers_end_at_once_with_a_recorded_error(hostile_crawl):
    web, directory, _, elapsed = hostile_crawl
    assert elapsed < ENDLESS / 2  # the crawler hung up; it did not wait for the server or the timeout
    with Collection(directory, readonly=True) as collection:
        for site, path in (("headers", "/headers.html"), ("many", "/many-headers.html")):
            fetched = record(collection, web.url(site, path))
            assert (fetched["status"], fetched["error"]) == (0, FetchError.HEADERS_TOO_LARGE), site
            assert fetched["last_visit"] > 0
