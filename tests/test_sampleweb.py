"""The sample web: the pure model, its ground truth, and the real server."""

from __future__ import annotations

import hashlib
import http.client
import threading
import time
from collections import defaultdict, deque
from urllib.parse import urldefrag, urlsplit

import pytest
from protego import Protego
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor

from wirescrapy.testing.sampleweb import SampleWeb, SampleWebConfig, SampleWebProcess
from wirescrapy.testing.sampleweb.config import BIG_PAGE_LIMIT
from wirescrapy.testing.sampleweb.content import FANOUT
from wirescrapy.testing.sampleweb.fixture import config_argv
from wirescrapy.testing.sampleweb.server import check_loopback, listen
from wirescrapy.testing.sampleweb.shape import zipf_sizes

PORT = 8080


@pytest.fixture(scope="module")
def web() -> SampleWeb:
    return SampleWeb(SampleWebConfig(), PORT)


@pytest.fixture(scope="module")
def truth(web):
    return web.ground_truth()


def fetch(web: SampleWeb, url: str):
    split = urlsplit(url)
    return web.respond(split.netloc, split.path + (f"?{split.query}" if split.query else ""))


def header(reply, name: str) -> str | None:
    return dict(reply.headers).get(name)


def extract(url: str, reply) -> dict[str, bool]:
    """Links as Scrapy's link extractor sees them: URL -> nofollow."""
    response = HtmlResponse(url, body=reply.body, headers=dict(reply.headers))
    links = LinkExtractor(deny_extensions=[], unique=True).extract_links(response)
    return {urldefrag(link.url)[0]: link.nofollow for link in links}


# -- the model ---------------------------------------------------------------


def test_config_is_validated():
    for bad in (
        {"sites": 0},
        {"pages_per_site": 3},
        {"broken_robots": "404"},
        {"big_page_size": BIG_PAGE_LIMIT},
        {"slow_delay": -1},
    ):
        with pytest.raises(ValueError):
            SampleWebConfig(**bad)
    with pytest.raises(ValueError):
        SampleWeb(port=70000)


def test_names(web):
    assert web.hosts() == [f"site{k}.wire.test" for k in range(6)]
    assert web.seeds() == [f"http://site{k}.wire.test:{PORT}/" for k in range(6)]
    assert web.site_of("SITE3.wire.test:8080") == 3
    assert web.site_of("site6.wire.test") is None
    assert web.site_of("site03.wire.test") is None
    assert web.url("site2.wire.test", "/trap/a/") == f"http://site2.wire.test:{PORT}/trap/a/"
    assert SampleWeb(port=80).seeds()[0] == "http://site0.wire.test/"


def test_same_seed_same_bytes(web, truth):
    again = SampleWeb(SampleWebConfig(), PORT)
    other_seed = SampleWeb(SampleWebConfig(seed=2), PORT)
    differ = 0
    for url in sorted(truth.pages):
        assert fetch(again, url) == fetch(web, url)
        differ += fetch(other_seed, url).body != fetch(web, url).body
    assert differ > len(truth.pages) / 2
    assert again.ground_truth() == truth


def test_port_is_in_absolute_links(web):
    body = web.respond("site0.wire.test", "/moved/away")
    assert header(body, "Location") == f"http://site1.wire.test:{PORT}/page/2.html"
    assert header(web.at_port(9999).respond("site0.wire.test", "/moved/away"), "Location").startswith(
        "http://site1.wire.test:9999/"
    )


def test_ground_truth_shape(truth):
    assert truth.seeds == tuple(f"http://site{k}.wire.test:{PORT}/" for k in range(6))
    assert set(truth.seeds) <= truth.pages
    assert 6 * 40 <= len(truth.pages) < 6 * 40 + 60
    # Every ordinary page is reachable: the tree links guarantee it.
    for site in range(6):
        for page in range(1, 40):
            assert f"http://site{site}.wire.test:{PORT}/page/{page}.html" in truth.pages
    assert truth.unique_pages == truth.pages - set(truth.duplicates)


