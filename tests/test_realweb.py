"""The web of real documents (``wirescrapy.testing.realweb``): its ground truth read from files, and its nginx
with the access log the politeness check reads."""

from __future__ import annotations

import shutil
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from wirescrapy.testing import nginx
from wirescrapy.testing.realweb import truth
from wirescrapy.testing.realweb.sites import Site, missing, packages

PAGES = {
    "index.html": (
        """<html><head><link rel="next" href="c.html"><link rel="stylesheet" href="s.css"></head>"""
        """<body>
        <a href="a.html#top">a</a> <a href="dir">a directory</a> <a href="missing.html">gone</a>
        <a href="b.html" rel="nofollow">b</a> <a href="auth-password.html">rejected</a>
        <script>document.write('<a href="ghost.html">')</script>"""
        """<noscript><a href="hidden.html">x</a></noscript>
        <a href="http://elsewhere.test/">out</a> <a href="picture.png">png</a></body></html>"""
    ),
    "a.html": '<a href="index.html">home</a> <a href="./dir/">dir</a>',
    "b.html": "nofollow target",
    "c.html": '<base href="dir/"><a href="index.html">dir index, through base</a>',
    "dir/index.html": '<a href="../a.html">a</a>',
    "hidden.html": "",
    "ghost.html": "",
    "auth-password.html": "",
    "picture.png": "",
}


@pytest.fixture
def tree():
    """The pages in a directory of their own (nginx's workers run as the user who started it, root
    included)."""
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
    assert walked.pages == {
        f"{origin}/{page}" for page in ("", "a.html", "c.html", "dir/", "index.html", "dir/index.html")
    }
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


@pytest.mark.skipif(nginx.binary() is None, reason="nginx is not installed (apt-get install nginx-light)")
def test_nginx_serves_each_host_on_its_address_and_logs_every_request(tree, tmp_path):
    servers = [
        nginx.Server("docs.realweb.test", "127.0.0.2", str(tree)),
        nginx.Server("other.realweb.test", "127.0.0.3", str(tree / "dir")),
    ]
    with nginx.Nginx(servers, tmp_path / "nginx") as server:
        started = time.time()
        for address, path in (("127.0.0.2", "/a.html"), ("127.0.0.2", "/a.html"), ("127.0.0.3", "/")):
            request = urllib.request.Request(f"http://{address}:{server.port}{path}")
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
        time.sleep(0.05)
    requests = nginx.read_log(server.access_log, started - 1)
    assert [(r.host, r.status, r.line) for r in requests] == [
        ("127.0.0.2", 200, "GET /a.html HTTP/1.1"),
        ("127.0.0.2", 200, "GET /a.html HTTP/1.1"),
        ("127.0.0.3", 200, "GET / HTTP/1.1"),
    ]
    report = {entry.host: entry for entry in nginx.politeness(requests, {"127.0.0.2": 3600.0})}
    assert report["127.0.0.2"].short_gaps == 1 and report["127.0.0.2"].overlaps == 0
    assert report["127.0.0.3"].requests == 1


def test_a_site_is_missing_while_a_package_adding_to_its_tree_is_not_installed(tmp_path):
    (tmp_path / "index.html").write_text("<html></html>")
    alone = Site("alone", "pkg-of-its-tree", str(tmp_path), "test")
    added = Site("added", "pkg-of-its-tree", str(tmp_path), "test", also=("wire-test-no-such-package",))
    assert missing([alone, added]) == [added]
    assert packages([alone, added]) == ["pkg-of-its-tree", "wire-test-no-such-package"]
