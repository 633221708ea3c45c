"""End to end: script-built pages through scrapy-splash and a real Splash 3.5 (``WIRE_RENDER_JS``).

Crawls of the sample web's script pages (``js="on"``: ``wirescrapy/testing/sampleweb/scripts.py``) checked
against its ground truth (the links only rendering shows) and against its access log (what the sites saw,
Splash's requests included); Splash killed in the middle of a crawl; a page whose script never ends, under the
supervisor.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from pathlib import Path

import pytest
from scrapy.settings import Settings

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import RenderState, SiteRender
from wirescrapy.config import WireConfig
from wirescrapy.harvester.render import render_request
from wirescrapy.items import FetchError
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess
from wirescrapy.testing.sampleweb.accesslog import by_host
from wirescrapy.testing.sampleweb.scripts import ASSETS, PREFIX
from wirescrapy.testing.splash import DEFAULT_URL, OwnSplash, SplashMissing, alive, wait_alive

WAIT = 0.2  # settings/test.py WIRE_WAIT_NORMAL
SUBRESOURCES = 2
WEB = {
    "sites": 6,
    "pages_per_site": 4,
    "crawl_delay": WAIT,
    "broken_robots": "malformed",
    "slow_delay": 0.2,
    "js": "on",
}
# Depth 4 reaches every page a script links (home, /js/, a script page, its targets) and keeps the traps
# short.
SETTINGS = {
    "WIRE_MAX_DEPTH_STATIC": 4,
    "WIRE_BATCH_SIZE": 1000,
    "WIRE_LARGE_SITE_PAGES": 10_000,
    "WIRE_RENDER_SUBRESOURCES": SUBRESOURCES,
    "WIRE_RENDER_WAIT": 0.2,
}
SHARED_SPLASH = os.environ.get("WIRE_TEST_SPLASH_URL", DEFAULT_URL)  # .ci/run's supervised Splash


def own_splash(workdir: Path, **options) -> OwnSplash:
    """A Splash of the test's own (``OwnSplash``). Without Splash installed the test skips with the line that
    says how to install it, or fails with it under ``WIRE_REQUIRE_SPLASH=1`` (``.ci/run``)."""
    try:
        return OwnSplash(workdir, **options)
    except SplashMissing as missing:
        if os.environ.get("WIRE_REQUIRE_SPLASH") == "1":
            pytest.fail(str(missing))
        pytest.skip(str(missing))


@pytest.fixture(scope="module")
def shared_splash(tmp_path_factory):
    """The URL of a running Splash: CI's, or one started for this module."""
    if alive(SHARED_SPLASH):
        yield SHARED_SPLASH
        return
    with own_splash(tmp_path_factory.mktemp("splash")) as own:
        yield own.url


def harvest(
    collection: Path,
    splash: str,
    *args: str,
    settings: dict,
    timeout: float = 120,
    check: bool = True,
    background: bool = False,
):
    values = {"WIRE_COLLECTION_DIR": collection, "SPLASH_URL": splash, **SETTINGS, **settings}
    if background:
        return run_scrapy(
            "crawl",
            "harvester",
            *args,
            settings=values,
            env=scrapy_env(),
            stdout=subprocess.DEVNULL,
            wait=False,
        )
    run = run_scrapy("crawl", "harvester", *args, settings=values, env=scrapy_env(), timeout=timeout)
    if check:
        assert run.returncode == 0, run.stderr[-4000:]
        assert "Traceback" not in run.stderr, run.stderr[-4000:]
    return run


def records(collection: Path) -> dict[str, dict]:
    """URL -> its document record's fields (and its links' URLs), read after the crawl."""
    with Collection(collection, readonly=True) as store:
        found = {}
        for doc_id in range(1, store.documents.count + 1):
            record = store.documents.records[doc_id]
            found[store.url(doc_id)] = {
                "status": int(record["status"]),
                "error": int(record["error"]),
                "render": int(record["render"]),
                "render_links": int(record["render_links"]),
                "visits": int(record["visits"]),
                "site": int(record["siteid"]),
                "stored": int(record["stored_length"]),
                "depth": int(record["depth"]),
                "links": {store.url(int(t)) for t in store.links.links(doc_id)}
                if doc_id in store.links
                else set(),
            }
        sites = {
            store.urls.site_name(s): (int(r["render"]), int(r["render_tries"]), int(r["render_gains"]))
            for s in range(1, store.sites.count + 1)
            for r in [store.sites.records[s]]
        }
    return {"docs": found, "sites": sites}