def test_pages_answer_html_and_links_match_scrapy(web, truth):
    for url in truth.pages:
        reply = fetch(web, url)
        assert reply.status == 200, url
        assert header(reply, "Content-Type").startswith("text/html")
        found = extract(url, reply)
        assert set(found) == set(truth.links[url]), url
        rel_nofollow = {link for link, nofollow in found.items() if nofollow}
        if b'content="nofollow"' in reply.body:
            assert truth.nofollow[url] == set(found)
        else:
            assert rel_nofollow == truth.nofollow.get(url, frozenset()), url


def test_every_link_is_accounted_for(web, truth):
    known = (
        truth.pages
        | truth.disallowed
        | truth.traps
        | truth.redirects.keys()
        | truth.errors.keys()
        | truth.dropped
        | truth.non_html.keys()
        | truth.unfollowed
    )
    for url, links in truth.links.items():
        assert set(links) <= known, url
    # The only 404s are the deliberate broken links.
    for url, status in truth.errors.items():
        assert status == 500 or urlsplit(url).path.startswith("/missing/"), url
        assert fetch(web, url).status == status
    assert not truth.ghosts & known


def test_link_graph_is_web_like(truth):
    in_links = defaultdict(int)
    for links in truth.links.values():
        for link in links:
            in_links[link] += 1
    counts = sorted(in_links.values(), reverse=True)
    # A few pages get many in-links, most get few.
    assert counts[0] >= 10 * counts[len(counts) // 2]
    site = lambda url: urlsplit(url).netloc
    cross = sum(site(page) != site(link) for page, links in truth.links.items() for link in links)
    assert cross >= 30


def test_duplicates_are_exact_and_match_body_hashes(web, truth):
    by_hash = defaultdict(set)
    for url in truth.pages:
        by_hash[hashlib.sha1(fetch(web, url).body).hexdigest()].add(url)
    groups = {frozenset(urls) for urls in by_hash.values() if len(urls) > 1}
    expected = defaultdict(set)
    for copy, original in truth.duplicates.items():
        expected[original] |= {original, copy}
    assert groups == {frozenset(urls) for urls in expected.values()}
    same_site = {urlsplit(copy).netloc == urlsplit(orig).netloc for copy, orig in truth.duplicates.items()}
    assert same_site == {True, False}, "duplicates both within a site and across sites"
    assert f"http://site0.wire.test:{PORT}/index.html" in truth.duplicates


def test_duplicates_lead_nowhere_new(truth):
    """A crawler that skips a duplicate's links still reaches every page."""
    seen, queue = set(truth.seeds), deque(truth.seeds)
    while queue:
        url = queue.popleft()
        targets = []
        if url in truth.redirects:
            targets = [truth.redirects[url][1]]
        elif url in truth.pages and url not in truth.duplicates:
            targets = [link for link in truth.links[url] if link not in truth.nofollow.get(url, ())]
        for target in targets:
            if target not in seen:
                seen.add(target)
                queue.append(target)
    assert truth.pages <= seen


def test_robots_txt_agrees_with_protego(web, truth):
    for site, host in enumerate(web.hosts()):
        reply = web.respond(host, "/robots.txt")
        kind = truth.robots[host]
        parser = Protego.parse(reply.body.decode("latin-1"))
        if kind in ("missing", "500", "malformed"):
            assert reply.status == {"missing": 404, "500": 500, "malformed": 200}[kind]
            assert parser.can_fetch(web.url(host, "/private/1.html"), "wirebot")
            continue
        assert reply.status == 200
        assert not parser.can_fetch(web.url(host, "/"), "BadBot")
        for url in truth.links:
            if urlsplit(url).hostname == host:
                assert parser.can_fetch(url, "wirebot")
        for url in truth.disallowed:
            if urlsplit(url).hostname == host:
                assert not parser.can_fetch(url, "wirebot"), url
        if kind == "crawl-delay":
            assert parser.crawl_delay("wirebot") == truth.crawl_delays[host] == 1.0
        if kind == "sitemap":
            assert list(parser.sitemaps) == [truth.sitemaps[host]]
            assert fetch(web, truth.sitemaps[host]).body.startswith(b"<?xml")
    assert {"sitemap", "crawl-delay", "missing", "500", "plain"} <= set(truth.robots.values())
    assert any("/private/" in url for url in truth.disallowed)
    assert any("/search?" in url for url in truth.disallowed)


def test_malformed_robots_txt_allows_everything():
    web = SampleWeb(SampleWebConfig(broken_robots="malformed"), PORT)
    reply = web.respond("site3.wire.test", "/robots.txt")
    assert reply.status == 200 and b"<html>" in reply.body
    assert Protego.parse(reply.body.decode("latin-1")).can_fetch(web.url(3, "/private/1.html"), "wirebot")
    assert web.ground_truth().robots["site3.wire.test"] == "malformed"


def test_traps_are_endless(web, truth):
    assert truth.traps == {web.url(2, "/calendar/2026/11/"), web.url(2, "/trap/a/")}
    url = web.url(2, "/calendar/2026/11/")
    for _ in range(40):
        reply = fetch(web, url)
        assert reply.status == 200
        url = next(link for link in extract(url, reply) if "/calendar/" in link and link > url)
    assert url == web.url(2, "/calendar/2030/03/")
    url = web.url(2, "/trap/a/")
    for _ in range(30):
        url = next(link for link in extract(url, fetch(web, url)) if link.startswith(url))
    assert url == web.url(2, "/trap/" + "a/" * 31)
    assert web.classify(url) == "trap"


def test_redirects(web, truth):
    moved_a, moved_b = web.url(0, "/moved/a"), web.url(0, "/moved/b")
    assert truth.redirects[moved_a] == (301, moved_b)
    assert truth.redirects[moved_b] == (302, web.url(0, "/page/3.html"))
    assert truth.redirects[web.url(0, "/moved/away")] == (301, web.url(1, "/page/2.html"))
    assert truth.redirect_loops == {web.url(0, "/loop/a"), web.url(0, "/loop/b")}
    for source, (status, target) in truth.redirects.items():
        reply = fetch(web, source)
        assert (reply.status, header(reply, "Location")) == (status, target)


def test_errors_slow_and_dropped(web, truth):
    assert truth.errors[web.url(3, "/error.html")] == 500
    assert sum(status == 404 for status in truth.errors.values()) >= 3
    slow = fetch(web, web.url(3, "/slow.html"))
    assert truth.slow == {web.url(3, "/slow.html")}
    assert (slow.status, slow.delay) == (200, 2.0)
    drop = fetch(web, web.url(3, "/drop.html"))
    assert truth.dropped == {web.url(3, "/drop.html")}
    assert 0 < drop.cut < len(drop.body)


def test_non_html_files(web, truth):
    magic = {
        "photo.png": b"\x89PNG\r\n\x1a\n",
        "photo.jpg": b"\xff\xd8\xff",
        "report.pdf": b"%PDF-",
        "archive.zip": b"PK\x03\x04",
    }
    for name, prefix in magic.items():
        reply = fetch(web, web.url(0, "/files/" + name))
        assert reply.body.startswith(prefix)
        assert header(reply, "Content-Type") == truth.non_html[web.url(0, "/files/" + name)]
    assert fetch(web, web.url(0, "/files/photo.jpg")).body.endswith(b"\xff\xd9")
    assert fetch(web, web.url(0, "/files/report.pdf")).body.endswith(b"%%EOF\n")
    big = fetch(web, web.url(0, "/files/big.bin"))
    assert header(big, "Content-Type") == "application/octet-stream" and len(big.body) == 1 << 20
    assert truth.non_html[web.url(0, "/notes.txt")].startswith("text/plain")
    files_page = fetch(web, web.url(0, "/files/")).body
    assert b'<img src="photo.png"' in files_page


def test_odd_html(web, truth):
    odd = lambda name: fetch(web, web.url(1, "/odd/" + name))
    assert b"\x00" in odd("nul.html").body
    latin1 = odd("latin1.html")
    assert "iso-8859-1" in header(latin1, "Content-Type") and b'href="/odd/caf\xe9.html"' in latin1.body
    cafe = web.url(1, "/odd/caf%C3%A9.html")
    assert cafe in truth.pages
    # Also reachable by a crawler that percent-encodes the Latin-1 byte.
    assert web.respond("site1.wire.test", "/odd/caf%E9.html").status == 200
    assert b"<base href=" in odd("base.html").body
    assert web.url(1, "/odd/based/x.html") in truth.pages
    assert web.respond("site1.wire.test", "/odd/x.html").status == 404
    big = web.url(1, "/odd/big.html")
    assert truth.big == {big} and len(fetch(web, big).body) > BIG_PAGE_LIMIT
    assert web.url(1, "/odd/after-big.html") in truth.pages
    not_links = odd("not-links.html").body
    for ghost in truth.ghosts:
        assert urlsplit(ghost).path.encode() in not_links
        assert ghost not in truth.links[web.url(1, "/odd/not-links.html")]
    assert b'rel="nofollow"' in odd("nofollow.html").body
    assert b'<meta name="robots" content="nofollow">' in odd("meta-nofollow.html").body
    unfollowed = {web.url(1, "/odd/rel-nofollow.html"), web.url(1, "/odd/meta-nofollow-target.html")}
    assert truth.unfollowed == unfollowed
    assert not truth.unfollowed & truth.pages
    assert truth.unfollowed <= web.ground_truth(follow_nofollow=True).pages


def test_every_feature_on_a_two_site_web():
    truth = SampleWeb(SampleWebConfig(sites=2, pages_per_site=4), PORT).ground_truth()
    assert truth.duplicates and truth.traps and truth.redirect_loops and truth.dropped
    assert truth.slow and truth.big and truth.non_html and truth.unfollowed and truth.disallowed


def test_large_web_is_lazy_and_quick():
    start = time.perf_counter()
    huge = SampleWeb(SampleWebConfig(sites=500, pages_per_site=200), PORT)
    assert huge.respond("site499.wire.test", "/page/199.html").status == 200
    assert time.perf_counter() - start < 0.5
    truth = SampleWeb(SampleWebConfig(sites=5, pages_per_site=2000), PORT).ground_truth()
    assert len(truth.pages) > 5 * 2000
    assert time.perf_counter() - start < 10


def test_default_shape_is_uniform():
    config = SampleWebConfig()
    assert config.shape == "uniform"
    web = SampleWeb(config, PORT)
    assert [web.site_pages(site) for site in range(6)] == [40] * 6
    with pytest.raises(ValueError):
        SampleWebConfig(shape="bogus")


def test_zipf_sizes():
    assert zipf_sizes(6, 40) == [98, 49, 33, 24, 20, 16]
    assert zipf_sizes(2, 4) == [4, 4]
    for count, mean in ((25, 80), (10, 5), (200, 10), (1, 7)):
        sizes = zipf_sizes(count, mean)
        assert sum(sizes) == count * mean and min(sizes) >= 4 and sizes == sorted(sizes, reverse=True)


@pytest.fixture(scope="module")
def weblike() -> SampleWeb:
    return SampleWeb(SampleWebConfig(sites=8, pages_per_site=40, seed=3, shape="weblike"), PORT)


def test_weblike_sites_and_pages(weblike):
    truth = weblike.ground_truth()
    sizes = [weblike.site_pages(site) for site in range(8)]
    assert sorted(sizes, reverse=True) == zipf_sizes(8, 40)
    for site, size in enumerate(sizes):
        # Every page is reachable, and none beyond the site's size exists.
        assert {weblike.url(site, f"/page/{page}.html") for page in range(1, size)} <= truth.pages
        assert weblike.respond(weblike.host(site), f"/page/{size}.html").status == 404
    again = SampleWeb(SampleWebConfig(sites=8, pages_per_site=40, seed=3, shape="weblike"), PORT)
    assert again.ground_truth() == truth
    for url in sorted(truth.pages)[::7]:
        assert fetch(again, url) == fetch(weblike, url)
        reply = fetch(weblike, url)
        assert reply.status == 200
        assert set(extract(url, reply)) == set(truth.links[url]), url


def test_weblike_keeps_every_feature():
    for config in (
        SampleWebConfig(sites=2, pages_per_site=4, shape="weblike"),
        SampleWebConfig(sites=6, pages_per_site=40, seed=2, shape="weblike"),
    ):
        web = SampleWeb(config, PORT)
        truth = web.ground_truth()
        assert truth.duplicates and truth.traps and truth.redirect_loops and truth.dropped
        assert truth.slow and truth.big and truth.non_html and truth.unfollowed and truth.disallowed
        assert truth.redirects[web.url(0, "/moved/b")] == (302, web.url(0, "/page/3.html"))
        assert set(truth.seeds) <= truth.pages


def test_weblike_links(weblike):
    """Cross-site links go to the large sites; in-site popularity is not a matter of page number."""
    truth = weblike.ground_truth()
    sizes = [weblike.site_pages(site) for site in range(8)]
    by_size = sorted(range(8), key=lambda site: -sizes[site])
    site = lambda url: weblike.site_of(urlsplit(url).netloc)
    into = defaultdict(int)
    in_links = defaultdict(int)
    for page, links in truth.links.items():
        for link in links:
            if urlsplit(page).path.startswith("/page/") and site(link) != site(page):
                into[site(link)] += 1
            in_links[link] += 1
    # The larger half of the sites gets most cross-site links (in proportion to size: 81 % here, 72 % if
    # uniform).
    assert sum(into[s] for s in by_size[:4]) > 3 * sum(into[s] for s in by_size[4:])
    # The most linked pages of the largest site, home aside, are mostly not its first, shallowest pages
    # (on the uniform shape 4 of the 5 are among pages 1-8).
    largest = by_size[0]
    pages = sorted(range(1, sizes[largest]), key=lambda p: -in_links[weblike.url(largest, f"/page/{p}.html")])
    assert sum(page <= 2 * FANOUT for page in pages[:5]) <= 2


def test_classify(web):
    assert web.classify(web.url(0, "/page/3.html")) == "page"
    assert web.classify(web.url(0, "/page/40.html")) == "notfound"
    assert web.classify(web.url(0, "/moved/a")) == "redirect"
    assert web.classify(web.url(0, "/files/report.pdf")) == "file"
    assert web.classify(web.url(2, "/calendar/1999/01/")) == "trap"
    assert web.classify(web.url(3, "/slow.html")) == "slow"
    assert web.classify(f"http://site0.wire.test:{PORT + 1}/") == "foreign"
    assert web.classify("http://example.com/") == "foreign"


def test_config_argv_round_trips():
    from wirescrapy.testing.sampleweb.__main__ import build_parser

    config = SampleWebConfig(
        sites=3, pages_per_site=7, slow_delay=0.25, broken_robots="malformed", shape="weblike"
    )
    args = build_parser().parse_args(config_argv(config))
    assert SampleWebConfig(**{k: getattr(args, k) for k in vars(config)}) == config
    assert build_parser().parse_args(["--pages", "9"]).pages_per_site == 9


def test_server_refuses_other_interfaces():
    for interface in ("0.0.0.0", "192.168.1.10", "::1", "localhost"):
        with pytest.raises(ValueError):
            check_loopback(interface)
        with pytest.raises(ValueError):
            listen(interface=interface, reactor=object())
    check_loopback("127.0.0.2")


# -- the real server ---------------------------------------------------------

networked = pytest.mark.timeout(60)


def get(sample_web, host: str, path: str, method: str = "GET"):
    connection = http.client.HTTPConnection("127.0.0.1", sample_web.port, timeout=10)
    try:
        connection.request(method, path, headers={"Host": f"{host}:{sample_web.port}"})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


@networked
def test_server_dispatches_on_host(sample_web):
    web = sample_web.web
    for host in ("site0.wire.test", "site5.wire.test"):
        status, _, body = get(sample_web, host, "/")
        assert status == 200 and body == web.respond(host, "/").body
    assert get(sample_web, "site0.wire.test", "/")[2] != get(sample_web, "site1.wire.test", "/")[2]
    assert get(sample_web, "nosuch.wire.test", "/")[0] == 404
    status, _, body = get(sample_web, "127.0.0.1", "/")
    assert status == 200 and sample_web.seeds[0].encode() in body


@networked
def test_server_statuses_redirects_and_robots(sample_web):
    status, headers, _ = get(sample_web, "site0.wire.test", "/moved/a")
    assert (status, headers["Location"]) == (301, sample_web.url(0, "/moved/b"))
    assert get(sample_web, "site0.wire.test", "/loop/b")[0] == 302
    assert get(sample_web, "site3.wire.test", "/error.html")[0] == 500
    assert get(sample_web, "site0.wire.test", "/missing/x.html")[0] == 404
    assert b"Crawl-delay: 1" in get(sample_web, "site1.wire.test", "/robots.txt")[2]
    assert get(sample_web, "site2.wire.test", "/robots.txt")[0] == 404
    assert get(sample_web, "site3.wire.test", "/robots.txt")[0] == 500
    status, headers, body = get(sample_web, "site1.wire.test", "/odd/caf%C3%A9.html")
    assert status == 200 and body.startswith(b"<!DOCTYPE html>")
    status, headers, body = get(sample_web, "site0.wire.test", "/files/big.bin")
    assert headers["Content-Type"] == "application/octet-stream" and len(body) == 1 << 20
    status, headers, body = get(sample_web, "site1.wire.test", "/odd/big.html", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > BIG_PAGE_LIMIT


@networked
def test_server_access_log(sample_web):
    since = time.time()
    get(sample_web, "site4.wire.test", "/page/7.html")
    get(sample_web, "site4.wire.test", "/missing/log.html")
    records = [r for r in sample_web.access_log() if r["start"] >= since and r["host"] == "site4.wire.test"]
    assert [(r["path"], r["status"], r["method"]) for r in records] == [
        ("/page/7.html", 200, "GET"),
        ("/missing/log.html", 404, "GET"),
    ]
    assert records[0]["start"] <= records[0]["end"] <= records[1]["start"] <= records[1]["end"]


@networked
def test_slow_page_does_not_block_others(sample_web):
    delay = sample_web.config.slow_delay
    done = {}

    def slow():
        done["slow"] = get(sample_web, "site3.wire.test", "/slow.html")[0]

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.1)
    start = time.time()
    assert get(sample_web, "site0.wire.test", "/page/2.html")[0] == 200
    assert time.time() - start < delay / 2
    thread.join(10)
    assert done["slow"] == 200
    record = next(r for r in reversed(sample_web.access_log()) if r["path"] == "/slow.html")
    assert record["end"] - record["start"] >= delay * 0.9


@networked
def test_dropped_connection(sample_web):
    with pytest.raises(http.client.IncompleteRead):
        get(sample_web, "site3.wire.test", "/drop.html")
    time.sleep(0.1)
    record = next(r for r in reversed(sample_web.access_log()) if r["path"] == "/drop.html")
    assert record["dropped"] is True


@networked
def test_process_writes_seeds_and_exits_cleanly(tmp_path):
    log = tmp_path / "logs" / "access.jsonl"
    log.parent.mkdir()
    process = SampleWebProcess(sites=2, pages_per_site=5, workdir=tmp_path / "run", access_log=log).start()
    try:
        assert process.running
        assert process.seeds_file == tmp_path / "run" / "seeds.txt"
        assert process.seeds_file.read_text().split() == process.seeds
        assert get(process, "site1.wire.test", "/")[0] == 200
    finally:
        assert process.stop() == 0
    assert not process.running
    assert [r["host"] for r in process.access_log()] == ["site1.wire.test"]
