"""Politeness to servers, checked from the servers' side: crawls through ``WireScheduler`` (the subprocess
harness of ``tests/test_scheduler.py``) of nginx's virtual hosts and of servers that ask for slowness."""

from __future__ import annotations

from itertools import pairwise

import pytest

from tests.test_scheduler import crawl, page, scheduler, take
from wirescrapy.manager.batch import BatchSite
from wirescrapy.testing import nginx
from wirescrapy.testing.slowdown import SlowDownWeb, early, overlaps

WAIT = 0.05
HOLDS = {
    "tests.test_scheduler.RefusingMiddleware": 50,
    "wirescrapy.harvester.middlewares.serverhold.ServerHoldMiddleware": 560,
}


def plan(urls_by_site: dict[str, list[str]]):
    """(batch, sites) of a plan: every site's pages, sites with no known address."""
    batch, sites = [], []
    doc = 0
    for site_id, (site, paths) in enumerate(urls_by_site.items(), 1):
        sites.append({"site_id": site_id, "origin": site})
        for path in paths:
            doc += 1
            batch.append([doc, site_id, site + path])
    return batch, sites


# -- nginx: 50 virtual hosts on one address, 5 hosts on their own ------------------------------------------


@pytest.fixture(scope="module")
def shared_hosting(tmp_path_factory):
    if nginx.binary() is None:
        pytest.skip("nginx is not installed here (apt-get install nginx-light; .ci/run does)")
    root = tmp_path_factory.mktemp("vhosts")
    for name in ("1.html", "2.html"):
        (root / name).write_text(f"<html><body><p>{name}</p></body></html>")
    servers = [nginx.Server(f"v{i:02d}.shared.test", "127.0.0.2", str(root)) for i in range(50)]
    servers += [nginx.Server(f"own{i}.test", f"127.0.0.{3 + i}", str(root)) for i in range(5)]
    with nginx.Nginx(servers, tmp_path_factory.mktemp("nginx")) as server:
        yield server, servers


def crawl_hosting(shared_hosting, tmp_path, mode):
    server, servers = shared_hosting
    hosts = {"shared.test": "127.0.0.2", **{f"own{i}.test": f"127.0.0.{3 + i}" for i in range(5)}}
    batch, sites = plan({f"http://{s.host}:{server.port}": ["/1.html", "/2.html"] for s in servers})
    since = max((r.end for r in nginx.read_log(server.access_log)), default=0.0)
    result = crawl(
        tmp_path,
        mode,
        batch,
        sites,
        settings={"WIRE_POLITENESS_GROUP": mode, "WIRE_DNS_HOSTS": hosts, "WIRE_WAIT_NORMAL": WAIT},
    )
    requests = [r for r in nginx.read_log(server.access_log) if r.start > since]
    by_address: dict[str, list[nginx.Request]] = {}
    for request in requests:
        by_address.setdefault(request.address, []).append(request)
    return result, by_address


def gaps(requests):
    ordered = sorted(requests, key=lambda r: r.start)
    return [after.start - before.end for before, after in pairwise(ordered)]


def test_by_address_one_request_at_a_time_goes_to_a_server_with_the_wait_between(shared_hosting, tmp_path):
    result, by_address = crawl_hosting(shared_hosting, tmp_path, "ip")
    assert sorted(o["status"] for o in result["outcomes"]) == [200] * 110
    assert sorted(by_address) == [f"127.0.0.{i}" for i in range(2, 8)]
    assert len(by_address["127.0.0.2"]) == 100
    for address, requests in by_address.items():
        # nginx logs in milliseconds: a gap may look up to 2 ms short.
        assert min(gaps(requests)) >= WAIT - 0.002, address


def test_by_host_the_shared_server_gets_many_requests_at_once(shared_hosting, tmp_path):
    result, by_address = crawl_hosting(shared_hosting, tmp_path, "host")
    assert len(result["outcomes"]) == 110
    # Each host keeps its wait, but the server sees its hosts' requests back to back: what groups prevent.
    assert sum(gap < WAIT - 0.002 for gap in gaps(by_address["127.0.0.2"])) >= 50


def test_sites_whose_address_is_not_known_wait_for_their_name_to_resolve_then_take_turns(tmp_path):
    # "localhost" resolves through the system's resolver, an address literal to itself: one server.
    with SlowDownWeb("127.0.0.1") as web:
        names = {
            f"http://localhost:{web.port}": ["/a", "/b", "/c"],
            f"http://127.0.0.1:{web.port}": ["/d", "/e"],
        }
        batch, sites = plan(names)
        result = crawl(
            tmp_path,
            "resolved",
            batch,
            sites,
            settings={"WIRE_POLITENESS_GROUP": "ip", "WIRE_WAIT_NORMAL": WAIT},
        )
        log = sorted(web.log, key=lambda r: r["start"])
    assert sorted(o["status"] for o in result["outcomes"]) == [200] * 5
    assert {r["host"] for r in log} == {"localhost", "127.0.0.1"}
    assert min(after["start"] - before["end"] for before, after in pairwise(log)) >= WAIT


# -- servers that ask for slowness ---------------------------------------------------------------------------


