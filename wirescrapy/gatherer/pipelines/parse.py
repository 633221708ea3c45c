"""Parsing: links, cleaned document and text of an HTML or text page (``gatherer.parser``).

A render (``WIRE_RENDER_JS``) is parsed twice: the rendered DOM, which is what is kept, with the links of a
hash-routed page's other views added, and the raw HTML the site sent, for content-seen and to count the links
only the rendering showed (``render_links``). In ``auto`` mode a raw HTML page that looks script-built, on a
site still being tried, is marked to be rendered (``render_wanted``; the metadata step asks the harvester for
the render once the raw fetch is recorded).

With ``WIRE_PARSE_WORKERS`` > 0 the parse itself runs in worker processes (``gatherer/workers.py``), and this
step returns a Deferred: the reactor thread goes on with other responses and requests meanwhile. The steps
after it decide by order (content-seen: the first copy stored is the original; new URLs get the next doc-ids;
the page store's first fit), so every fetch leaves this step in the order it reached it — the order the
fetches ended, as without workers — whatever order the workers finish in: a fetch waits for those before it
(``_line``), parsed or not. A worker that dies on a page (``WorkerDied``) fails the page as any parser error
does: a gatherer error, recorded, and the page fetched again in a later batch."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from scrapy.exceptions import DropItem
from twisted.internet.defer import Deferred

from wirescrapy.collection.metadata import RenderState
from wirescrapy.gatherer.parser import Parser
from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.gatherer.workers import ParseWorkers, parse_page
from wirescrapy.harvester.render import RenderMode, looks_script_built, may_probe
from wirescrapy.items import Fetch, FetchError, Kind, Link

WATCH_INTERVAL = 1.0  # seconds between two looks for a hung parse worker (WIRE_PARSE_TIMEOUT)

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from wirescrapy.gatherer.workers import Parsed
    from wirescrapy.harvester.session import Harvest
    from wirescrapy.items import ParsedPage


class _Waiting:
    """A fetch in line at this step: released when it is parsed (or needs no parse) and all before it are."""

    __slots__ = ("deferred", "item", "parsed", "ready", "spider")

    def __init__(self, item, spider: Spider):
        self.item, self.spider, self.deferred = item, spider, Deferred()
        self.parsed: Parsed | BaseException | None = None
        self.ready = False


class ParsePipeline(GathererStep):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self.parser = Parser.from_config(self.config)
        self.render_mode = RenderMode.parse(self.config.render_js)
        self.workers: ParseWorkers | None = None
        if self.config.parse_workers:
            from twisted.internet import reactor

            self.workers = ParseWorkers(
                self.config.parse_workers,
                self.config,
                reactor.callFromThread,
                timeout=self.config.parse_timeout,
            )
        self._watch = None  # the timer that stops hung workers (ParseWorkers.check)
        self._line: deque[_Waiting] = deque()
        self._parsed: Parsed | BaseException | None = None  # the worker's result for the fetch being released
        self._releasing = False

    def harvest_opened(self, harvest: Harvest) -> None:
        super().harvest_opened(harvest)
        if self.workers is not None and harvest.collection is not None:
            self.workers.start()  # before the batch is queued: ready for the first page
            if self.workers.timeout:
                from twisted.internet.task import LoopingCall  # the reactor is Scrapy's by now

                self._watch = LoopingCall(self.workers.check)
                self._watch.start(min(WATCH_INTERVAL, self.workers.timeout / 2), now=False)

    def close_spider(self, spider: Spider) -> None:
        if self._watch is not None and self._watch.running:
            self._watch.stop()
        if self.workers is not None:
            self.stats.set_value("gatherer/parse_workers/broken", self.workers.breaks)
            self.stats.set_value("gatherer/parse_workers/hung", self.workers.hangs)
            self.stats.set_value("gatherer/parse_workers/given_up", self.workers.given_up)
            self.workers.close()

    def process_item(self, item, spider: Spider):
        if self.workers is None or (not self._line and not self._wants_worker(item)):
            return super().process_item(item, spider)
        waiting = _Waiting(item, spider)
        self._line.append(waiting)
        if self._wants_worker(item):
            self.workers.parse(
                item.body,
                item.url,
                item.content_type or None,
                item.raw_body if item.render == RenderState.RENDERED else None,
                item.depth,
                lambda parsed: self._parse_ended(waiting, parsed),
            )
        else:
            waiting.ready = True
        self._release()
        return waiting.deferred

    def _wants_worker(self, item) -> bool:
        harvest = self.harvest
        return (
            isinstance(item, Fetch)
            and harvest is not None
            and harvest.collection is not None
            and not harvest.stopped
            and item.error is not FetchError.GATHERER
            and _parsable(item)
        )

    def _parse_ended(self, waiting: _Waiting, parsed: Parsed | BaseException) -> None:
        waiting.parsed, waiting.ready = parsed, True
        self._release()

    def _release(self) -> None:
        """Hand on, in order, the fetches at the head of the line that are ready."""
        if self._releasing:  # a step after this one handed in a new fetch: the loop below takes it
            return
        self._releasing = True
        try:
            while self._line and self._line[0].ready:
                waiting = self._line.popleft()
                self._parsed = waiting.parsed
                try:
                    item = super().process_item(waiting.item, waiting.spider)
                except DropItem as exc:
                    waiting.deferred.errback(exc)
                    continue
                finally:
                    self._parsed = None
                waiting.deferred.callback(item)  # the steps after this one run now, for this fetch
        finally:
            self._releasing = False

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if not _parsable(fetch):
            return
        parsed = self._parsed
        if parsed is None:
            raw_body = fetch.raw_body if fetch.render == RenderState.RENDERED else None
            parsed = parse_page(self.parser, fetch.body, fetch.url, fetch.content_type or None, raw_body)
        elif isinstance(parsed, BaseException):
            raise parsed
        fetch.page, raw_page, fetch.link_decisions = parsed
        self.stats.inc_value("gatherer/parsed")
        self.stats.inc_value("gatherer/parsed_bytes", len(fetch.body))
        if fetch.render == RenderState.RENDERED:
            self._rendered(fetch, fetch.page, raw_page)
        elif self.render_mode.auto and fetch.page.is_html and not fetch.render:
            collection = harvest.collection
            site = collection.sites.records[fetch.site_id]["render"]
            page = collection.documents.records[fetch.doc_id]["render"]
            if may_probe(self.render_mode, site, page) and looks_script_built(
                fetch.body, len(fetch.page.links), len(fetch.page.text)
            ):
                fetch.render_wanted = True
                self.stats.inc_value("gatherer/render/wanted")

    def _rendered(self, fetch: Fetch, page: ParsedPage, raw_page: ParsedPage | None) -> None:
        known = {link.url for link in page.links}
        itself = {fetch.url, page.url}  # a view's links to the other views: the page itself
        for href in fetch.script_links:
            url = href.partition("#")[0]
            if url.startswith(("http://", "https://")) and url not in known and url not in itself:
                known.add(url)
                page.links.append(Link(url, "", "a", len(page.links)))
        if raw_page is not None:
            fetch.raw_page = raw_page
            raw = {link.url for link in raw_page.links}
            fetch.render_links = len(known - raw)
        else:
            fetch.render_links = len(known)


def _parsable(fetch: Fetch) -> bool:
    return fetch.kind is Kind.PAGE and fetch.status == 200 and not fetch.mime_refused and bool(fetch.body)
