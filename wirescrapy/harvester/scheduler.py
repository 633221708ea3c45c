"""WIRE's politeness as a Scrapy scheduler: one request in flight per server, and a wait after each fetch.

Enable it with ``SCHEDULER = "wirescrapy.harvester.scheduler.WireScheduler"``. The policy is the pure
:class:`~wirescrapy.harvester.politeness.PolitenessQueue`; this class connects it to the engine:

* ``enqueue_request`` puts a Request in its site's FIFO (site: ``scheme://host[:port]``, see
  :func:`wirescrapy.url.origin`), at the front when ``request.priority > 0`` (a redirect follow-up gets +2
  from ``REDIRECT_PRIORITY_ADJUST``; give robots.txt a positive priority), else at the back. Duplicates are
  filtered with ``DUPEFILTER_CLASS`` unless ``dont_filter``, as Scrapy's own scheduler does. Every request
  goes through here, robots.txt and redirects included, so none escapes the one-connection rule
  (``ROBOTSTXT_OBEY`` must stay off: its middleware fetches robots.txt with ``engine.download``, past any
  scheduler).
* A render (``WIRE_RENDER_JS``) is queued on its page's site, not on Splash's address: the ``SplashRequest``
  and the request to Splash that scrapy-splash's middleware makes of it (sent back here, at the front) are
  that site's access; the first is released without a wait when the middleware replaces it, the second starts
  the site's wait when the render ends (:func:`~wirescrapy.harvester.render.page_url`).
* :meth:`WireScheduler.enqueue_batch` takes a whole batch in compact form (no Request per URL); the Request is
  built when its site's turn comes, with ``meta`` keys ``DOC_ID``, ``SITE_ID`` and ``DEPTH``
  (:mod:`wirescrapy.harvester.meta`), ``HOPS`` for a URL that redirects led to, and ``dont_filter=True`` (the
  manager wrote each doc-id once). A revisit of a page whose server gave validators is conditional:
  ``If-None-Match`` and ``If-Modified-Since``, exactly as the server sent ``ETag`` and ``Last-Modified``.
* ``next_request`` pops the first ready site and marks it fetching.

Politeness is kept per server group (``WIRE_POLITENESS_GROUP``, :mod:`wirescrapy.collection.groups`): one
request in flight per group, the wait of the site fetched after each access, the group's sites in turn. By
address, a site's group is the address its batch record names; a site with none waits, parked, while its name
resolves (the crawl's resolver, whose cache the download then uses), so that its first access keeps to its
server's turn too; a fetch that went to another address (``meta[IP]``) moves the site to that group. A
server's signals act on its group when the fetch ends: a 429 or 503 with ``Retry-After`` holds it until then
(at most ``WIRE_MAX_RETRY_AFTER``; the page goes back to its queue through ``ServerHoldMiddleware``), a 5xx
answer or a time-out doubles its wait (at most ``WIRE_MAX_BACKOFF``), any other answer halves it back.

When a fetch ends, the site's wait starts. The signals used, and why:

* ``request_left_downloader`` is sent by the downloader when the download handler is done with a request,
  whatever the outcome (a response, an HTTP error, a download or DNS error, a timeout, a refused connection, a
  ``StopDownload``): "the network access ended" (or earlier, at a response's last byte: ``access_lag``), when
  WIRE starts the wait. ``response_downloaded``/``response_received`` miss failures; ``request_dropped`` is
  for refused requests only.
* A request can also end without ever reaching the downloader: a downloader middleware's ``process_request``
  raised ``IgnoreRequest`` or answered it (a cache), and no signal says so. Such a request never gets
  ``request_reached_downloader``; once it has also left ``engine.downloader.active`` (which the engine empties
  before it calls ``next_request`` again), the site is released without a new wait, as no access was made.

A request with ``meta[HOLD_SITE]`` (robots.txt) keeps its site busy after its download until the spider calls
``release_site`` (or ``release_held``): the site's next page must not reach the robots.txt check before the
spider has read the rules, which happens in the callback, after ``request_left_downloader`` (with waits of 0
the page would come at once). A robots.txt that redirects to another site keeps its own site held through the
chain: the spider releases the site when the chain ends. The wait still counts from the end of the download.

Each released request is removed from the in-flight map first, so a site is released exactly once per
request whatever order the signals come in.

Waking the engine: the engine asks ``next_request`` after a download, after ``crawl()`` and on a 5-second
heartbeat. When every site is waiting, a ``reactor.callLater`` runs the engine's ``nextcall`` (at once, not a
reactor turn later) when the first becomes ready, less ``DISPATCH_LEAD`` if ``FetchLimitsMiddleware`` is on:
it holds the request (``meta[NOT_BEFORE]``) until the wait is over, by the wall clock too (servers log by it,
and it drifts from the monotonic one), so the engine's work overlaps the wait's last moments.

Resuming a batch after a kill: nothing of this queue is on disk. The pipeline records every fetched page in
the collection; a restarted harvester passes the doc-ids already recorded for this batch as ``skip`` to
``enqueue_batch``, and tells ``visited`` when each site was last accessed (its site record's ``last_visit``),
so that no site is visited again before its wait is over — across a restart, or from one scheduled job to the
next (``resumed=True`` makes every site wait from now instead, when that is not known). Requests in flight or
queued follow-ups (redirects) at the kill are lost with the process: a page whose record was not written is
fetched again.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import build_from_crawler, load_object

from wirescrapy.config import WireConfig
from wirescrapy.harvester.meta import (
    BODY_DONE,
    DEPTH,
    DOC_ID,
    ENDED,
    HELD,
    HOLD_SITE,
    HOPS,
    NOT_BEFORE,
    SITE_ID,
)
from wirescrapy.harvester.politeness import (
    DocTable,
    PolitenessQueue,
    Waits,
    access_lag,
    dispatch_lead,
)
from wirescrapy.harvester.render import page_url
from wirescrapy.harvester.servergroups import ServerGroups
from wirescrapy.url import origin, split

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable, Iterator, Mapping
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.dupefilters import BaseDupeFilter
    from scrapy.spiders import Spider
    from twisted.internet.base import DelayedCall
    from twisted.internet.defer import Deferred

    from wirescrapy.harvester.politeness import Counts
    from wirescrapy.manager.batch import BatchSite, BatchURL

logger = logging.getLogger(__name__)

# The priority of the spider's follow-ups (a robots.txt, a redirect's target, a render): > 0, so at the front
# of their site's queue (``enqueue_request``), after the site's wait.
FOLLOW_UP_PRIORITY = 1

# A HOLD_SITE request's site stays "fetching" after the download until the spider releases it, or this many
# seconds (the callback raised before releasing it, or the robots.txt was redirected to a site that held it).
_MAX_HOLD = 60.0

# Added to each wake-up so that it does not come a hair before the site is ready (the reactor's clock
# and ours are read at different moments) and cost one more empty call. The event loop's own timers come
# up to a millisecond late already (epoll's timeout is in whole milliseconds, rounded up).
_WAKE_SLACK = 0.0001


def _engine_slot(crawler: Crawler) -> Any:
    """The engine's slot, or None when no spider is open.

    The only use of a private Scrapy attribute in this module (``ExecutionEngine._slot``, Scrapy 2.13):
    a scheduler has no public way to make the engine call ``next_request`` now, nor a spider to reach
    the scheduler. The slot's ``nextcall`` is the ``CallLaterOnce`` that the engine itself schedules
    after each download and on its heartbeat; scheduling it again is harmless (calls coalesce).
    """
    engine = crawler.engine
    return getattr(engine, "_slot", None) if engine is not None else None


class WireScheduler(BaseScheduler):
    """Scrapy scheduler keeping WIRE's politeness: one connection per site, ``WIRE_WAIT_*`` between."""

    def __init__(
        self, crawler: Crawler, dupefilter: BaseDupeFilter, clock: Callable[[], float] = time.monotonic
    ):
        config = WireConfig.from_crawler(crawler)
        self.crawler = crawler
        self.stats = crawler.stats
        self.dupefilter = dupefilter
        self.connections: int = config.connections
        self.queue = PolitenessQueue(
            Waits(config.wait_normal, config.wait_large_site, config.large_site_pages),
            max_backoff=config.max_backoff,
        )
        self.lead = dispatch_lead(
            build_component_list(crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES"))
        )
        self.docs = DocTable()
        self._extras: dict[
            int, tuple[int, bytes, bytes]
        ] = {}  # row -> redirect hops, ETag, Last-Modified (when any)
        self.spider: Spider | None = None
        self._clock = clock
        self.groups = ServerGroups(
            self.queue,
            config.politeness_group,
            config.max_retry_after,
            config.dns_hosts,
            self.stats,
            clock,
            self._wake_engine,
        )
        self._factories: list[tuple[Callable | None, Callable | None]] = []
        self._in_flight: dict[Request, str] = {}  # request -> its site
        self._not_reached: dict[Request, None] = {}  # in flight, not yet at the downloader (ordered set)
        self._held: dict[Request, float] = {}  # downloaded HOLD_SITE requests -> when their download ended
        self._ends: dict[str, float] = {}  # site -> Unix time its last fetch ended
        self._timer: DelayedCall | None = None
        self._stopped = False
        crawler.signals.connect(self._reached_downloader, signal=signals.request_reached_downloader)
        crawler.signals.connect(self._left_downloader, signal=signals.request_left_downloader)
        crawler.signals.connect(self._response_downloaded, signal=signals.response_downloaded)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        dupefilter_cls = load_object(crawler.settings["DUPEFILTER_CLASS"])
        return cls(crawler, build_from_crawler(dupefilter_cls, crawler))

    @classmethod
    def of(cls, crawler: Crawler) -> WireScheduler:
        """The running crawl's scheduler, for its spider (``WireScheduler.of(self.crawler)``)."""
        slot = _engine_slot(crawler)
        if slot is None or not isinstance(slot.scheduler, cls):
            raise RuntimeError(f"no open spider with SCHEDULER = {cls.__module__}.{cls.__qualname__}")
        return slot.scheduler

    # -- lifecycle -------------------------------------------------------------------------------------

    def open(self, spider: Spider) -> Deferred[None] | None:
        self.spider = spider
        return self.dupefilter.open()

    def close(self, reason: str) -> Deferred[None] | None:
        self._cancel_wakeup()
        counts = self.counts()
        self.stats.set_value("harvester/left/urls", counts.urls)
        self.stats.set_value("harvester/left/in_flight", counts.fetching)
        if counts.urls or counts.fetching:
            logger.info(
                "Harvester closed (%(reason)s) with %(urls)d URLs queued and %(fetching)d in flight",
                {"reason": reason, "urls": counts.urls, "fetching": counts.fetching},
            )
        return self.dupefilter.close(reason)

    # -- the engine's side -----------------------------------------------------------------------------

    def has_pending_requests(self) -> bool:
        return not self._stopped and (len(self.queue) > 0 or self.queue.fetching > 0)

    def __len__(self) -> int:
        return len(self.queue)

    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.dupefilter.request_seen(request):
            self.dupefilter.log(request, self.spider)
            return False
        # A render's request goes to Splash, but it is an access of the page's site: queued, and counted,
        # there (scrapy-splash's middleware sends the request to Splash back here, with a higher priority).
        site = origin(page_url(request))
        self.groups.assign(site)
        if request.meta.get(HELD) and request.meta.get(HOLD_SITE):
            self.release_site(site)  # a robots.txt held by its server: its site's hold ends with its answer
        self.queue.add(site, request, front=request.priority > 0)
        self.stats.inc_value("scheduler/enqueued")
        self.stats.inc_value("scheduler/enqueued/request")
        return True

    def next_request(self) -> Request | None:
        if self._stopped:
            return None
        now = self._clock()
        if self._not_reached:
            self._release_unreached()
        if self._held:
            self._release_stale_holds(now)
        if self.queue.fetching >= self.connections:
            return None  # a download will end, and the engine will ask again
        popped = self.queue.pop_due(now, self.lead)
        if popped is None:
            self._schedule_wakeup(now)
            return None
        site, item, ready = popped
        request = self._batch_request(site, item) if type(item) is int else item
        request.meta.pop(NOT_BEFORE, None)
        if self.lead:  # handed out before its wait ends: held at the last middleware until it is over
            wall = time.time()
            not_before = max(wall + (ready - now), self._ends.get(site, 0.0) + self.queue.wait_of(site))
            if not_before > wall:
                request.meta[NOT_BEFORE] = not_before
        self._in_flight[request] = site
        self._not_reached[request] = None
        self.stats.inc_value("scheduler/dequeued")
        return request

    # -- the spider's side -----------------------------------------------------------------------------

    def stop(self) -> None:
        """Hand out no more requests (the harvest can write nothing more): once those in flight end, the
        engine finds the crawl idle. The queue stays as it is, for the counts logged at close."""
        self._stopped = True
        self._cancel_wakeup()
        self._wake_engine()

    def enqueue_batch(
        self,
        urls: Iterable[BatchURL],
        *,
        sites: Mapping[int, BatchSite] | None = None,
        skip: Container[int] = (),
        callback: Callable | None = None,
        errback: Callable | None = None,
        resumed: bool = False,
    ) -> int:
        """Queue a batch's pages without building Requests; return how many were queued.

        ``urls``: objects with ``doc_id``, ``site_id``, ``depth`` and a canonical ``url``, and maybe
        ``redirects``, ``etag`` and ``last_modified_header`` (:class:`~wirescrapy.manager.batch.BatchURL`);
        ``sites``: site-id -> record with ``origin``, ``docs`` (for the large-site wait) and ``crawl_delay``;
        ``skip``: doc-ids not to queue (already fetched in this batch, on a restart);
        ``callback``/``errback``: of the Requests built; ``resumed``: every site of the batch waits its wait
        from now before its first fetch.
        """
        tag = self._factory(callback, errback)
        for site in (sites or {}).values():
            key = origin(site.origin)
            self.groups.assign(key, site.ip)
            self.queue.set_pages(key, site.docs)
            self.queue.set_crawl_delay(key, site.crawl_delay)
        queue, docs = self.queue, self.docs
        seen: set[str] = set()
        queued = 0
        for url in urls:
            if url.doc_id in skip:
                continue
            site, path = split(url.url)
            self.groups.assign(site)
            try:
                row = docs.append(url.doc_id, url.site_id, url.depth, path, tag)
            except (OverflowError, TypeError) as exc:
                raise ValueError(
                    f"doc {url.doc_id!r} ({url.url}): bad doc-id, site-id or depth: {exc}"
                ) from None
            extras = (
                getattr(url, "redirects", 0),
                getattr(url, "etag", b""),
                getattr(url, "last_modified_header", b""),
            )
            if any(extras):
                self._extras[row] = extras
            queue.add(site, row)
            seen.add(site)
            queued += 1
        if resumed:
            now = self._clock()
            for site in seen:
                queue.visited(site, now)
        self.stats.inc_value("scheduler/enqueued", queued)
        self.stats.inc_value("scheduler/enqueued/batch", queued)
        logger.info("Harvester queued %(urls)d URLs of %(sites)d sites", {"urls": queued, "sites": len(seen)})
        self._wake_engine()  # the spider called us, not the engine: make it look
        return queued

    def drop_batch_pages(self) -> list[int]:
        """Take the batch's pages still queued out of the queue (``WIRE_SOFTMIN`` ends the batch): those in
        flight end as usual, robots.txt and follow-ups stay queued. Returns the doc-ids dropped."""
        rows = self.queue.drop_rows()
        for row in rows:
            self._extras.pop(row, None)
        doc_ids = self.docs.doc_ids
        dropped = [doc_ids[row] for row in rows]
        self.stats.inc_value("scheduler/dropped/batch", len(dropped))
        self._wake_engine()
        return dropped

    def set_crawl_delay(self, site: str, seconds: float) -> None:
        """Crawl-delay of the site of URL ``site`` (from its robots.txt), its current wait included."""
        self.queue.set_crawl_delay(origin(site), seconds)
        self._wake_engine()

    def visited(self, site: str, seconds_ago: float) -> None:
        """The site of URL ``site`` was last accessed ``seconds_ago`` (by an earlier run: its site record's
        ``last_visit``): its next visit waits its wait from then."""
        self.queue.visited(origin(site), self._clock() - max(seconds_ago, 0.0))
        self._wake_engine()

    def set_pages(self, site: str, pages: int) -> None:
        """Page count of the site of URL ``site``, for the large-site wait."""
        self.queue.set_pages(origin(site), pages)
        self._wake_engine()

    def counts(self) -> Counts:
        return self.queue.counts(self._clock())

    def clock(self) -> float:
        """The scheduler's clock (monotonic seconds), the one ``queue`` times are in."""
        return self._clock()

    def pending_doc_ids(self) -> Iterator[int]:
        """Doc-ids of the batch's pages still queued or in flight (a retry keeps its doc-id)."""
        for _, item in self.queue.pending():
            if type(item) is int:
                yield self.docs.doc_ids[item]
            elif DOC_ID in item.meta:
                yield item.meta[DOC_ID]
        for request in self._in_flight:
            if DOC_ID in request.meta:
                yield request.meta[DOC_ID]

    # -- releasing a site ------------------------------------------------------------------------------

    def _reached_downloader(self, request: Request, spider: Spider) -> None:
        self._not_reached.pop(request, None)

    def _response_downloaded(self, response, request: Request, spider: Spider) -> None:
        self.groups.downloaded(response, request, self._in_flight)

    def _left_downloader(self, request: Request, spider: Spider) -> None:
        lag = access_lag(request.meta.get(BODY_DONE), now := time.time())
        request.meta[ENDED] = now - lag
        site = self._in_flight.get(request)
        if site is not None:
            self.groups.left(site, request)
        if request.meta.get(HOLD_SITE) and request in self._in_flight:
            self._held[request] = self._clock() - lag  # the spider releases it (release_held)
            return
        self._release(request, fetched=True, ended=self._clock() - lag)

    def release_held(self, request: Request) -> None:
        """End a ``HOLD_SITE`` request's hold on its site: the spider has read the response. The site's
        wait counts from when the download ended, as for any request."""
        ended = self._held.pop(request, None)
        if ended is not None:
            self._release(request, fetched=True, ended=ended)
            self._wake_engine()

    def release_site(self, site: str) -> None:
        """End the hold on the site of URL ``site``, whichever of its requests holds it: the spider has read
        the response the site's next requests wait for, maybe one fetched from another site."""
        key = origin(site)
        for request in [r for r in self._held if self._in_flight.get(r) == key]:
            self.release_held(request)

    def _release_stale_holds(self, now: float) -> None:
        # A hold the spider has not ended in _MAX_HOLD seconds: end it.
        for request, ended in list(self._held.items()):
            if now - ended > _MAX_HOLD:
                logger.warning(
                    "Site of %(url)s held %(s).0f s after its download: released",
                    {"url": request.url, "s": now - ended},
                )
                self.release_held(request)

    def _release_unreached(self) -> None:
        # Handed out, never at the downloader, and the downloader is done with it: a middleware
        # answered or refused it without a network access.
        engine = self.crawler.engine
        if engine is None:
            return
        active = engine.downloader.active
        for request in [r for r in self._not_reached if r not in active]:
            self._release(request, fetched=False)

    def _release(self, request: Request, *, fetched: bool, ended: float | None = None) -> None:
        site = self._in_flight.pop(request, None)
        if site is None:
            return  # not ours (engine.download) or already released
        self._not_reached.pop(request, None)
        self._held.pop(request, None)
        self.queue.finished(site, self._clock() if ended is None else ended, fetched=fetched)
        self.groups.ended(site, request, fetched)
        if fetched and self.lead:
            self._ends[site] = request.meta.get(ENDED) or time.time()
        self.stats.inc_value("scheduler/released/fetched" if fetched else "scheduler/released/not_fetched")

    def timed_out(self, request: Request) -> None:
        """``request``'s server did not answer in time (``ServerHoldMiddleware``): its group backs off."""
        self.groups.timed_out(origin(page_url(request)))

    # -- waking the engine -----------------------------------------------------------------------------

    def _schedule_wakeup(self, now: float) -> None:
        # One timer, for the earliest ready site: moved earlier when an earlier one appears, left alone
        # when it is already due sooner (it fires, finds nothing ready, and is set again).
        when = self.queue.next_ready_time()
        if when is None:
            return
        from twisted.internet import reactor

        delay = max(0.0, when - self.lead - now) + _WAKE_SLACK
        timer = self._timer
        if timer is None or not timer.active():
            self._timer = reactor.callLater(delay, self._wake_engine, now=True)
        elif timer.getTime() > reactor.seconds() + delay:
            timer.reset(delay)

    def _cancel_wakeup(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    def _wake_engine(self, now: bool = False) -> None:
        # ``now``: from the wake-up timer, where nothing of the engine's is on the stack.
        slot = _engine_slot(self.crawler)
        if slot is None:
            return
        if now:
            slot.nextcall()
        else:
            slot.nextcall.schedule()

    # -- helpers ---------------------------------------------------------------------------------------

    def _factory(self, callback: Callable | None, errback: Callable | None) -> int:
        pair = (callback, errback)
        if pair not in self._factories:
            if len(self._factories) > 255:
                raise ValueError("more than 256 different callback/errback pairs for batches")
            self._factories.append(pair)
        return self._factories.index(pair)

    def _batch_request(self, site: str, row: int) -> Request:
        doc_id, site_id, depth, path, tag = self.docs.get(row)
        callback, errback = self._factories[tag]
        meta = {DOC_ID: doc_id, SITE_ID: site_id, DEPTH: depth}
        headers = {}
        extras = self._extras.pop(row, None)
        if extras is not None:
            hops, etag, last_modified = extras
            if hops:
                meta[HOPS] = hops
            if etag:
                headers["If-None-Match"] = etag
            if last_modified:
                headers["If-Modified-Since"] = last_modified
        return Request(
            site + path,
            callback=callback,
            errback=errback,
            dont_filter=True,
            meta=meta,
            headers=headers or None,
        )
