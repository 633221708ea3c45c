"""Rendering through Splash: the pure policy (``harvester/render.py``), the request it builds for
scrapy-splash, and what the gatherer's pipelines record of a render (on the component bench, no Splash needed;
the real Splash is in ``tests/e2e/test_render.py``)."""

from __future__ import annotations

import base64
import json

import pytest
from scrapy.exceptions import NotConfigured, StopDownload
from scrapy.settings import Settings
from scrapy_splash import SplashJsonResponse
from twisted.internet.error import ConnectionLost, ConnectionRefusedError
from xxhash import xxh3_64_intdigest

from tests.components import T0, Bench, run_now
from wirescrapy.collection.metadata import RenderState, SiteRender
from wirescrapy.config import WireConfig
from wirescrapy.gatherer.parser import Parser
from wirescrapy.harvester import meta
from wirescrapy.harvester.fetch import render_fetch
from wirescrapy.harvester.meta import RENDER
from wirescrapy.harvester.middlewares import BlockedIP, RobotsDisallowed
from wirescrapy.harvester.render import (
    LUA,
    RenderMode,
    answered,
    direct,
    failure,
    looks_script_built,
    may_probe,
    page_url,
    pauses_rendering,
    render_request,
    site_after,
)
from wirescrapy.items import FetchError, Kind

SITE = "http://a.wire.test:8123"
TEXT = "<p>" + "words of text " * 30 + "</p>"


def page(body: str, head: str = "") -> bytes:
    return f"<html><head>{head}</head><body>{body}</body></html>".encode()


def test_the_mode_is_off_auto_or_host_suffixes():
    assert not RenderMode.parse("off").on and not RenderMode.parse("").on
    assert RenderMode.parse("AUTO").auto
    listed = RenderMode.parse(".b.cl, shop.example.com")
    assert listed.listed("http://a.b.cl/x") and not listed.listed("http://b.cl.evil.org/")
    assert listed.listed("http://shop.example.com:81/") and listed.listed("http://x.shop.example.com/")
    assert not listed.listed("http://myshop.example.com/")


def test_which_pages_go_straight_to_splash():
    auto, listed = RenderMode.parse("auto"), RenderMode.parse(".wire.test")
    assert direct(listed, SITE + "/", SiteRender.UNTRIED, RenderState.NOT_RENDERED)
    assert not direct(listed, "http://other.org/", SiteRender.HELPS, 0)
    assert direct(auto, SITE + "/", SiteRender.HELPS, RenderState.FAILED)
    assert not direct(auto, SITE + "/", SiteRender.UNTRIED, 0) and not direct(
        auto, SITE + "/", SiteRender.NEVER_HELPS, 0
    )
    # a page that froze Splash is never rendered again, whatever the mode
    assert not direct(listed, SITE + "/", 0, RenderState.TIMED_OUT)
    assert not direct(RenderMode.parse("off"), SITE + "/", SiteRender.HELPS, 0)
    assert may_probe(auto, SiteRender.UNTRIED, RenderState.RENDERED)
    assert not may_probe(auto, SiteRender.NEVER_HELPS, 0) and not may_probe(
        auto, SiteRender.UNTRIED, RenderState.TIMED_OUT
    )
    assert not may_probe(listed, SiteRender.UNTRIED, 0)


@pytest.mark.parametrize(
    ("body", "links", "text", "built"),
    [
        (page(TEXT + '<a href="/a">a</a>' * 5), 5, 420, False),  # no script: nothing can change
        (page(TEXT + '<a href="/a">a</a>' * 5, "<script src=x.js></script>"), 5, 420, False),  # a full page
        (page(TEXT + '<a href="/a">a</a>', "<SCRIPT>go()</SCRIPT>"), 1, 420, True),  # few links
        (page('<a href="/a">a</a>' * 5 + "<script>x()</script>"), 5, 10, True),  # little text
        (page(TEXT + '<a href="#/news">n</a>' * 5 + "<script/>"), 5, 420, True),  # hash routes
        (
            page(TEXT + "<noscript>x</noscript>" + '<a href="/a">a</a>'),
            1,
            420,
            False,
        ),  # <noscript> is no script
    ],
)
def test_looks_script_built(body, links, text, built):
    assert looks_script_built(body, links, text) is built


