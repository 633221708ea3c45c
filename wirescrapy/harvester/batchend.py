"""The end of a batch: WIRE's softmin, and the next batch planned while this one finishes.

A batch's harvest ends with its stragglers, the sites whose pages take longest at one page per wait.
:class:`BatchEnd`, held by the spider, watches the batch on a timer while it runs and does two things:

* **softmin** (WIRE's ``harvester/nthreads/softmin`` and ``softmintime``: ``WIRE_SOFTMIN``,
  ``WIRE_SOFTMIN_TIME``) drops the pages still queued once few sites are left, if ending the batch gains more
  than starting the next one costs (``softmin_due``). The fetches in flight end as usual. The dropped pages
  were not visited, so they stay eligible for the next batches.
* **planning ahead** (``WIRE_PLAN_AHEAD``) runs the manager's computation for the next batch in a thread once
  the pages left need about as long as the last run took (``plan_due``), so that the next batch starts at
  once. What it decided is written in the reactor's thread when the batch ends: the collection keeps one
  writer.

Politeness across the boundary is the scheduler's: its queue keeps each site's last access from one batch to
the next, and a new process reads it from the site records (``Harvest.last_visit``). A kill loses nothing: a
computation not written is lost, and a written batch is resumed.
"""

from __future__ import annotations

import functools
import importlib
import logging
import math
import os
import sys
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from types import MappingProxyType
from typing import TYPE_CHECKING

from wirescrapy.harvester.scheduler import WireScheduler
from wirescrapy.url import origin

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy.crawler import Crawler

    from wirescrapy.config import WireConfig
    from wirescrapy.harvester.session import Harvest
    from wirescrapy.manager.batch import Batch

logger = logging.getLogger(__name__)

TICK = 0.25  # seconds between two looks at the batch
PLAN_MARGIN = 2.0  # a plan is started when the pages left need less than this many times the last one's time
PLAN_LEAST = 0.1  # ... or less than this many seconds: a plan started earlier misses the links found after it
SOFTMIN_GAIN = 2.0  # softmin ends a batch only if its pages left need this many times what a new batch costs
_IMPORTED = time.monotonic()


def softmin_due(
    active_sites: int,
    pages_left: int,
    elapsed: float,
    softmin: int,
    softmin_time: float,
    *,
    began_with: int,
    time_left: float,
    restart: float,
) -> bool:
    """Whether WIRE's softmin ends the batch now: fewer than ``softmin`` sites still active (with pages
    queued or in flight) of a batch that ``began_with`` at least ``softmin`` sites, pages left to drop, the
    batch ``elapsed`` seconds old, at least ``softmin_time``, and ending it gaining ``time_left`` seconds
    (what the pages left need, or ``critical_idle``), more than ``SOFTMIN_GAIN`` times the ``restart`` a new
    batch costs; ``softmin`` 0: never. So a batch of few sites, or one whose stragglers are nearly done, runs
    to its end, and so does a crawl with waits of 0."""
    return (
        softmin > 0
        and pages_left > 0
        and active_sites < softmin <= began_with
        and elapsed >= softmin_time
        and time_left > SOFTMIN_GAIN * restart
    )


def critical_idle(
    active: Mapping[str, float], later: Mapping[str, float], together: frozenset[str] = frozenset()
) -> float:
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


