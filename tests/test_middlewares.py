"""The harvester's downloader middlewares: real requests through ``process_request``, ``process_response``
and ``process_exception``, and the ``headers_received`` / ``bytes_received`` signals sent as Scrapy's
download handler sends them.

No reactor runs and no server answers: robots.txt rules come from robots.txt fetches sent through the
gatherer, as in a crawl, and host names are resolved by the crawl's ``DNS_RESOLVER`` (``settings.test``
maps ``*.wire.test``), which answers them without waiting. A name it does not map would need a running
reactor (Scrapy's threaded resolver); that path, and a DNS failure, are left to ``tests/e2e``.
"""

from __future__ import annotations

import logging
import math
import time

import pytest
import scrapy
from scrapy.exceptions import StopDownload
from scrapy.http import Headers, HtmlResponse
from twisted.internet.error import ConnectionRefusedError, DNSLookupError, TimeoutError
from twisted.web._newclient import ResponseFailed
from twisted.web.iweb import UNKNOWN_LENGTH

from tests.components import T0, Bench, run_now
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.config import BLOCKED_NETWORKS
from wirescrapy.harvester.meta import (
    BODY_DONE,
    IP,
    KIND,
    MIME_REFUSED,
    NOT_BEFORE,
    RECEIVED,
    STARTED,
    TRUNCATED,
)
from wirescrapy.harvester.middlewares import (
    AlreadyFetched,
    BlockedIP,
    RobotsDisallowed,
    RobotsNotReady,
)
from wirescrapy.harvester.middlewares.fetchlimits import (
    MAX_HOLD,
    TIMER_GRAIN,
    hold_time,
)
from wirescrapy.harvester.politeness import DISPATCH_LEAD
from wirescrapy.items import FetchError, Kind
from wirescrapy.seeder.robots import MAX_ROBOTS_BYTES
from wirescrapy.seeder.sitemaps import MAX_BYTES as MAX_SITEMAP_BYTES

SITE = "http://site1.wire.test"
OTHER = "http://site2.wire.test"
ROBOTS = (
    b"User-agent: *\nDisallow: /private/\n\nUser-agent: wirescrapy\nDisallow: /private/\nDisallow: /bots/\n"
)


@pytest.fixture
def bench(tmp_path):
    with Bench(tmp_path) as bench:
        yield bench


def passes(middleware, request, spider) -> bool:
    return middleware.process_request(request, spider) is None


# -- the batch filter ------------------------------------------------------------------------------------


def test_a_page_already_fetched_in_its_batch_is_not_fetched_again(bench):
    bench.seed(SITE + "/a.html", SITE + "/b.html", SITE + "/c.html")
    bench.gather(bench.page(SITE + "/c.html", 200, b"<p>before</p>", at=T0))  # before this batch was written
    batch = bench.open_batch()
    assert {url.url for url in batch.urls} >= {SITE + "/a.html", SITE + "/b.html"}
    middleware = bench.middleware("BatchFilterMiddleware")
    bench.gather(
        bench.page(SITE + "/a.html", 200, b"<p>now</p>", at=time.time())
    )  # e.g. a redirect led there
    with pytest.raises(AlreadyFetched, match="a.html was fetched in this batch already"):
        middleware.process_request(bench.request(SITE + "/a.html"), bench.spider)
    assert passes(middleware, bench.request(SITE + "/b.html"), bench.spider)
    assert passes(middleware, bench.request(SITE + "/c.html"), bench.spider)
    assert passes(middleware, bench.request(SITE + "/robots.txt", Kind.ROBOTS), bench.spider)  # no doc-id


def test_without_a_harvest_nothing_is_filtered(tmp_path):
    with Bench(tmp_path, announce=False) as plain:  # no harvest_opened: a crawl of another spider
        plain.seed(SITE + "/a.html")
        middleware = plain.middleware("BatchFilterMiddleware")
        assert passes(middleware, plain.request(SITE + "/a.html"), plain.spider)