@pytest.mark.parametrize("as_date", [False, True], ids=["seconds", "http-date"])
def test_a_429_with_retry_after_holds_the_whole_server_and_its_page_is_fetched_after(tmp_path, as_date):
    with SlowDownWeb(
        "127.0.0.9", throttle_every=5, retry_after=2 if as_date else 1, retry_after_date=as_date
    ) as web:
        batch, sites = plan({web.url(f"s{i}.slow.test").rstrip("/"): ["/a", "/b", "/c"] for i in range(4)})
        result = crawl(
            tmp_path,
            "throttled",
            batch,
            sites,
            settings={
                "WIRE_DNS_HOSTS": {"slow.test": "127.0.0.9"},
                "WIRE_WAIT_NORMAL": WAIT,
                "WIRE_POLITENESS_GROUP": "ip",
                "DOWNLOADER_MIDDLEWARES": HOLDS,
            },
        )
        log = list(web.log)
    assert [r["status"] for r in log].count(429) >= 2
    assert early(log) == [] and overlaps(log) == []
    assert sorted(o["status"] for o in result["outcomes"]) == [200] * 12  # held pages are no errors
    assert result["stats"]["harvester/holds/requeued"] == [r["status"] for r in log].count(429)
    assert "is held" in result["log"]


def test_a_server_in_an_outage_is_waited_for_robots_txt_included(tmp_path):
    with SlowDownWeb("127.0.0.10", outage=1.5, retry_after=1) as web:
        site = web.url("down.slow.test").rstrip("/")
        batch, sites = plan({site: ["/a", "/b"]})
        result = crawl(
            tmp_path,
            "outage",
            batch,
            sites,
            requests=[{"url": site + "/robots.txt", "priority": 1}],
            settings={
                "WIRE_DNS_HOSTS": {"slow.test": "127.0.0.10"},
                "WIRE_WAIT_NORMAL": WAIT,
                "WIRE_POLITENESS_GROUP": "ip",
                "DOWNLOADER_MIDDLEWARES": HOLDS,
            },
        )
        log = list(web.log)
    assert [r["path"] for r in log if r["status"] == 503][:2] == ["/robots.txt", "/robots.txt"]
    assert early(log) == [] and overlaps(log) == []
    outcomes = {o["url"].removeprefix(site): o["status"] for o in result["outcomes"]}
    assert outcomes == {"/robots.txt": 200, "/a": 200, "/b": 200}
    first_page = min(r["start"] for r in log if r["path"] != "/robots.txt")
    assert first_page > max(r["end"] for r in log if r["path"] == "/robots.txt")  # its rules came first


def test_a_hold_past_the_cap_goes_to_the_spider_as_the_answer_it_is(tmp_path):
    with SlowDownWeb("127.0.0.11", outage=30.0, retry_after=1) as web:
        site = web.url("never.slow.test").rstrip("/")
        batch, sites = plan({site: ["/a"]})
        result = crawl(
            tmp_path,
            "capped",
            batch,
            sites,
            settings={
                "WIRE_DNS_HOSTS": {"slow.test": "127.0.0.11"},
                "WIRE_WAIT_NORMAL": WAIT,
                "WIRE_MAX_RETRY_AFTER": 2.0,
                "DOWNLOADER_MIDDLEWARES": HOLDS,
            },
        )
        log = list(web.log)
    assert [o["status"] for o in result["outcomes"]] == [503]
    assert len(log) == 3 and early(log) == []  # held twice, 1 s each, then given up


# -- the scheduler alone -----------------------------------------------------------------------------------


def test_sites_of_a_batch_join_the_group_of_their_recorded_address():
    sched = scheduler(WIRE_POLITENESS_GROUP="ip")
    sites = {
        1: BatchSite(1, "http://a.cl", ip="10.0.0.1"),
        2: BatchSite(2, "http://b.cl", ip="10.0.0.1"),
        3: BatchSite(3, "http://c.cl", ip="10.0.0.2"),
    }
    sched.enqueue_batch(
        [page(1, 1, "http://a.cl/"), page(2, 2, "http://b.cl/"), page(3, 3, "http://c.cl/")], sites=sites
    )
    first, second = take(sched), take(sched)
    assert (first.url, second.url) == ("http://a.cl/", "http://c.cl/")
    assert take(sched) is None  # b.cl is on a.cl's server, which is fetching
    assert sched.queue.group_of("http://b.cl") == "ip:10.0.0.1"


# -- parts split by group ----------------------------------------------------------------------------------


def test_a_batch_in_parts_keeps_each_server_s_sites_in_one_part(tmp_path):
    from wirescrapy.manager.batch import BatchURL, read_batch, write_batch

    sites = [BatchSite(i, f"http://s{i}.example.cl", ip=f"10.0.0.{i % 4}") for i in range(1, 41)]
    urls = [BatchURL(i, i, 0, False, 1.0, 0.0, f"http://s{i}.example.cl/") for i in range(1, 41)]
    parts = [read_batch(p) for p in write_batch(tmp_path, 1, urls, sites, parts=3, group_mode="ip")]
    part_of_ip = {}
    for part in parts:
        for site in part.sites.values():
            assert part_of_ip.setdefault(site.ip, part.part) == part.part, site
    assert len(part_of_ip) == 4 and sum(len(p.sites) for p in parts) == 40
    by_host = [read_batch(p) for p in write_batch(tmp_path, 2, urls, sites, parts=3, group_mode="host")]
    assert any(len({s.ip for s in p.sites.values()}) == 4 for p in by_host)  # hosts split a server
