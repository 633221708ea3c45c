"""End to end: ``scrapy crawl harvester`` over the sample web, checked against its ground truth and its
access log (what the servers saw), for several WIRE cycles.

Every crawl is a real ``python -m scrapy crawl harvester`` subprocess with ``settings.test`` (loopback
allowed, ``*.wire.test`` mapped to 127.0.0.1, waits scaled down to 0.2 s and 0.05 s).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag, RobotsState
from wirescrapy.items import FetchError
from wirescrapy.seeder.rules import SeederRules
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess
from wirescrapy.testing.sampleweb.accesslog import by_host, too_close

WAIT = 0.2  # settings/test.py WIRE_WAIT_NORMAL
CRAWL_DELAY = 0.3  # site1's robots.txt
MAX_DEPTH = 15  # WIRE_MAX_DEPTH_STATIC
WEB = {
    "sites": 6,
    "pages_per_site": 40,
    "seed": 3,
    "slow_delay": 0.5,
    "crawl_delay": CRAWL_DELAY,
    "broken_robots": "malformed",
}
# Every site stays under the large-site threshold, so every gap must be the normal wait.
SETTINGS = {"WIRE_LARGE_SITE_PAGES": 10_000, "LOGSTATS_INTERVAL": 2}


def harvest(
    collection: Path, *args: str, settings: dict | None = None, timeout: float = 240, check: bool = True
) -> subprocess.CompletedProcess:
    run = run_scrapy(
        "crawl",
        "harvester",
        *args,
        env=scrapy_env(),
        timeout=timeout,
        settings={"WIRE_COLLECTION_DIR": collection, **SETTINGS, **(settings or {})},
    )
    if check:
        assert run.returncode == 0, run.stderr[-4000:]
        assert "Traceback" not in run.stderr, run.stderr[-4000:]
    return run


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """The sample web crawled from its seeds until the manager has nothing left to fetch."""
    workdir = tmp_path_factory.mktemp("harvest")
    with SampleWebProcess(workdir=workdir / "web", **WEB) as web:
        seeds = workdir / "seeds.txt"
        seeds.write_text("\n".join(web.seeds) + "\n")
        collection = workdir / "collection"
        first = harvest(collection, "-a", f"seeds={seeds}", "-a", "cycles=40")
        again = harvest(collection)  # nothing left: the manager writes no batch
        log = web.access_log()
        yield web, collection, first, again, log


def test_every_reachable_page_is_fetched_once_and_stored(crawled):
    web, directory, first, _, log = crawled
    truth = web.truth
    # The links of a page over WIRE_MAX_FILE_SIZE that lie past the cut are not seen (they are kept
    # only in the ground truth): the pages reached only through them are not expected.
    expected = truth.pages - {web.url(1, "/odd/after-big.html")}
    with Collection(directory, readonly=True) as collection:
        for url in expected:
            doc = collection.lookup(url)
            assert doc, f"{url} not in the collection"
            record = collection.documents.records[doc]
            assert record["status"] == 200 and record["visits"] == 1, (
                url,
                record["status"],
                record["visits"],
            )
            assert collection.load_page(doc), url
    requests = {}
    for record in log:
        key = (record["host"], record["path"])
        requests[key] = requests.get(key, 0) + 1
    # A failed fetch is tried WIRE_MAX_ERRORS_SAME_BATCH (3) times in its batch: the 500 and the cut page.
    retried = {web.url(3, "/error.html"), web.url(3, "/drop.html")}
    twice = {key: count for key, count in requests.items() if count > 1 and web.url(*key) not in retried}
    assert not twice, f"requested more than once: {twice}"
    assert [requests[("site3.wire.test", path)] for path in ("/error.html", "/drop.html")] == [3, 3]
    assert "Cycle" in first.stderr and "nothing more to fetch" in first.stderr


def test_duplicates_are_references_to_their_original(crawled):
    web, directory, *_ = crawled
    truth = web.truth
    with Collection(directory, readonly=True) as collection:
        docs = collection.documents.records[1 : collection.documents.count + 1]
        robots = set(collection.sites.records["robots_docid"][1 : collection.sites.count + 1].tolist())
        flagged = {
            collection.url(i + 1)
            for i in range(len(docs))
            if docs[i]["flags"] & DocFlag.DUPLICATE and i + 1 not in robots
        }
        pairs = {frozenset((url, original)) for url, original in truth.duplicates.items()}
        assert len(flagged) == len(pairs)
        for url in flagged:
            record = collection.documents.records[collection.lookup(url)]
            original = collection.url(int(record["duplicate_of"]))
            assert frozenset((url, original)) in pairs, (url, original)
            assert collection.pages.load(collection.lookup(url)) is None  # a reference, no bytes
            assert not len(collection.links.links(collection.lookup(url)))  # its links ignored


def test_robots_txt_is_obeyed_and_ghost_links_never_requested(crawled):
    web, directory, *_, log = crawled
    truth = web.truth
    requested = {web.url(r["host"], r["path"]) for r in log}
    assert truth.disallowed and not truth.disallowed & requested
    assert not truth.ghosts & requested
    assert not truth.unfollowed & requested
    with Collection(directory, readonly=True) as collection:
        for url in truth.disallowed:
            doc = collection.lookup(url)
            if doc:
                assert collection.documents.records[doc]["flags"] & DocFlag.ROBOTS_DISALLOWED, url
        for site in range(1, collection.sites.count + 1):
            record = collection.sites.records[site]
            host = collection.urls.site_name(site).split("//")[1].split(":")[0]
            state = RobotsState(int(record["robots_state"]))
            assert state is (RobotsState.MISSING if truth.robots[host] == "missing" else RobotsState.VALID), (
                host
            )
    robots_requests = [r for r in log if r["path"] == "/robots.txt"]
    assert len(robots_requests) == WEB["sites"]  # once per site, before its pages
    for host, records in by_host(log).items():
        assert records[0]["path"] == "/robots.txt", host


def test_traps_are_bounded_by_the_depth_limit(crawled):
    *_, log = crawled
    calendar = [r for r in log if r["path"].startswith("/calendar/")]
    deep = [r for r in log if r["path"].startswith("/trap/")]
    assert calendar and deep
    assert len(calendar) <= 2 * MAX_DEPTH + 1
    assert len(deep) <= MAX_DEPTH + 1


def test_the_link_graph_is_the_pages_links(crawled):
    web, directory, *_ = crawled
    truth = web.truth
    rules = SeederRules.default()
    checked = 0
    with Collection(directory, readonly=True) as collection:
        for page, links in truth.links.items():
            doc = collection.lookup(page)
            record = collection.documents.records[doc]
            if (
                page in truth.big
                or record["flags"] & (DocFlag.DUPLICATE | DocFlag.NOFOLLOW)
                or not record["visits"]
            ):
                continue  # cut, a duplicate's or nofollow's links ignored, or reached only past a cut
            expected = set()
            for link in links:
                decision = rules.classify(link, 0)
                if link not in truth.nofollow.get(page, ()) and decision.fetch:
                    expected.add(decision.url)
            stored = {collection.url(int(target)) for target in collection.links.links(doc)}
            assert stored == expected, page
            checked += 1
        assert checked > 200
        for source, (status, target) in truth.redirects.items():
            doc = collection.lookup(source)
            record = collection.documents.records[doc]
            assert record["flags"] & DocFlag.REDIRECT, source
            assert [collection.url(int(t)) for t in collection.links.links(doc)] == [target], source
            if source in truth.redirect_loops:
                continue
            assert record["status"] == status, source


def test_errors_limits_and_odd_pages_are_recorded(crawled):
    web, directory, *_ = crawled
    truth = web.truth
    with Collection(directory, readonly=True) as collection:

        def record(site, path):
            doc = collection.lookup(web.url(site, path))
            assert doc, path
            return collection.documents.records[doc]

        assert record(3, "/error.html")["status"] == 500
        assert (record(3, "/drop.html")["status"], record(3, "/drop.html")["error"]) == (
            0,
            FetchError.CONNECTION_LOST,
        )
        assert record(3, "/slow.html")["status"] == 200
        loops = [record(0, "/loop/a"), record(0, "/loop/b")]
        assert FetchError.REDIRECT_LOOP in {int(r["error"]) for r in loops}
        assert all(300 <= r["status"] < 400 for r in loops)  # what the server said, kept
        big = record(1, "/odd/big.html")
        assert big["flags"] & DocFlag.TRUNCATED and big["status"] == 200
        assert 400_000 <= big["raw_length"] < 400_000 + 65_536
        assert 0 < big["stored_length"] <= 300_000
        assert collection.lookup(web.url(1, "/odd/caf%C3%A9.html"))
        assert record(1, "/odd/caf%C3%A9.html")["status"] == 200
        assert record(0, "/notes.txt")["mime"] == b"text/plain"
        for url in truth.non_html:
            doc = collection.lookup(url)
            if doc and not url.endswith(".txt"):
                assert collection.documents.records[doc]["visits"] == 0, url
        for url, status in truth.errors.items():
            assert collection.documents.records[collection.lookup(url)]["status"] == status, url


def test_politeness_as_the_servers_saw_it(crawled):
    web, _, _, _, log = crawled
    hosts = by_host(log)
    assert len(hosts) == WEB["sites"]
    for host, records in hosts.items():
        wait = CRAWL_DELAY if web.truth.robots[host] == "crawl-delay" else WAIT
        assert not too_close(records, wait), (host, too_close(records, wait)[:5])


def test_progress_and_summary_are_logged(crawled):
    _, _, first, again, _ = crawled
    assert "Harvest: " in first.stderr and "URLs left" in first.stderr
    assert "Harvest summary" in first.stderr
    assert "'harvester/fetched/page'" in first.stderr
    assert "no page to fetch" in again.stderr or "nothing more to fetch" in again.stderr


@pytest.mark.timeout(240)
def test_a_killed_harvest_resumes_without_fetching_stored_pages_again(tmp_path):
    with SampleWebProcess(workdir=tmp_path / "web", **{**WEB, "sites": 4, "pages_per_site": 30}) as web:
        seeds = tmp_path / "seeds.txt"
        pages = sorted(web.truth.pages)
        seeds.write_text("\n".join(pages) + "\n")  # one batch holds every page
        collection = tmp_path / "collection"
        process = run_scrapy(
            "crawl",
            "harvester",
            "-a",
            f"seeds={seeds}",
            settings={"WIRE_COLLECTION_DIR": collection},
            env=scrapy_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            wait=False,
            start_new_session=True,
        )
        deadline = time.time() + 60
        while len(web.access_log()) < 40 and time.time() < deadline:
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        before = web.access_log()
        assert 40 <= len(before) < len(pages)
        killed_at = time.time()
        resumed = harvest(collection, settings={"LOGSTATS_INTERVAL": 0})
        assert "Resuming the unfinished batch" in resumed.stderr
        after = [r for r in web.access_log() if r["start"] > killed_at]
        fetched_before = {(r["host"], r["path"]) for r in before}
        again = [
            (r["host"], r["path"])
            for r in after
            if (r["host"], r["path"]) in fetched_before and r["path"] != "/robots.txt"
        ]
        # Only the pages in flight at the kill (one per site at most) may be fetched again.
        assert len(again) <= 4, again
        with Collection(collection, readonly=True) as stored:
            for url in web.truth.pages:
                doc = stored.lookup(url)
                assert doc and stored.documents.records[doc]["visits"] >= 1, url
        for host, records in by_host(web.access_log()).items():  # across the kill too
            wait = CRAWL_DELAY if web.truth.robots[host] == "crawl-delay" else WAIT
            assert not too_close(records, wait), host


@pytest.mark.timeout(120)
def test_mime_types_blocked_addresses_and_timeouts(tmp_path):
    with SampleWebProcess(
        workdir=tmp_path / "web", **{**WEB, "sites": 4, "pages_per_site": 8, "slow_delay": 2.0}
    ) as web:
        directory = tmp_path / "collection"
        wanted = [
            web.url(0, "/"),
            web.url(0, "/files/big.bin"),
            web.url(0, "/moved/away"),
            web.url(1, "/"),
            web.url(3, "/slow.html"),
        ]
        with Collection(directory) as collection:  # added as they are: the seeder would refuse big.bin
            for url in wanted:
                collection.add_url(url)
        # site1 resolves to a blocked address; the timeout is shorter than the slow page's delay.
        hosts = '{"wire.test": "127.0.0.1", "site1.wire.test": "127.0.0.2"}'
        run = harvest(
            directory,
            settings={
                "WIRE_DNS_HOSTS": hosts,
                "WIRE_BLOCKED_IPS": "127.0.0.2/32",
                "WIRE_CONNECTION_TIMEOUT": 0.5,
                "WIRE_CONNECTIONS": 7,
            },
        )
        assert "'CONCURRENT_REQUESTS': 7" in run.stderr and "'DOWNLOAD_TIMEOUT': 0.5" in run.stderr
        log = web.access_log()
    with Collection(directory, readonly=True) as collection:

        def record(url):
            return collection.documents.records[collection.lookup(url)]

        binary = record(web.url(0, "/files/big.bin"))
        assert binary["status"] == 200 and binary["mime"] == b"application/octet-stream"
        assert binary["flags"] & DocFlag.MULTIMEDIA and binary["raw_length"] < 100_000
        assert collection.load_page(collection.lookup(web.url(0, "/files/big.bin"))) is None
        assert record(web.url(0, "/moved/away"))["status"] == 301
        target = web.url(1, "/page/2.html")
        # Refused by our setting, not failed by the site: no error counted, robots.txt not settled.
        assert record(target)["error"] == FetchError.BLOCKED_IP and record(target)["errors"] == 0
        assert record(web.url(1, "/"))["error"] == FetchError.BLOCKED_IP
        site1 = collection.sites.records[collection.urls.site_id(web.url(1, "/").rstrip("/"))]
        assert RobotsState(int(site1["robots_state"])) is RobotsState.UNKNOWN and site1["errors"] == 0
        assert record(web.url(3, "/slow.html"))["error"] == FetchError.TIMEOUT
        assert record(web.url(0, "/"))["status"] == 200
    assert not [r for r in log if r["host"] == "site1.wire.test"]
    assert "refused as blocked addresses" not in run.stderr  # a few of many: no warning


@pytest.mark.timeout(120)
def test_a_harvest_refused_as_blocked_says_so_and_the_next_cycle_fetches_its_pages(sample_web, tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(sample_web.url(0, "/") + "\n")
    collection = tmp_path / "collection"
    loopback = {"WIRE_BLOCKED_IPS": "127.0.0.0/8"}  # as the default settings
    refused = harvest(collection, "-a", f"seeds={seeds}", settings=loopback)
    assert "WARNING: 1 of 1 page fetches were refused as blocked addresses" in refused.stderr
    assert "SCRAPY_SETTINGS_MODULE=settings.test" in refused.stderr
    assert re.search(r"Harvest summary .* 1 of 1 page fetches refused as blocked addresses", refused.stderr)
    fetched = harvest(collection)  # the test settings: loopback allowed, at once
    assert "refused as blocked" not in fetched.stderr
    with Collection(collection, readonly=True) as stored:
        home = stored.documents.records[stored.lookup(sample_web.url(0, "/"))]
        assert home["status"] == 200 and home["error"] == 0 and home["visits"] == 1


def test_sitemaps_named_in_robots_txt_are_read(crawled):
    web, *_, log = crawled
    sitemaps = [r for r in log if r["path"] == "/sitemap.xml"]
    assert [r["host"] for r in sitemaps] == [
        host for host, kind in web.truth.robots.items() if kind == "sitemap"
    ]
    assert sitemaps[0]["start"] > min(
        r["end"] for r in log if r["host"] == sitemaps[0]["host"]
    )  # after robots.txt


@pytest.mark.timeout(120)
def test_a_site_whose_robots_txt_fails_is_not_fetched_until_it_answers(sample_web, tmp_path):
    # The session's sample web answers site3's robots.txt with a 500 (RFC 9309 §2.3.1.4: fetch nothing).
    started = time.time()
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(sample_web.url(3, "/") + "\n" + sample_web.url(3, "/page/1.html") + "\n")
    collection = tmp_path / "collection"
    harvest(collection, "-a", f"seeds={seeds}", "-a", "cycles=3")
    requests = [
        r["path"] for r in sample_web.access_log() if r["start"] >= started and r["host"] == "site3.wire.test"
    ]
    assert requests == ["/robots.txt"]
    with Collection(collection, readonly=True) as stored:
        site = stored.sites.records[1]
        assert RobotsState(int(site["robots_state"])) is RobotsState.UNREACHABLE
        assert not stored.documents.records[stored.lookup(sample_web.url(3, "/"))]["visits"]
        assert (collection / "batches" / "000001" / "harvest.json").exists()
        assert not (collection / "batches" / "000002").exists()  # the manager waits for the retry


@pytest.mark.timeout(120)
def test_with_waits_of_zero_a_site_s_pages_follow_its_robots_txt_at_once(sample_web, tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(sample_web.url(site, "/") + "\n" for site in (0, 2, 4)))
    collection = tmp_path / "collection"
    harvest(collection, "-a", f"seeds={seeds}", settings={"WIRE_WAIT_NORMAL": 0, "WIRE_WAIT_LARGE_SITE": 0})
    done = json.loads((collection / "batches" / "000001" / "harvest.json").read_text())
    assert done["urls"] == done["fetched"] == done["ok"] == 3  # none skipped for a robots.txt not yet read


@pytest.mark.timeout(180)
def test_a_revisit_counts_the_visit_and_finds_the_page_unchanged(tmp_path):
    with SampleWebProcess(workdir=tmp_path / "web", **{**WEB, "sites": 2, "pages_per_site": 8}) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds) + "\n")
        collection = tmp_path / "collection"
        harvest(collection, "-a", f"seeds={seeds}", "-a", "cycles=30")
        with Collection(collection, readonly=True) as stored:
            first = {url: stored.documents.records[stored.lookup(url)].copy() for url in web.truth.pages}
        crawled = len(web.access_log())
        # Every page is due again at once: one more cycle revisits them all, conditionally.
        revisit = {
            "WIRE_MINPERIOD_SUCCESSFUL_OK": 0,
            "WIRE_MINPERIOD_SUCCESSFUL_NOT_OK": 0,
            "WIRE_MINPERIOD_UNSUCCESSFUL": 0,
        }
        harvest(collection, settings=revisit)
        log = web.access_log()
    # The server's side: every page stored whole came back as a 304 with no body; the bytes of the first visit
    # of those pages were saved.
    last_200 = {(r["host"], r["path"]): r["bytes"] for r in log[:crawled] if r["status"] == 200}
    answers = [r for r in log[crawled:] if (r["host"], r["path"]) in last_200 and r["path"] != "/robots.txt"]
    not_modified = [r for r in answers if r["status"] == 304]
    assert len(not_modified) >= len(first) * 0.8 and all(r["bytes"] == 0 for r in not_modified)
    saved = sum(last_200[r["host"], r["path"]] for r in not_modified)
    assert sum(r["bytes"] for r in answers) < 0.05 * (sum(r["bytes"] for r in answers) + saved)
    with Collection(collection, readonly=True) as stored:
        revisited = 0
        for url, before in first.items():
            record = stored.documents.records[stored.lookup(url)]
            if before["visits"] != 1 or before["flags"] & DocFlag.DUPLICATE:
                continue  # never fetched (past the big page's cut), or a duplicate (never fetched again)
            revisited += 1
            assert record["visits"] == 2 and record["first_visit"] == before["first_visit"], url
            assert record["last_visit"] > before["last_visit"] and record["visits_changed"] == 0, url
            assert record["time_unchanged"] == pytest.approx(record["last_visit"] - before["last_visit"]), url
            assert (
                not record["flags"] & DocFlag.CHANGED and record["content_hash"] == before["content_hash"]
            ), url
        assert revisited >= len(first) * 0.8


# -- robots.txt answers the sample web does not give: a test-local web ---------------------------------------


class _RobotsWeb(ThreadingHTTPServer):
    """Three sites on one port, told apart by Host. a's robots.txt redirects to a slow file on b; c's
    robots.txt is answered 203 (a 2xx other than 200). ``requests``: (host, path) of every request, in
    order."""

    daemon_threads = True
    SLOW = 1.0  # seconds b takes to answer a's rules: longer than the wait, so a's pages could overtake them

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _RobotsWebHandler)
        self.requests: list[tuple[str, str]] = []
        self.rules = {"a": b"User-agent: *\nDisallow: /private\n", "c": b"User-agent: *\nDisallow: /secret\n"}

    def url(self, site: str, path: str) -> str:
        return f"http://{site}.wire.test:{self.server_address[1]}{path}"


class _RobotsWebHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        web = self.server
        site = self.headers["Host"].split(".", 1)[0]
        web.requests.append((site, self.path))
        status, headers, body = 200, {"Content-Type": "text/plain"}, b""
        if (site, self.path) == ("a", "/robots.txt"):
            status, headers = 301, {"Location": web.url("b", "/rules-for-a.txt")}
        elif (site, self.path) == ("b", "/rules-for-a.txt"):
            time.sleep(web.SLOW)
            body = web.rules["a"]
        elif (site, self.path) == ("c", "/robots.txt"):
            status, body = 203, web.rules["c"]
        elif self.path.endswith("robots.txt"):
            status = 404
        else:
            headers = {"Content-Type": "text/html"}
            body = f"<html><body><p>{site}{self.path}</p></body></html>".encode()
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


def served(web):
    """A fixture's body: ``web``, a socketserver on 127.0.0.1, served from a thread until the test ends."""
    thread = threading.Thread(target=web.serve_forever, daemon=True)
    thread.start()
    yield web
    web.shutdown()
    web.server_close()