def test_without_a_batch_nothing_is_filtered(bench):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 200, b"<p>now</p>", at=time.time()))
    assert passes(bench.middleware("BatchFilterMiddleware"), bench.request(SITE + "/a.html"), bench.spider)


# -- blocked addresses -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, address, blocked",
    [
        ("http://site1.wire.test/a.html", "127.0.0.1", False),  # settings.test: loopback allowed
        ("http://127.0.0.1:8080/", "127.0.0.1", False),
        ("http://10.1.2.3/", "10.1.2.3", True),
        ("https://user@192.168.0.1:8443/x", "192.168.0.1", True),
        ("http://203.0.113.9/", "203.0.113.9", True),
        ("http://8.8.8.8/", "8.8.8.8", False),
    ],
)
def test_a_request_is_refused_when_its_host_resolves_to_a_blocked_address(bench, url, address, blocked):
    bench.install_resolver()
    middleware = bench.middleware("BlockedIPMiddleware")
    request = scrapy.Request(url)
    if blocked:
        with pytest.raises(BlockedIP, match=f"resolves to {address}, a blocked address"):
            run_now(middleware.process_request(request, bench.spider))
    else:
        assert run_now(middleware.process_request(request, bench.spider)) is None
    assert request.meta[IP] == address  # the spider records it on the site


def test_a_host_mapped_to_a_blocked_address_is_refused(tmp_path):
    with Bench(
        tmp_path,
        WIRE_DNS_HOSTS={"wire.test": "127.0.0.1", "site1.wire.test": "127.0.0.2"},
        WIRE_BLOCKED_IPS=["127.0.0.2/32"],
    ) as bench:
        bench.install_resolver()
        middleware = bench.middleware("BlockedIPMiddleware")
        with pytest.raises(BlockedIP, match="site1.wire.test resolves to 127.0.0.2"):
            run_now(middleware.process_request(scrapy.Request(SITE + "/"), bench.spider))
        assert run_now(middleware.process_request(scrapy.Request(OTHER + "/"), bench.spider)) is None


def test_a_url_without_a_host_is_left_to_the_download_handler(bench):
    request = scrapy.Request("file:///etc/hostname")
    assert run_now(bench.middleware("BlockedIPMiddleware").process_request(request, bench.spider)) is None
    assert IP not in request.meta


def test_an_address_is_judged_once_and_its_verdict_kept(bench):
    bench.install_resolver()
    middleware = bench.middleware("BlockedIPMiddleware")
    judged = []
    blocked = middleware.blocked
    middleware.blocked = lambda address: judged.append(address) or blocked(address)
    for _ in range(3):
        with pytest.raises(BlockedIP, match="resolves to 10.1.2.3"):
            run_now(middleware.process_request(scrapy.Request("http://10.1.2.3/"), bench.spider))
        assert run_now(middleware.process_request(scrapy.Request(SITE + "/"), bench.spider)) is None
    assert judged == ["10.1.2.3", "127.0.0.1"]


@pytest.fixture(scope="module")
def wire_defaults(tmp_path_factory):
    """A bench with WIRE's blocked networks (``settings.test`` allows loopback)."""
    with Bench(tmp_path_factory.mktemp("defaults"), WIRE_BLOCKED_IPS=BLOCKED_NETWORKS) as bench:
        yield bench


@pytest.mark.parametrize(
    "address, blocked",
    [
        ("127.0.0.1", True),
        ("10.0.0.1", True),
        ("172.31.255.255", True),
        ("100.64.0.1", True),
        ("169.254.1.1", True),
        ("224.0.0.1", True),
        ("255.255.255.255", True),
        ("0.0.0.0", True),
        ("8.8.8.8", False),
        ("200.1.2.3", False),
        ("172.32.0.1", False),
        ("::1", True),
        ("::", True),
        ("fe80::1", True),
        ("fd00::1", True),
        ("ff02::1", True),
        ("2001:db8::1", True),
        ("64:ff9b:1::1", True),
        ("2001:4860:4860::8888", False),
        ("2800:3f0::1", False),
        # An IPv4-mapped IPv6 address is its IPv4 address.
        ("::ffff:127.0.0.1", True),
        ("::ffff:10.0.0.1", True),
        ("::ffff:8.8.8.8", False),
        ("::FFFF:C0A8:0101", True),
    ],
)
def test_wire_s_blocked_networks(wire_defaults, address, blocked):
    assert wire_defaults.middleware("BlockedIPMiddleware").blocked(address) is blocked


