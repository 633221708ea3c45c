"""End to end: a batch split into two parts by server, harvested at once by two detached harvesters, as two
machines would; nginx's access log says that no server was fetched from twice at once."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from wirescrapy.manager.batch import BatchSite, BatchURL, write_batch
from wirescrapy.testing import nginx
from wirescrapy.testing.process import run_scrapy, scrapy_env

pytestmark = pytest.mark.skipif(
    nginx.binary() is None, reason="nginx is not installed here (apt-get install nginx-light; .ci/run does)"
)

WAIT = 0.05
VHOSTS, OWN, PAGES = 20, 4, 3


def web() -> list[tuple[str, str]]:
    """(host, address): virtual hosts sharing 127.0.0.2, and hosts on addresses of their own."""
    return [(f"v{i:02d}.parts.test", "127.0.0.2") for i in range(VHOSTS)] + [
        (f"own{i}.test", f"127.0.0.{3 + i}") for i in range(OWN)
    ]


def harvest_in_parts(tmp_path, split: str) -> list[nginx.Request]:
    """The requests nginx saw from two harvesters by address of a batch split into parts by ``split``."""
    root = tmp_path / "pages"
    root.mkdir()
    for n in range(PAGES):
        (root / f"{n}.html").write_text(f"<html><body><p>page {n}</p></body></html>")
    hosts = web()
    with nginx.Nginx([nginx.Server(h, a, str(root)) for h, a in hosts], tmp_path / "nginx") as server:
        sites, urls = [], []
        for site_id, (host, address) in enumerate(hosts, 1):
            origin = f"http://{host}:{server.port}"
            sites.append(BatchSite(site_id, origin, ip=address, robots_due=False))
            urls += [
                BatchURL(len(urls) + n + 1, site_id, 0, False, 1.0, 0.0, f"{origin}/{n}.html")
                for n in range(PAGES)
            ]
        parts = write_batch(tmp_path / "batches", 1, urls, sites, parts=2, group_mode=split)
        settings = {
            "WIRE_COLLECTION_DIR": "/nonexistent/collection",
            "WIRE_DNS_HOSTS": json.dumps({"parts.test": "127.0.0.2", **dict(hosts[VHOSTS:])}),
            "WIRE_POLITENESS_GROUP": "ip",
            "WIRE_WAIT_NORMAL": WAIT,
            "WIRE_WAIT_LARGE_SITE": WAIT,
        }
        jobs = [
            run_scrapy(
                "crawl",
                "harvester",
                "-a",
                f"batch={part}",
                "-a",
                f"warc={tmp_path / f'warc-{n}'}",
                settings=settings,
                env=scrapy_env(),
                wait=False,
            )
            for n, part in enumerate(parts)
        ]
        for job in jobs:
            _, stderr = job.communicate(timeout=180)
            assert job.returncode == 0 and "Traceback" not in stderr, stderr[-3000:]
        return nginx.read_log(server.access_log)


@pytest.mark.timeout(300)
def test_two_harvesters_of_a_batch_split_by_address_never_fetch_from_one_server_at_once(tmp_path):
    requests = harvest_in_parts(tmp_path, "ip")
    pages = [r for r in requests if r.uri != "/robots.txt"]
    assert len(pages) == (VHOSTS + OWN) * PAGES and {r.status for r in pages} == {200}
    shared = sorted((r for r in requests if r.address == "127.0.0.2"), key=lambda r: r.start)
    assert len(shared) == VHOSTS * (PAGES + 1)  # robots.txt too
    # nginx logs in milliseconds: a gap may look up to 2 ms short.
    gaps = [after.start - before.end for before, after in pairwise(shared)]
    assert min(gaps) >= WAIT - 0.002


@pytest.mark.timeout(300)
def test_split_by_host_two_harvesters_fetch_from_the_shared_server_at_once(tmp_path):
    requests = harvest_in_parts(tmp_path, "host")
    shared = sorted((r for r in requests if r.address == "127.0.0.2"), key=lambda r: r.start)
    assert len(shared) == VHOSTS * (PAGES + 1)
    gaps = [after.start - before.end for before, after in pairwise(shared)]
    # Each harvester keeps to the server, but neither knows of the other: what the address split prevents.
    assert sum(gap < WAIT - 0.002 for gap in gaps) >= PAGES
