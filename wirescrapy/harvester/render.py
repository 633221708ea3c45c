"""Which pages are rendered through Splash, and how a render is asked for (``WIRE_RENDER_JS``).

Pure policy (no reactor, no I/O) and the one place that builds a render request:

* :class:`RenderMode` — ``off``, ``auto`` or host suffixes, parsed once;
* :func:`direct` — a page goes straight to Splash (its site's suffix is listed, or ``auto`` found that
  rendering helps its site), never a page that froze Splash;
* :func:`may_probe` and :func:`looks_script_built` — ``auto``: a page fetched raw is rendered once more
  when its site is still being tried and the page looks script-built (the rule is below);
* :func:`site_after` — ``auto``: what a render tells of its site (``SiteRender``);
* :func:`failure` — a render that failed: Splash down (``render_failed``, rendered at a later visit) or
  Splash gave up or froze on the page (``render_timeout``, never rendered again);
* :func:`answered` — whether a render that failed in the download was answered by Splash all the same;
* :func:`pauses_rendering` — whether a failed render says Splash is down (it did not answer), which pauses
  rendering for a moment, or only that this page's render failed;
* :func:`render_request` — the ``SplashRequest`` to Splash's ``/execute`` with :data:`LUA`, the script
  that keeps a render polite (below).

**Looks script-built** (:func:`looks_script_built`): the raw HTML has at least one ``<script`` element,
and either fewer than :data:`FEW_LINKS` links the crawler follows, or less than :data:`LITTLE_TEXT`
characters of visible text, or a link to a hash route (``href="#/…"``, a single-page application's
views). Pages without scripts are never rendered: nothing on them can change.

**A render's cost to the site** (:data:`LUA`): Splash fetches the page and, by itself, its scripts,
style sheets, images and XHR at once. The script makes it fetch the page, then at most
``WIRE_RENDER_SUBRESOURCES`` more requests to the page's own site (scheme, host and port); images are
never loaded and every other site's resources are aborted before any connection. Splash has no way to
space its requests out: the page's scripts and style sheets may come two at a time over Qt's
connections. The crawler counts the whole render as one access of the site: one render or fetch at a
time per site, and the site's wait counted from the end of the render.

Sites under a ``WIRE_DNS_HOSTS`` name (the sample web in tests) are unknown to Splash's resolver: their
requests are sent to the mapped address as to an HTTP proxy (the port of the URL), which keeps the
``Host`` header; so those sites are rendered over ``http`` only.
"""

from __future__ import annotations

import enum
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy.exceptions import ScrapyDeprecationWarning

with warnings.catch_warnings():
    # scrapy-splash imports scrapy.utils.url.canonicalize_url, which Scrapy 2.13 deprecates for w3lib's (the
    # same function): a warning at the start of every command, about code the user cannot change.
    warnings.filterwarnings(
        "ignore", r"The scrapy\.utils\.url\.canonicalize_url function", ScrapyDeprecationWarning
    )
    from scrapy_splash import SplashRequest

from wirescrapy.collection.metadata import RenderState, SiteRender
from wirescrapy.harvester.meta import RENDER
from wirescrapy.items import FetchError
from wirescrapy.url import host_name, mapped_address, origin, request_host

if TYPE_CHECKING:
    from collections.abc import Callable

    from wirescrapy.config import WireConfig

FEW_LINKS = 3
LITTLE_TEXT = 200
MAX_VIEWS = 8  # hash routes a render visits to collect the links of their views
SPLASH_BUSY = (502, 503)  # Splash's answers when it is overloaded, or not up behind a proxy
SPLASH_EXTRA_TIMEOUT = 5.0  # scrapy-splash's: the download timeout is Splash's timeout plus this

_SCRIPT = re.compile(rb"<script[\s>/]", re.IGNORECASE)
_HASH_ROUTE = re.compile(rb"""href\s*=\s*["']?#/""", re.IGNORECASE)


class Mode(enum.Enum):
    OFF = "off"
    AUTO = "auto"
    SUFFIXES = "suffixes"


@dataclass(frozen=True)
class RenderMode:
    """``WIRE_RENDER_JS`` parsed: off, auto, or host suffixes whose sites are always rendered."""

    mode: Mode
    suffixes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, value: str) -> RenderMode:
        text = value.strip().lower()
        if text in ("off", ""):
            return cls(Mode.OFF)
        if text == "auto":
            return cls(Mode.AUTO)
        return cls(Mode.SUFFIXES, tuple(part.strip() for part in text.split(",") if part.strip()))

    @property
    def on(self) -> bool:
        return self.mode is not Mode.OFF

    @property
    def auto(self) -> bool:
        return self.mode is Mode.AUTO

    def listed(self, url: str) -> bool:
        """Whether the host of ``url`` ends with a listed suffix (``.b.cl`` matches ``a.b.cl``; ``b.cl``
        matches ``b.cl`` and ``a.b.cl``)."""
        host = request_host(url).lower()
        return any(
            host == s.lstrip(".") or host.endswith(s if s.startswith(".") else "." + s) for s in self.suffixes
        )