@contextlib.contextmanager
def loopback_site(answer):
    """A real HTTP server on 127.0.0.1 for the time of the block: ``answer(path)`` gives each GET's status,
    headers and body. Yields its origin."""

    class Site(BaseHTTPRequestHandler):
        def do_GET(self):
            status, headers, body = answer(self.path)
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def splash_answer(splash: str, url: str, **settings) -> bytes:
    """Splash's answer to the crawler's own render request for ``url`` (settings.test, and ``settings``)."""
    configured = Settings()
    configured.setmodule("settings.test", priority="project")
    for name, value in settings.items():
        configured.set(name, value)
    args = render_request(
        url,
        WireConfig.from_settings(configured),
        "wirescrapy-test",
        how="direct",
        meta={},
        callback=None,
        errback=None,
    ).meta["splash"]["args"]
    post = urllib.request.Request(
        splash + "/execute", json.dumps(args).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(post, timeout=60) as answer:
        return answer.read()


@pytest.fixture(scope="module")
def auto_crawl(tmp_path_factory, shared_splash):
    workdir = tmp_path_factory.mktemp("render")
    with SampleWebProcess(workdir=workdir, **WEB) as web:
        run = harvest(
            workdir / "collection",
            shared_splash,
            "-a",
            f"seeds={web.seeds_file}",
            "-a",
            "cycles=8",
            settings={"WIRE_RENDER_JS": "auto"},
        )
        yield web, records(workdir / "collection"), web.access_log(), run.stderr


def test_auto_mode_finds_exactly_the_links_only_rendering_shows(auto_crawl):
    web, found, _, log = auto_crawl
    truth, rendered_truth = web.truth, web.web.ground_truth(rendered=True)
    docs = found["docs"]
    scripted = {page: links for page, links in truth.scripted.items() if page not in truth.endless}
    assert scripted, "the sample web has script-built pages"
    for page, links in scripted.items():
        doc = docs[page]
        assert doc["render"] == RenderState.RENDERED, (page, doc)
        assert doc["render_links"] == len(links), (page, doc["render_links"], sorted(links))
        raw = set(truth.links[page]) - {page}
        assert doc["links"] - raw == set(links), page  # exactly the scripts' links, no other
        assert raw <= doc["links"] | truth.disallowed | set(truth.errors), page
    # Every page that only scripts link to was fetched: the crawl is the rendered ground truth's.
    only_rendered = rendered_truth.pages - truth.pages
    assert only_rendered and all(docs[url]["status"] == 200 for url in only_rendered)
    # auto: the sites where rendering found links are marked and go straight to Splash; the others never do.
    helps = {
        web.url(page.split("/")[2].split(":")[0]).rstrip("/") for page, links in scripted.items() if links
    }
    marked = {site for site, (state, _, _) in found["sites"].items() if state == SiteRender.HELPS}
    assert marked == helps
    for url, doc in docs.items():
        if doc["render"]:
            # rendered: a script-built page, or a page of a site where rendering helped (after it was marked)
            assert url in scripted or any(url.startswith(site + "/") for site in marked), url
    assert "render_failed" not in log and "render_timeout" not in log


def test_rendering_keeps_politeness_as_the_sites_saw_it(auto_crawl):
    """From the sample web's access log, Splash's own requests included. What is allowed, and why:

    * An *access* of a site is a crawler fetch or a render. A render is the page's request followed by
      the subresources Splash fetches for it (``/js/*.js``, ``.css``, ``.json``: the sample web's assets)
      while the render runs; an asset request belongs to the page request before it.
    * Two accesses never overlap, and the next starts at least the site's wait after the previous one's
      last response ended (WIRE's rule, the render counted as the site's access, its wait from its end).
      Within a render Splash may fetch assets two at a time (Qt's connections; Splash cannot space them).
    * A render makes at most ``WIRE_RENDER_SUBRESOURCES`` asset requests; no image is ever requested; no
      site sees a request for another site's resource (the script pages load ``/js/lib.js`` of another site,
      which exists nowhere: any request for it on a host whose pages did not ask for it is a leak).
    * The checks are not vacuous: each asset the script pages use on their own site (``style.css``,
      ``lib.js``, ``data.json``) was requested, inside a render. Not one request per render and asset: the
      sample web sends ``Last-Modified`` (conditional revisits), so WebKit's memory cache in Splash holds an
      asset fresh (heuristic freshness) and serves it to the next render from memory, with no request; each
      asset URL is new to Splash here (a fresh sample web on a fresh port), so its first render fetches it.
    """
    web, _, log, _ = auto_crawl
    assert not [r for r in log if r["path"].endswith(".png")], "images are never loaded"
    # robots.txt holds for rendered pages too (checked on the page's URL before it goes to Splash)
    assert not [r for r in log if web.url(r["host"], r["path"]) in web.truth.disallowed]
    script_site = web.url(5).split("//")[1].split(":")[0]
    assert not [r for r in log if r["path"] == PREFIX + "lib.js" and r["host"] != script_site]
    fetched: set[tuple[str, str]] = set()  # (host, asset) requested inside a render
    for host, requests in by_host(log).items():
        wait = WAIT
        accesses: list[list[dict]] = []
        for request in requests:
            asset = request["path"].startswith(PREFIX) and request["path"][len(PREFIX) :] in ASSETS
            if asset:
                assert accesses, f"{host}: an asset before any page"
                accesses[-1].append(request)
            else:
                accesses.append([request])
        for before, after in pairwise(accesses):
            end = max(r["end"] for r in before)
            gap = after[0]["start"] - end
            assert gap >= wait - 0.003, (host, [r["path"] for r in before], after[0]["path"], round(gap, 4))
        for access in accesses:
            assert len(access) - 1 <= SUBRESOURCES, (host, [r["path"] for r in access])
            fetched |= {(host, r["path"][len(PREFIX) :]) for r in access[1:]}
    assert fetched == {(script_site, name) for name in ("style.css", "lib.js", "data.json")}, fetched


@pytest.mark.timeout(120)
def test_killing_splash_mid_crawl_keeps_every_page_and_renders_it_later(tmp_path):
    splash = own_splash(tmp_path)
    web_args = {**WEB, "sites": 2, "pages_per_site": 4, "js": "off"}
    every = {
        "WIRE_RENDER_JS": ".wire.test",
        "WIRE_MAX_DEPTH_STATIC": 1,
    }  # the home pages and the pages they link
    try:
        with SampleWebProcess(workdir=tmp_path, **web_args) as web:
            crawl = harvest(
                tmp_path / "c",
                splash.url,
                "-a",
                f"seeds={web.seeds_file}",
                "-a",
                "cycles=2",
                settings=every,
                background=True,
            )
            deadline = time.monotonic() + 60
            while len([r for r in web.access_log() if r["path"].startswith("/page/")]) < 4:
                assert time.monotonic() < deadline and crawl.poll() is None, "the crawl did not get going"
                time.sleep(0.05)
            splash.kill_splash()
            _, stderr = crawl.communicate(timeout=90)
            assert crawl.returncode == 0 and "Traceback" not in stderr, stderr[-3000:]
            docs = records(tmp_path / "c")["docs"]
            failed = {
                url
                for url, doc in docs.items()
                if doc["render"] == RenderState.FAILED
                and doc["status"] == 200
                and url not in web.truth.duplicates
            }  # the manager selects no duplicate again
            assert failed, "renders after the kill failed"
            for url in failed:  # the page kept its raw HTML (and its links, those within the depth limit)
                doc = docs[url]
                assert (doc["status"], doc["error"]) == (200, FetchError.RENDER_FAILED), url
                assert doc["stored"] > 0, url
                followed = set(web.truth.links.get(url, ())) - web.truth.nofollow.get(url, frozenset())
                assert doc["links"] or not followed or doc["depth"] >= 1, url
            assert "render_failed" in stderr
            # Splash is back: the next visit (a failed render is an error: due after
            # WIRE_MINPERIOD_UNSUCCESSFUL) renders them.
            wait_alive(splash.url)
            assert splash.restarts() == 1
            harvest(tmp_path / "c", splash.url, settings={**every, "WIRE_MINPERIOD_UNSUCCESSFUL": 0})
            again = records(tmp_path / "c")["docs"]
            left = {
                url: (again[url]["visits"], again[url]["error"])
                for url in failed
                if again[url]["render"] != RenderState.RENDERED
            }
            assert not left, (len(failed), left)
    finally:
        splash.stop()


@pytest.mark.timeout(120)
def test_a_script_that_never_ends_freezes_splash_once_and_is_never_rendered_again(tmp_path):
    splash = own_splash(tmp_path, check=1)
    settings = {
        "WIRE_RENDER_JS": "site5.wire.test",
        "WIRE_MINPERIOD_UNSUCCESSFUL": 0,
        "WIRE_RENDER_TIMEOUT": 10,
        "WIRE_RENDER_FROZEN_AFTER": 1.5,
    }
    try:
        with SampleWebProcess(workdir=tmp_path, **{**WEB, "js": "endless"}) as web:
            endless = next(iter(web.truth.endless))
            seeds = tmp_path / "seeds.txt"
            seeds.write_text(endless + "\n")
            run = harvest(tmp_path / "c", splash.url, "-a", f"seeds={seeds}", settings=settings)
            assert splash.restarts() >= 1, "the supervisor restarted the frozen Splash"
            doc = records(tmp_path / "c")["docs"][endless]
            assert (doc["status"], doc["error"], doc["render"]) == (
                200,
                FetchError.RENDER_TIMEOUT,
                RenderState.TIMED_OUT,
            ), doc
            assert web.url(5, PREFIX) in doc["links"]  # the raw HTML's link kept
            assert "render_timeout" in run.stderr
            # The next visit fetches it raw: never rendered again (no second freeze), and the page it links
            # is.
            wait_alive(splash.url)
            restarts = splash.restarts()
            before = len(web.access_log())
            harvest(tmp_path / "c", splash.url, settings=settings)
            found = records(tmp_path / "c")["docs"]
            assert found[endless]["render"] == RenderState.TIMED_OUT and found[endless]["error"] == 0
            assert found[endless]["visits"] == 2
            assert found[web.url(5, PREFIX)]["render"] == RenderState.RENDERED
            assert splash.restarts() == restarts
            later = [r["path"] for r in web.access_log()[before:] if r["path"] == PREFIX + "endless.html"]
            assert later == [PREFIX + "endless.html"]  # one raw fetch
    finally:
        splash.stop()


def test_the_sample_web_log_records_splash_requests_by_host(auto_crawl):
    """Splash's requests reach the sample web as to a proxy (absolute request targets): logged by host and
    path."""
    _, _, log, _ = auto_crawl
    assert not [r for r in log if r["path"].startswith("http")]
    assert json.dumps(log)  # plain records


def test_a_page_rendered_again_while_in_splash_memory_cache_is_fetched_once_and_rendered(
    tmp_path, shared_splash
):
    """The crawler's own render request, twice for one page in one Splash (a revisit in a later cycle). The
    sample web sends Last-Modified, so WebKit's memory cache holds the page (and its style sheet and script)
    fresh: left to WebKit, the second render would request nothing and have no answer of the site to record
    (render_failed at every revisit). The script fetches the page itself, so the second render is a render
    again (status, raw HTML, DOM with the links only the script writes), at the cost of one page request, as
    the first: no request to another site, the page requested exactly once, nothing beyond
    WIRE_RENDER_SUBRESOURCES same-site assets."""
    settings = Settings()
    settings.setmodule("settings.test", priority="project")
    config = WireConfig.from_settings(settings)
    with SampleWebProcess(workdir=tmp_path, **{**WEB, "sites": 6}) as web:
        host = web.url(5).split("//")[1].split(":")[0]
        # write.html's link exists only once lib.js ran (the raw HTML has the call, not the element);
        # app.html's news view only once its route was visited.
        for name, link in (
            ("write.html", '<a href="/js/found-write-1.html">'),
            ("app.html", web.url(5, PREFIX + "found-app-news.html")),
        ):
            page = web.url(5, PREFIX + name)
            args = render_request(
                page, config, "wirescrapy-test", how="direct", meta={}, callback=None, errback=None
            ).meta["splash"]["args"]

            def render(args=args) -> dict:
                post = urllib.request.Request(
                    shared_splash + "/execute",
                    json.dumps(args).encode(),
                    {"Content-Type": "application/json"},
                )
                with urllib.request.urlopen(post, timeout=60) as answer:
                    return json.load(answer)

            for attempt in range(2):
                seen = len(web.access_log())
                out = render()
                time.sleep(0.3)  # a request aborted late would be logged when its connection closes
                sent = web.access_log()[seen:]
                assert out["ok"], (name, attempt, out, sent)
                raw = base64.b64decode(out["raw"]["body64"])
                assert out["raw"]["status"] == 200 and b"<script" in raw, (name, attempt)
                views = (
                    out["views"].values() if isinstance(out["views"], dict) else out["views"]
                )  # a Lua table
                dom = base64.b64decode(out["html64"]).decode()
                assert link in dom + " ".join(views) and link.encode() not in raw, (name, attempt)
                assert not [r for r in sent if r["host"] != host], sent
                assert [r["path"] for r in sent].count(PREFIX + name) == 1 and sent[0][
                    "path"
                ] == PREFIX + name, sent
                assert len(sent) - 1 <= config.render_subresources, sent
                assert not [r for r in sent if r["path"].endswith(".png")], sent


def test_revisits_of_rendered_pages_through_the_same_splash_render_them_again(tmp_path, shared_splash):
    """A crawl that renders the script site's pages and revisits every page at each cycle through the same
    Splash (WIRE_MINPERIOD_SUCCESSFUL_OK=0): the pages are still fresh in WebKit's memory cache (the sample
    web sends Last-Modified), yet each revisit is a render again (before: render_failed and a raw fetch), one
    page request per visit."""
    direct = {
        "WIRE_RENDER_JS": "site5.wire.test",
        "WIRE_MINPERIOD_SUCCESSFUL_OK": 0,
        "WIRE_MINPERIOD_SUCCESSFUL_NOT_OK": 0,
    }
    with SampleWebProcess(workdir=tmp_path, **WEB) as web:
        run = harvest(
            tmp_path / "c", shared_splash, "-a", f"seeds={web.seeds_file}", "-a", "cycles=4", settings=direct
        )
        docs = records(tmp_path / "c")["docs"]
        paths = [r["path"] for r in web.access_log() if r["host"].startswith("site5.")]
    pages = {
        url for url in docs if url.rsplit("/", 1)[1] in ("write.html", "insert.html", "xhr.html", "app.html")
    }
    assert len(pages) == 4, sorted(docs)
    for url in pages:
        doc = docs[url]
        assert doc["visits"] >= 2 and (doc["status"], doc["error"], doc["render"]) == (
            200,
            0,
            RenderState.RENDERED,
        ), (url, doc)
        assert doc["render_links"] > 0, (url, doc)
        assert paths.count(PREFIX + url.rsplit("/", 1)[1]) == doc["visits"], (url, doc["visits"], paths)
    assert "render_failed" not in run.stderr


def test_a_page_that_redirects_is_rendered_with_its_targets_url_as_base(shared_splash):
    """The script fetches the page itself and renders its bytes under a base URL: after a same-site redirect
    the base must be the target's (its relative script and links resolve as a browser would), the target
    requested once, the raw answer the redirect's."""
    seen = []

    def answer(path: str):
        seen.append(path)
        if path == "/a/old":
            return 302, {"Location": "/b/page.html"}, b""
        if path.endswith(".js"):
            return (
                200 if path == "/b/s.js" else 404,
                {"Content-Type": "application/javascript"},
                b"document.write('<a href=\"written.html\">w</a>')",
            )
        return (
            200 if path == "/b/page.html" else 404,
            {"Content-Type": "text/html"},
            b"<html><head><script src='s.js'></script></head><body><a href='x.html'>x</a></body></html>",
        )

    with loopback_site(answer) as site:
        out = json.loads(splash_answer(shared_splash, site + "/a/old"))
    assert out["ok"] and out["raw"]["status"] == 302, out
    dom = base64.b64decode(out["html64"]).decode()
    assert '<a href="written.html">' in dom, dom  # /b/s.js ran
    assert seen == ["/a/old", "/b/page.html", "/b/s.js"]


def test_a_page_larger_than_the_max_file_size_is_rendered_cut_and_the_renders_after_it_go_on(
    tmp_path, shared_splash
):
    """Every page of a site rendered; one page is 30 × WIRE_MAX_FILE_SIZE and full of control characters (JSON
    escapes each as 6 bytes: its DOM as JSON text would be 180 × the limit). Splash's answer stays within the
    harvester's bound for a render's answer, the page is stored rendered and cut (TRUNCATED), and every page
    after it is rendered too (before: the answer was cut on the wire, unreadable, taken for Splash down, and
    rendering paused while the next pages were fetched raw)."""
    from wirescrapy.collection.metadata import DocFlag
    from wirescrapy.harvester.middlewares.fetchlimits import RENDER_SIZE_FACTOR

    limit = 20_000
    after = [f"/after-{i}.html" for i in range(4)]
    script = "<script>document.write('<a href=\"/written' + '.html\">w</a>')</script>"
    pages = {
        "/": "".join(f'<a href="{p}">{p}</a>' for p in ["/big.html", *after]),
        "/big.html": script
        + "<p>"
        + "\x01\x02\x03 text " * (30 * limit // 9 + 1)
        + "</p><a href='/tail.html'>t</a>",
        **{p: script + f'<p>{p}</p><a href="/">home</a>' for p in after},
        "/written.html": "the link the script writes",
        "/tail.html": "past the cut",
    }

    def answer(path: str):
        return (
            200 if path in pages else 404,
            {"Content-Type": "text/html; charset=utf-8"},
            pages.get(path, "").encode(),
        )

    with loopback_site(answer) as site:
        body = splash_answer(
            shared_splash, site + "/big.html", WIRE_MAX_FILE_SIZE=limit, WIRE_MAX_STORED_SIZE=limit
        )
        out = json.loads(body)
        assert len(body) <= RENDER_SIZE_FACTOR * limit, len(body)
        assert out["ok"] and out["html_length"] > 30 * limit and out["raw"]["length"] > 30 * limit
        assert len(base64.b64decode(out["html64"])) == limit == len(base64.b64decode(out["raw"]["body64"]))

        seeds = tmp_path / "seeds.txt"
        seeds.write_text(site + "/\n")
        run = harvest(
            tmp_path / "c",
            shared_splash,
            "-a",
            f"seeds={seeds}",
            "-a",
            "cycles=2",
            settings={
                "WIRE_RENDER_JS": "127.0.0.1",
                "WIRE_MAX_FILE_SIZE": limit,
                "WIRE_MAX_STORED_SIZE": limit,
            },
        )
    docs = records(tmp_path / "c")["docs"]
    for path in ["/", "/big.html", *after]:
        doc = docs[site + path]
        assert (doc["status"], doc["error"], doc["render"]) == (200, 0, RenderState.RENDERED), (path, doc)
        assert path == "/" or site + "/written.html" in doc["links"], (
            path,
            doc,
        )  # rendered: the script's link
    assert site + "/tail.html" not in docs  # past the cut
    with Collection(tmp_path / "c", readonly=True) as store:
        big = store.documents.records[store.lookup(site + "/big.html")]
        assert int(big["flags"]) & DocFlag.TRUNCATED and int(big["raw_length"]) > 30 * limit
    assert "Splash did not answer" not in run.stderr and "render_failed" not in run.stderr
