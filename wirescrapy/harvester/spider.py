"""WIRE's harvester as a Scrapy spider: ``scrapy crawl harvester`` (``spiders/harvester.py`` is where Scrapy
finds it).

    scrapy crawl harvester -a batch=DIR      harvest a batch written by the manager (``scrapy manager``)
    scrapy crawl harvester -a seeds=FILE     add the seeds (one URL a line), then run a cycle
    scrapy crawl harvester                   run a cycle: resume the last batch if its harvest did not
                                             finish, else ask the manager for the next batch
    -a cycles=N                              run N cycles (manager, harvest) before stopping
    scrapy crawl harvester -a batch=DIR -a warc=OUTDIR
                                             detached: harvest a batch (part) with no collection, every
                                             fetch into WARC files in OUTDIR, for ``scrapy ingest``

The spider is the short-term scheduling of WIRE's harvester: it queues the batch in the
``WireScheduler`` (one connection per site, the site's wait between accesses), robots.txt first for every
site whose robots.txt is due, and turns every network access into a :class:`~wirescrapy.items.Fetch`
(:mod:`~wirescrapy.harvester.fetch`) — a response of any status, a download stopped after its headers or at
the max file size, or a failure with no response. The gatherer's item pipelines
(``wirescrapy.gatherer.pipelines``) store it. The spider itself writes nothing to the collection: robots.txt
is the harvest's owner's (:mod:`~wirescrapy.harvester.robots`: what is due, the rules a response settles,
how long a site stays held for them), and the session says whether a page was fetched in this batch.

The spider holds the harvest (:class:`~wirescrapy.harvester.session.Harvest`) and announces it to the
other components with the ``harvest_opened`` signal (``wirescrapy/signals.py``). It holds its collaborators,
one responsibility each: a site's own files (:mod:`~wirescrapy.harvester.sitefiles`: robots.txt, sitemaps),
renders through Splash (:mod:`~wirescrapy.harvester.splash`), the batch's end
(:mod:`~wirescrapy.harvester.batchend`: softmin, planning ahead) and the closing summary
(:mod:`~wirescrapy.harvester.summary`). A write to the collection that fails reaches it as the
``write_failed`` signal: it stops the harvest.

Redirects are the spider's, not Scrapy's RedirectMiddleware (``REDIRECT_ENABLED`` is off): where a 3xx
leads is decided by :func:`~wirescrapy.harvester.redirects.decide_redirect`, and a target to follow is
requested through its site's politeness queue, at the front. A page's target on a site whose robots.txt is
due gets its robots.txt queued before it.

With a WARC directory (``-a warc=OUTDIR``, or ``WIRE_WARC_DIR`` for an ordinary harvest) the fetches are also
written as WARC (``wirescrapy.warc.pipeline``); detached (``-a warc`` alone) the harvest has no collection
(:meth:`Harvest.without_collection`) and the gatherer's pipelines pass every fetch by.
"""

from __future__ import annotations

import time
from pathlib import Path

import scrapy
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, IgnoreRequest, NotConfigured
from twisted.python.failure import Failure

from wirescrapy.collection.writes import DISK_FULL, is_write_failure
from wirescrapy.config import WireConfig
from wirescrapy.harvester.arguments import check_arguments
from wirescrapy.harvester.batchend import BatchEnd
from wirescrapy.harvester.fetch import failure_fetch, kind_of, response_fetch
from wirescrapy.harvester.meta import CHAIN, DEPTH, HOLD_SITE, HOPS, KIND, ORIGIN, RDF, RENDER, SITE_ID
from wirescrapy.harvester.middlewares import AlreadyFetched, RobotsNotReady
from wirescrapy.harvester.redirects import ROBOTS_MAX_REDIRECTS, decide_redirect, is_redirect
from wirescrapy.harvester.robots import origin_of
from wirescrapy.harvester.scheduler import FOLLOW_UP_PRIORITY, WireScheduler
from wirescrapy.harvester.session import CLOSED_WITHOUT_CHECKPOINTS, Harvest, batch_figures
from wirescrapy.harvester.sitefiles import SiteFiles
from wirescrapy.harvester.splash import SplashRenders, after_render
from wirescrapy.harvester.startup import before_waiting, freeze_loaded
from wirescrapy.harvester.summary import HarvestSummary
from wirescrapy.items import Fetch, FetchError, Kind
from wirescrapy.manager.batch import Batch, discard_batch, read_batch
from wirescrapy.seeder.add import new_site_allowed
from wirescrapy.signals import harvest_opened, write_failed
from wirescrapy.url import site_of
from wirescrapy.warc.reader import archived_fetches


