"""The harvest's components outside a crawl: the bench the component tests (``test_pipelines.py``,
``test_middlewares.py``) run on.

A :class:`Bench` is what a crawl sets up before its engine starts, with no engine, no reactor running and
no server: a crawler built by Scrapy's ``get_crawler`` with the project's test settings (``settings.test``),
a ``Harvest`` over a collection in a temporary directory, and the components built from the crawler as Scrapy
builds them (the classes named in ``ITEM_PIPELINES`` and ``DOWNLOADER_MIDDLEWARES``, through their
``from_crawler``), then told of the harvest by the ``harvest_opened`` signal, as the harvester's spider tells
them. They are driven through their Scrapy interface only.

What the tests need of the harvester's internals lives here and nowhere else, so that when those move only
this module changes: how the spider opens its harvest, the requests the scheduler builds for a batch's pages,
how the spider makes a ``Fetch`` of a response or a failure (the harvester's own ``response_fetch`` and
``failure_fetch``, given real Scrapy requests and responses), and what the spider tells the harvest's
robots.txt owner before handing a robots.txt to the gatherer.

Fetches carry explicit times (``at``, Unix seconds), so that visits, changes and robots.txt ages are exact.
"""

from __future__ import annotations

import ipaddress
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import scrapy
from scrapy import signals
from scrapy.exceptions import NotConfigured, StopDownload
from scrapy.http import Headers, Response
from scrapy.utils.log import LogCounterHandler
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.reactor import install_reactor, is_reactor_installed
from scrapy.utils.test import get_crawler
from twisted.internet.error import ConnectionRefusedError, DNSLookupError, TimeoutError
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseFailed

import settings.test as test_settings
from wirescrapy.config import WireConfig
from wirescrapy.harvester import meta
from wirescrapy.harvester.fetch import failure_fetch, response_fetch
from wirescrapy.harvester.headerlimits import HeadersTooLarge
from wirescrapy.harvester.middlewares import BlockedIP, RobotsDisallowed
from wirescrapy.harvester.session import Harvest
from wirescrapy.items import Fetch, FetchError, Kind
from wirescrapy.signals import harvest_opened
from wirescrapy.url import robots_txt_url

if TYPE_CHECKING:
    from typing import Self

__all__ = ["T0", "Bench", "run_now"]

# Scrapy's default reactor, installed (never run) because get_crawler checks the settings against it.
REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
T0 = 1_700_000_000.0  # a fetch's time when a test does not care
LATENCY = 0.1  # seconds to the response headers
TRANSFER = 0.4  # seconds from the headers to the end of the body
# What a request fails with, for each failure with no response (the spider's errback classifies it).
FAILURES = {
    FetchError.DNS: DNSLookupError("site1.wire.test"),
    FetchError.REFUSED: ConnectionRefusedError(),
    FetchError.TIMEOUT: TimeoutError(),
    FetchError.CONNECTION_LOST: ResponseFailed([]),
    FetchError.BLOCKED_IP: BlockedIP("a blocked address"),
    FetchError.ROBOTS_DISALLOWED: RobotsDisallowed("/"),
    FetchError.OTHER: ValueError("something else"),
    FetchError.HEADERS_TOO_LARGE: ResponseFailed(
        [Failure(HeadersTooLarge("response headers past 65536 bytes"))]
    ),
}


class BenchSpider(scrapy.Spider):
    """A spider for the crawler: the components hear of the harvest from the bench, not from it."""

    name = "bench"