def test_the_test_settings_allow_loopback_only(bench):
    middleware = bench.middleware("BlockedIPMiddleware")
    assert not middleware.blocked("127.0.0.2") and not middleware.blocked("::1")
    assert not middleware.blocked("::ffff:127.0.0.1")
    assert middleware.blocked("10.0.0.1") and middleware.blocked("::ffff:10.0.0.1")


# -- robots.txt ------------------------------------------------------------------------------------------


def test_before_its_robots_txt_is_read_a_site_s_pages_wait(bench):
    bench.seed(SITE + "/a.html")
    middleware = bench.middleware("RobotsMiddleware")
    with pytest.raises(RobotsNotReady, match="robots.txt of http://site1.wire.test is unknown"):
        middleware.process_request(bench.request(SITE + "/a.html"), bench.spider)
    assert passes(middleware, bench.request(SITE + "/robots.txt", Kind.ROBOTS), bench.spider)
    assert passes(middleware, bench.request(SITE + "/sitemap.xml", Kind.SITEMAP), bench.spider)


def test_a_valid_robots_txt_refuses_what_it_disallows_for_our_user_agent(bench):
    bench.seed(SITE + "/a.html", SITE + "/private/a.html", SITE + "/bots/a.html", OTHER + "/private/a.html")
    bench.robots(SITE, 200, ROBOTS)
    bench.robots(OTHER, 404)
    middleware = bench.middleware("RobotsMiddleware")
    assert passes(middleware, bench.request(SITE + "/a.html"), bench.spider)
    for path in ("/private/a.html", "/bots/a.html"):  # the wirescrapy group, not the * one
        with pytest.raises(RobotsDisallowed, match=f"robots.txt of {SITE} forbids {SITE}{path}"):
            middleware.process_request(bench.request(SITE + path), bench.spider)
    assert passes(middleware, bench.request(OTHER + "/private/a.html"), bench.spider)  # missing: all allowed


@pytest.mark.parametrize(
    "status, error",
    [(500, None), (429, None), (0, FetchError.TIMEOUT), (0, FetchError.DNS)],
    ids=["500", "429", "timeout", "dns"],
)
def test_an_unreachable_robots_txt_holds_the_site_s_pages(bench, status, error):
    bench.seed(SITE + "/a.html")
    bench.robots(SITE, status, b"", error=error)
    with pytest.raises(RobotsNotReady, match="is unreachable"):
        bench.middleware("RobotsMiddleware").process_request(bench.request(SITE + "/a.html"), bench.spider)


def test_a_changed_robots_txt_makes_refused_pages_fetchable_again(bench):
    bench.seed(SITE + "/private/a.html")
    middleware = bench.middleware("RobotsMiddleware")
    bench.robots(SITE, 200, ROBOTS, at=T0)
    with pytest.raises(RobotsDisallowed):
        middleware.process_request(bench.request(SITE + "/private/a.html"), bench.spider)
    bench.gather(
        bench.failure(SITE + "/private/a.html", FetchError.ROBOTS_DISALLOWED, at=T0 + 1)
    )  # the errback's
    assert bench.record(SITE + "/private/a.html")["flags"] & DocFlag.ROBOTS_DISALLOWED
    bench.robots(SITE, 200, b"User-agent: *\nDisallow: /secret/\n", at=T0 + 8 * 86400)
    assert passes(middleware, bench.request(SITE + "/private/a.html"), bench.spider)
    # and the manager may put it in a batch again
    assert not bench.record(SITE + "/private/a.html")["flags"] & DocFlag.ROBOTS_DISALLOWED


