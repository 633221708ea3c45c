"""Real crawls of the sample web through WireScheduler, checked from the server's side.

Each crawl runs in a subprocess (``python -m tests.test_scheduler PLAN.json``: a CrawlerProcess on the
asyncio reactor), and the sample web's access log says what the sites saw: never two requests to one
host at once, and never less than the host's wait between the end of one response and the start of the
next request. Clock slack is allowed only for requests the client hung up on (a timeout, a stopped
download), whose end the server learns a moment after the client has moved on.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
import scrapy
from protego import Protego
from scrapy import signals
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import IgnoreRequest, StopDownload

from wirescrapy.harvester.meta import BODY_DONE, DOC_ID, ENDED, HOLD_SITE, NOT_BEFORE
from wirescrapy.harvester.politeness import (
    DISPATCH_LEAD,
    HOLDER,
    access_lag,
    dispatch_lead,
)
from wirescrapy.harvester.scheduler import WireScheduler
from wirescrapy.manager.batch import BatchSite, BatchURL
from wirescrapy.testing.process import run_scrapy
from wirescrapy.testing.sampleweb.accesslog import by_host

BASE_SETTINGS = {
    "SCHEDULER": "wirescrapy.harvester.scheduler.WireScheduler",
    "DNS_RESOLVER": "wirescrapy.resolver.MappedResolver",
    "WIRE_DNS_HOSTS": {"wire.test": "127.0.0.1"},
    "WIRE_WAIT_NORMAL": 0.2,
    "WIRE_WAIT_LARGE_SITE": 0.05,
    # The sample web's sites share one address: these tests keep to each host, the groups' own test below.
    "WIRE_POLITENESS_GROUP": "host",
    "DOWNLOAD_DELAY": 0,
    "CONCURRENT_REQUESTS": 300,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 300,
    "ROBOTSTXT_OBEY": False,
    "RETRY_ENABLED": False,
    "HTTPERROR_ALLOW_ALL": True,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "DOWNLOADER_MIDDLEWARES": {"tests.test_scheduler.RefusingMiddleware": 50},
}


# -- what runs in the subprocess -----------------------------------------------------------------------


class RefusingMiddleware:
    """Refuses requests marked ``refuse`` before they reach the network, as a robots.txt rule would."""

    def process_request(self, request, spider):
        if request.meta.get("refuse"):
            request.meta["refused_at"] = time.time()
            raise IgnoreRequest("refused by the test")


class PoliteSpider(scrapy.Spider):
    """Queues a plan's batch (compact) and requests (full), and writes what happened to each."""

    name = "polite"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._headers, signal=signals.headers_received)
        crawler.signals.connect(spider._dropped, signal=signals.request_dropped)
        crawler.signals.connect(spider._left_downloader, signal=signals.request_left_downloader)
        return spider

    def __init__(self, plan, **kwargs):
        super().__init__(**kwargs)
        self.plan = plan
        self.outcomes = []
        self.dropped = []
        self.downloaded = []  # the requests the downloader was done with, in order
        self.started = time.time()

    async def start(self):
        # As the harvester begins a batch (HarvesterSpider._begin): robots.txt queued before the pages of its
        # site, holding it until its rules are read (its Crawl-delay in force from the end of its download),
        # and in the same turn as the batch, whose sites' waits would otherwise replace a Crawl-delay read
        # meanwhile.
        requests = [
            scrapy.Request(
                spec["url"],
                callback=self.parse,
                errback=self.failed,
                priority=spec.get("priority", 0),
                meta={
                    **spec.get("meta", {}),
                    **({HOLD_SITE: True} if spec["url"].endswith("/robots.txt") else {}),
                },
            )
            for spec in self.plan["requests"]
        ]
        for request in requests:
            if request.meta.get(HOLD_SITE):
                self.crawler.engine.crawl(request)
        urls = [page(doc, site, url) for doc, site, url in self.plan["batch"]]
        sites = {site["site_id"]: BatchSite(**site) for site in self.plan["sites"]}
        WireScheduler.of(self.crawler).enqueue_batch(
            urls, sites=sites, callback=self.parse, errback=self.failed
        )
        for request in requests:
            if not request.meta.get(HOLD_SITE):
                yield request

    def parse(self, response):
        self.outcomes.append(
            {"url": response.request.url, "status": response.status, "doc": response.request.meta.get(DOC_ID)}
        )
        if response.url.endswith("/robots.txt") and response.status == 200:
            delay = Protego.parse(response.text).crawl_delay("wirescrapy")
            if delay:
                WireScheduler.of(self.crawler).set_crawl_delay(response.url, delay)
        WireScheduler.of(self.crawler).release_held(response.request)

    def failed(self, failure):
        self.outcomes.append(
            {
                "url": failure.request.url,
                "error": failure.type.__name__,
                "doc": failure.request.meta.get(DOC_ID),
                "refused_at": failure.request.meta.get("refused_at"),
            }
        )
        WireScheduler.of(self.crawler).release_held(failure.request)

    def _headers(self, headers, body_length, request, spider):
        if request.meta.get("stop"):
            raise StopDownload(fail=True)

    def _dropped(self, request, spider):
        self.dropped.append(request.url)

    def _left_downloader(self, request, spider):
        self.downloaded.append(request)

    def closed(self, reason):
        stats = self.crawler.stats.get_stats()
        result = {
            "reason": reason,
            "started": self.started,
            "ended": time.time(),
            "outcomes": self.outcomes,
            "dropped": self.dropped,
            "stats": {k: v for k, v in stats.items() if isinstance(v, (int, float))},
            # When the crawler received each response (or gave up on it): the scheduler's stamp, from which
            # the site's wait ran.
            "received": [[request.url, request.meta[ENDED]] for request in self.downloaded],
        }
        Path(self.plan["out"]).write_text(json.dumps(result))


