"""The end of a batch: WIRE's softmin, and the next batch planned while this one finishes.

A batch's harvest ends with its stragglers: the sites whose pages take longest at one page per wait. Two
answers, both watched by a timer of the spider (``BatchEnd``) while a batch runs:

* **softmin** (WIRE's ``harvester/nthreads/softmin`` and ``softmintime``; ``WIRE_SOFTMIN``,
  ``WIRE_SOFTMIN_TIME``): once fewer than ``WIRE_SOFTMIN`` sites still have pages queued or in flight, in
  a batch that began with at least that many, the pages still queued are dropped
  (``WireScheduler.drop_batch_pages``): the fetches in flight end as usual and the batch ends. The
  dropped pages were not visited, so they stay eligible and the next manager run may choose them again,
  with the pages of the sites that were idle meanwhile. Only when it pays (``softmin_due``): the pages left
  need at least twice what starting this batch took (from the previous batch's end, or from the process's
  start for its first batch: a job of one cycle ends, and the next job starts a process; or, for a job that
  waited for the collection, ``WIRE_COLLECTION_WAIT``, from the moment it took it), and the batch has
  run ``WIRE_SOFTMIN_TIME`` seconds. So a batch of few sites, or one whose stragglers are nearly done, runs
  to its end, and so does a crawl with waits of 0.

  The pages left are weighed by what ending the batch gains. Inside a harvester of several cycles, the next
  batch follows at once and its manager run sees the links this batch found: what the stragglers' pages
  need (``time_left``, their longest queue) is the time the other sites wait. In a harvester's last cycle,
  the next batch is the next job's, a process start away at the least (a cron job may come much later),
  and only one site's wait matters: the site the whole crawl waits for longest (``critical_idle``: its
  pages queued plus those the manager left for later batches, ``BatchSite.left``, at its wait). The gain
  is the time the other sites' queues would keep it idle; none when it would end the batch itself, or when
  nothing is left for later batches (``benchmarks/realweb_makespan.py`` measures both ways). A batch written
  before ``left`` was recorded does not say what is left (not nothing): it is weighed as in an earlier cycle.
  A batch whose time the slowest site's own share set (``WIRE_BATCH_TIME_LEAD``: batch.json's ``time_led``)
  is weighed so in every cycle: the manager let the sites with slack end before that site on purpose
  (``manager/timeshare.py``), and ``left`` counts the pages it expects to find too. The sites it planned to
  fetch through such a batch and end together (``BatchSite.critical``) are no stragglers of one another:
  without that, a led batch whose one-page sites were done in a quarter of a second was ended there for the
  0.55 s between its two critical sites' queues, and planned again the same by the next job.
* **planning ahead** (``WIRE_PLAN_AHEAD``): once the batch's pages left need less time than the last
  manager run took (``plan_due``), the manager's records and links are copied and its computation runs in
  a thread, leaving out the batch's pages not recorded as fetched yet (queued, in flight, or on their way
  through the pipelines; not those softmin dropped); when the batch ends, what it decided is
  written (in the reactor's thread, the harvest's only writer of the collection) and the next batch starts
  at once — unless a page it left out was not fetched after all (dropped by softmin after the plan began,
  failed, or still queued when the batch ended): then the manager plans again, so no page skips a batch.
  The last cycle of a harvester writes the next batch too, so that the next ``scrapy crawl harvester`` (a
  cron job) resumes it and fetches at once, without a manager run first.

Politeness across the boundary is the scheduler's: its queue keeps each site's last access from one batch
to the next, and a new process reads it from the site records (``Harvest.last_visit``).
A kill loses nothing: a computation not written is simply lost, and a written batch is resumed.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import MappingProxyType

from wirescrapy.harvester.scheduler import WireScheduler
from wirescrapy.url import origin

logger = logging.getLogger(__name__)

TICK = 0.25  # seconds between two looks at the batch
PLAN_MARGIN = 2.0  # a plan is started when the pages left need less than this many times the last one's time
PLAN_LEAST = 0.1  # ... or less than this many seconds: a plan started earlier misses the links found after it
SOFTMIN_GAIN = 2.0  # softmin ends a batch only if its pages left need this many times what a new batch costs
_IMPORTED = time.monotonic()


def softmin_due(active_sites: int, pages_left: int, elapsed: float, softmin: int, softmin_time: float, *,
                began_with: int, time_left: float, restart: float) -> bool:
    """Whether WIRE's softmin ends the batch now: fewer than ``softmin`` sites still active (with pages
    queued or in flight) of a batch that ``began_with`` at least ``softmin`` sites, pages left to drop, the
    batch ``elapsed`` seconds old, at least ``softmin_time``, and ending it gaining ``time_left`` seconds (what
    the pages left need, or ``critical_idle``), more than ``SOFTMIN_GAIN`` times the ``restart`` a new batch
    costs; ``softmin`` 0: never."""
    return (softmin > 0 and pages_left > 0 and active_sites < softmin <= began_with and elapsed >= softmin_time
            and time_left > SOFTMIN_GAIN * restart)


def critical_idle(active: Mapping[str, float], later: Mapping[str, float],
                  together: frozenset[str] = frozenset()) -> float:
    """How long the batch's stragglers would keep the site the crawl waits for longest idle: the site with the
    most crawl time left — its pages queued in the batch (``active``: seconds, by site, for the sites with
    pages queued or a fetch in flight) plus those the manager left for later batches (``later``: seconds, by
    site) — waits for the batch's end to go on with its pages for later: the longest queue of the other
    active sites less its own (0 or less: the batch ends with it, and ending it sooner gains nothing). When
    it is one of the sites the manager planned to fetch through the whole batch and end together
    (``together``: a led batch's critical sites), the others of them are no stragglers: their pages are on
    the crawl's critical path too, and a batch ended for a fraction of a second between them is planned
    again the same."""
    need = {site: active.get(site, 0.0) + later.get(site, 0.0) for site in active.keys() | later.keys()}
    if not need:
        return 0.0
    critical = max(need, key=lambda site: (need[site], active.get(site, -1.0)))
    alongside = together if critical in together else frozenset((critical,))
    others = [seconds for site, seconds in active.items() if site not in alongside]
    return max(others, default=0.0) - active.get(critical, 0.0)


def softmin_gain(active: Mapping[str, float], later: Mapping[str, float] | None, last_cycle: bool,
                 together: frozenset[str] = frozenset()) -> float:
    """What ending the batch now gains, ``softmin_due``'s ``time_left`` (the module docstring): in a harvester's
    last cycle, the time the stragglers keep the crawl's slowest site idle (``critical_idle``, ``together``
    its); in an earlier one, or when the batch does not say what its sites left for later batches (``later``
    None: a batch written before it was recorded, whose 0s would read as nothing left and never pay), the
    longest queue's time."""
    if last_cycle and later is not None:
        return critical_idle(active, later, together)
    return max(active.values(), default=0.0)