def direct(mode: RenderMode, url: str, site: SiteRender | int, page: RenderState | int) -> bool:
    """Whether the page at ``url`` goes to Splash without a raw fetch first."""
    if not mode.on or page == RenderState.TIMED_OUT:
        return False
    if mode.mode is Mode.SUFFIXES:
        return mode.listed(url)
    return site == SiteRender.HELPS


def may_probe(mode: RenderMode, site: SiteRender | int, page: RenderState | int) -> bool:
    """``auto``: whether a page fetched raw may be rendered to try its site (still untried)."""
    return mode.auto and site == SiteRender.UNTRIED and page != RenderState.TIMED_OUT


def looks_script_built(body: bytes, links: int, text_chars: int) -> bool:
    """The module's rule: scripts, and few links, little text or hash routes."""
    if _SCRIPT.search(body) is None:
        return False
    return links < FEW_LINKS or text_chars < LITTLE_TEXT or _HASH_ROUTE.search(body) is not None


def site_after(state: int, tries: int, gains: int, gained: bool, max_tries: int) -> tuple[int, int, int]:
    """``(render, render_tries, render_gains)`` of a site after one of its pages was rendered (a render
    that froze Splash counts as a try without gain). ``auto`` decides on the evidence: one page that gained
    links marks the site ``HELPS``; ``max_tries`` renders without any, ``NEVER_HELPS``."""
    tries = min(tries + 1, 0xFFFF)
    gains = min(gains + gained, 0xFFFF)
    if state == SiteRender.UNTRIED:
        if gains:
            state = SiteRender.HELPS
        elif tries >= max_tries:
            state = SiteRender.NEVER_HELPS
    return int(state), tries, gains


def failure(
    error: FetchError | None, splash_status: int, elapsed: float, frozen_after: float
) -> tuple[RenderState, FetchError]:
    """The render's state and error kind after it failed: ``error`` is how the request to Splash failed
    (None: Splash answered ``splash_status``, not 200), ``elapsed`` the seconds it had run.

    Splash's own timeout (504) and a render that died without an answer after ``frozen_after`` seconds
    (the download timeout, or the supervisor killing a frozen Splash) are the page's doing: never
    rendered again. A refused connection, a connection lost early, or any other answer: Splash was down,
    restarting or busy; the page is rendered at a later visit."""
    if splash_status == 504:
        return RenderState.TIMED_OUT, FetchError.RENDER_TIMEOUT
    if error is FetchError.TIMEOUT or (
        error in (FetchError.CONNECTION_LOST, FetchError.OTHER) and elapsed >= frozen_after
    ):
        return RenderState.TIMED_OUT, FetchError.RENDER_TIMEOUT
    return RenderState.FAILED, FetchError.RENDER_FAILED


def pauses_rendering(kind: FetchError, error: FetchError | None, splash_status: int) -> bool:
    """Whether a failed render says Splash is down (so the next renders would fail too): it did not answer
    (``error``: refused, lost) or answered busy. An answer of Splash's about the page (200 with the script's
    ``ok=false``, a 4xx for its arguments) says Splash is up."""
    if kind is not FetchError.RENDER_FAILED:
        return False
    return error is not None or splash_status in SPLASH_BUSY


def answered(exc: BaseException, truncated: bool) -> bool:
    """Whether a render whose request failed with ``exc`` was answered by Splash all the same: its answer was
    cut at the size bound (``truncated``: :data:`LUA` bounds it, so Splash broke the bound) or was not JSON
    (scrapy-splash could not read it). Then Splash is up and the failure is the page's."""
    return truncated or isinstance(exc, ValueError)


def page_url(request) -> str:
    """The page a request is for: a Splash request's page, not Splash's endpoint."""
    splash = request.meta.get("splash")
    if splash:
        return splash.get("args", {}).get("url", request.url)
    return request.url


def render_request(
    url: str,
    config: WireConfig,
    user_agent: str,
    *,
    how: str,
    meta: dict,
    callback: Callable,
    errback: Callable,
    priority: int = 0,
) -> SplashRequest:
    """The SplashRequest rendering ``url`` with :data:`LUA`; ``how``: ``direct`` or ``follow``."""
    args = {
        "lua_source": LUA,
        "site": origin(url),
        "subresources": config.render_subresources,
        "wait": config.render_wait,
        "timeout": config.render_timeout,
        "views": MAX_VIEWS,
        "resource_timeout": max(config.render_timeout / 2, 1.0),
        "headers": {"User-Agent": user_agent},
        "max_bytes": config.max_file_size,
    }
    address = mapped_address({host_name(k): v for k, v in config.dns_hosts.items()}, request_host(url))
    if address is not None:
        port = url.split("://", 1)[1].split("/", 1)[0].rpartition(":")
        args["proxy_host"] = address
        args["proxy_port"] = int(port[2]) if port[1] and port[2].isdigit() else 80
    meta = {**meta, RENDER: how, "dont_retry": True}  # a retry of a page that froze Splash freezes it again
    return SplashRequest(
        url,
        callback,
        endpoint="execute",
        args=args,
        meta=meta,
        errback=errback,
        dont_filter=True,
        dont_send_headers=True,
        priority=priority,
        session_id=None,
    )