def _run(plan_path: str) -> None:
    plan = json.loads(Path(plan_path).read_text())
    process = CrawlerProcess({**BASE_SETTINGS, **plan.get("settings", {})})
    process.crawl(PoliteSpider, plan=plan)
    process.start()


# -- the scheduler alone, in this process (no reactor: nothing here waits) -----------------------------------


class FakeCrawler:
    """What WireScheduler uses of a crawler, before any engine exists."""

    def __init__(self, **settings):
        from scrapy.settings import Settings
        from scrapy.signalmanager import SignalManager
        from scrapy.statscollectors import MemoryStatsCollector

        self.settings = Settings({"LOGSTATS_INTERVAL": 0, "WIRE_POLITENESS_GROUP": "host", **settings})
        self.signals = SignalManager()
        self.stats = MemoryStatsCollector(self)
        self.engine = SimpleNamespace(downloader=SimpleNamespace(active=set()))


def scheduler(clock=lambda: 1000.0, **settings):
    from scrapy.dupefilters import RFPDupeFilter

    crawler = FakeCrawler(**settings)
    sched = WireScheduler(crawler, RFPDupeFilter(), clock=clock)
    spider = scrapy.Spider("unit")
    spider.crawler = crawler
    sched.open(spider)
    return sched


def take(sched):
    """``next_request`` as the engine calls it: the request it returns goes to the downloader at once."""
    request = sched.next_request()
    if request is not None:
        sched.crawler.engine.downloader.active.add(request)
        sched.crawler.signals.send_catch_log(signals.request_reached_downloader, request=request, spider=None)
    return request


def download(sched, request):
    """The end of the fetch of ``request``, as the downloader signals it."""
    sched.crawler.signals.send_catch_log(signals.request_left_downloader, request=request, spider=None)
    sched.crawler.engine.downloader.active.discard(request)


def page(doc, site, url, depth=0):
    return BatchURL(doc, site, depth, False, 0.0, 0.0, url)


