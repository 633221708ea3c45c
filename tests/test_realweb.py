"""The real-document web of the benchmarks (benchmarks/realweb): its ground truth read from files, and its
nginx with the access log the politeness check reads."""

from __future__ import annotations

import shutil
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from benchmarks import nginx
from benchmarks.realweb import truth
from benchmarks.realweb.sites import Site, missing, packages

PAGES = {
    "index.html": """<html><head><link rel="next" href="c.html"><link rel="stylesheet" href="s.css"></head><body>
        <a href="a.html#top">a</a> <a href="dir">a directory</a> <a href="missing.html">gone</a>
        <a href="b.html" rel="nofollow">b</a> <a href="auth-password.html">rejected</a>
        <script>document.write('<a href="ghost.html">')</script><noscript><a href="hidden.html">x</a></noscript>
        <a href="http://elsewhere.test/">out</a> <a href="picture.png">png</a></body></html>""",
    "a.html": '<a href="index.html">home</a> <a href="./dir/">dir</a>',
    "b.html": "nofollow target",
    "c.html": '<base href="dir/"><a href="index.html">dir index, through base</a>',
    "dir/index.html": '<a href="../a.html">a</a>',
    "hidden.html": "", "ghost.html": "", "auth-password.html": "", "picture.png": "",
}


@pytest.fixture
def tree():
    """The pages in a directory of their own (nginx's workers run as the user who started it, root included)."""
    root = Path(tempfile.mkdtemp(prefix="wire-realweb-test-"))
    for name, text in PAGES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_truth_follows_what_a_polite_crawler_follows(tree):
    origin = "http://docs.realweb.test"
    walked = truth.walk([truth.Host(origin, str(tree))])
    # index.html and dir/index.html repeat / and dir/: other URLs, the same bytes, as a crawler sees them
    assert walked.pages == {f"{origin}/{page}" for page in ("", "a.html", "c.html", "dir/", "index.html",
                                                            "dir/index.html")}
    assert walked.redirects == {f"{origin}/dir": (301, f"{origin}/dir/")}
    assert walked.errors == {f"{origin}/missing.html": 404}
    assert walked.nofollow[f"{origin}/"] == frozenset({f"{origin}/b.html"})
    assert f"{origin}/b.html" not in walked.pages
    assert f"{origin}/a.html" in walked.links[f"{origin}/"]  # fragment dropped
    assert walked.links[f"{origin}/c.html"] == (f"{origin}/dir/index.html",)  # <base href>
    linked = set(walked.links[f"{origin}/"])
    assert f"{origin}/hidden.html" not in linked and f"{origin}/ghost.html" not in linked
    moved = truth.with_port(walked, 8123)
    assert moved.seeds == ("http://docs.realweb.test:8123/",)
    assert moved.redirects == {f"{origin}:8123/dir": (301, f"{origin}:8123/dir/")}
    rank = truth.pagerank(walked)
    assert abs(sum(rank.values()) - 1) < 1e-9
    assert rank[f"{origin}/a.html"] > rank[f"{origin}/c.html"]  # linked from two pages, not one


@pytest.mark.skipif(nginx.binary() is None,
                    reason="nginx is not installed (apt-get install nginx-light)")
def test_nginx_serves_each_host_on_its_address_and_logs_every_request(tree, tmp_path):
    servers = [nginx.Server("docs.realweb.test", "127.0.0.2", str(tree)),
               nginx.Server("other.realweb.test", "127.0.0.3", str(tree / "dir"))]
    with nginx.Nginx(servers, tmp_path / "nginx") as server:
        started = time.time()
        for address, path in (("127.0.0.2", "/a.html"), ("127.0.0.2", "/a.html"), ("127.0.0.3", "/")):
            request = urllib.request.Request(f"http://{address}:{server.port}{path}")
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
        time.sleep(0.05)
    requests = nginx.read_log(server.access_log, started - 1)
    assert [(r.host, r.status, r.line) for r in requests] == [
        ("127.0.0.2", 200, "GET /a.html HTTP/1.1"), ("127.0.0.2", 200, "GET /a.html HTTP/1.1"),
        ("127.0.0.3", 200, "GET / HTTP/1.1")]
    report = {entry.host: entry for entry in nginx.politeness(requests, {"127.0.0.2": 3600.0})}
    assert report["127.0.0.2"].short_gaps == 1 and report["127.0.0.2"].overlaps == 0
    assert report["127.0.0.3"].requests == 1