@pytest.fixture
def robots_web():
    yield from served(_RobotsWeb())


@pytest.mark.timeout(120)
def test_robots_txt_redirected_to_another_site_or_answered_203(robots_web, tmp_path):
    web = robots_web
    pages = {
        "a": ["/", *(f"/{n}.html" for n in range(1, 6)), "/private/x.html"],
        "c": ["/", "/secret/x.html"],
    }
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(web.url(site, path) + "\n" for site, paths in pages.items() for path in paths))
    collection = tmp_path / "collection"
    run = harvest(collection, "-a", f"seeds={seeds}")
    # a's pages wait for the rules its robots.txt redirected to on b, however long b takes: none is skipped
    # as "robots.txt not ready" (the hold on a lasts until the chain ends).
    assert "robots_not_ready" not in run.stderr
    assert ("b", "/rules-for-a.txt") in web.requests
    assert ("a", "/private/x.html") not in web.requests and ("c", "/secret/x.html") not in web.requests
    with Collection(collection, readonly=True) as stored:
        for site, paths in pages.items():
            for path in paths:
                record = stored.documents.records[stored.lookup(web.url(site, path))]
                if "/private/" in path or "/secret/" in path:
                    assert record["flags"] & DocFlag.ROBOTS_DISALLOWED, path
                else:
                    assert record["status"] == 200 and record["visits"] == 1, (site, path)
        for site in ("a", "c"):  # the rules are stored, a's under a's robots.txt though b served them
            record = stored.sites.records[stored.urls.site_id(web.url(site, ""))]
            assert RobotsState(int(record["robots_state"])) is RobotsState.VALID, site
            assert stored.load_page(int(record["robots_docid"])) == web.rules[site], site
            assert stored.url(int(record["robots_docid"])) == web.url(site, "/robots.txt")
    # A later run loads c's 203 rules from the collection (valid for a week: not fetched again) and obeys
    # them.
    seeds.write_text(web.url("c", "/secret/y.html") + "\n")
    harvest(collection, "-a", f"seeds={seeds}")
    assert ("c", "/secret/y.html") not in web.requests and web.requests.count(("c", "/robots.txt")) == 1