def test_a_batch_becomes_requests_only_when_their_site_is_ready():
    sched = scheduler()
    urls = [
        page(7, 1, "http://a.cl/x?y=1", 2),
        page(8, 2, "http://b.cl/"),
        page(9, 1, "http://a.cl/z", 3),
        page(10, 1, "http://a.cl/done", 3),
    ]
    callback = object.__repr__
    assert sched.enqueue_batch(urls, skip={10}, callback=callback) == 3
    assert len(sched) == 3 and sched.has_pending_requests()
    first, second = take(sched), take(sched)
    assert (first.url, first.meta, first.callback, first.dont_filter) == (
        "http://a.cl/x?y=1",
        {"wire_doc_id": 7, "wire_site_id": 1, "wire_depth": 2},
        callback,
        True,
    )
    assert second.url == "http://b.cl/"
    assert sched.queue.is_fetching("http://a.cl") and sched.has_pending_requests()
    assert sorted(sched.pending_doc_ids()) == [7, 8, 9]
    download(sched, first)
    download(sched, second)
    assert sched.queue.next_ready_time() == 1015.0  # a.cl waits WIRE_WAIT_NORMAL from the end of x
    assert sched.crawler.stats.get_value("scheduler/released/fetched") == 2


def test_a_site_s_request_is_handed_out_a_lead_before_its_wait_ends_marked_to_be_held_until_then():
    now = [1000.0]
    sched = scheduler(clock=lambda: now[0], DOWNLOADER_MIDDLEWARES={HOLDER: 950})
    assert sched.lead == DISPATCH_LEAD
    for path in ("/1", "/2"):
        sched.enqueue_request(scrapy.Request("http://a.cl" + path))
    first = take(sched)
    assert NOT_BEFORE not in first.meta  # ready already
    download(sched, first)  # ends at 1000.0: the next may go at 1015.0
    now[0] = 1015.0 - 1.5 * DISPATCH_LEAD
    assert take(sched) is None
    now[0] = 1015.0 - DISPATCH_LEAD / 2
    second = take(sched)
    assert second.url == "http://a.cl/2"
    # Held until the wait is over by the wall clock too, which servers log by: here (a still clock) the wall
    # clock has not moved since the fetch ended, so the hold is the whole wait.
    assert second.meta[NOT_BEFORE] == first.meta[ENDED] + 15.0


def test_a_site_s_wait_counts_from_its_response_s_last_byte_when_it_came_in_whole():
    now = [1000.0]
    sched = scheduler(clock=lambda: now[0], DOWNLOADER_MIDDLEWARES={HOLDER: 950})
    for path in ("/1", "/2", "/3"):
        sched.enqueue_request(scrapy.Request("http://a.cl" + path))
    first = take(sched)
    first.meta[BODY_DONE] = time.time() - 0.004  # 4 ms before the downloader was done with it
    download(sched, first)
    assert sched.queue.next_ready_time() == pytest.approx(1015.0 - 0.004, abs=0.001)
    assert first.meta[ENDED] == first.meta[BODY_DONE]
    now[0] = 1015.0
    second = take(sched)
    assert second.meta[NOT_BEFORE] == pytest.approx(first.meta[BODY_DONE] + 15.0)
    second.meta[BODY_DONE] = time.time() - 5.0  # not this access's: a stamp from before a clock was stepped
    download(sched, second)
    assert sched.queue.next_ready_time() == pytest.approx(1030.0, abs=0.001)


@pytest.mark.parametrize(
    ("body_done", "now", "lag"),
    [
        (None, 100.0, 0.0),
        (99.9996, 100.0, 0.0004),
        (100.0, 100.0, 0.0),
        (98.5, 100.0, 0.0),
        (100.2, 100.0, 0.0),  # more than BODY_DONE_LAG before, or after: a clock stepped
    ],
)
def test_an_access_ends_at_its_last_byte_if_that_came_just_before(body_done, now, lag):
    assert access_lag(body_done, now) == pytest.approx(lag)


@pytest.mark.parametrize("middlewares", [{}, {HOLDER: None}])
def test_without_the_middleware_that_holds_them_no_request_is_handed_out_early(middlewares):
    now = [1000.0]
    sched = scheduler(clock=lambda: now[0], DOWNLOADER_MIDDLEWARES=middlewares)
    assert sched.lead == 0.0
    for path in ("/1", "/2"):
        sched.enqueue_request(scrapy.Request("http://a.cl" + path))
    download(sched, take(sched))
    now[0] = 1015.0 - DISPATCH_LEAD / 2
    assert take(sched) is None
    now[0] = 1015.0
    assert NOT_BEFORE not in take(sched).meta