def test_the_makespan_check_knows_a_site_s_wait_from_the_documents_its_batches_listed(tmp_path):
    """A crawl cut short (--max-cycles) may have fetched 100 pages or fewer of a site its batches already knew
    more than 100 documents of: the harvester gave it the large-site wait, and so does the check."""
    from benchmarks.realweb_makespan import known_site_docs

    for batch, docs in (("000001", 40), ("000002", 130)):
        directory = tmp_path / "batches" / batch
        directory.mkdir(parents=True)
        (directory / "sites.jsonl").write_text(
            f'{{"siteid": 1, "origin": "http://Python.realweb.test:8080", "docs": {docs}}}\n'
            '{"siteid": 2, "origin": "http://sqlite.realweb.test:8080", "docs": 7}\n', encoding="utf-8")
    split = tmp_path / "batches" / "000003" / "part-1"
    split.mkdir(parents=True)
    (split / "sites.jsonl").write_text('{"siteid": 2, "origin": "http://sqlite.realweb.test:8080", "docs": 9}\n',
                                       encoding="utf-8")
    assert known_site_docs(tmp_path) == {"python.realweb.test": 130, "sqlite.realweb.test": 9}


def test_the_makespan_check_knows_a_site_found_large_in_the_middle_of_a_batch(tmp_path):
    """The harvester gives a site the large-site wait once the collection knows more than 100 of its
    documents, in the middle of a batch too: the check reads the collection's site records."""
    from benchmarks.realweb_makespan import known_site_docs
    from wirescrapy.collection import Collection

    with Collection(tmp_path) as collection:
        for n in range(130):
            collection.add_url(f"http://debref.realweb.test:8080/{n}.html", depth=1)
        collection.add_url("http://git.realweb.test:8080/", depth=0)
    batch = tmp_path / "batches" / "000001"
    batch.mkdir(parents=True)
    (batch / "sites.jsonl").write_text('{"siteid": 1, "origin": "http://debref.realweb.test:8080", "docs": 1}\n',
                                       encoding="utf-8")
    assert known_site_docs(tmp_path) == {"debref.realweb.test": 130, "git.realweb.test": 1}


def test_a_site_is_missing_while_a_package_adding_to_its_tree_is_not_installed(tmp_path):
    (tmp_path / "index.html").write_text("<html></html>")
    alone = Site("alone", "pkg-of-its-tree", str(tmp_path), "test")
    added = Site("added", "pkg-of-its-tree", str(tmp_path), "test", also=("wire-test-no-such-package",))
    assert missing([alone, added]) == [added]
    assert packages([alone, added]) == ["pkg-of-its-tree", "wire-test-no-such-package"]


def test_the_makespan_latency_splits_the_bound_s_site_s_time_between_two_requests():
    """``--latency``: the bound's site's requests matched with the harvester's items by URL; the time from one
    to the next split into the request's way, the response's way back and read, and the reactor late; a gap
    across a batch start is not counted as late."""
    from benchmarks.realweb_makespan import request_latency

    host = "apache.realweb.test"
    requests = [nginx.Request(10.000, 10.010, host, 200, "GET /a HTTP/1.1", uri="/a"),
                nginx.Request(10.062, 10.070, host, 200, "GET /b?x=1 HTTP/1.1", uri="/b?x=1"),
                nginx.Request(12.000, 12.010, host, 200, "GET /c HTTP/1.1", uri="/c"),
                nginx.Request(10.5, 10.6, "git.realweb.test", 200, "GET /a HTTP/1.1", uri="/a")]
    fetches = [{"url": f"http://{host}:8080/a", "started": 9.999, "ended": 10.011},
               {"url": f"http://{host}:8080/b?x=1", "started": 10.061, "ended": 10.072},  # 0 ms late
               {"url": f"http://{host}:8080/c", "started": 11.999, "ended": 12.012},
               {"url": "http://git.realweb.test:8080/a", "started": 10.4, "ended": 10.7}]
    line = request_latency(requests, host, 0.05, [(11.0, "batch")], fetches)
    assert line == (f"latency: {host}, 3 requests: sent to nginx's start 1.00 ms; nginx's end to the last byte "
                    "read 1.67 ms (sum 0.0 s); the wait's end to the next sent 0.00 ms (sum 0.0 s; 0 of 5 ms or "
                    "more, sum 0.0 s); inside batches, nginx's whole ms")
    fetches[1]["started"] = 10.071  # 10 ms late
    assert "the wait's end to the next sent 10.00 ms (sum 0.0 s; 1 of 5 ms or more" in request_latency(
        requests, host, 0.05, [(11.0, "batch")], fetches)
    assert request_latency(requests, "python.realweb.test", 0.05, [], fetches) == (
        "latency: no fetch of python.realweb.test matched in the harvester's items")