def test_a_restarted_harvest_reads_the_rules_from_the_collection(tmp_path):
    with Bench(tmp_path) as bench:
        bench.seed(SITE + "/a.html", SITE + "/private/a.html", OTHER + "/a.html")
        bench.robots(SITE, 200, ROBOTS + b"Crawl-delay: 3\n", at=time.time())
        bench.robots(OTHER, 503, at=time.time())
    with Bench(tmp_path) as bench:
        middleware = bench.middleware("RobotsMiddleware")
        assert passes(middleware, bench.request(SITE + "/a.html"), bench.spider)
        with pytest.raises(RobotsDisallowed):
            middleware.process_request(bench.request(SITE + "/private/a.html"), bench.spider)
        with pytest.raises(RobotsNotReady):
            middleware.process_request(bench.request(OTHER + "/a.html"), bench.spider)
        assert bench.policy(SITE).crawl_delay == 3.0 and not bench.policy(SITE).due(time.time())


def test_without_a_harvest_robots_txt_is_not_checked(tmp_path):
    with Bench(tmp_path, announce=False) as plain:  # a harvest would refuse it: its robots.txt is unknown
        request = scrapy.Request(SITE + "/private/a.html")
        assert passes(plain.middleware("RobotsMiddleware"), request, plain.spider)


# -- retries ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "exception",
    [TimeoutError(), ConnectionRefusedError(), DNSLookupError("x"), ResponseFailed([])],
    ids=lambda e: type(e).__name__,
)
def test_a_failed_fetch_is_tried_three_times_in_all_and_giving_up_is_info(bench, caplog, exception):
    middleware = bench.middleware("WireRetryMiddleware")
    bench.seed(SITE + "/a.html")
    request = bench.request(SITE + "/a.html")
    retries = []
    with caplog.at_level(logging.DEBUG):
        while (retry := middleware.process_exception(request, exception, bench.spider)) is not None:
            retries.append(retry)
            request = retry
    assert [r.meta["retry_times"] for r in retries] == [1, 2]  # WIRE_MAX_ERRORS_SAME_BATCH = 3 fetches
    assert all(r.dont_filter and r.url == SITE + "/a.html" for r in retries)
    assert [r.priority for r in retries] == [-1, -2]  # the back of its site's queue
    [gave_up] = [r for r in caplog.records if "Gave up retrying" in r.getMessage()]
    assert gave_up.levelno == logging.INFO
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert bench.stats["retry/count"] == 2 and bench.stats["retry/max_reached"] == 1


def test_a_server_error_is_retried_and_a_client_error_is_not(bench):
    middleware = bench.middleware("WireRetryMiddleware")
    request = scrapy.Request(SITE + "/a.html")
    retry = middleware.process_response(
        request, HtmlResponse(request.url, status=503, request=request), bench.spider
    )
    assert isinstance(retry, scrapy.Request) and retry.meta["retry_times"] == 1
    for status in (200, 301, 404):
        response = HtmlResponse(request.url, status=status, request=request)
        assert middleware.process_response(request, response, bench.spider) is response


def test_a_robots_txt_request_is_not_retried(bench):
    middleware = bench.middleware("WireRetryMiddleware")
    request = bench.request(SITE + "/robots.txt", Kind.ROBOTS, dont_retry=True)  # as the spider marks it
    assert middleware.process_exception(request, TimeoutError(), bench.spider) is None
    response = HtmlResponse(request.url, status=500, request=request)
    assert middleware.process_response(request, response, bench.spider) is response


def test_with_one_error_allowed_a_batch_never_retries(tmp_path, caplog):
    with Bench(tmp_path, WIRE_MAX_ERRORS_SAME_BATCH=1) as bench, caplog.at_level(logging.INFO):
        request = scrapy.Request(SITE + "/a.html")
        assert (
            bench.middleware("WireRetryMiddleware").process_exception(request, TimeoutError(), bench.spider)
            is None
        )
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_refused_request_is_not_retried(bench):
    request = scrapy.Request(SITE + "/a.html")
    assert (
        bench.middleware("WireRetryMiddleware").process_exception(request, BlockedIP("x"), bench.spider)
        is None
    )


