"""The spider's side of rendering through Splash (``WIRE_RENDER_JS``, policy in ``harvester/render.py``): a
render's answer or failure becomes a :class:`~wirescrapy.items.Fetch`, a direct render that failed is followed by
the page's raw fetch, and ``auto`` asks for a render once a raw page that looks script-built is recorded.

A render that failed because Splash did not answer (refused, lost early; or it answered 502/503: busy or restarting
behind a proxy) pauses rendering for ``SPLASH_DOWN_PAUSE`` seconds: meanwhile pages are fetched raw, their render
recorded as failed (rendered at a later visit), so a site is not visited twice per page while Splash restarts. A
render Splash answered but could not do (the render script says why: the page's request failed, it was not
made), or an answer past its size bound or unreadable (``render.answered``), is that page's failure alone and
pauses nothing (``render.pauses_rendering``)."""

from __future__ import annotations

import time

import scrapy

from wirescrapy.harvester.fetch import failure_fetch, render_fetch
from wirescrapy.harvester.meta import (
    CHAIN,
    DEPTH,
    DOC_ID,
    HOPS,
    NO_RENDER,
    RENDER,
    RENDER_FAILURE,
    SITE_ID,
    STARTED,
)
from wirescrapy.harvester.render import failure as render_failure
from wirescrapy.harvester.render import page_url, pauses_rendering, render_request
from wirescrapy.items import Fetch, FetchError

SPLASH_DOWN_PAUSE = 3.0  # seconds after a render failed as Splash down (refused, lost) before the next is tried
FOLLOW_UP_PRIORITY = 1  # > 0: the front of its site's queue (WireScheduler), as the spider's follow-ups


def after_render(fetch: Fetch, request) -> None:
    """The raw fetch that follows a failed direct render records the render's failure."""
    failed = request.meta.get(RENDER_FAILURE)
    if failed:
        state, kind, message = failed
        fetch.render = state
        if fetch.error is None:
            fetch.error, fetch.message = FetchError(kind), message


class Renders:
    """Mixed into the harvester's spider (which has ``config``, ``crawler``, ``parse`` and ``failed``)."""

    _splash_down_until = 0.0  # monotonic: renders are not tried before (Splash was down)

    # -- rendering through Splash (harvester/render.py) ---------------------------------------------

    def splash_down(self) -> bool:
        """Whether a render failed as Splash down (refused, lost) less than ``SPLASH_DOWN_PAUSE`` seconds ago."""
        return time.monotonic() < self._splash_down_until

    def render_later(self, fetch: Fetch) -> None:
        """Render a page fetched raw in this batch (``auto``: it looks script-built): at the front of its site's
        queue, after the site's wait. Not while Splash is down: the next visit tries again."""
        if self.splash_down():
            self.crawler.stats.inc_value("harvester/render/skipped_splash_down")
            return
        request = render_request(fetch.url, self.config, self.crawler.settings.get("USER_AGENT") or "",
                                 how="follow", meta={DOC_ID: fetch.doc_id, SITE_ID: fetch.site_id, DEPTH: fetch.depth},
                                 callback=self.parse, errback=self.failed, priority=FOLLOW_UP_PRIORITY)
        self.crawler.stats.inc_value("harvester/render/follow")
        self.crawler.engine.crawl(request)

    def _rendered(self, response):
        request = response.request
        data = getattr(response, "data", None)
        if response.status != 200 or not isinstance(data, dict) or not data.get("ok"):
            reason = data.get("reason") or data.get("description") if isinstance(data, dict) else ""
            yield from self._render_failed(request, None, response.status, f"Splash {response.status}: {reason}")
            return
        fetch = render_fetch(response, data, self.config.max_file_size, time.time())
        if fetch.mime and fetch.mime not in self.config.accept_mime:  # Splash showed an image, a PDF...
            fetch.mime_refused, fetch.body, fetch.raw_body, fetch.render = True, b"", b"", 0
        self.crawler.stats.inc_value("harvester/render/rendered")
        yield fetch

    def _render_failed(self, request, error: FetchError | None, splash_status: int, message: str):
        elapsed = time.time() - request.meta.get(STARTED, time.time())
        state, kind = render_failure(error, splash_status, elapsed, self.config.render_frozen_after)
        self.crawler.stats.inc_value(f"harvester/render/{kind.label}")
        if pauses_rendering(kind, error, splash_status):
            self._splash_down_until = time.monotonic() + SPLASH_DOWN_PAUSE
            self.crawler.stats.inc_value("harvester/render/splash_down")
            self.logger.warning("Render of %(url)s failed: Splash did not answer (%(message)s); pages are fetched "
                                "raw for %(pause).0f s, their render tried at a later visit",
                                {"url": page_url(request), "message": message, "pause": SPLASH_DOWN_PAUSE})
        else:
            self.logger.info("Render of %(url)s failed (%(kind)s after %(s).1f s): %(message)s",
                             {"url": page_url(request), "kind": kind.label, "s": elapsed, "message": message})
        meta = request.meta
        if meta[RENDER] == "follow":  # the raw fetch is recorded: the page keeps its raw HTML and links
            fetch = failure_fetch(request, RuntimeError(message), time.time())
            fetch.error, fetch.render, fetch.render_follow_up = kind, int(state), True
            yield fetch
            return
        # A direct render: the page is fetched raw now, and records the render's failure.
        keep = {key: meta[key] for key in (DOC_ID, SITE_ID, DEPTH, HOPS, CHAIN) if key in meta}
        yield scrapy.Request(page_url(request), callback=self.parse, errback=self.failed, dont_filter=True,
                             priority=FOLLOW_UP_PRIORITY,
                             meta={**keep, NO_RENDER: True, RENDER_FAILURE: (int(state), int(kind), message[:300])})