def test_the_holder_is_the_fetch_limits_middleware_by_its_path_or_its_class():
    from wirescrapy.harvester.middlewares.fetchlimits import FetchLimitsMiddleware

    assert HOLDER == f"{FetchLimitsMiddleware.__module__}.{FetchLimitsMiddleware.__qualname__}"
    assert dispatch_lead([FetchLimitsMiddleware]) == dispatch_lead([HOLDER]) == DISPATCH_LEAD
    assert dispatch_lead(["scrapy.downloadermiddlewares.stats.DownloaderStats"]) == 0.0


def test_a_site_is_released_once_whatever_the_signals_say():
    sched = scheduler()
    sched.enqueue_request(scrapy.Request("http://a.cl/1"))
    sched.enqueue_request(scrapy.Request("http://a.cl/2"))
    request = take(sched)
    download(sched, request)
    sched.crawler.signals.send_catch_log(signals.request_left_downloader, request=request, spider=None)
    foreign = scrapy.Request("http://a.cl/robots.txt")  # engine.download(): never through the scheduler
    download(sched, foreign)
    assert sched.crawler.stats.get_value("scheduler/released/fetched") == 1
    assert not sched.queue.is_fetching("http://a.cl") and len(sched) == 1


def test_a_held_site_waits_for_the_spider_then_its_wait_counts_from_the_download():
    now = [1000.0]
    sched = scheduler(clock=lambda: now[0], WIRE_WAIT_NORMAL=0.0, WIRE_WAIT_LARGE_SITE=0.0)
    sched.enqueue_request(scrapy.Request("http://a.cl/robots.txt", meta={HOLD_SITE: True}, priority=1))
    sched.enqueue_request(scrapy.Request("http://a.cl/page"))
    robots = take(sched)
    download(sched, robots)
    assert take(sched) is None and sched.queue.is_fetching("http://a.cl")  # the rules are not read yet
    now[0] = 1000.5
    sched.release_held(robots)
    sched.release_held(robots)  # twice: once only
    assert take(sched).url == "http://a.cl/page"
    assert sched.crawler.stats.get_value("scheduler/released/fetched") == 1


def test_a_hold_the_spider_never_ends_is_ended_by_the_scheduler():
    now = [1000.0]
    sched = scheduler(clock=lambda: now[0], WIRE_WAIT_NORMAL=0.0, WIRE_WAIT_LARGE_SITE=0.0)
    sched.enqueue_request(scrapy.Request("http://a.cl/robots.txt", meta={HOLD_SITE: True}, priority=1))
    sched.enqueue_request(scrapy.Request("http://a.cl/page"))
    download(sched, take(sched))
    now[0] += 61
    assert take(sched).url == "http://a.cl/page"


def test_a_hold_is_ended_by_its_site_whichever_request_holds_it():
    now = [1000.0]
    sched = scheduler(clock=lambda: now[0], WIRE_WAIT_NORMAL=0.0, WIRE_WAIT_LARGE_SITE=0.0)
    sched.enqueue_request(scrapy.Request("http://a.cl/robots.txt", meta={HOLD_SITE: True}, priority=1))
    sched.enqueue_request(scrapy.Request("http://a.cl/page"))
    sched.enqueue_request(scrapy.Request("http://b.cl/rules.txt"))  # where a.cl's robots.txt redirects
    download(sched, take(sched))
    download(sched, take(sched))
    assert take(sched) is None
    sched.release_site("http://b.cl")  # no hold there: nothing happens
    assert take(sched) is None
    now[0] = 1000.5
    sched.release_site("http://A.cl:80/")
    assert take(sched).url == "http://a.cl/page"
    assert sched.crawler.stats.get_value("scheduler/released/fetched") == 2


