"""The webs of real documents (``wirescrapy.testing.realweb``): the bench of named webs and its held-out rule,
the ground truth read from files, and nginx with the access log the politeness check reads."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from wirescrapy.testing import nginx
from wirescrapy.testing.realweb import RealWeb, sites, truth, webs
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


def test_the_held_out_webs_are_the_first_two_of_the_bench_by_the_sha256_of_their_name():
    by_hash = sorted(webs.BENCH, key=lambda name: hashlib.sha256(name.encode()).hexdigest())
    assert webs.held_out() == tuple(by_hash[:2]) == ("web2", "web6")
    assert webs.is_held_out("web6") and not webs.is_held_out("web1")
    assert not webs.is_held_out(webs.DEFAULT)  # the web tuned on
    assert [site.name for site in webs.WEBS["docs13"] if site.held_out] == [
        "django",
        "xerces",
        "git",
        "debref",
        "libxml2",
    ]


def test_the_bench_has_six_webs_of_distinct_packages_beside_the_tuned_one():
    assert webs.DEFAULT == "docs13" and webs.WEBS["docs13"] is sites.SITES
    assert webs.BENCH == ("web1", "web2", "web3", "web4", "web5", "web6")
    seen: dict[str, str] = {}
    for web, members in webs.WEBS.items():
        assert len({site.name for site in members}) == len(members), web
        assert 12 <= len(members) <= 253 - sites.FIRST_ADDRESS, web
        for package in packages(list(members)):
            assert package not in seen, f"{package} in {seen.get(package)} and {web}"
            seen[package] = web
    assert sum(web != "docs13" for web in seen.values()) >= 40
    assert not any(site.held_out for web in webs.BENCH for site in webs.WEBS[web])  # whole webs are


def test_webs_are_named_one_by_one_or_all_with_the_held_out_ones_last():
    assert webs.names(None) == webs.names("") == ["docs13"]
    assert webs.names("web3, web1,web3") == ["web3", "web1"]
    assert webs.names("bench") == ["web1", "web3", "web4", "web5", "docs13", "web2", "web6"]
    with pytest.raises(ValueError, match="unknown real webs"):
        webs.names("web7")
    assert [site.name for site in webs.select("web3", "nodejs,wx")] == ["nodejs", "wx"]
    assert webs.select("docs13", None) == sites.select(None) == list(sites.SITES)
    with pytest.raises(ValueError, match="unknown real-web sites"):
        webs.select("web3", "apache")


def test_a_site_s_address_is_its_place_in_its_web(tmp_path):
    web = RealWeb(tmp_path, webs.select("web5", "atk,scipy"), install=False, web="web5")
    assert web.addresses == {"atk": "127.0.0.14", "scipy": "127.0.0.2"}
    assert web.name == "web5" and not web.held_out
    assert RealWeb(tmp_path, install=False).addresses["libxml2"] == "127.0.0.14"  # docs13, as always
    assert RealWeb(tmp_path, install=False, web="web2").held_out
    with pytest.raises(ValueError, match="not of the real web"):
        RealWeb(tmp_path, webs.select("web5", "atk"), install=False, web="web4")


def test_a_link_that_is_no_url_is_no_link_and_the_page_keeps_its_others():
    """vim-doc links ``http://[user@]host/path`` (urllib cannot split it); a port that is no number or out of
    range makes no URL either; a ``<base href>`` that is none is ignored. A browser follows none of them."""
    body = (
        b'<html><head><base href="http://[user@]host/"></head><body>'
        b'<a href="http://[user@]host/path">netrw</a> <a href="http://host:port/">port</a> '
        b'<a href="http://a.test:99999/">range</a> <a href="b.html">b</a> <a href="http://c.test:81/x">c</a>'
        b"</body></html>"
    )
    assert truth.page_links(body, "http://docs.realweb.test/dir/a.html") == (
        ["http://docs.realweb.test/dir/b.html", "http://c.test:81/x"],
        set(),
    )


VIM = Site("vim", "vim-doc", "/usr/share/doc/vim/html", "vim help as HTML")


@pytest.mark.skipif(missing([VIM]) != [], reason="vim-doc is not installed (apt-get install vim-doc)")
def test_the_truth_walks_vim_doc_whose_netrw_page_links_what_is_no_url():
    walked = truth.walk([truth.Host("http://vim.realweb.test", VIM.root)])
    netrw = "http://vim.realweb.test/pi_netrw.html"
    assert netrw in walked.pages and walked.links[netrw]
    assert not [link for page in walked.links.values() for link in page if "[" in link or "user@" in link]
