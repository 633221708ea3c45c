"""Pages whose site is rendered (``WIRE_RENDER_JS``) go to Splash instead of being fetched raw.

After the blocked-address and robots.txt checks of the page's own URL, a page of a site that is always
rendered (a listed suffix, or ``auto`` found that rendering helps it: its site record) becomes a
``SplashRequest`` (:func:`~wirescrapy.harvester.render.render_request`), which scrapy-splash's middleware
turns into the request to Splash. Both go back through the scheduler to the front of the page's site queue,
so the render is that site's access. A page that froze Splash once (``RenderState.TIMED_OUT``) and the raw
fallback of a failed render (``meta[NO_RENDER]``) are fetched raw; so is a page while Splash is down (the
spider's renders said so with the ``rendering_paused`` signal: ``harvester/splash.py``), its render recorded
as failed.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from wirescrapy.collection.metadata import RenderState
from wirescrapy.config import WireConfig
from wirescrapy.harvester.meta import KIND, NO_RENDER, RENDER, RENDER_FAILURE
from wirescrapy.harvester.render import RenderMode, direct, render_request
from wirescrapy.items import FetchError
from wirescrapy.signals import harvest_opened, rendering_paused

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from wirescrapy.harvester.session import Harvest


class RenderMiddleware:
    def __init__(self, config: WireConfig, user_agent: str, stats: StatsCollector):
        self.config = config
        self.mode = RenderMode.parse(config.render_js)
        if not self.mode.on:
            raise NotConfigured  # WIRE_RENDER_JS is off; without a message, as Scrapy logs one at WARNING
        self.user_agent = user_agent
        self.stats = stats
        self.harvest: Harvest | None = None  # none: not a harvest, nothing is rendered
        self.paused_until = 0.0  # time.monotonic: Splash was down, no render is tried before

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        user_agent = crawler.settings.get("USER_AGENT") or ""
        middleware = cls(WireConfig.from_crawler(crawler), user_agent, crawler.stats)
        crawler.signals.connect(middleware.harvest_opened, signal=harvest_opened)
        crawler.signals.connect(middleware.rendering_paused, signal=rendering_paused)
        return middleware

    def harvest_opened(self, harvest: Harvest) -> None:
        self.harvest = harvest

    def rendering_paused(self, until: float) -> None:
        self.paused_until = until

    def process_request(self, request: Request, spider: Spider) -> Request | None:
        meta = request.meta
        if "splash" in meta or RENDER in meta or NO_RENDER in meta or meta.get(KIND) is not None:
            return None
        harvest = self.harvest
        if harvest is None:
            return None
        site, page = harvest.render_states(request.url)
        if not direct(self.mode, request.url, site, page):
            return None
        if time.monotonic() < self.paused_until:
            # Splash refused a render a moment ago: the page is fetched raw, its render failed (it is rendered
            # at a later visit), and the site is spared a render that would fail before its raw fetch.
            meta[RENDER_FAILURE] = (int(RenderState.FAILED), int(FetchError.RENDER_FAILED), "Splash is down")
            self.stats.inc_value("harvester/render/skipped_splash_down")
            return None
        self.stats.inc_value("harvester/render/direct")
        return render_request(
            request.url,
            self.config,
            self.user_agent,
            how="direct",
            meta=dict(meta),
            callback=request.callback,
            errback=request.errback,
            priority=max(request.priority, 1),
        )  # > 0: back at the front of its site's queue