# -- media types and sizes -------------------------------------------------------------------------------


def test_the_time_a_request_goes_to_the_network_is_stamped(bench):
    request = scrapy.Request(SITE + "/a.html")
    before = time.time()
    assert passes(bench.middleware("FetchLimitsMiddleware"), request, bench.spider)
    assert before <= request.meta[STARTED] <= time.time()


def test_a_request_handed_out_before_its_site_s_wait_ends_is_held_until_then(bench):
    from twisted.internet.defer import Deferred

    middleware = bench.middleware("FetchLimitsMiddleware")
    request = scrapy.Request(SITE + "/a.html", meta={NOT_BEFORE: time.time() + 0.0015})
    held = middleware.process_request(request, bench.spider)
    assert isinstance(held, Deferred) and STARTED not in request.meta  # stamped when it goes
    held.cancel()
    held.addErrback(lambda failure: None)
    late = scrapy.Request(SITE + "/b.html", meta={NOT_BEFORE: time.time() - 1})
    assert passes(middleware, late, bench.spider) and STARTED in late.meta


def test_the_moment_a_response_s_last_byte_came_in_is_stamped(bench):
    middleware = bench.middleware("FetchLimitsMiddleware")
    headers = Headers({"Content-Type": "text/html"})
    whole = scrapy.Request(SITE + "/a.html")
    middleware.headers_received(headers, 10, whole, bench.spider)
    middleware.bytes_received(b"12345", whole, bench.spider)
    assert BODY_DONE not in whole.meta  # 5 bytes of 10
    before = time.time()
    middleware.bytes_received(b"67890", whole, bench.spider)
    assert before <= whole.meta[BODY_DONE] <= time.time()
    empty = scrapy.Request(SITE + "/b.html")
    middleware.headers_received(headers, 0, empty, bench.spider)
    assert BODY_DONE in empty.meta
    chunked = scrapy.Request(SITE + "/c.html")  # no length announced: its end is the downloader's
    middleware.headers_received(headers, UNKNOWN_LENGTH, chunked, bench.spider)
    middleware.bytes_received(b"12345", chunked, bench.spider)
    assert BODY_DONE not in chunked.meta
    refused = scrapy.Request(SITE + "/d.pdf")
    with pytest.raises(StopDownload):
        middleware.headers_received(Headers({"Content-Type": "application/pdf"}), 0, refused, bench.spider)
    assert BODY_DONE not in refused.meta


def test_a_retry_counts_its_own_response_not_the_one_before(bench):
    # A retry is a copy of the request, meta included (scrapy's get_retry_request).
    middleware = bench.middleware("FetchLimitsMiddleware")
    first = scrapy.Request(SITE + "/a.html")
    assert passes(middleware, first, bench.spider)
    middleware.headers_received(Headers({"Content-Type": "text/html"}), 5, first, bench.spider)
    middleware.bytes_received(b"12345", first, bench.spider)
    first.meta[TRUNCATED] = True  # as the decompression middleware marks a body inflated past the limit
    again = first.copy()
    assert passes(middleware, again, bench.spider)
    assert not {RECEIVED, TRUNCATED, BODY_DONE, MIME_REFUSED} & again.meta.keys()
    middleware.headers_received(Headers({"Content-Type": "text/html"}), 5, again, bench.spider)
    middleware.bytes_received(b"12345", again, bench.spider)
    assert again.meta[RECEIVED] == 5 and BODY_DONE in again.meta


def test_a_hold_shorter_than_a_timer_tick_is_slept_to_its_end(bench):
    # The reactor's timers end on whole milliseconds, up to one late: a hold's last part is slept.
    middleware = bench.middleware("FetchLimitsMiddleware")
    request = scrapy.Request(SITE + "/a.html", meta={NOT_BEFORE: time.time() + TIMER_GRAIN / 2})
    assert passes(middleware, request, bench.spider)
    assert request.meta[NOT_BEFORE] <= request.meta[STARTED] < request.meta[NOT_BEFORE] + 0.05