def test_requests_with_a_positive_priority_go_first_and_duplicates_are_dropped():
    sched = scheduler(WIRE_WAIT_NORMAL=0.0, WIRE_WAIT_LARGE_SITE=0.0)
    for url, priority in (("http://A.cl:80/1", 0), ("http://a.cl/2", 0), ("http://a.cl/robots.txt", 1)):
        assert sched.enqueue_request(scrapy.Request(url, priority=priority))
    assert not sched.enqueue_request(scrapy.Request("http://a.cl/2"))
    assert sched.enqueue_request(scrapy.Request("http://a.cl/2", dont_filter=True))
    order = []
    while (request := take(sched)) is not None:
        order.append(request.url)
        download(sched, request)
    assert order == [
        "http://a.cl/robots.txt",
        "http://a.cl:80/1",
        "http://a.cl/2",
        "http://a.cl/2",
    ]  # one site
    assert not sched.has_pending_requests()


def test_at_most_wire_connections_sites_at_once():
    sched = scheduler(WIRE_CONNECTIONS=2)
    for site in "abc":
        sched.enqueue_request(scrapy.Request(f"http://{site}.cl/"))
    first, second = take(sched), take(sched)
    assert {first.url, second.url} == {"http://a.cl/", "http://b.cl/"}
    assert take(sched) is None
    download(sched, first)
    assert take(sched).url == "http://c.cl/"


def test_sites_of_a_resumed_batch_wait_first_and_site_records_set_their_waits():
    sched = scheduler(clock=lambda: 50.0)
    urls = [page(1, 1, "http://a.cl/"), page(2, 2, "http://b.cl/"), page(3, 3, "http://c.cl/")]
    sites = {
        1: BatchSite(1, "http://a.cl", docs=101),
        2: BatchSite(2, "http://b.cl", crawl_delay=30.0),
        3: BatchSite(3, "http://c.cl"),
    }
    sched.enqueue_batch(urls, sites=sites, resumed=True)
    assert [sched.queue.wait_of(s) for s in ("http://a.cl", "http://b.cl", "http://c.cl")] == [
        5.0,
        30.0,
        15.0,
    ]
    assert sched.queue.next_ready_time() == 55.0
    sched.set_crawl_delay("http://a.cl/robots.txt", 9)
    assert sched.queue.next_ready_time() == 59.0


def test_a_bad_batch_url_is_refused_naming_it():
    sched = scheduler()
    with pytest.raises(ValueError, match="doc 5"):
        sched.enqueue_batch([page(5, 1, "http://a.cl/deep", 70_000)])
    assert len(sched) == 0 and len(sched.docs) == 0


def test_the_unreached_request_is_released_without_a_wait_when_the_downloader_is_done_with_it():
    sched = scheduler()
    sched.enqueue_request(scrapy.Request("http://a.cl/fetched"))
    sched.enqueue_request(scrapy.Request("http://a.cl/refused"))
    sched.enqueue_request(scrapy.Request("http://a.cl/next"))
    clock = sched._clock
    download(sched, take(sched))
    sched._clock = lambda: clock() + 15
    refused = sched.next_request()
    assert refused.url == "http://a.cl/refused"
    active = sched.crawler.engine.downloader.active
    active.add(refused)
    assert sched.next_request() is None  # still in a middleware: the site is still fetching
    # A middleware refused it: no request_reached_downloader, and it has left downloader.active.
    active.discard(refused)
    assert take(sched).url == "http://a.cl/next"  # no new wait
    assert sched.crawler.stats.get_value("scheduler/released/not_fetched") == 1


# -- real crawls ---------------------------------------------------------------------------------------