def softmin_gain(
    active: Mapping[str, float],
    later: Mapping[str, float] | None,
    last_cycle: bool,
    together: frozenset[str] = frozenset(),
) -> float:
    """What ending the batch now gains, ``softmin_due``'s ``time_left``.

    In an earlier cycle of a harvester the next batch follows at once, and its manager run sees the links this
    batch found: the gain is the longest queue's time, which the other sites would wait. In a harvester's last
    cycle the next batch is the next job's, a process start away at the least, and only the crawl's slowest
    site matters: the gain is the time the stragglers keep it idle (``critical_idle``, ``together`` its). A
    batch that does not say what its sites left for later batches (``later`` None) is weighed as in an
    earlier cycle: its 0s would read as nothing left, and softmin would never pay."""
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
    """Watches the batch being harvested: ``watch`` when it is queued, ``next_batch`` when it ends, ``stop``
    when the spider closes. ``plans_ahead``: whether this harvester plans its next batch (``WIRE_PLAN_AHEAD``;
    a batch given with ``-a batch=DIR`` and a detached harvest are not its to plan)."""

    def __init__(self, crawler: Crawler, config: WireConfig, harvest: Harvest, *, plans_ahead: bool):
        self.crawler = crawler
        self.config = config
        self.harvest = harvest
        self.plans_ahead = plans_ahead
        self._timer = None
        self._executor: ThreadPoolExecutor | None = None
        self._ahead: Future | None = None
        self._batch: Batch | None = None
        self._last_cycle = True  # the harvester's last cycle: the next batch is the next job's
        self._batch_began = 0.0
        self._softmin_done = False
        self._dropped: frozenset = frozenset()  # doc-ids softmin dropped from the batch
        self._left_out: frozenset = frozenset()  # doc-ids the plan ahead left out (not fetched when it began)
        self._plan_seconds = 0.0
        self._batch_ended: float | None = None  # when this process's last batch ended (time.monotonic)
        self._restart = 0.0  # what starting this batch took (_restarted)
        self._began_with = 0  # sites in this batch
        # By site: its pages left for later batches (BatchSite.left); None: the batch does not say.
        self._later: Mapping[str, int] | None = MappingProxyType({})
        self._together: frozenset[str] = frozenset()  # a led batch's sites planned to end together

    def watch(self, batch: Batch, *, last_cycle: bool) -> None:
        """A batch was queued: watch it for softmin and for the moment to plan the next."""
        self._batch, self._last_cycle = batch, last_cycle
        self._batch_began = time.monotonic()
        self._restart = self._batch_began - self._restarted()
        self._began_with = len(batch.sites)
        later = {origin(site.origin): site.left for site in batch.sites.values()}
        self._later = None if None in later.values() else later
        self._together = frozenset(origin(site.origin) for site in batch.sites.values() if site.critical)
        self._softmin_done = False
        self._dropped = frozenset()
        self._ahead = None
        self._plan_seconds = float(batch.info.get("planning_seconds", self._plan_seconds) or 0.0)
        if self.plans_ahead and "wirescrapy.manager.run" not in sys.modules:
            # The manager loads in the planning thread while the batch harvests, not in the reactor's thread
            # when the plan starts: a harvester job loads no link analysis at its start (manager/__init__.py).
            self._planner().submit(importlib.import_module, "wirescrapy.manager.run")
        if not (self.config.softmin or self.plans_ahead):
            return
        if self._timer is None:
            from twisted.internet.task import LoopingCall

            self._timer = LoopingCall(self.look)
        if not self._timer.running:
            self._timer.start(TICK, now=False)

    def _restarted(self) -> float:
        """When starting this batch began (``time.monotonic``): the previous batch's end. For a process's
        first batch, its start (a job of one cycle ends, and the next job starts a process), or the moment it
        took the collection if it waited for another process to close it (``WIRE_COLLECTION_WAIT``: a job
        queued behind another starts up while that one harvests)."""
        if self._batch_ended is not None:
            return self._batch_ended
        collection = self.harvest.collection
        waited = collection.waited_until if collection is not None else None
        return max(process_started(), waited or 0.0)

    def look(self) -> None:
        """The timer's look at the batch: softmin, then whether to start planning the next."""
        harvest = self.harvest
        if harvest.batch is None or harvest.stopped:
            return
        scheduler = WireScheduler.of(self.crawler)
        now = scheduler.clock()
        if self.config.softmin and not self._softmin_done:
            counts = scheduler.counts()
            active = counts.fetching + counts.ready + counts.waiting
            due = functools.partial(
                softmin_due,
                active,
                counts.urls,
                time.monotonic() - self._batch_began,
                self.config.softmin,
                self.config.softmin_time,
                began_with=self._began_with,
                restart=self._restart,
            )
            # The pages' time (O(sites)) only once the rest says yes: with every site's, it can only say no.
            if due(time_left=math.inf) and due(time_left=self._softmin_gain(scheduler.queue, now)):
                self._softmin_done = True
                self._dropped = frozenset(scheduler.drop_batch_pages())
                dropped = len(self._dropped)
                self.crawler.stats.inc_value("harvester/softmin/dropped", dropped)
                logger.info(
                    "Batch %(number)06d: %(active)d sites still active (WIRE_SOFTMIN %(softmin)d): it ends "
                    "once the fetches in flight end, %(dropped)d pages left for the next batches",
                    {
                        "number": harvest.batch.number,
                        "active": active,
                        "softmin": self.config.softmin,
                        "dropped": dropped,
                    },
                )
        if (
            self._ahead is None
            and self.plans_ahead
            and plan_due(scheduler.queue.time_left(now), self._plan_seconds)
        ):
            self._plan_ahead()

    def _softmin_gain(self, queue, now: float) -> float:
        """What ending the batch now gains (``softmin_gain``)."""
        later = self._later
        if later is not None:
            later = {site: left * queue.wait_of(site) for site, left in later.items()}
        # A batch whose time the slowest site's share set (the planner's lead: batch.json's "time_led") is
        # weighed as a last cycle's in every cycle: the manager let the sites with slack end before that site
        # on purpose (manager/timeshare.py), and its "left" counts the pages it expects to find too.
        led = self._batch is not None and bool(self._batch.info.get("time_led"))
        return softmin_gain(
            queue.site_times(now), later, last_cycle=self._last_cycle or led, together=self._together
        )

    def _planner(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wire-plan")
        return self._executor

    def _plan_ahead(self) -> None:
        # Left out: the batch's pages not recorded as fetched yet (queued, in flight, or on their way through
        # the pipelines), but for those softmin handed back.
        not_done = self.harvest.not_done()
        self._left_out = frozenset(doc for doc in not_done.tolist() if doc not in self._dropped)
        run = self.harvest.plan_snapshot(self._left_out)
        self._ahead = self._planner().submit(run)
        logger.debug(
            "Planning the next batch while batch %(number)06d finishes", {"number": self.harvest.batch.number}
        )

    def next_batch(self) -> Path | None:
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
                logger.error(
                    "Planning the next batch ahead failed, planning it now: %(error)r", {"error": exc}
                )
            else:
                self._plan_seconds = computed.seconds
                # A page left out as queued or in flight and then not fetched (dropped by softmin after the
                # plan began, failed, or still queued at the end): plan again, so that no page skips a batch.
                unfetched = self._left_out.intersection(self.harvest.not_done().tolist())
                if unfetched:
                    logger.info(
                        "%(n)d pages left out of the batch planned ahead were not fetched: planning it again",
                        {"n": len(unfetched)},
                    )
                elif computed.plan.batches:
                    self.crawler.stats.inc_value("harvester/planned_ahead")
                    return self.harvest.write_planned(computed)
                # Nothing was due when it was planned: the pages found since may be; ask the manager now.
        return self.harvest.plan_next()

    def stop(self) -> None:
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
