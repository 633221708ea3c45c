"""The harvester spider's robots.txt handling, without a reactor: its callbacks driven by hand against a real
WireScheduler (the engine's part played by the test, as in test_scheduler.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from scrapy import Request, signals
from scrapy.dupefilters import RFPDupeFilter
from scrapy.exceptions import CloseSpider
from scrapy.http import Response
from scrapy.settings import Settings
from scrapy.signalmanager import SignalManager
from scrapy.statscollectors import MemoryStatsCollector
from twisted.internet.error import DNSLookupError
from twisted.python.failure import Failure

from wirescrapy.collection.metadata import RobotsState
from wirescrapy.harvester.meta import HOLD_SITE, HOPS, KIND
from wirescrapy.harvester.robots import Verdict
from wirescrapy.harvester.scheduler import WireScheduler
from wirescrapy.harvester.spider import HarvesterSpider
from wirescrapy.items import Fetch, FetchError, Kind
from wirescrapy.signals import harvest_opened

A, B = "http://a.cl", "http://b.cl"
RULES = b"User-agent: *\nDisallow: /private\n"


class Engine:
    """The engine's part: takes requests from the scheduler and ends their downloads when the test says."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.downloader = SimpleNamespace(active=set())
        self.start_time = 0.0  # started
        self._slot = SimpleNamespace(scheduler=None, nextcall=SimpleNamespace(schedule=lambda: None))

    def crawl(self, request):
        self._slot.scheduler.enqueue_request(request)

    def take(self):
        request = self._slot.scheduler.next_request()
        if request is not None:
            self.downloader.active.add(request)
            self.crawler.signals.send_catch_log(
                signals.request_reached_downloader, request=request, spider=None
            )
        return request

    def downloaded(self, request):
        self.crawler.signals.send_catch_log(signals.request_left_downloader, request=request, spider=None)
        self.downloader.active.discard(request)


def spider_over(tmp_path, **settings):
    """A harvester's spider over a collection in ``tmp_path`` (the ``WIRE_*`` ``settings`` given), its
    scheduler, and the engine's part."""
    settings = Settings(
        {
            "SCHEDULER": "wirescrapy.harvester.scheduler.WireScheduler",
            "USER_AGENT": "wirescrapy",
            "WIRE_COLLECTION_DIR": str(tmp_path / "collection"),
            "LOGSTATS_INTERVAL": 0,
            # By host: the test's names resolve nowhere, and by address a site waits for its name.
            "WIRE_POLITENESS_GROUP": "host",
            **settings,
        }
    )
    crawler = SimpleNamespace(settings=settings, signals=SignalManager())
    crawler.stats = MemoryStatsCollector(crawler)
    crawler.engine = engine = Engine(crawler)
    spider = HarvesterSpider.from_crawler(crawler)
    scheduler = engine._slot.scheduler = WireScheduler(crawler, RFPDupeFilter())
    scheduler.open(spider)
    return spider, scheduler, engine


@pytest.fixture
def crawl(tmp_path):
    """A spider over an empty collection, its scheduler, and the engine's part; waits of 0, so that a
    released site's next request comes at once."""
    spider, scheduler, engine = spider_over(tmp_path, WIRE_WAIT_NORMAL=0, WIRE_WAIT_LARGE_SITE=0)
    yield spider, scheduler, engine
    spider.harvest.close()


def answer(request: Request, status: int, body: bytes = b"", location: str = "") -> Response:
    return Response(
        request.url,
        status=status,
        body=body,
        request=request,
        headers={"Location": location} if location else None,
    )


def read(spider: HarvesterSpider, response: Response) -> tuple[Fetch, list[Request]]:
    fetch, *follow_ups = spider.parse(response)
    return fetch, follow_ups


def robots_first(spider, scheduler, engine) -> Request:
    """Site A's robots.txt and a page queued, as a batch begins; the robots.txt taken and downloaded."""
    assert spider.harvest.robots.request_due(A, 1000.0)
    engine.crawl(spider.site_files.robots_request(A))
    engine.crawl(Request(A + "/page", callback=spider.parse))
    robots = engine.take()
    assert robots.url == A + "/robots.txt" and robots.meta[HOLD_SITE]
    engine.downloaded(robots)
    assert engine.take() is None  # held: the rules are not read yet
    return robots


def test_a_robots_txt_releases_its_site_once_its_rules_are_read(crawl):
    spider, scheduler, engine = crawl
    robots = robots_first(spider, scheduler, engine)
    fetch, _ = read(spider, answer(robots, 200, RULES))
    assert fetch.kind is Kind.ROBOTS and fetch.origin == A
    page = engine.take()
    assert page.url == A + "/page" and spider.harvest.robots.verdict(page.url) is Verdict.ALLOWED


def test_a_robots_txt_redirected_to_another_site_holds_its_site_until_the_chain_ends(crawl):
    spider, scheduler, engine = crawl
    robots = robots_first(spider, scheduler, engine)
    fetch, (hop,) = read(spider, answer(robots, 301, location=B + "/rules.txt"))
    assert fetch.status == 301 and hop.url == B + "/rules.txt" and hop.meta[KIND] == Kind.ROBOTS.value
    assert HOLD_SITE not in hop.meta  # the hop does not hold b.cl: a.cl stays held
    engine.crawl(hop)
    assert engine.take() is hop and engine.take() is None  # a.cl's page does not come before its rules
    engine.downloaded(hop)
    assert engine.take() is None
    fetch, _ = read(spider, answer(hop, 200, RULES))
    assert fetch.origin == A and fetch.url == B + "/rules.txt"
    page = engine.take()
    assert page.url == A + "/page" and spider.harvest.robots.verdict(page.url) is Verdict.ALLOWED
    assert spider.harvest.robots.verdict(A + "/private/x") is Verdict.DISALLOWED


