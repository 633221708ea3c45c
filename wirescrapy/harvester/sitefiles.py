"""A site's own files for the harvester's spider: robots.txt and sitemaps.

Their requests, robots.txt handed to its owner (``harvester/robots.py``) with the site's Crawl-delay and hold
settled in the scheduler, and sitemaps read, with their follow-ups queued within ``WIRE_SITEMAPS_PER_SITE``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import scrapy

from wirescrapy.harvester.meta import HOLD_SITE, KIND, ORIGIN, RDF
from wirescrapy.harvester.robots import fetch_origin
from wirescrapy.harvester.scheduler import FOLLOW_UP_PRIORITY, WireScheduler
from wirescrapy.items import Fetch, FetchError, Kind
from wirescrapy.seeder.sitemaps import parse_robots_rdf, parse_sitemap, robots_rdf_url
from wirescrapy.url import BadURL, canonicalize, robots_txt_url

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from wirescrapy.config import WireConfig
    from wirescrapy.harvester.session import Harvest
    from wirescrapy.seeder.robots import RobotsPolicy


class SiteFiles:
    """robots.txt and sitemaps of the sites of a harvest; their requests carry the spider's ``callback`` and
    ``errback``, which hand their responses back here."""

    def __init__(
        self,
        crawler: Crawler,
        config: WireConfig,
        harvest: Harvest,
        callback: Callable,
        errback: Callable,
        logger: logging.LoggerAdapter,
    ):
        self.crawler = crawler
        self.config = config
        self.harvest = harvest
        self.callback, self.errback = callback, errback
        self.logger = logger
        self.sitemaps_left: dict[str, int] = {}  # by site: how many more sitemaps an index may add

    def robots_request(self, origin: str) -> scrapy.Request:
        # No retry in the batch: a failure is retried after WIRE_ROBOTS_TXT_INVALID_PERIOD.
        meta = {KIND: Kind.ROBOTS.value, ORIGIN: origin, HOLD_SITE: True, "dont_retry": True}
        return scrapy.Request(
            robots_txt_url(origin),
            callback=self.callback,
            errback=self.errback,
            dont_filter=True,
            priority=FOLLOW_UP_PRIORITY,
            meta=meta,
        )

    def robots_fetched(self, fetch: Fetch) -> list[scrapy.Request]:
        """A robots.txt came: its rules to the owner; the site's sitemaps, to request."""
        origin = fetch_origin(fetch)
        policy = self.harvest.robots.fetched(fetch)
        self._settled(origin, policy)
        self.crawler.stats.inc_value(f"harvester/robots/{policy.state.name.lower()}")
        limit = self.config.sitemaps_per_site
        sitemaps = policy.sitemaps(robots_txt_url(origin))
        requests = []
        if self.config.add_robots_rdf:
            requests.append(self.sitemap_request(robots_rdf_url(origin), origin, rdf=True))
        for url in sitemaps[:limit]:
            try:
                requests.append(self.sitemap_request(canonicalize(url), origin))
            except BadURL:
                continue
        self.sitemaps_left[origin] = max(limit - len(sitemaps), 0)
        return requests

    def robots_failed(self, fetch: Fetch) -> None:
        self._settled(fetch_origin(fetch), self.harvest.robots.failed(fetch))
        blocked = fetch.error is FetchError.BLOCKED_IP  # refused by our setting: the site's state stays
        self.crawler.stats.inc_value(f"harvester/robots/{'blocked_ip' if blocked else 'unreachable'}")

    def _settled(self, origin: str, policy: RobotsPolicy) -> None:
        WireScheduler.of(self.crawler).set_crawl_delay(origin, policy.crawl_delay or 0.0)

    def robots_read(self, request: scrapy.Request, hop: scrapy.Request | None) -> None:
        """A robots.txt response or failure was handled (``hop``: the next request of its redirect chain)."""
        # The site's pages wait for its rules (HOLD_SITE): release the site once a robots.txt response or
        # failure is handled, even if handling it raised, unless the chain goes on to another site, where the
        # site's own pages would overtake it (RobotsTxt.keeps_hold).
        origin = request.meta[ORIGIN]
        if hop is None or not self.harvest.robots.keeps_hold(origin, hop.url):
            WireScheduler.of(self.crawler).release_site(origin)

    def sitemap_request(self, url: str, origin: str, rdf: bool = False) -> scrapy.Request:
        return scrapy.Request(
            url,
            callback=self.callback,
            errback=self.errback,
            dont_filter=True,
            meta={KIND: Kind.SITEMAP.value, ORIGIN: origin, RDF: rdf},
        )

    def sitemap_read(self, fetch: Fetch, request: scrapy.Request) -> list[scrapy.Request]:
        """A sitemap came: its URLs on the fetch (``listed``); an index's sitemaps, to request."""
        parse = parse_robots_rdf if request.meta.get(RDF) else parse_sitemap
        document = parse(fetch.body, fetch.url)
        if document.error:
            self.logger.info("Sitemap %(url)s: %(error)s", {"url": fetch.url, "error": document.error})
        if not document.is_index:
            fetch.listed = document.pairs()
            return []
        origin = fetch_origin(fetch)
        left = self.sitemaps_left.get(origin, 0)
        requests = []
        for entry in document.entries[:left]:
            try:
                requests.append(self.sitemap_request(canonicalize(entry.url), origin))
            except BadURL:
                continue
        self.sitemaps_left[origin] = left - len(requests)
        return requests