def crawl(tmp_path, name, batch, sites, requests=(), settings=None, timeout=60):
    plan = {
        "batch": batch,
        "sites": sites,
        "requests": list(requests),
        "settings": settings or {},
        "out": str(tmp_path / f"{name}.json"),
    }
    plan_path = tmp_path / f"{name}-plan.json"
    plan_path.write_text(json.dumps(plan))
    run = run_scrapy(plan_path, module="tests.test_scheduler", timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(Path(plan["out"]).read_text())
    result["log"] = run.stderr
    return result


def server_view(web, result):
    """The crawl's requests as the server saw them: host -> records by start time, each with ``received``,
    when the crawler received its response (or gave up on it), by the crawler's clock."""
    received: dict[tuple[str, str], list[float]] = {}
    for url, ended in sorted(result["received"], key=lambda pair: pair[1]):
        parts = urlsplit(url)
        received.setdefault(
            (parts.hostname, parts.path + (f"?{parts.query}" if parts.query else "")), []
        ).append(ended)
    hosts = by_host(r for r in web.access_log() if result["started"] <= r["start"] <= result["ended"])
    for records in hosts.values():
        for record in records:
            record["received"] = received[record["host"], record["path"]].pop(0)
    return hosts


def gaps(records):
    """Seconds between one response's end and the next request to the same host."""
    return [b["start"] - a["end"] for a, b in itertools.pairwise(records)]


def too_soon(records, wait):
    """(path before, path after, gap) for each request to one host that reached the server less than ``wait``
    after the crawler had received the previous response: politeness as the crawler keeps it, its wait running
    from the end of its download (``ENDED``) to the next request. The server's own end of a response is no
    measure: when the crawler gives up on one (a timeout, a stopped download) the server sees the end later,
    by however long a loaded machine takes it to notice."""
    return [
        (before["path"], after["path"], round(after["start"] - before["received"], 4))
        for before, after in itertools.pairwise(records)
        if after["start"] - before["received"] < wait
    ]


def assert_polite(records, wait):
    assert not too_soon(records, wait), (wait, too_soon(records, wait)[:5])


@pytest.mark.timeout(90)
def test_politeness_holds_on_every_path(sample_web, tmp_path):
    web = sample_web
    origin = [web.url(site, "").rstrip("/") for site in range(6)]
    batch, doc = [], 100

    def pages(site, paths):
        nonlocal doc
        for path in paths:
            doc += 1
            batch.append([doc, site, origin[site] + path])

    pages(0, ["/", "/page/1.html", "/page/2.html"])
    pages(1, ["/page/1.html"])
    pages(2, [f"/page/{i}.html" for i in range(1, 7)])
    pages(3, ["/error.html", "/drop.html", "/page/1.html"])
    pages(4, [f"/page/{i}.html" for i in range(1, 11)])
    pages(5, ["/page/1.html", "/page/2.html"])
    sites = [{"site_id": s, "origin": origin[s], "docs": 500 if s == 4 else 10} for s in range(6)]
    requests = [
        {"url": origin[0] + "/robots.txt", "priority": 1},
        {"url": origin[1] + "/robots.txt", "priority": 1},
        {"url": origin[0] + "/moved/a"},  # 301 -> /moved/b, 302 -> /page/3.html
        {"url": origin[0] + "/moved/away"},  # 301 -> site 1's /page/2.html
        {"url": origin[2] + "/page/20.html", "meta": {"refuse": True}},  # IgnoreRequest, no network
        {"url": origin[2] + "/page/21.html", "meta": {"stop": True}},  # StopDownload at the headers
        {"url": origin[2] + "/page/22.html"},
        {"url": origin[2] + "/page/22.html"},  # a duplicate: dropped by the dupefilter
        {"url": origin[3] + "/slow.html", "meta": {"download_timeout": 0.3}},  # times out
        {"url": "http://nowhere.invalid/"},  # DNS error
        {"url": "http://refused.wire.test:1/a"},  # connection refused, twice on one site
        {"url": "http://refused.wire.test:1/b"},
    ]
    result = crawl(tmp_path, "paths", batch, sites, requests)
    assert result["reason"] == "finished"
    assert "Traceback" not in result["log"]

    # Every request ended once, the way it should have.
    outcomes = {o["url"]: o for o in result["outcomes"]}
    assert len(outcomes) == len(result["outcomes"])
    assert {o["doc"] for o in result["outcomes"] if o["doc"]} == {d for d, _, _ in batch}
    assert outcomes[origin[0] + "/page/3.html"]["status"] == 200  # the end of the redirect chain
    assert outcomes[origin[1] + "/page/2.html"]["status"] == 200
    assert outcomes[origin[3] + "/error.html"]["status"] == 500
    assert outcomes[origin[3] + "/drop.html"]["error"] == "ResponseFailed"
    assert outcomes[origin[3] + "/slow.html"]["error"] == "TimeoutError"
    assert outcomes[origin[2] + "/page/20.html"]["error"] == "IgnoreRequest"
    assert outcomes[origin[2] + "/page/21.html"]["error"] == "StopDownload"
    assert outcomes["http://nowhere.invalid/"]["error"] == "DNSLookupError"
    assert outcomes["http://refused.wire.test:1/b"]["error"] == "ConnectionRefusedError"
    assert result["dropped"] == [origin[2] + "/page/22.html"]

    # Every site released exactly once per request: nothing in flight at the end, and the one request
    # refused before the network released its site without a wait.
    stats = result["stats"]
    assert stats["scheduler/dequeued"] == stats["scheduler/released/fetched"] + 1
    assert stats["scheduler/released/not_fetched"] == 1
    assert stats["harvester/left/urls"] == stats["harvester/left/in_flight"] == 0
    assert stats["scheduler/enqueued/batch"] == len(batch)
    assert stats["scheduler/dequeued"] == len(batch) + len(requests) - 1 + 3  # - duplicate + 3 redirects

    # From the server's side.
    hosts = server_view(web, result)
    host = [origin[s].split("//")[1].split(":")[0] for s in range(6)]
    assert set(hosts) == set(host)
    waits = {h: 0.2 for h in host} | {host[1]: 1.0, host[4]: 0.05}  # site 1's robots.txt: Crawl-delay 1
    for name, records in hosts.items():
        assert_polite(records, waits[name])
    assert hosts[host[0]][0]["path"] == hosts[host[1]][0]["path"] == "/robots.txt"  # front of the queue
    assert {r["path"] for r in hosts[host[0]]} >= {"/moved/a", "/moved/b", "/page/3.html"}
    # The refused request cost site 2 no wait: the site's next request reached the server less than a wait
    # after the refusal.
    refused = outcomes[origin[2] + "/page/20.html"]["refused_at"]
    assert min(r["start"] for r in hosts[host[2]] if r["start"] > refused) - refused < 0.2
    assert len(hosts[host[2]]) == 8  # 6 batch pages, the stopped one, the deduplicated one


@pytest.mark.timeout(90)
def test_the_engine_is_woken_when_a_site_becomes_ready(sample_web, tmp_path):
    """With 0.3 s waits, N pages a site take about N x 0.3 s, not N x 5 s (the engine's heartbeat). The bounds
    leave a second for a loaded machine: a site whose readiness woke nothing waits for the heartbeat, 5 s."""
    web, n, wait = sample_web, 8, 0.3
    batch = [
        [1000 + 100 * site + i, site, web.url(site, f"/page/{i}.html")]
        for site in (0, 2, 5)
        for i in range(10, 10 + n)
    ]
    sites = [{"site_id": s, "origin": web.url(s, "").rstrip("/"), "docs": 10} for s in (0, 2, 5)]
    started = time.monotonic()
    result = crawl(
        tmp_path, "wake", batch, sites, settings={"WIRE_WAIT_NORMAL": wait, "WIRE_WAIT_LARGE_SITE": wait}
    )
    assert result["reason"] == "finished" and len(result["outcomes"]) == 3 * n
    hosts = server_view(web, result)
    assert len(hosts) == 3
    for records in hosts.values():
        assert len(records) == n
        assert_polite(records, wait)
        assert max(gaps(records)) < wait + 1.0
        assert records[-1]["end"] - records[0]["start"] < (n - 1) * wait + 2.5
    assert time.monotonic() - started < 30


def test_a_stopped_scheduler_hands_out_nothing_and_has_nothing_pending():
    sched = scheduler()
    sched.enqueue_batch([page(7, 1, "http://a.cl/x"), page(8, 2, "http://b.cl/")], callback=object.__repr__)
    first = take(sched)
    sched.stop()  # a write to the collection failed: the harvest can store nothing more
    assert take(sched) is None and not sched.has_pending_requests()
    download(sched, first)
    assert take(sched) is None and len(sched) == 1  # the queue is kept, for the counts logged at close


if __name__ == "__main__":
    _run(sys.argv[1])