def test_a_site_helps_at_its_first_gain_and_never_after_its_tries():
    state = (SiteRender.UNTRIED, 0, 0)
    state = site_after(*state, gained=False, max_tries=3)
    assert state == (SiteRender.UNTRIED, 1, 0)
    assert site_after(*state, gained=True, max_tries=3) == (SiteRender.HELPS, 2, 1)
    state = site_after(*site_after(*state, gained=False, max_tries=3), gained=False, max_tries=3)
    assert state == (SiteRender.NEVER_HELPS, 3, 0)
    assert site_after(*state, gained=True, max_tries=3) == (SiteRender.NEVER_HELPS, 4, 1)  # decided
    assert site_after(SiteRender.UNTRIED, 0xFFFF, 0, False, 70000)[1] == 0xFFFF  # the record's u2


def test_a_failed_render_is_splash_down_or_the_page_froze_it():
    assert failure(None, 504, 3.0, 5.0) == (RenderState.TIMED_OUT, FetchError.RENDER_TIMEOUT)
    assert failure(FetchError.TIMEOUT, 0, 20.0, 5.0) == (RenderState.TIMED_OUT, FetchError.RENDER_TIMEOUT)
    assert failure(FetchError.CONNECTION_LOST, 0, 8.0, 5.0) == (
        RenderState.TIMED_OUT,
        FetchError.RENDER_TIMEOUT,
    )
    assert failure(FetchError.CONNECTION_LOST, 0, 0.5, 5.0) == (RenderState.FAILED, FetchError.RENDER_FAILED)
    assert failure(FetchError.REFUSED, 0, 30.0, 5.0) == (RenderState.FAILED, FetchError.RENDER_FAILED)
    assert failure(None, 503, 0.1, 5.0) == (RenderState.FAILED, FetchError.RENDER_FAILED)


def test_only_a_splash_that_did_not_answer_pauses_rendering():
    failed, froze = FetchError.RENDER_FAILED, FetchError.RENDER_TIMEOUT
    assert pauses_rendering(failed, FetchError.REFUSED, 0)
    assert pauses_rendering(failed, FetchError.CONNECTION_LOST, 0)
    assert pauses_rendering(failed, None, 503) and pauses_rendering(failed, None, 502)
    assert not pauses_rendering(failed, None, 200)  # the script's ok=false: this page's request failed
    assert not pauses_rendering(failed, None, 400)  # Splash refused these arguments: it is up
    assert not pauses_rendering(
        froze, FetchError.CONNECTION_LOST, 0
    )  # the page froze it: never rendered again


def test_a_render_answered_past_its_bound_or_not_as_json_is_the_page_s_failure():
    """Splash answered: its answer was cut at the render's size bound, or scrapy-splash could not read it as
    JSON (a ValueError); a refused or lost connection was no answer."""
    assert answered(StopDownload(fail=False), truncated=True)
    assert answered(json.JSONDecodeError("Unterminated string", '{"html64": "PGh0', 11), truncated=False)
    assert not answered(ConnectionRefusedError(), truncated=False)
    assert not answered(ConnectionLost(), truncated=False)
    # and so it does not pause rendering: failure() and pauses_rendering() are given Splash's 200
    kind = failure(None, 200, 0.5, 5.0)[1]
    assert kind is FetchError.RENDER_FAILED and not pauses_rendering(kind, None, 200)


