"""Renders through Splash, the spider's side (``WIRE_RENDER_JS``; which pages, and the request to Splash, are
``harvester/render.py``'s): Splash's answer or failure becomes a :class:`~wirescrapy.items.Fetch`, a direct
render that failed is followed by the page's raw fetch, and in ``auto`` mode a raw page that looks
script-built is rendered once it is recorded (the ``render_wanted`` signal).

A render that failed because Splash did not answer (refused, lost early; or 502/503: busy, or restarting
behind a proxy) pauses rendering for ``SPLASH_DOWN_PAUSE`` seconds, and says so with the ``rendering_paused``
signal, which the render middleware hears. Meanwhile pages are fetched raw and their render is recorded as
failed, to be tried at a later visit: a site is not visited twice per page while Splash restarts. A render
that Splash answered but could not do, or an answer past its size bound or unreadable (``render.answered``),
is that page's failure alone and pauses nothing (``render.pauses_rendering``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import scrapy

from wirescrapy.harvester.fetch import classify, failure_fetch, render_fetch
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
    TRUNCATED,
)
from wirescrapy.harvester.render import answered, page_url, pauses_rendering, render_request
from wirescrapy.harvester.render import failure as render_failure
from wirescrapy.harvester.scheduler import FOLLOW_UP_PRIORITY
from wirescrapy.items import Fetch, FetchError
from wirescrapy.signals import render_wanted, rendering_paused

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable, Iterator

    from scrapy.crawler import Crawler

    from wirescrapy.config import WireConfig

SPLASH_DOWN_PAUSE = 3.0  # seconds from a render failed as Splash down (refused, lost) to the next render


def after_render(fetch: Fetch, request) -> None:
    """The raw fetch that follows a failed direct render records the render's failure."""
    failed = request.meta.get(RENDER_FAILURE)
    if failed:
        state, kind, message = failed
        fetch.render = state
        if fetch.error is None:
            fetch.error, fetch.message = FetchError(kind), message


class SplashRenders:
    """The harvester spider's renders: ``answer`` and ``failure`` from its callback and errback (which the
    requests it builds carry), ``render_later`` when the gatherer asks for a render."""

    def __init__(
        self,
        crawler: Crawler,
        config: WireConfig,
        callback: Callable,
        errback: Callable,
        logger: logging.LoggerAdapter,
    ):
        self.crawler = crawler
        self.config = config
        self.callback, self.errback = callback, errback
        self.logger = logger
        self.paused_until = 0.0  # time.monotonic: no render is tried before (Splash was down)
        crawler.signals.connect(self.render_later, signal=render_wanted)

    def splash_down(self) -> bool:
        """Whether a render failed as Splash down (refused, lost) less than ``SPLASH_DOWN_PAUSE`` seconds
        ago."""
        return time.monotonic() < self.paused_until

    def render_later(self, fetch: Fetch) -> None:
        """Render a page fetched raw in this batch (``auto``: it looks script-built): at the front of its
        site's queue, after the site's wait. Not while Splash is down: the next visit tries again."""
        stats = self.crawler.stats
        if self.splash_down():
            stats.inc_value("harvester/render/skipped_splash_down")
            return
        meta = {DOC_ID: fetch.doc_id, SITE_ID: fetch.site_id, DEPTH: fetch.depth}
        request = render_request(
            fetch.url,
            self.config,
            self.crawler.settings.get("USER_AGENT") or "",
            how="follow",
            meta=meta,
            callback=self.callback,
            errback=self.errback,
            priority=FOLLOW_UP_PRIORITY,
        )
        stats.inc_value("harvester/render/follow")
        self.crawler.engine.crawl(request)

    def answer(self, response) -> Iterator:
        """Splash's answer to a render: the rendered page's fetch, or the render's failure."""
        request = response.request
        data = getattr(response, "data", None)  # scrapy-splash's SplashJsonResponse: the script's result
        if response.status != 200 or not isinstance(data, dict) or not data.get("ok"):
            reason = data.get("reason") or data.get("description") if isinstance(data, dict) else ""
            yield from self._failed(request, None, response.status, f"Splash {response.status}: {reason}")
            return
        fetch = render_fetch(response, data, self.config.max_file_size, time.time())
        if fetch.mime and fetch.mime not in self.config.accept_mime:  # Splash showed an image, a PDF...
            fetch.mime_refused, fetch.body, fetch.raw_body, fetch.render = True, b"", b"", 0
        self.crawler.stats.inc_value("harvester/render/rendered")
        yield fetch

    def failure(self, request, exc: BaseException) -> Iterator:
        """A render's request to Splash failed with ``exc``: Splash's doing, or the page's."""
        if answered(exc, bool(request.meta.get(TRUNCATED))):  # this page's failure: Splash is up
            yield from self._failed(request, None, 200, f"unreadable answer of Splash: {exc}")
            return
        error = classify(exc)
        yield from self._failed(request, error, 0, f"{error.label}: {exc}")

    def _failed(self, request, error: FetchError | None, splash_status: int, message: str) -> Iterator:
        elapsed = time.time() - request.meta.get(STARTED, time.time())
        state, kind = render_failure(error, splash_status, elapsed, self.config.render_frozen_after)
        stats = self.crawler.stats
        stats.inc_value(f"harvester/render/{kind.label}")
        if pauses_rendering(kind, error, splash_status):
            self.paused_until = time.monotonic() + SPLASH_DOWN_PAUSE
            self.crawler.signals.send_catch_log(rendering_paused, until=self.paused_until)
            stats.inc_value("harvester/render/splash_down")
            self.logger.warning(
                "Render of %(url)s failed: Splash did not answer (%(message)s); pages are "
                "fetched raw for %(pause).0f s, their render tried at a later visit",
                {"url": page_url(request), "message": message, "pause": SPLASH_DOWN_PAUSE},
            )
        else:
            self.logger.info(
                "Render of %(url)s failed (%(kind)s after %(s).1f s): %(message)s",
                {"url": page_url(request), "kind": kind.label, "s": elapsed, "message": message},
            )
        meta = request.meta
        if meta[RENDER] == "follow":  # the raw fetch is recorded: the page keeps its raw HTML and links
            fetch = failure_fetch(request, RuntimeError(message), time.time())
            fetch.error, fetch.render, fetch.render_follow_up = kind, int(state), True
            yield fetch
            return
        # A direct render: the page is fetched raw now, and records the render's failure.
        keep = {key: meta[key] for key in (DOC_ID, SITE_ID, DEPTH, HOPS, CHAIN) if key in meta}
        failure = (int(state), int(kind), message[:300])
        yield scrapy.Request(
            page_url(request),
            callback=self.callback,
            errback=self.errback,
            dont_filter=True,
            priority=FOLLOW_UP_PRIORITY,
            meta={**keep, NO_RENDER: True, RENDER_FAILURE: failure},
        )
