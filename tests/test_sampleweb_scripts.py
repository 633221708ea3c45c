"""The sample web's script-built pages (``--js``, ``wirescrapy.testing.sampleweb.scripts``) and their ground
truth."""

from __future__ import annotations

import pytest

from wirescrapy.testing.sampleweb import SampleWeb, SampleWebConfig
from wirescrapy.testing.sampleweb.server import origin_form

PORT = 8123


def web(js: str = "on", **params) -> SampleWeb:
    return SampleWeb(SampleWebConfig(js=js, **params), PORT)


def test_script_pages_exist_only_when_asked_for():
    assert web("off").respond("site5.wire.test", "/js/write.html").status == 404
    assert "/js/" not in str(web("off").ground_truth().pages)
    assert web("on").respond("site5.wire.test", "/js/write.html").status == 200
    assert web("on").respond("site5.wire.test", "/js/endless.html").status == 404
    assert b"while (true) {}" in web("endless").respond("site5.wire.test", "/js/endless.html").body
    with pytest.raises(ValueError, match="js must be one of"):
        SampleWebConfig(js="maybe")


def test_the_default_web_is_unchanged_by_the_script_pages():
    assert web("off").ground_truth().pages == SampleWeb(SampleWebConfig(), PORT).ground_truth().pages
    assert not web("off").ground_truth().scripted.keys() - {web("off").url(1, "/odd/not-links.html")}


def test_the_ground_truth_knows_which_links_only_scripts_show():
    truth = web("endless").ground_truth()
    url = web().url
    assert truth.scripted[url(5, "/js/write.html")] == {
        url(5, "/js/found-write-1.html"),
        url(5, "/js/found-write-2.html"),
    }
    assert truth.scripted[url(5, "/js/app.html")] == {
        url(5, f"/js/found-app-{v}.html") for v in ("home", "news", "about")
    }
    assert truth.scripted[url(5, "/js/xhr.html")] == {url(5, "/js/found-xhr.html")}
    assert truth.scripted[url(1, "/odd/not-links.html")] == {url(1, "/odd/ghost-script.html")}
    assert (
        truth.endless == {url(5, "/js/endless.html")} and truth.scripted[url(5, "/js/endless.html")] == set()
    )
    for page, links in truth.scripted.items():
        assert not links & set(truth.links[page])  # not in the raw HTML
        assert not links & truth.pages  # reached only through a script
    rendered = web("endless").ground_truth(rendered=True)
    assert rendered.pages - truth.pages == set().union(*truth.scripted.values())
    # the raw HTML has none of the links its scripts write
    body = web().respond("site5.wire.test", "/js/insert.html").body
    assert b"found-insert" in body and b'href="/js/found-insert' not in body


def test_assets_are_served_with_their_types():
    sample = web()
    assert (
        dict(sample.respond("site5.wire.test", "/js/lib.js").headers)["Content-Type"]
        == "application/javascript"
    )
    assert sample.respond("site5.wire.test", "/js/logo.png").body.startswith(b"\x89PNG")
    assert sample.classify(sample.url(5, "/js/data.json")) == "file"


def test_a_proxy_request_target_is_served_as_its_path():
    assert origin_form("http://site0.wire.test:8123/page/1.html?x=1") == "/page/1.html?x=1"
    assert origin_form("http://site0.wire.test:8123") == "/"
    assert origin_form("/page/1.html") == "/page/1.html"