def splash_answer(data: dict, url: str = SITE + "/p.html") -> SplashJsonResponse:
    request = render_request(
        url,
        WireConfig.from_settings(Settings()),
        "wirescrapy/0.1",
        how="direct",
        meta={},
        callback=None,
        errback=None,
    )
    return SplashJsonResponse(
        "http://127.0.0.1:8050/execute", status=200, body=json.dumps(data).encode(), request=request
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_a_render_s_answer_is_read_from_base64_and_its_lengths():
    """The script cuts the DOM and the raw body at WIRE_MAX_FILE_SIZE and sends them base64-encoded, with
    their whole lengths: the fetch is truncated when either was longer; bytes that are not UTF-8 survive."""
    dom, raw = "<p>caf\u00e9 \x01\x02</p>".encode(), b"<p>caf\xe9</p>"
    data = {
        "ok": True,
        "html64": b64(dom),
        "html_length": len(dom),
        "raw": {"status": 200, "type": "text/html; charset=latin-1", "body64": b64(raw), "length": len(raw)},
        "views": {"1": SITE + "/v.html"},
    }  # a Lua table of Splash: a dict
    fetch = render_fetch(splash_answer(data), data, 100, T0)
    assert (fetch.body, fetch.raw_body, fetch.raw_length, fetch.truncated) == (dom, raw, len(raw), False)
    assert (fetch.status, fetch.mime, fetch.script_links) == (200, "text/html", [SITE + "/v.html"])
    cut = {**data, "html_length": 5000, "raw": {**data["raw"], "length": 70}}
    fetch = render_fetch(splash_answer(cut), cut, 100, T0)
    assert fetch.truncated and fetch.raw_length == 70 and fetch.body == dom
    longer = {**data, "html64": b64(b"x" * 150), "html_length": 150}  # a Splash that did not cut
    fetch = render_fetch(splash_answer(longer), longer, 100, T0)
    assert fetch.body == b"x" * 100 and fetch.truncated
    broken = {**data, "html64": "not base64!", "html_length": "many", "raw": {"status": 200, "body64": None}}
    fetch = render_fetch(splash_answer(broken), broken, 100, T0)
    assert (fetch.body, fetch.raw_body, fetch.raw_length, fetch.truncated) == (b"", b"", 0, False)


def test_the_splash_request_runs_the_polite_script(tmp_path):
    with Bench(tmp_path, WIRE_RENDER_SUBRESOURCES=3, WIRE_RENDER_TIMEOUT=12.0) as bench:
        request = render_request(
            SITE + "/p.html",
            bench.config,
            "wirescrapy/0.1",
            how="follow",
            meta={"x": 1},
            callback=None,
            errback=None,
        )
    splash = request.meta["splash"]
    args = splash["args"]
    assert splash["endpoint"] == "execute" and args["lua_source"] == LUA
    assert (args["url"], args["site"], args["subresources"], args["timeout"]) == (
        SITE + "/p.html",
        SITE,
        3,
        12.0,
    )
    assert args["headers"] == {"User-Agent": "wirescrapy/0.1"} and splash["dont_send_headers"]
    # *.wire.test is a WIRE_DNS_HOSTS name in the test settings: Splash is sent there as to a proxy
    assert (args["proxy_host"], args["proxy_port"]) == ("127.0.0.1", 8123)
    assert request.meta[RENDER] == "follow" and request.meta["dont_retry"] and request.meta["x"] == 1
    assert page_url(request) == SITE + "/p.html"
    assert "images_enabled = false" in LUA and "request:abort()" in LUA
    assert args["max_bytes"] == bench.config.max_file_size  # the script cuts the DOM and the raw body there
    json.dumps(args)  # what scrapy-splash sends


def rendered(bench: Bench, url: str, dom: bytes, raw: bytes, *, at: float, follow: bool, views=()):
    """The fetch the spider makes of Splash's answer to a render."""
    fetch = bench.page(url, 200, dom, at=at)
    fetch.render, fetch.render_follow_up, fetch.raw_body = int(RenderState.RENDERED), follow, raw
    fetch.raw_length, fetch.script_links = len(raw), list(views)
    return fetch


RAW = page(TEXT + '<a href="/a.html">a</a>', "<script src=/lib.js></script>")
DOM = page(TEXT + '<a href="/a.html">a</a><a href="/b.html">b</a> <a href="/c.html">c</a>')


def test_a_direct_render_stores_the_dom_and_keeps_the_raw_html_for_content_seen(tmp_path):
    with Bench(tmp_path, WIRE_RENDER_JS="auto") as bench:
        bench.seed(SITE + "/p.html")
        bench.gather(
            rendered(
                bench,
                SITE + "/p.html",
                DOM,
                RAW,
                at=T0,
                follow=False,
                views=[SITE + "/p.html#/x", SITE + "/v.html"],
            )
        )
        record, site = bench.record(SITE + "/p.html"), bench.site(SITE + "/p.html")
        assert (record["render"], record["render_links"], record["visits"]) == (RenderState.RENDERED, 3, 1)
        assert sorted(bench.links(SITE + "/p.html")) == [SITE + f"/{n}.html" for n in "abcv"]
        assert record["raw_length"] == len(RAW)
        raw_document = Parser.from_config(bench.config).parse(RAW, SITE + "/p.html", "text/html").document
        assert record["content_hash"] == xxh3_64_intdigest(raw_document)  # the raw HTML's, not the DOM's
        assert record["stored_length"] > 0 and record["stored_length"] != len(raw_document)
        assert (site["render"], site["render_tries"], site["render_gains"]) == (SiteRender.HELPS, 1, 1)
        # the next visit renders the same raw HTML into a different DOM (a clock): no change
        bench.gather(
            rendered(bench, SITE + "/p.html", DOM.replace(b"words", b"other"), RAW, at=T0 + 100, follow=False)
        )
        assert (
            not bench.record(SITE + "/p.html")["flags"] & 128
            and bench.record(SITE + "/p.html")["visits"] == 2
        )


def test_a_render_after_the_raw_fetch_adds_its_links_and_no_visit(tmp_path):
    with Bench(tmp_path, WIRE_RENDER_JS="auto") as bench:
        bench.seed(SITE + "/p.html")
        bench.gather(bench.page(SITE + "/p.html", 200, RAW, at=T0))
        assert bench.stats["gatherer/render/wanted"] == 1  # scripts and one link: looks script-built
        bench.gather(rendered(bench, SITE + "/p.html", DOM, RAW, at=T0 + 1, follow=True))
        record = bench.record(SITE + "/p.html")
        assert (record["render"], record["render_links"], record["visits"], record["error"]) == (1, 2, 1, 0)
        assert record["last_visit"] > T0 + 1
        assert sorted(bench.links(SITE + "/p.html")) == [SITE + f"/{n}.html" for n in "abc"]


def test_a_failed_render_keeps_the_raw_html_and_links(tmp_path):
    with Bench(tmp_path, WIRE_RENDER_JS="auto") as bench:
        bench.seed(SITE + "/p.html")
        bench.gather(bench.page(SITE + "/p.html", 200, RAW, at=T0))
        stored = bench.record(SITE + "/p.html")["stored_length"]
        failed = bench.failure(SITE + "/p.html", FetchError.REFUSED, at=T0 + 1)
        failed.error, failed.render, failed.render_follow_up = (
            FetchError.RENDER_TIMEOUT,
            int(RenderState.TIMED_OUT),
            True,
        )
        bench.gather(failed)
        record, site = bench.record(SITE + "/p.html"), bench.site(SITE + "/p.html")
        assert (record["status"], record["error"], record["render"]) == (200, FetchError.RENDER_TIMEOUT, 3)
        assert record["stored_length"] == stored and bench.links(SITE + "/p.html") == [SITE + "/a.html"]
        assert (record["errors"], record["visits"]) == (1, 1)
        assert (site["render_tries"], site["render_gains"]) == (1, 0)  # a freeze is a try without gain
        # the next raw fetch keeps the mark: never rendered again
        bench.gather(bench.page(SITE + "/p.html", 200, RAW, at=T0 + 100))
        assert bench.record(SITE + "/p.html")["render"] == RenderState.TIMED_OUT
        assert bench.stats.get("gatherer/render/wanted") == 1


# -- the downloader middlewares: the page's URL is checked, Splash's address is not --------------------------


def splash_side(bench: Bench, url: str):
    """The request scrapy-splash's middleware makes of a render: to Splash's /execute, on loopback."""
    render = render_request(url, bench.config, "ua", how="direct", meta={}, callback=None, errback=None)
    render.meta["splash"]["slot_policy"] = (
        "scrapy_default"  # per_domain asks the engine, which the bench has not
    )
    return bench.middleware("SplashMiddleware").process_request(render, bench.spider), render


def test_splash_s_address_is_exempt_from_the_blocked_address_and_robots_checks(tmp_path):
    with Bench(
        tmp_path,
        WIRE_RENDER_JS=".wire.test",
        WIRE_BLOCKED_IPS=["127.0.0.0/8"],
        SPLASH_URL="http://127.0.0.1:8050",
    ) as bench:
        bench.install_resolver()
        bench.seed(SITE + "/a.html", SITE + "/private/a.html")
        bench.robots(SITE, 200, b"User-agent: *\nDisallow: /private/\n")
        to_splash, _ = splash_side(bench, SITE + "/a.html")
        render = render_request(
            SITE + "/a.html", bench.config, "ua", how="direct", meta={}, callback=None, errback=None
        )
        assert to_splash.url == "http://127.0.0.1:8050/execute" and page_url(to_splash) == SITE + "/a.html"
        blocked, robots = bench.middleware("BlockedIPMiddleware"), bench.middleware("RobotsMiddleware")
        assert run_now(blocked.process_request(to_splash, bench.spider)) is None  # loopback, but Splash's
        assert robots.process_request(to_splash, bench.spider) is None
        # the page's own URL is checked before it is rendered: *.wire.test maps to blocked 127.0.0.1 here
        with pytest.raises(BlockedIP):
            run_now(blocked.process_request(render, bench.spider))
        with pytest.raises(RobotsDisallowed):
            robots.process_request(bench.request(SITE + "/private/a.html"), bench.spider)
        # the render of a page fetched in this batch is part of that visit, not refused as done
        assert bench.middleware("BatchFilterMiddleware").process_request(to_splash, bench.spider) is None


def test_a_page_of_a_rendered_site_becomes_a_splash_request(tmp_path):
    with Bench(tmp_path, WIRE_RENDER_JS="a.wire.test") as bench:
        bench.seed(SITE + "/a.html", "http://site2.wire.test/b.html")
        middleware = bench.middleware("RenderMiddleware")
        page_request = bench.request(SITE + "/a.html")
        render = middleware.process_request(page_request, bench.spider)
        assert render.meta[RENDER] == "direct" and render.meta["splash"]["args"]["url"] == SITE + "/a.html"
        assert render.meta[meta.DOC_ID] == page_request.meta[meta.DOC_ID]
        assert (
            middleware.process_request(bench.request("http://site2.wire.test/b.html"), bench.spider) is None
        )
        assert middleware.process_request(render, bench.spider) is None  # once
        robots = bench.request(SITE + "/robots.txt", Kind.ROBOTS)
        assert middleware.process_request(robots, bench.spider) is None  # robots.txt and sitemaps: never
        record = bench.collection.documents.records[page_request.meta[meta.DOC_ID]]
        record["render"] = RenderState.TIMED_OUT  # it froze Splash once
        assert middleware.process_request(bench.request(SITE + "/a.html"), bench.spider) is None


def test_rendering_off_leaves_the_middleware_out(tmp_path):
    with Bench(tmp_path) as bench, pytest.raises(NotConfigured):
        bench.middleware("RenderMiddleware")


def test_a_render_is_queued_and_counted_on_its_page_s_site(tmp_path):
    """The request to Splash (127.0.0.1:8050) is the page's site's access in the politeness queue."""
    from wirescrapy.harvester.scheduler import WireScheduler

    with Bench(tmp_path, WIRE_RENDER_JS=".wire.test", SPLASH_URL="http://127.0.0.1:8050") as bench:
        scheduler = WireScheduler.from_crawler(bench.crawler)
        to_splash, render = splash_side(bench, SITE + "/a.html")
        assert scheduler.enqueue_request(render) and scheduler.enqueue_request(to_splash)
        assert scheduler.queue.queued(SITE) == 2 and scheduler.queue.queued("http://127.0.0.1:8050") == 0
        popped = scheduler.queue.pop_ready(0.0)
        assert (
            popped[0] == SITE and popped[1] is to_splash
        )  # scrapy-splash's +100: the front of the site's queue
        assert scheduler.queue.pop_ready(0.0) is None  # one access at a time per site
        scheduler.queue.finished(SITE, 10.0)
        assert scheduler.queue.pop_ready(10.1) is None  # the site's wait counts from the end of the render
        assert scheduler.queue.pop_ready(10.0 + bench.config.wait_normal + 0.01)[1] is render