def test_a_longer_hold_s_timer_ends_a_tick_short_and_the_rest_is_slept():
    from twisted.internet import reactor

    from wirescrapy.harvester.middlewares.fetchlimits import FetchLimitsMiddleware

    # A hold well above the timer's grain, so that a loaded machine still finds the timer set.
    request = scrapy.Request(SITE + "/a.html", meta={NOT_BEFORE: time.time() + 0.02})
    held = FetchLimitsMiddleware([], 1000).process_request(request, None)
    timer = max(reactor.getDelayedCalls(), key=lambda call: call.getTime())
    assert timer.getTime() - reactor.seconds() <= 0.02 - TIMER_GRAIN
    held.cancel()
    held.addErrback(lambda failure: None)
    time.sleep(max(request.meta[NOT_BEFORE] - TIMER_GRAIN / 2 - time.time(), 0))
    assert FetchLimitsMiddleware._hold(request) is None  # where the timer, a tick late, ends
    assert request.meta[NOT_BEFORE] <= request.meta[STARTED] < request.meta[NOT_BEFORE] + 0.05


@pytest.mark.parametrize(
    ("not_before", "now", "hold"),
    [
        (None, 100.0, 0.0),
        (99.0, 100.0, 0.0),
        (-math.inf, 100.0, 0.0),
        (100.0015, 100.0, 0.0015),
        (
            100.0 + DISPATCH_LEAD + 0.001,
            100.0,
            DISPATCH_LEAD + 0.001,
        ),  # the wall clock drifted over a long wait
        (100.5, 100.0, MAX_HOLD),
        (3700.0, 100.0, MAX_HOLD),  # a clock stepped back an hour: no longer
    ],
)
def test_a_hold_lasts_until_the_site_is_ready_and_never_long(not_before, now, hold):
    assert hold_time(not_before, now) == pytest.approx(hold)


@pytest.mark.parametrize(
    "content_type, stopped",
    [
        ("text/html", False),
        ("Text/HTML; charset=UTF-8", False),
        ("text/plain", False),
        (None, False),
        ("image/png", True),
        ("application/pdf", True),
        ("application/octet-stream; name=x", True),
        ("application/xhtml+xml", True),
    ],
)
def test_a_page_of_a_media_type_not_accepted_stops_after_its_headers(bench, content_type, stopped):
    bench.middleware("FetchLimitsMiddleware")
    request = scrapy.Request(SITE + "/file")
    headers = {"Content-Type": content_type} if content_type else {}
    assert bench.headers_received(request, headers) is stopped
    assert request.meta.get(MIME_REFUSED) == (content_type.split(";")[0].lower() if stopped else None)


@pytest.mark.parametrize("kind", [Kind.ROBOTS, Kind.SITEMAP])
def test_robots_txt_and_sitemaps_are_read_whatever_their_media_type(bench, kind):
    bench.middleware("FetchLimitsMiddleware")
    request = bench.request(SITE + "/robots.txt", kind)
    assert not bench.headers_received(request, {"Content-Type": "application/octet-stream"})
    assert MIME_REFUSED not in request.meta


def test_the_accepted_media_types_are_a_setting(tmp_path):
    with Bench(tmp_path, WIRE_ACCEPT_MIME=["text/html", "Application/PDF"]) as bench:
        bench.middleware("FetchLimitsMiddleware")
        assert not bench.headers_received(
            scrapy.Request(SITE + "/a.pdf"), {"Content-Type": "application/pdf"}
        )
        assert bench.headers_received(scrapy.Request(SITE + "/a.txt"), {"Content-Type": "text/plain"})


