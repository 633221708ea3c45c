"""Script-built pages of the sample web (``--js on`` or ``endless``), under ``/js/`` of one site.

Each shows a way pages hide links from a crawler that does not run scripts; the ground truth
(:func:`scripted_links`) says which links only a rendering shows:

==========================  ===========================================================================
``/js/``                    an ordinary page (no script) linking to the pages below
``/js/write.html``          links written by ``document.write``, through a function of ``/js/lib.js``
``/js/insert.html``         a link inserted into the DOM after ``load``
``/js/xhr.html``            content (a link) fetched by ``XMLHttpRequest`` from ``/js/data.json``
``/js/app.html``            a hash-routed single-page application: its ``#/…`` links lead to views, and each
                            view's link appears only in that view
``/js/endless.html``        (``--js endless``) a script that never ends (``while (true) {}``)
``/js/found-*.html``        ordinary pages linked only by the scripts above
==========================  ===========================================================================

Every script page also loads ``/js/style.css``, an image ``/js/logo.png`` and a script of another site (a
third-party resource), so that a test sees in the access log what a rendering fetched. The odd page
``/odd/not-links.html`` (see :mod:`.content`) has a ``document.write`` too: its "ghost" link is a link once
the script has run. Pages are plain strings: no crawler code is involved in making them.
"""

from __future__ import annotations

import json
from html import escape

ROLE_SCRIPTS = 5
PREFIX = "/js/"

# page -> the links (href as written) only its scripts show; hash routes apart (APP_VIEWS)
_WRITTEN = ("/js/found-write-1.html", "found-write-2.html")
_INSERTED = ("/js/found-insert.html",)
_FETCHED = ("/js/found-xhr.html",)
APP_VIEWS = {
    "": "/js/found-app-home.html",
    "#/news": "/js/found-app-news.html",
    "#/about": "/js/found-app-about.html",
}
PAGES = ("write.html", "insert.html", "xhr.html", "app.html")
ENDLESS = "endless.html"
LEAVES = frozenset(h.rsplit("/", 1)[-1] for h in (*_WRITTEN, *_INSERTED, *_FETCHED, *APP_VIEWS.values()))
ASSETS = {
    "lib.js": "application/javascript",
    "style.css": "text/css",
    "data.json": "application/json",
    "logo.png": "image/png",
}


def pages(mode: str) -> tuple[str, ...]:
    """The script pages linked from ``/js/`` in ``mode``."""
    return PAGES + ((ENDLESS,) if mode == "endless" else ())


def exists(mode: str, name: str) -> bool:
    """Whether ``/js/<name>`` is served in ``mode`` (``""`` is the index)."""
    if mode == "off":
        return False
    return name == "" or name in pages(mode) or name in LEAVES or name in ASSETS


def raw_links(mode: str, name: str) -> tuple[str, ...]:
    """The hrefs of ``<a>`` links in the page as served (what a crawler that runs no script sees)."""
    if name == "":
        return pages(mode)
    return ("/js/",)


def scripted_links(name: str) -> tuple[str, ...]:
    """The hrefs (as the scripts write them, relative to ``/js/``) that only running ``name``'s scripts
    shows."""
    return {
        "write.html": _WRITTEN,
        "insert.html": _INSERTED,
        "xhr.html": _FETCHED,
        "app.html": tuple(APP_VIEWS.values()),
    }.get(name, ())


def asset(name: str) -> bytes:
    if name == "lib.js":
        return (
            b"function wireWrite(href, text) { "
            b"document.write('<a href=\"' + href + '\">' + text + '</a> '); }\n"
        )
    if name == "style.css":
        return b"body { font-family: sans-serif; }\n"
    if name == "data.json":
        return json.dumps(
            {"html": f'<p>Fetched later: <a href="{_FETCHED[0]}">the XHR target</a></p>'}
        ).encode()
    return _PNG


def page(mode: str, name: str, third_party: str) -> bytes:
    """The HTML of ``/js/<name>``; ``third_party`` is the origin of another site (its script is a
    third-party resource)."""
    if name == "":
        items = "".join(f'<li><a href="{p}">{p}</a></li>' for p in pages(mode))
        return _html("Script-built pages", f"<p>Pages whose links come from scripts.</p><ul>{items}</ul>")
    if name in LEAVES:
        return _html(f"Found {name}", '<p>Linked only by a script. <a href="/js/">back</a></p>')
    head = (
        f'<link rel="stylesheet" href="/js/style.css"><script src="{escape(third_party)}/js/lib.js"></script>'
    )
    body = '<p><img src="/js/logo.png" alt="logo"> <a href="/js/">back</a></p>\n'
    if name == "write.html":
        head += '<script src="/js/lib.js"></script>'
        calls = "".join(f"wireWrite({json.dumps(h)}, 'written');" for h in _WRITTEN)
        body += f"<p>Written: <script>{calls}</script></p>"
    elif name == "insert.html":
        body += (
            '<div id="later"></div><script>window.addEventListener("load", function () {'
            ' setTimeout(function () { var a = document.createElement("a");'
            f' a.href = {json.dumps(_INSERTED[0])}; a.textContent = "inserted";'
            ' document.getElementById("later").appendChild(a); }, 30); });</script>'
        )
    elif name == "xhr.html":
        body += (
            '<div id="content">Loading…</div><script>var x = new XMLHttpRequest();'
            ' x.open("GET", "/js/data.json"); x.onload = function () {'
            ' document.getElementById("content").innerHTML = JSON.parse(x.responseText).html; };'
            " x.send();</script>"
        )
    elif name == "app.html":
        views = json.dumps(APP_VIEWS)
        body += (
            '<nav><a href="#/news">News</a> <a href="#/about">About</a></nav><div id="view"></div>'
            f"<script>var views = {views}; function show() {{ var href = views[location.hash] || views[''];"
            ' document.getElementById("view").innerHTML = \'<a href="\' + href + \'">\' + href + "</a>"; }'
            ' window.addEventListener("hashchange", show); show();</script>'
        )
    elif name == ENDLESS:
        body += "<p>This page's script never ends.</p><script>while (true) {}</script>"
    return _html(f"Script page {name}", body, head)


def _html(title: str, body: str, head: str = "") -> bytes:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>{head}'
        f"</head>\n<body><h1>{escape(title)}</h1>\n{body}\n</body></html>\n"
    ).encode()


# A 1x1 transparent PNG.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6300010000050001"
    "0d0a2db40000000049454e44ae426082"
)