def test_a_robots_txt_redirected_on_its_own_site_hands_the_hold_to_the_hop(crawl):
    spider, scheduler, engine = crawl
    robots = robots_first(spider, scheduler, engine)
    _, (hop,) = read(spider, answer(robots, 302, location="/robots-new.txt"))
    assert hop.meta[HOLD_SITE]
    engine.crawl(hop)
    assert engine.take() is hop  # at the front of a.cl's queue, before its page
    engine.downloaded(hop)
    assert engine.take() is None
    read(spider, answer(hop, 404))
    assert engine.take().url == A + "/page"


def test_a_redirected_robots_txt_that_fails_elsewhere_releases_its_site(crawl):
    spider, scheduler, engine = crawl
    robots = robots_first(spider, scheduler, engine)
    _, (hop,) = read(spider, answer(robots, 301, location=B + "/rules.txt"))
    engine.crawl(hop)
    engine.downloaded(engine.take())
    failure = Failure(DNSLookupError("b.cl"))
    failure.request = hop
    (fetch,) = spider.failed(failure)
    assert fetch.origin == A and spider.harvest.robots.verdict(A + "/page") is Verdict.UNREACHABLE
    assert engine.take().url == A + "/page"  # released: the middleware records it as not ready


@pytest.mark.parametrize(
    "hops, location, error",
    [
        (5, "/robots-6.txt", FetchError.TOO_MANY_REDIRECTS),
        (1, A + "/robots.txt", FetchError.REDIRECT_LOOP),
    ],
    ids=["too many", "loop"],
)
def test_a_robots_txt_redirected_past_the_limit_is_missing_so_everything_is_allowed(
    crawl, hops, location, error
):
    # RFC 9309 §2.3.1.2: past five redirects the robots.txt may be taken as unavailable, the 4xx case.
    spider, scheduler, engine = crawl
    robots = robots_first(spider, scheduler, engine)
    robots.meta[HOPS] = hops
    fetch, follow_ups = read(spider, answer(robots, 301, location=location))
    assert (fetch.status, fetch.error, follow_ups) == (301, error, [])
    assert spider.harvest.robots.policy(A).state is RobotsState.MISSING
    assert spider.harvest.robots.verdict(A + "/private/x") is Verdict.ALLOWED
    assert engine.take().url == A + "/page"


# -- the summary ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pages, blocked, warned", [(10, 10, True), (10, 9, True), (10, 8, False), (0, 0, False)]
)
def test_a_harvest_whose_pages_were_nearly_all_blocked_addresses_says_so(
    crawl, caplog, pages, blocked, warned
):
    spider, *_ = crawl
    spider.crawler.stats.set_value("harvester/fetched/page", pages)
    spider.crawler.stats.set_value("harvester/errors/blocked_ip", blocked + 1)  # the robots.txt too
    spider.crawler.stats.set_value("harvester/pages/blocked_ip", blocked)
    with caplog.at_level("INFO"):
        spider.summary.take("finished", spider.harvest, 0)
        assert not [r for r in caplog.records if r.name == "harvester"]  # logged once the engine stopped
        spider.crawler.signals.send_catch_log(signals.engine_stopped)
    summary, *warnings = [r for r in caplog.records if r.name == "harvester"]
    assert (
        f"{blocked} of {pages} page fetches refused as blocked addresses (WIRE_BLOCKED_IPS)."
        in summary.getMessage()
    ) is warned
    assert [r.levelname for r in warnings] == (["WARNING"] if warned else [])
    if warned:
        message = warnings[0].getMessage()
        assert f"{blocked} of {pages} page fetches were refused as blocked addresses" in message
        assert "WIRE_BLOCKED_IPS" in message and "SCRAPY_SETTINGS_MODULE=settings.test" in message


def test_a_response_whose_handling_fails_is_recorded_and_the_next_one_goes_on(crawl, monkeypatch, caplog):
    """A defect in handling one response (here: reading a sitemap raises) loses neither the fetch nor the
    responses after it; a failure before the fetch was built is recorded as an error of the request."""
    spider, _, _ = crawl
    sitemap = spider.site_files.sitemap_request(A + "/sitemap.xml", A)

    def broken(*args):
        raise RuntimeError("a defect")

    monkeypatch.setattr(spider.site_files, "sitemap_read", broken)
    fetch, follow_ups = read(spider, answer(sitemap, 200, b"<urlset/>"))
    assert fetch.kind is Kind.SITEMAP and fetch.status == 200 and follow_ups == []
    assert "Handling the response of http://a.cl/sitemap.xml failed" in caplog.text
    monkeypatch.setattr("wirescrapy.harvester.spider.response_fetch", broken)
    page = Request(A + "/page", callback=spider.parse)
    fetch, follow_ups = read(spider, answer(page, 200, b"<html></html>"))
    assert fetch.url == A + "/page" and fetch.error is FetchError.OTHER and follow_ups == []
    assert spider.crawler.stats.get_value("harvester/handling_failed") == 2


def test_a_component_that_cannot_open_stops_the_harvest_before_its_first_fetch(crawl, caplog):
    spider, _, _ = crawl

    def cannot_open(harvest):
        raise OSError("no room for the WARC file")

    spider.crawler.signals.connect(cannot_open, signal=harvest_opened)
    spider.crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
    assert "no room for the WARC file" in spider.harvest.stopped
    assert "the harvest stops before its first fetch" in caplog.text
    with pytest.raises(CloseSpider) as closed:
        spider._idle()
    assert closed.value.reason == "open_failed"