class Bench:
    """``announce``: tell the components of the harvest (False: a crawl without one, which they pass by)."""

    def __init__(self, directory: str | Path, *, announce: bool = True, **settings):
        if not is_reactor_installed():
            install_reactor(REACTOR)
        values = {name: value for name, value in vars(test_settings).items() if name.isupper()}
        values["WIRE_COLLECTION_DIR"] = str(Path(directory) / "collection")
        # No reactor runs here to hand back a parse worker's result: pages are parsed in this thread (the
        # workers' path: tests/test_parse_workers.py and the end-to-end crawls).
        values["WIRE_PARSE_WORKERS"] = 0
        values.update(settings)
        self.crawler = crawler = get_crawler(BenchSpider, values)
        self.spider = crawler.spider = BenchSpider.from_crawler(crawler)
        self.config = WireConfig.from_crawler(crawler)
        self.harvest = Harvest.open(self.config, crawler.settings.get("USER_AGENT") or "")
        self.collection = self.harvest.collection
        self.pipelines = [build_from_crawler(cls, crawler) for cls in self._enabled("ITEM_PIPELINES")]
        middlewares = self._enabled("DOWNLOADER_MIDDLEWARES")
        self._middlewares = {cls.__name__: self._build(cls) for cls in middlewares}
        if announce:
            for _, result in crawler.signals.send_catch_log(harvest_opened, harvest=self.harvest):
                if isinstance(result, Failure):
                    result.raiseException()
        self._resolver = None

    def close(self) -> None:
        if self._resolver is not None:
            from twisted.internet import reactor

            reactor.installResolver(self._resolver)
        self.harvest.close()
        for handler in logging.root.handlers[:]:  # get_crawler's log counter, left for the engine to remove
            if isinstance(handler, LogCounterHandler) and handler.crawler is self.crawler:
                logging.root.removeHandler(handler)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _enabled(self, setting: str) -> list[type]:
        """The component classes a setting enables, in Scrapy's order."""
        enabled = {
            path: order
            for path, order in self.crawler.settings.getwithbase(setting).items()
            if order is not None
        }
        return [load_object(path) for path in sorted(enabled, key=enabled.get)]

    @property
    def stats(self) -> dict:
        return self.crawler.stats.get_stats()

    # -- the collection ------------------------------------------------------------------------------

    def seed(self, *urls: str) -> list[int]:
        """Seed ``urls`` (their sites' home pages come too); their doc-ids."""
        self.harvest.seed(urls)
        return [self.collection.lookup(url) for url in urls]

    def record(self, url: str):
        return self.collection.documents.records[self.collection.lookup(url)]

    def site(self, url: str):
        record = self.record(url)
        return self.collection.sites.records[int(record["siteid"])]

    def links(self, url: str) -> list[str]:
        """The URLs of a page's links in the link graph, in page order."""
        return [
            self.collection.url(int(target))
            for target in self.collection.links.links(self.collection.lookup(url))
        ]

    def open_batch(self):
        """The manager's next batch, opened for harvesting."""
        batch, _ = self.harvest.open_batch(self.harvest.plan_next())
        return batch

    # -- the gatherer --------------------------------------------------------------------------------

    def gather(self, fetch: Fetch):
        """Send ``fetch`` through every pipeline in order; what the last hands on (the feed's record)."""
        item = fetch
        for pipeline in self.pipelines:
            item = pipeline.process_item(item, self.spider)
        return item

    def page(
        self,
        url: str,
        status: int = 200,
        body: bytes = b"",
        content_type: str = "text/html; charset=utf-8",
        *,
        at: float = T0,
        headers: dict | None = None,
        **fields,
    ) -> Fetch:
        """The fetch the spider makes (``response_fetch``) of a response to a batch's page, sent at ``at`` and
        taking LATENCY + TRANSFER seconds; ``headers``: more response headers. ``fields`` are set on it after:
        what the spider decides later (a redirect's target, a redirect error) or what the downloader would
        have measured otherwise."""
        request = self.request(url, **{meta.STARTED: at, "download_latency": LATENCY})
        headers = {**({"Content-Type": content_type} if content_type else {}), **(headers or {})}
        response = Response(
            url,
            status=status,
            headers=headers,
            body=body,
            request=request,
            ip_address=ipaddress.ip_address("127.0.0.1"),
        )
        fetch = response_fetch(response, self.config.max_file_size, at + LATENCY + TRANSFER)
        for name, value in fields.items():
            setattr(fetch, name, value)
        return fetch

    def failure(self, url: str, error: FetchError, *, at: float = T0, **fields) -> Fetch:
        """The fetch the spider's errback makes (``failure_fetch``) of a batch's page that failed with
        ``error`` and no response."""
        request = self.request(url, **{meta.STARTED: at})
        fetch = failure_fetch(request, FAILURES[error], at + LATENCY + TRANSFER)
        assert fetch.error is error, f"{FAILURES[error]!r} is taken for {fetch.error}"
        for name, value in fields.items():
            setattr(fetch, name, value)
        return fetch

    def robots(
        self,
        origin: str,
        status: int = 200,
        body: bytes = b"",
        *,
        at: float = T0,
        error: FetchError | None = None,
    ):
        """A site's robots.txt answered (or failed, with ``error``), as the spider hands it on: the fetch
        told to the harvest's robots.txt owner, then sent through the pipelines; what the last one hands
        on."""
        request = self.request(
            robots_txt_url(origin),
            Kind.ROBOTS,
            **{meta.ORIGIN: origin, meta.STARTED: at, "download_latency": LATENCY},
        )
        ended = at + LATENCY + TRANSFER
        if error is None:
            response = Response(
                request.url, status=status, headers={"Content-Type": "text/plain"}, body=body, request=request
            )
            fetch = response_fetch(response, self.config.max_file_size, ended)
            self.harvest.robots.fetched(fetch)
        else:
            fetch = failure_fetch(request, FAILURES[error], ended)
            self.harvest.robots.failed(fetch)
        return self.gather(fetch)

    def policy(self, origin: str):
        """The harvest's robots.txt policy of a site."""
        return self.harvest.robots.policy(origin)

    def sitemap(self, origin: str, listed: list[tuple[str, float | None]], *, at: float = T0):
        """A sitemap read (its entries ``listed``), through the pipelines."""
        fetch = Fetch(
            Kind.SITEMAP,
            origin + "/sitemap.xml",
            0,
            0,
            0,
            started=at,
            ended=at + LATENCY + TRANSFER,
            status=200,
            mime="application/xml",
            listed=listed,
            origin=origin,
        )
        return self.gather(fetch)

    # -- the downloader ------------------------------------------------------------------------------

    def _build(self, cls: type):
        """A component built from the crawler, or the ``NotConfigured`` it raised (Scrapy leaves it out)."""
        try:
            return build_from_crawler(cls, self.crawler)
        except NotConfigured as exc:
            return exc

    def middleware(self, name: str):
        """The enabled downloader middleware of that class name (``NotConfigured`` if it left itself out)."""
        middleware = self._middlewares[name]
        if isinstance(middleware, NotConfigured):
            raise middleware
        return middleware

    def request(self, url: str, kind: Kind = Kind.PAGE, **extra) -> scrapy.Request:
        """A request as the harvester queues it: a batch's page with its doc-id, site-id and depth (none for a
        URL the collection does not hold: a redirect's follow-up), or a site's robots.txt or sitemap."""
        if kind is Kind.PAGE:
            doc_id = self.collection.lookup(url)
            if doc_id:
                record = self.collection.documents.records[doc_id]
                extra = {
                    meta.DOC_ID: doc_id,
                    meta.SITE_ID: int(record["siteid"]),
                    meta.DEPTH: int(record["depth"]),
                    **extra,
                }
        else:
            extra = {meta.KIND: kind.value, **extra}
        return scrapy.Request(url, meta=extra, dont_filter=True)

    def headers_received(self, request: scrapy.Request, headers: dict) -> bool:
        """Send ``headers_received`` as the download handler does; whether a handler stopped the download."""
        return self._stopped(
            self.crawler.signals.send_catch_log(
                signal=signals.headers_received,
                headers=Headers(headers),
                body_length=-1,
                request=request,
                spider=self.spider,
            )
        )

    def bytes_received(self, request: scrapy.Request, data: bytes) -> bool:
        """Send ``bytes_received`` as the download handler does; whether a handler stopped the download."""
        return self._stopped(
            self.crawler.signals.send_catch_log(
                signal=signals.bytes_received, data=data, request=request, spider=self.spider
            )
        )

    @staticmethod
    def _stopped(results) -> bool:
        """Whether a handler stopped the download; any other error of a handler (which the signal only logs)
        is raised here."""
        stops = []
        for _, result in results:
            if not isinstance(result, Failure):
                continue
            if not isinstance(result.value, StopDownload):
                result.raiseException()
            assert not result.value.fail, "a stopped download must reach the spider (fail=False)"
            stops.append(result.value)
        return bool(stops)

    def install_resolver(self) -> None:
        """Put the crawl's ``DNS_RESOLVER`` on the reactor, as ``CrawlerProcess.start`` does (``close``
        puts the previous one back). The reactor is not started: a name the resolver maps is answered at
        once, and nothing else may be asked."""
        from twisted.internet import reactor

        self._resolver = reactor.resolver
        resolver = build_from_crawler(
            load_object(self.crawler.settings["DNS_RESOLVER"]), self.crawler, reactor=reactor
        )
        resolver.install_on_reactor()


def run_now(awaitable):
    """The result of a coroutine that awaits only what is already there: no reactor runs here."""
    steps = awaitable.__await__()
    try:
        steps.send(None)
    except StopIteration as done:
        return done.value
    steps.close()
    raise AssertionError("it waited for something that is not there yet: it needs a running reactor")
