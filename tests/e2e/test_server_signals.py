"""End to end: ``scrapy crawl harvester`` against a server that asks it to slow down, with ``Retry-After`` on
a 429 or a 503 (``wirescrapy.testing.slowdown``). Politeness is by address, every site of the test on the one
server, so that a hold of one site holds them all; the server's own log says what was fetched when."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import RobotsState
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.slowdown import SlowDownWeb, early, overlaps

ADDRESS = "127.0.0.9"  # the server's own loopback address: the sites' group by address
DOMAIN = "signals.test"
HOSTS = [f"a.{DOMAIN}", f"b.{DOMAIN}"]


def crawl(tmp_path, web: SlowDownWeb, pages: int) -> tuple[list[str], dict]:
    """Seed ``pages`` pages of each host of ``web``, harvest until nothing is left; the seeded URLs and the
    first batch's harvest.json."""
    urls = [web.url(host, f"/{n}.html") for host in HOSTS for n in range(pages)]
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(urls) + "\n")
    collection = tmp_path / "collection"
    run = run_scrapy(
        "crawl",
        "harvester",
        "-a",
        f"seeds={seeds}",
        "-a",
        "cycles=3",
        env=scrapy_env(),
        timeout=120,
        settings={
            "WIRE_COLLECTION_DIR": collection,
            "WIRE_POLITENESS_GROUP": "ip",
            "WIRE_DNS_HOSTS": json.dumps({DOMAIN: ADDRESS}),
            "WIRE_ADD_ROOT": False,
        },
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-4000:]
    harvest = json.loads((collection / "batches" / "000001" / "harvest.json").read_text())
    return urls, harvest


def fetched_whole(tmp_path, web: SlowDownWeb, urls: list[str]) -> None:
    """Every page of ``urls`` answered 200 by the server, and is in the collection as a page, not an error."""
    answered = {web.url(r["host"], r["path"]) for r in web.log if r["status"] == 200}
    assert set(urls) <= answered, sorted(set(urls) - answered)
    with Collection(tmp_path / "collection", readonly=True) as collection:
        records = [collection.documents.records[collection.lookup(url)] for url in urls]
        assert [(int(r["status"]), int(r["error"])) for r in records] == [(200, 0)] * len(urls)
        for site in range(1, collection.sites.count + 1):
            assert collection.sites.records[site]["robots_state"] == RobotsState.VALID


@pytest.mark.timeout(120)
def test_a_429_with_retry_after_holds_the_whole_server_and_its_page_waits(tmp_path):
    with SlowDownWeb(ADDRESS, throttle_every=5, retry_after=2) as web:
        urls, harvest = crawl(tmp_path, web, pages=8)
    throttled = [r for r in web.log if r["status"] == 429]
    assert len(throttled) >= 3
    assert early(web.log) == []  # nothing of the server fetched inside a hold, on either of its names
    assert overlaps(web.log) == []
    fetched_whole(tmp_path, web, urls)
    # Each page once, but for the answers that asked for slowness.
    requests = Counter((r["host"], r["path"]) for r in web.log)
    assert sum(requests.values()) == len(urls) + len(HOSTS) + len(throttled)
    assert harvest["holds"] == harvest["held_pages"] == len(throttled)
    assert harvest["errors"] == {} and harvest["fetched"] == len(urls)


@pytest.mark.timeout(120)
def test_a_503_with_retry_after_on_robots_txt_holds_the_site_then_it_is_fetched(tmp_path):
    with SlowDownWeb(ADDRESS, outage=3, retry_after=1) as web:
        urls, harvest = crawl(tmp_path, web, pages=4)
    unavailable = [r for r in web.log if r["status"] == 503]
    assert unavailable and {r["path"] for r in unavailable} == {"/robots.txt"}
    assert early(web.log) == []
    fetched_whole(tmp_path, web, urls)  # in the same batch, not put off for a day
    assert harvest["holds"] == harvest["held_pages"] == len(unavailable)
    assert harvest["errors"] == {} and harvest["fetched"] == len(urls)