def test_a_body_over_the_max_file_size_stops_there_and_is_kept(tmp_path):
    with Bench(tmp_path, WIRE_MAX_FILE_SIZE=1000, WIRE_MAX_STORED_SIZE=1000) as bench:
        bench.middleware("FetchLimitsMiddleware")
        request = scrapy.Request(SITE + "/big.html")
        assert not bench.bytes_received(request, b"x" * 600)
        assert not bench.bytes_received(request, b"x" * 400)  # 1000: at the limit, not over it
        assert request.meta[RECEIVED] == 1000 and TRUNCATED not in request.meta
        assert bench.bytes_received(request, b"x")
        assert request.meta[RECEIVED] == 1001 and request.meta[TRUNCATED] is True


@pytest.mark.parametrize("kind, limit", [(Kind.ROBOTS, MAX_ROBOTS_BYTES), (Kind.SITEMAP, MAX_SITEMAP_BYTES)])
def test_robots_txt_and_sitemaps_have_their_own_size_limits(tmp_path, kind, limit):
    with Bench(tmp_path, WIRE_MAX_FILE_SIZE=1000, WIRE_MAX_STORED_SIZE=1000) as bench:
        bench.middleware("FetchLimitsMiddleware")
        request = bench.request(SITE + ("/robots.txt" if kind is Kind.ROBOTS else "/sitemap.xml"), kind)
        assert not bench.bytes_received(request, bytes(limit))
        assert bench.bytes_received(request, b"x") and request.meta[TRUNCATED]


# -- at most SITEMAPS_AT_ONCE sitemaps downloading at once -------------------------------------------------


def test_slots_are_given_first_come_first_served():
    from wirescrapy.harvester.middlewares.sitemapslots import Slots

    slots = Slots(2)
    assert slots.take("a") and slots.take("b") and slots.take("a")  # a holder asking again keeps its slot
    assert not slots.take("c") and not slots.take("d") and not slots.take("e")
    assert slots.give_back("d") is None  # d no longer waits
    assert slots.give_back("a") == "c" and slots.holders == {"b", "c"}
    assert slots.give_back("zzz") is None and slots.give_back("b") == "e" and slots.give_back("c") is None
    assert slots.holders == {"e"} and not slots.waiting
    with pytest.raises(ValueError, match="size"):
        Slots(0)


def test_a_sitemap_past_the_limit_waits_for_one_that_ends_whichever_way_it_ends():
    from types import SimpleNamespace

    from scrapy.settings import Settings
    from scrapy.statscollectors import MemoryStatsCollector
    from twisted.internet.defer import Deferred

    from wirescrapy.harvester.middlewares.sitemapslots import (
        SITEMAPS_AT_ONCE,
        SitemapSlotsMiddleware,
    )

    stats = MemoryStatsCollector(SimpleNamespace(settings=Settings()))
    middleware = SitemapSlotsMiddleware(stats)
    assert middleware.slots.size == SITEMAPS_AT_ONCE
    middleware = SitemapSlotsMiddleware(stats, size=2)
    sitemaps = [
        scrapy.Request(f"http://s{i}.cl/sitemap.xml", meta={KIND: Kind.SITEMAP.value}) for i in range(4)
    ]
    page = scrapy.Request("http://s0.cl/page.html")
    assert middleware.process_request(sitemaps[0], None) is None
    assert middleware.process_request(sitemaps[1], None) is None
    waiting = [middleware.process_request(sitemap, None) for sitemap in sitemaps[2:]]
    assert all(isinstance(d, Deferred) and not d.called for d in waiting)
    assert middleware.process_request(page, None) is None  # pages never wait
    assert stats.get_value("harvester/sitemaps/waited_for_a_slot") == 2
    response = HtmlResponse(sitemaps[0].url, body=b"<urlset/>")
    assert middleware.process_response(sitemaps[0], response, None) is response  # downloaded: the next goes
    assert waiting[0].called and not waiting[1].called
    middleware.process_exception(sitemaps[2], TimeoutError(), None)  # failed: the next goes
    assert waiting[1].called
    middleware.process_response(sitemaps[1], response, None)
    middleware.process_response(sitemaps[3], response, None)
    assert not middleware.slots.holders and not middleware.deferreds