def process_started() -> float:
    """When this process started, on ``time.monotonic``'s clock (Linux's /proc; else when this module was
    imported)."""
    try:
        with open("/proc/self/stat", "rb") as stat, open("/proc/uptime", "rb") as uptime:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
            age = float(uptime.read().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return _IMPORTED
    return time.monotonic() - max(age, 0.0)


def plan_due(time_left: float, last_plan_seconds: float) -> bool:
    """Whether to start planning the next batch: the pages left need (at least) ``time_left`` seconds, less
    than the margin over what the last manager computation took."""
    return time_left <= max(PLAN_MARGIN * last_plan_seconds, PLAN_LEAST)


class BatchEnd:
    """The spider's side (a mixin of ``HarvesterSpider``): ``_watch_batch`` when a batch starts,
    ``_planned_next`` when it ends, ``_stop_watching`` when the spider closes."""

    _timer = None
    _executor: ThreadPoolExecutor | None = None
    _ahead: Future | None = None
    _batch_began = 0.0
    _softmin_done = False
    _dropped: frozenset = frozenset()  # doc-ids softmin dropped from the batch
    _left_out: frozenset = frozenset()  # doc-ids the batch planned ahead left out (not fetched yet when it began)
    _plan_seconds = 0.0
    _batch_ended: float | None = None  # when this process's last batch ended (time.monotonic)
    _restart = 0.0  # what starting this batch took: from the last one's end, or from the process's start
    _began_with = 0  # sites in this batch
    # By site: its pages left for later batches (BatchSite.left); None: the batch does not say.
    _later: Mapping[str, int] | None = MappingProxyType({})
    _together: frozenset[str] = frozenset()  # a led batch's sites planned to end together (BatchSite.critical)

    def _watch_batch(self) -> None:
        """A batch was queued: watch it for softmin and for the moment to plan the next."""
        config = self.config
        self._batch_began = time.monotonic()
        self._restart = self._batch_began - self._restarted()
        self._began_with = len(self.batch.sites) if self.batch is not None else 0
        sites = self.batch.sites.values() if self.batch is not None else ()
        later = {origin(site.origin): site.left for site in sites}
        self._later = None if None in later.values() else later
        self._together = frozenset(origin(site.origin) for site in sites if site.critical)
        self._softmin_done = False
        self._dropped = frozenset()
        self._ahead = None
        if self.batch is not None:
            self._plan_seconds = float(self.batch.info.get("planning_seconds", self._plan_seconds) or 0.0)
        if not (config.softmin or self._plans_ahead()):
            return
        if self._timer is None:
            from twisted.internet.task import LoopingCall

            self._timer = LoopingCall(self._look)
        if not self._timer.running:
            self._timer.start(TICK, now=False)

    def _restarted(self) -> float:
        """When starting this batch began (``time.monotonic``): the previous batch's end; for a process's first
        batch, its start, or the moment it took the collection if it waited for another process to close it
        (``WIRE_COLLECTION_WAIT``: a job queued behind another starts up while that one harvests)."""
        if self._batch_ended is not None:
            return self._batch_ended
        collection = self.harvest.collection if self.harvest is not None else None
        waited = collection.waited_until if collection is not None else None
        return max(process_started(), waited or 0.0)

    def _plans_ahead(self) -> bool:
        # A batch given with -a batch=DIR (maybe a part) and a detached harvest are not this harvester's to plan.
        return self.config.plan_ahead and not self.batch_dir and self.harvest is not None and not self.harvest.detached

    def _look(self) -> None:
        harvest = self.harvest
        if harvest is None or harvest.batch is None or harvest.stopped:
            return
        scheduler = WireScheduler.of(self.crawler)
        now = scheduler.clock()
        if self.config.softmin and not self._softmin_done:
            counts = scheduler.counts()
            active = counts.fetching + counts.ready + counts.waiting
            due = functools.partial(softmin_due, active, counts.urls, time.monotonic() - self._batch_began,
                                    self.config.softmin, self.config.softmin_time, began_with=self._began_with,
                                    restart=self._restart)
            # The pages' time (O(sites)) only once the rest says yes: with every site's, it can only say no.
            if due(time_left=math.inf) and due(time_left=self._softmin_gain(scheduler.queue, now)):
                self._softmin_done = True
                self._dropped = frozenset(scheduler.drop_batch_pages())
                dropped = len(self._dropped)
                self.crawler.stats.inc_value("harvester/softmin/dropped", dropped)
                logger.info("Batch %(number)06d: %(active)d sites still active (WIRE_SOFTMIN %(softmin)d): it ends "
                            "once the fetches in flight end, %(dropped)d pages left for the next batches",
                            {"number": harvest.batch.number, "active": active, "softmin": self.config.softmin,
                             "dropped": dropped})
        if self._ahead is None and self._plans_ahead() and plan_due(scheduler.queue.time_left(now),
                                                                     self._plan_seconds):
            self._plan_ahead(scheduler)

    def _softmin_gain(self, queue, now: float) -> float:
        """What ending the batch now gains (``softmin_due``'s ``time_left``; the module docstring)."""
        later = self._later
        if later is not None:
            later = {site: left * queue.wait_of(site) for site, left in later.items()}
        # The process's last cycle: the next batch is the next job's. A batch whose time the slowest site's
        # share set (WIRE_BATCH_TIME_LEAD): the sites that end before that site are meant to idle on their slack.
        led = self.batch is not None and bool(self.batch.info.get("time_led"))
        last_cycle = self.cycles_done + 1 >= self.cycles or led
        return softmin_gain(queue.site_times(now), later, last_cycle=last_cycle, together=self._together)

    def _plan_ahead(self, scheduler: WireScheduler) -> None:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wire-plan")
        # Left out: the batch's pages not recorded as fetched yet, but for those softmin handed back.
        not_done = self.harvest.not_done()
        self._left_out = frozenset(doc for doc in not_done.tolist() if doc not in self._dropped)
        run = self.harvest.plan_snapshot(self._left_out)
        self._ahead = self._executor.submit(run)
        logger.debug("Planning the next batch while batch %(number)06d finishes", {"number": self.harvest.batch.number})

    def _planned_next(self) -> Path | None:
        """The batch ended: the next one's directory — the one planned ahead, written now, or the manager's
        run now if none was — or None when no page is due."""
        self._batch_ended = time.monotonic()
        ahead, self._ahead = self._ahead, None
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        if ahead is not None:
            try:
                computed = ahead.result()  # the batch is over: waiting here is what a manager run would cost
            except Exception as exc:  # noqa: BLE001 -- a defect in the computation: plan again, in the open
                logger.error("Planning the next batch ahead failed, planning it now: %(error)r", {"error": exc})
            else:
                self._plan_seconds = computed.seconds
                unfetched = self._left_out.intersection(self.harvest.not_done().tolist())
                if unfetched:  # left out as queued or in flight, then not fetched (softmin, a failure): plan again
                    logger.info("%(n)d pages left out of the batch planned ahead were not fetched: planning it again",
                                {"n": len(unfetched)})
                elif computed.plan.batches:
                    self.crawler.stats.inc_value("harvester/planned_ahead")
                    return self.harvest.write_planned(computed)
                # Nothing was due when it was planned: the pages found since may be; ask the manager now.
        return self.harvest.plan_next()

    def _stop_watching(self) -> None:
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