class HarvesterSpider(scrapy.Spider):
    name = "harvester"

    def __init__(
        self,
        batch: str | None = None,
        seeds: str | None = None,
        cycles: str | int = 1,
        warc: str | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.batch_dir = batch
        self.detached_dir = warc
        self.seeds_file = seeds
        self.cycles = self.check_arguments(batch, seeds, cycles, warc, **kwargs)
        self.harvest: Harvest | None = None
        self.batch: Batch | None = None  # the batch being harvested
        self.done: set[int] = set()  # its doc-ids fetched before a restart
        self.cycles_done = 0
        self._stats_before: dict = {}  # the crawl's stats when the current batch began
        self._stop_reason = ""  # why a failed write stopped the harvest (a close reason)
        self._frozen_before = False  # the objects loaded before the collection was taken are frozen

    check_arguments = staticmethod(check_arguments)  # scrapy crawl checks the -a arguments with it first

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.config = config = WireConfig.from_crawler(crawler)
        scheduler = crawler.settings["SCHEDULER"]
        if not isinstance(scheduler, str) or not scheduler.endswith("WireScheduler"):
            raise NotConfigured(
                f"the harvester needs SCHEDULER = wirescrapy.harvester.scheduler.WireScheduler, "
                f"got {scheduler!r}"
            )
        user_agent = crawler.settings.get("USER_AGENT") or ""
        if spider.detached_dir:
            spider.harvest = Harvest.without_collection(config, user_agent, spider.detached_dir)
        else:
            if config.collection_wait:  # a job that may wait for the collection: what it can, first
                spider.before_waiting()
            spider.harvest = Harvest.open(config, user_agent, warc_dir=config.warc_dir)
        try:
            spider._prepare()
        except BaseException:
            spider.harvest.close()
            raise
        harvest, logger = spider.harvest, spider.logger
        spider.site_files = SiteFiles(crawler, config, harvest, spider.parse, spider.failed, logger)
        spider.renders = SplashRenders(crawler, config, spider.parse, spider.failed, logger)
        plans_ahead = config.plan_ahead and not spider.batch_dir and not harvest.detached
        spider.batch_end = BatchEnd(crawler, config, harvest, plans_ahead=plans_ahead)
        spider.summary = HarvestSummary(crawler, config, logger)
        crawler.signals.connect(spider._opened, signal=signals.spider_opened)
        crawler.signals.connect(spider._idle, signal=signals.spider_idle)
        crawler.signals.connect(spider._closed, signal=signals.spider_closed)
        crawler.signals.connect(spider._write_failed, signal=write_failed)
        return spider

    def before_waiting(self) -> None:
        """What a job that may wait for the collection (``WIRE_COLLECTION_WAIT``) does first
        (``harvester/startup.py``); the spider Scrapy runs (``spiders/harvester.py``) starts the gatherer's
        parse workers then too."""
        self._frozen_before = before_waiting()

    # -- the cycle -----------------------------------------------------------------------------------

    def _opened(self) -> None:
        # Scrapy logs and swallows an error in a signal's receiver. A component that could not open (the WARC
        # files, the parse workers) would then let the harvest go on without it, so the harvest stops instead.
        for _, result in self.crawler.signals.send_catch_log(harvest_opened, harvest=self.harvest):
            if isinstance(result, Failure):
                self._open_failed(result)
                return

    def _open_failed(self, failure: Failure) -> None:
        harvest = self.harvest
        harvest.stopped = f"a component could not open: {failure.getErrorMessage()}"
        self.logger.error(
            "%(message)s: the harvest stops before its first fetch", {"message": harvest.stopped}
        )
        self.crawler.stats.set_value("harvester/stopped", harvest.stopped)
        self._stop_reason = "open_failed"

    async def start(self):
        freeze_loaded(frozen_before=self._frozen_before)
        if self.batch is not None and not self.harvest.stopped:
            self._begin()
        return
        yield  # an async generator that yields nothing: the batch goes to the scheduler directly

    def _prepare(self) -> None:
        """Seed, then choose the batch (given, unfinished, or the manager's next) and read it. Done when
        the spider is built, so that a bad seeds file, batch or collection fails the crawl at once."""
        harvest = self.harvest
        if harvest.detached:
            path = Path(self.batch_dir)
            batch = read_batch(path)
            archived = archived_fetches(self.detached_dir, batch.number, batch.part)
            self.batch, self.done = harvest.open_batch(path, archived)
            return
        if self.seeds_file:
            with open(self.seeds_file, encoding="utf-8", errors="replace") as lines:
                report = harvest.seed(lines)
            self.logger.info(
                "Seeded %(added)d new URLs (%(known)d known, %(roots)d home pages added, %(bad)d bad lines)",
                {
                    "added": report.added,
                    "known": report.known,
                    "roots": report.roots_added,
                    "bad": len(report.bad),
                },
            )
        if not harvest.collection.documents.count:
            self.logger.warning(
                "The collection %(dir)s is empty: give seeds (-a seeds=FILE, or scrapy seed FILE)",
                {"dir": harvest.collection.dir},
            )
        if self.batch_dir:
            path = Path(self.batch_dir)
        else:
            path = harvest.unfinished_batch()
            if path is not None and harvest.planned_with_other_settings(path):
                self.logger.info(
                    "The batch %(path)s was planned ahead with other settings: set aside, and planned again",
                    {"path": path},
                )
                discard_batch(harvest.batches_dir, int(path.name))
                path = None
            if path is not None:
                self.logger.info("Resuming the unfinished batch %(path)s", {"path": path})
            else:
                path = harvest.plan_next()
        if path is not None:
            self.batch, self.done = harvest.open_batch(path)

    def _begin(self) -> None:
        harvest, batch, done = self.harvest, self.batch, self.done
        scheduler = WireScheduler.of(self.crawler)
        now = time.time()
        sites = {}
        for site_id, site in batch.sites.items():
            sites[site_id] = harvest.site_for_queue(site)
            if harvest.robots.request_due(site.origin, now):
                self.crawler.engine.crawl(self.site_files.robots_request(site.origin))
        stats = self.crawler.stats
        self._stats_before = dict(stats.get_stats())
        stats.set_value("harvester/batch", batch.number)
        stats.set_value("harvester/batch_urls", len(batch.urls))
        stats.inc_value("harvester/resumed_skipped", len(done))
        queued = scheduler.enqueue_batch(
            batch.urls, sites=sites, skip=done, callback=self.parse, errback=self.failed
        )
        for site in batch.sites.values():  # an earlier run's last access counts (a restart, a cron job)
            last = harvest.last_visit(site.origin)
            if last:
                scheduler.visited(site.origin, now - last)
        self.logger.info(
            "Batch %(number)06d: %(queued)d of %(urls)d URLs to fetch from %(sites)d sites%(resumed)s",
            {
                "number": batch.number,
                "queued": queued,
                "urls": len(batch.urls),
                "sites": len(batch.sites),
                "resumed": f" ({len(done)} fetched before a restart)" if done else "",
            },
        )
        self.batch_end.watch(batch, last_cycle=self.cycles_done + 1 >= self.cycles)

    def _idle(self) -> None:
        harvest = self.harvest
        if harvest.stopped:
            raise CloseSpider(self._stop_reason)
        if harvest.batch is None:
            return
        try:
            harvest.finish_batch(
                batch_figures(
                    self.batch,
                    self._stats_before,
                    self.crawler.stats.get_stats(),
                    "warc" if harvest.detached else "harvester",
                )
            )
            self.cycles_done += 1
            if self.cycles_done >= self.cycles:
                # The last cycle writes the next batch too: the next harvester (a cron job) resumes it and
                # fetches at once, without a manager run first.
                if self.batch_end.plans_ahead and self.batch_end.next_batch() is not None:
                    self.logger.info("The next batch is written: the next harvester resumes it")
                return
            path = self.batch_end.next_batch()
            if path is None:
                self.logger.info("Cycle %(n)d: nothing more to fetch", {"n": self.cycles_done + 1})
                return
            self.batch, self.done = harvest.open_batch(path)
        except OSError as exc:
            if not is_write_failure(exc):
                raise
            self._write_failed(exc)
            raise CloseSpider(self._stop_reason) from None
        self._begin()
        raise DontCloseSpider

    def _write_failed(self, exc: OSError) -> None:
        """A write to the collection failed (``collection/writes.py``: a full disk): stop the harvest, once,
        and say so in one line. What was stored stays, and the batch is left unfinished: a harvester started
        again once there is room resumes it, fetching only the pages not recorded."""
        message = self.harvest.stop_writing(exc)
        if message is None:
            return
        self.logger.error(
            "%(message)s%(file)s: the harvest stops; what is stored is kept, and a harvest "
            "started again once there is room resumes the batch",
            {"message": message, "file": f" (writing {exc.filename})" if exc.filename else ""},
        )
        self.crawler.stats.set_value("harvester/stopped", message)
        # No request more; the crawl closes when it is idle (``_idle``), not here, inside the engine's call
        # that led to the write: the engine would go on with a slot the close took away.
        self._stop_reason = "disk_full" if exc.errno in DISK_FULL else "write_error"
        WireScheduler.of(self.crawler).stop()

    def _closed(self, reason: str) -> None:
        self.batch_end.stop()
        try:
            self.summary.take(reason, self.harvest, self.cycles_done)
        finally:
            if message := self.harvest.close_after_failure():
                self.logger.info(CLOSED_WITHOUT_CHECKPOINTS, {"message": message})

    # -- responses -----------------------------------------------------------------------------------

    def parse(self, response):
        request = response.request
        if RENDER in request.meta:
            yield from self.renders.answer(response)
            return
        kind = kind_of(request)
        hop = None  # the next request of a robots.txt's redirect chain
        fetch, follow_ups = None, []
        try:
            fetch = response_fetch(response, self.config.max_file_size, time.time())
            if self.harvest.detached:
                self.harvest.archived(fetch.url, fetch.doc_id)
            follow_ups = self._redirect(fetch, response) if is_redirect(response.status) else []
            if kind is Kind.ROBOTS:
                if follow_ups:
                    hop = follow_ups[0]
                else:
                    follow_ups = self.site_files.robots_fetched(fetch)
            elif kind is Kind.SITEMAP and response.status == 200:
                follow_ups = self.site_files.sitemap_read(fetch, request)
        except Exception as exc:  # a defect or a response nothing foresaw: the page is recorded all the same
            if isinstance(exc, OSError) and is_write_failure(exc):
                raise
            self.logger.error(
                "Handling the response of %(url)s failed, recorded as an error of it: %(error)r",
                {"url": request.url, "error": exc},
            )
            self.crawler.stats.inc_value("harvester/handling_failed")
            if fetch is None:
                fetch = failure_fetch(request, exc, time.time())
            hop, follow_ups = None, []
        finally:
            if kind is Kind.ROBOTS:
                self.site_files.robots_read(request, hop)
        after_render(fetch, request)
        yield fetch
        yield from follow_ups

    def failed(self, failure):
        request = failure.request
        exc = failure.value
        if RENDER in request.meta and not isinstance(exc, IgnoreRequest):  # refused before Splash: as a page
            yield from self.renders.failure(request, exc)
            return
        stats = self.crawler.stats
        if isinstance(exc, (RobotsNotReady, AlreadyFetched)):
            stats.inc_value(
                f"harvester/skipped/{'robots_not_ready' if isinstance(exc, RobotsNotReady) else 'done'}"
            )
            return
        fetch = failure_fetch(request, exc, time.time())
        if self.harvest.detached:
            self.harvest.archived(fetch.url, fetch.doc_id)
        if fetch.error is FetchError.OTHER:
            self.logger.warning("Fetching %(url)s failed: %(error)r", {"url": request.url, "error": exc})
        if fetch.kind is Kind.ROBOTS:
            try:
                self.site_files.robots_failed(fetch)
            finally:
                self.site_files.robots_read(request, None)
        after_render(fetch, request)
        yield fetch

    # -- redirects -----------------------------------------------------------------------------------

    def _redirect(self, fetch: Fetch, response) -> list:
        meta = response.meta
        page = fetch.kind is Kind.PAGE
        depth = fetch.depth + 1 if page else fetch.depth  # a page's redirect hop is a link: one deeper
        redirect = decide_redirect(
            response.headers.get(b"Location"),
            response.url,
            meta.get(CHAIN, (fetch.url,)),
            fetch.hops,
            self.config.max_redirects if page else ROBOTS_MAX_REDIRECTS,
            rules=self.harvest.rules if page else None,
            depth=depth,
        )
        stats = self.crawler.stats
        if page:
            fetch.redirect = redirect.target
        if redirect.rejected:
            stats.inc_value("harvester/redirects/rejected")
        if redirect.error is not None:
            fetch.error = redirect.error
            fetch.message = redirect.message
            stats.inc_value(f"harvester/redirects/{redirect.error.label}")
        target = redirect.target
        if not redirect.follow or (
            page
            and (self.harvest.redirect_target_done(target) or not self._new_site_allowed(fetch.url, target))
        ):
            return []
        if not self.harvest.owns_site(target):  # recorded, and fetched by the part (or batch) of its site
            stats.inc_value("harvester/redirects/other_part")
            return []
        follow_up = {DEPTH: depth, SITE_ID: 0, HOPS: fetch.hops + 1, CHAIN: redirect.chain}
        for key in (KIND, ORIGIN, RDF):
            if key in meta:
                follow_up[key] = meta[key]
        if meta.get(HOLD_SITE) and not self.harvest.robots.keeps_hold(meta[ORIGIN], target):
            follow_up[HOLD_SITE] = True
        requests = [
            scrapy.Request(
                target,
                callback=self.parse,
                errback=self.failed,
                dont_filter=True,
                priority=FOLLOW_UP_PRIORITY,
                meta=follow_up,
            )
        ]
        origin = origin_of(target)
        if page and origin and self.harvest.robots.request_due(origin, time.time()):
            requests.append(self.site_files.robots_request(origin))  # last, at the front: fetched first
        stats.inc_value("harvester/redirects/followed")
        fetch.followed = True
        return requests

    def _new_site_allowed(self, url: str, target: str) -> bool:
        # A target on a site the bounds on new sites refuse is recorded (its page's link, counted on its site)
        # but not fetched: fetching it, and its robots.txt, would add the site after all.
        harvest = self.harvest
        if harvest.collection is None:  # detached: the collection's bounds hold when scrapy ingest adds it
            return True
        if new_site_allowed(harvest.collection, harvest.rules, site_of(url), site_of(target)):
            return True
        self.crawler.stats.inc_value("harvester/redirects/new_site_refused")
        return False