def _stored(collection: Path, urls) -> dict:
    """Each page's stored document and the URLs of its links, by URL (doc-ids depend on the fetches'
    order)."""
    with Collection(collection, readonly=True) as stored:
        pages = {}
        for url in urls:
            doc = stored.lookup(url)
            assert doc and stored.documents.records[doc]["visits"] >= 1, url
            original = stored.links  # a duplicate's content is its original's
            pages[url] = (stored.load_page(doc), sorted(stored.url(int(t)) for t in original.links(doc)))
        return pages


def test_a_killed_parse_worker_loses_no_page_and_the_workers_store_what_the_crawl_s_thread_does(tmp_path):
    with SampleWebProcess(workdir=tmp_path / "web", **{**WEB, "sites": 4, "pages_per_site": 30}) as web:
        seeds = tmp_path / "seeds.txt"
        pages = sorted(web.truth.pages)
        seeds.write_text("\n".join(pages) + "\n")  # one batch holds every page
        inline = tmp_path / "inline"
        harvest(inline, "-a", f"seeds={seeds}", settings={"WIRE_PARSE_WORKERS": 0})
        collection = tmp_path / "workers"
        settings = {
            "WIRE_COLLECTION_DIR": collection,
            "WIRE_PARSE_WORKERS": 1,
            "WIRE_LARGE_SITE_PAGES": SETTINGS["WIRE_LARGE_SITE_PAGES"],
        }
        started = time.time()
        process = run_scrapy(
            "crawl",
            "harvester",
            "-a",
            f"seeds={seeds}",
            settings=settings,
            env=scrapy_env(),
            stdout=subprocess.DEVNULL,
            wait=False,
            start_new_session=True,
        )
        try:
            deadline = time.time() + 60
            while len([r for r in web.access_log() if r["start"] > started]) < 40 and time.time() < deadline:
                time.sleep(0.05)
            workers = [
                int(pid)
                for pid in Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
                if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
            ]
            assert len(workers) == 1, workers
            os.kill(workers[0], signal.SIGKILL)
            _, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        assert process.returncode == 0, stderr[-4000:]
        assert "'gatherer/parse_workers/broken': 1" in stderr, stderr[-4000:]
        assert "'gatherer/parse_workers/given_up': 0" in stderr, stderr[-4000:]
        assert "gatherer/failed" not in stderr
        assert _stored(collection, pages) == _stored(inline, pages)