# The render, polite: see the module's docstring. Splash's Lua sandbox has string.find and string.sub, no
# patterns. The page is fetched by Splash's own HTTP client (``splash:go`` with ``baseurl``: the same network
# manager, so the request filter below and the proxy apply to it) and its bytes are then set as the frame's
# content with the page's URL as base: WebKit's memory cache (on in Splash unless it runs with
# --disable-browser-caches) would otherwise serve a page rendered before while it is fresh (heuristic
# freshness from Last-Modified) with no request, and the render would have no answer of the site to record.
# One request for the page, whose raw body (base64: any encoding, for content-seen and the links it gained)
# and the DOM come from the same bytes; its scripts, style sheets and XHR still load through the filter (a
# fresh one from the memory cache, with no request: fewer, never more). The first request is the page when
# it is to the page's site. A same-site redirect's target is not followed by the HTTP client (aborted before
# any connection) but rendered by a second go with its own URL as base, so relative scripts and links resolve
# as in a browser; it counts as a subresource, the raw answer stays the redirect's; another site's is aborted.
# The answer is bounded by construction (``max_bytes``, the crawler's WIRE_MAX_FILE_SIZE): the raw body
# and the DOM are each cut there and sent base64-encoded (4/3 of the cut; JSON-escaping the DOM as text
# would cost up to 6 bytes per control character), with their whole lengths; the view links add at most
# ``max_bytes`` of URLs.
LUA = """
base64 = require("base64")
treat = require("treat")
function main(splash, args)
  splash.images_enabled = false
  splash.resource_timeout = args.resource_timeout
  local prefix = args.site .. "/"
  local used, blocked, first, page, moved = 0, 0, true, nil, nil
  local raw = {}
  splash:on_request(function(request)
    if args.proxy_host then
      request:set_proxy{host=args.proxy_host, port=args.proxy_port, type="HTTP"}
    end
    local own = string.sub(request.url, 1, #prefix) == prefix
    if first then
      first = false
      if own then
        page = request.url
        request:set_header("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
        request:enable_response_body()
        return
      end
    end
    if not own then
      blocked = blocked + 1
      request:abort()
    elseif moved == nil and raw.status ~= nil and raw.status >= 300 and raw.status < 400 then
      -- the page's same-site redirect: its target is rendered below, with its own URL as base
      moved = request.url
      request:abort()
    elseif used >= args.subresources then
      blocked = blocked + 1
      request:abort()
    else
      used = used + 1
    end
  end)
  splash:on_response(function(response)
    if raw.status == nil and page ~= nil and response.url == page then
      raw.status = response.status
      raw.type = response.headers["Content-Type"] or ""
      if response.body then
        local body = treat.as_string(response.body)
        raw.length = #body
        raw.body64 = base64.encode(string.sub(body, 1, args.max_bytes))
      end
    end
  end)
  local ok, reason = splash:go{args.url, baseurl=args.url, headers=args.headers}
  if moved ~= nil then
    ok, reason = splash:go{moved, baseurl=moved, headers=args.headers}
  end
  if raw.status == nil then
    if ok and page == nil then
      reason = "the page was not requested"
    end
    return {ok=false, reason=tostring(reason), requests=used, blocked=blocked}
  end
  splash:wait(args.wait)
  local html = splash:html()
  local html_length = #html
  html = base64.encode(string.sub(html, 1, args.max_bytes))
  local routes = splash:evaljs([[
    (function (limit) {
      var seen = [], anchors = document.querySelectorAll('a[href^="#/"]');
      for (var i = 0; i < anchors.length && seen.length < limit; i++) {
        var href = anchors[i].getAttribute("href");
        if (seen.indexOf(href) < 0) seen.push(href);
      }
      return seen;
    })(]] .. args.views .. [[)
  ]])
  local views, view_bytes = {}, 0
  if routes and #routes > 0 then
    local go = splash:jsfunc("function (hash) { location.hash = hash; }")
    local hrefs = splash:jsfunc("function () { return Array.prototype.map.call("
      .. "document.querySelectorAll('a[href]'), function (a) { return a.href; }); }")
    for _, route in ipairs(routes) do
      go(route)
      splash:wait(0.05)
      for _, href in ipairs(hrefs()) do
        if view_bytes + #href <= args.max_bytes then
          view_bytes = view_bytes + #href
          views[#views + 1] = href
        end
      end
    end
  end
  return {ok=true, html64=html, html_length=html_length, raw=raw, views=views, requests=used, blocked=blocked}
end
"""
