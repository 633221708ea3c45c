"""Parse workers: the gatherer's parsing in other processes, off the crawl's reactor thread
(``WIRE_PARSE_WORKERS``).

Why: the harvester is one process with one reactor thread, which also hands out the requests. Every
millisecond it spends on a page is a millisecond a site whose wait has ended waits longer, and on a web of
large pages that adds up to much of a crawl's time. What the gatherer does to a page before it touches the
collection is pure, so it runs in a pool of worker processes (``concurrent.futures``, other cores), and only
its result comes back (``parse_page``): the parse (``Parser.parse``: bytes and a URL in, a ``ParsedPage``
out), the language of its text (``language.identify``), the text's shingles for its near-duplicate
fingerprint (``simhash.shingles``) and each link's decision by the seeder's rules (``SeederRules.classify``:
canonical form, domain, patterns, extension, depth), which the link-graph step then applies to the
collection. What touches the collection stays in the reactor thread.

The workers are started with ``spawn``: they hold none of the crawl's open files (the collection's lock
stays the crawl's alone), each builds its own parser and rules from the crawl's ``WireConfig`` and loads the
language model at once, ignores ``SIGINT`` (Scrapy's graceful stop is the crawl's to make) and exits when the
crawl's process is gone (a ``kill -9``).

A job's end is handed back through ``call_soon`` (``reactor.callFromThread``); every other method runs in the
owner's thread, so the bookkeeping needs no lock.

Crash behaviour: a worker that dies (a page that crashes the C scanner, the kernel's OOM killer, a kill)
breaks the pool (``BrokenProcessPool``) and fails every job in it. Each of those jobs is tried again alone,
in a new pool, before any other; a job that breaks a pool again while alone in it is given up: its ``done``
gets a :class:`WorkerDied` (the gatherer records it as the page's error, and the page is fetched again in a
later batch), and the crawl goes on. A parser exception is no crash: it comes back as the job's result.
A parse that never ends (a page that sends the parser into a loop, a worker stopped) is made a crash: once
a page has been in its pool longer than ``WIRE_PARSE_TIMEOUT``, ``check`` (the parse step's timer) kills the
pool's workers, and its pages go the same way; a page that hangs again alone is given up.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from wirescrapy.config import WireConfig
from wirescrapy.gatherer.language import identify
from wirescrapy.gatherer.parser import Parser
from wirescrapy.gatherer.simhash import shingles
from wirescrapy.items import ParsedPage
from wirescrapy.seeder.rules import Decision, SeederRules

__all__ = ["ParseWorkers", "WorkerDied", "parse_page"]

logger = logging.getLogger(__name__)

# (page, raw page or None, its links' decisions or None) — a render's raw HTML is parsed with its DOM
# (``ParsePipeline._rendered``).
Parsed = tuple[ParsedPage, ParsedPage | None, list[Decision] | None]
RAW_CONTENT_TYPE = "text/html; charset=utf-8"  # a render's raw HTML, as Splash hands it over

# The pool's own threads (its manager thread unpickles every result, its feeder thread pickles every job)
# share the crawl's GIL with the reactor thread. Python hands the GIL to a waiting thread after 5 ms by
# default, so a site whose wait ended while they ran would get its request up to that late; a tenth of it
# gives the reactor thread its turn sooner (benchmarks/realweb_makespan.py --mode cycles measures it).
SWITCH_INTERVAL = 0.0005


class WorkerDied(Exception):
    """A parse worker died (or hung) on this page twice, the second time parsing it alone: given up."""


def parse_page(
    parser: Parser,
    body: bytes,
    url: str,
    content_type: str | None,
    raw_body: bytes | None,
    rules: SeederRules | None = None,
    depth: int = 0,
    shingled: bool = False,
) -> Parsed:
    """A page parsed, its language found and, given ``rules``, its links' decisions as links of a page at
    ``depth``: what a worker returns (the reactor thread, with no workers, leaves the decisions to the
    link-graph step, which makes them only for the pages it adds links of). ``shingled``: with its text's
    shingles for the near-duplicate step (``WIRE_NEAR_DUPLICATES``), the costly part of its fingerprint."""
    page = parser.parse(body, url, content_type)
    page.language = identify(page.text)
    if shingled:
        page.shingles = shingles(page.text)
    raw_page = parser.parse(raw_body, url, RAW_CONTENT_TYPE) if raw_body else None
    decisions = [rules.classify(link.url, depth) for link in page.links] if rules is not None else None
    return page, raw_page, decisions


_parser: Parser | None = None  # a worker's own parser and rules (``_start_worker``)
_rules: SeederRules | None = None
_shingled = False  # whether it computes the shingles (``WIRE_NEAR_DUPLICATES``)


def _start_worker(config: WireConfig, parent: int) -> None:
    global _parser, _rules, _shingled
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _parser, _rules = Parser.from_config(config), SeederRules(config)
    _shingled = config.near_duplicates
    identify("the language model loads on first use: now, not at the first page")
    threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    # Blocked on its call queue, a worker whose crawl was killed would wait forever: it goes with the crawl.
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _ready() -> None:
    pass


def _parse_in_worker(
    body: bytes, url: str, content_type: str | None, raw_body: bytes | None, depth: int
) -> Parsed:
    return parse_page(_parser, body, url, content_type, raw_body, _rules, depth, _shingled)


def _kill(pool: ProcessPoolExecutor) -> None:
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()


def _spawn_pool(config: WireConfig, workers: int) -> tuple[ProcessPoolExecutor, Future]:
    """A pool of ``workers`` for ``config``, and the future of its first worker's start."""
    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(config, os.getpid()),
    )
    return pool, pool.submit(_ready)


_prestarted: tuple[WireConfig, int, ProcessPoolExecutor, Future] | None = None


def prestart(config: WireConfig, workers: int) -> None:
    """Start ``workers`` workers for a crawl with ``config`` now, for its ``ParseWorkers`` to take when it
    starts. A harvester that may wait for the collection (``harvester/startup.py``) does this before waiting:
    a worker's start takes a while and much CPU (its imports and the language model), which a job queued
    behind another then spends while that one harvests, not at its own batch's start, when its pages would
    wait for the worker and its sites for its pages."""
    global _prestarted
    if _prestarted is None and workers >= 1:
        pool, ready = _spawn_pool(config, workers)
        for _ in range(workers - 1):
            pool.submit(_ready)
        _prestarted = (config, workers, pool, ready)


def _take_prestarted(config: WireConfig, workers: int) -> tuple[ProcessPoolExecutor, Future] | None:
    """The pool ``prestart`` started, once, if it was for ``workers`` workers and ``config``."""
    global _prestarted
    if _prestarted is None or _prestarted[:2] != (config, workers):
        return None
    _, _, pool, ready = _prestarted
    _prestarted = None
    return pool, ready


class _Job:
    __slots__ = ("alone", "args", "breaks", "done", "hung", "pool", "started", "url")

    def __init__(self, args: tuple, url: str, done: Callable[[Parsed | BaseException], None]):
        self.args, self.url, self.done = args, url, done
        self.breaks = 0  # pools it was in when they broke
        self.alone = False  # the only job in its pool (tried again after a break)
        self.hung = False  # its pool was stopped as hung while it was the oldest in it
        self.pool: ProcessPoolExecutor | None = None
        self.started = 0.0  # when it was handed to its pool (time.monotonic)


class ParseWorkers:
    """``workers`` processes parsing pages as ``parse_page`` does with ``config``'s parser and rules;
    ``parse`` hands each result (or the exception the parse raised, or ``WorkerDied``) to its ``done`` through
    ``call_soon``. ``timeout``: seconds a page may be in the pool before ``check`` stops it as hung (0:
    none)."""

    def __init__(self, workers: int, config: WireConfig, call_soon: Callable[..., Any], timeout: float = 0.0):
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers!r}")
        self.workers = workers
        self.config = config
        Parser.from_config(config)  # bad options fail here, in the crawl's process, not in every worker
        self.call_soon = call_soon
        self.timeout = timeout
        self.breaks = 0  # pools broken, for the stats
        self.given_up = 0
        self.hangs = 0  # pools stopped as hung (``check``)
        self._hung_pools: weakref.WeakSet[ProcessPoolExecutor] = weakref.WeakSet()
        # when a worker of the pool had started, or the pool's start plus the timeout until one has: a new
        # pool's imports do not count against a page
        self._ready_at: weakref.WeakKeyDictionary[ProcessPoolExecutor, float] = weakref.WeakKeyDictionary()
        self._pool: ProcessPoolExecutor | None = None
        self._running: set[_Job] = set()
        self._waiting: deque[_Job] = deque()  # held back while jobs of a broken pool are tried again
        self._suspects: deque[_Job] = deque()  # jobs of a broken pool, to try again one at a time
        self._closed = False

    def parse(
        self,
        body: bytes,
        url: str,
        content_type: str | None,
        raw_body: bytes | None,
        depth: int,
        done: Callable[[Parsed | BaseException], None],
    ) -> None:
        """Parse a page at ``depth`` (its links' decisions are made as links of a page at that depth)."""
        job = _Job((body, url, content_type, raw_body, depth), url, done)
        if self._suspects or self._alone_running():
            self._waiting.append(job)
        else:
            self._start(job)

    @property
    def pids(self) -> list[int]:
        """The running workers' process ids."""
        processes = getattr(self._pool, "_processes", None) or {}
        return [process.pid for process in list(processes.values()) if process.pid]

    def check(self, now: float | None = None) -> None:
        """Stop the workers of a pool that has had a page longer than the timeout: a parse that never ends
        (a page that sends the parser into a loop, a worker stopped) is turned into a dead worker, whose pages
        are parsed again one at a time and, dying again alone, given up (``_ended``)."""
        if not self.timeout or self._closed:
            return
        now = time.monotonic() if now is None else now
        for job in sorted(
            self._running, key=lambda job: job.started
        ):  # the oldest of a pool first: the one hung
            pool = job.pool
            ready = self._ready_at.get(pool, 0.0) if pool is not None else None
            if ready is None or pool in self._hung_pools or now - max(job.started, ready) <= self.timeout:
                continue
            self._hung_pools.add(pool)
            self.hangs += 1
            job.hung = True
            logger.warning(
                "A parse worker has had %(url)s for over %(timeout)g s (WIRE_PARSE_TIMEOUT): it is "
                "stopped, and the pages it had are parsed again, one at a time",
                {"url": job.url, "timeout": self.timeout},
            )
            _kill(pool)  # it breaks: every page in it comes back as BrokenProcessPool

    def close(self) -> None:
        """Stop the workers; a job still running is not handed back (its workers are killed: one may be
        hung)."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            if any(job.pool is pool for job in self._running):
                _kill(pool)
            pool.shutdown(wait=True, cancel_futures=True)

    def _new_pool(self) -> ProcessPoolExecutor:
        """A pool of workers (the one ``prestart`` started, if it was for these workers); ``check`` counts a
        page's time in it from when a worker has started."""
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        pool, ready = _take_prestarted(self.config, self.workers) or _spawn_pool(self.config, self.workers)
        self._ready_at[pool] = time.monotonic() + self.timeout  # a start that takes longer counts as hung too
        ready.add_done_callback(lambda _: self.call_soon(self._pool_ready, pool))
        return pool

    def _pool_ready(self, pool: ProcessPoolExecutor) -> None:
        self._ready_at[pool] = time.monotonic()

    def start(self) -> None:
        """Start the workers now (they take a moment to import and build their parser), not at the first
        page."""
        if self._pool is None:
            self._pool = self._new_pool()
            for _ in range(self.workers - 1):
                self._pool.submit(_ready)

    def _start(self, job: _Job) -> None:
        for _ in range(2):
            if self._pool is None:
                self._pool = self._new_pool()
            try:
                future = self._pool.submit(_parse_in_worker, *job.args)
                break
            except BrokenProcessPool:  # a worker died while no job of ours was in it
                self._broken(self._pool)
        else:  # no worker starts at all: the page is not parsed, the crawl goes on
            logger.error("No parse worker could be started for %(url)s", {"url": job.url})
            self.given_up += 1
            job.done(WorkerDied(f"no parse worker could be started for {job.url}"))
            return
        job.pool = self._pool
        job.started, job.hung = time.monotonic(), False
        self._running.add(job)
        future.add_done_callback(lambda f: self.call_soon(self._ended, job, f))

    def _broken(self, pool: ProcessPoolExecutor) -> None:
        if pool is self._pool:
            self.breaks += 1
            self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)

    def _ended(self, job: _Job, future: Future) -> None:
        if self._closed:
            return
        self._running.discard(job)
        exc = None if future.cancelled() else future.exception()
        if future.cancelled() or isinstance(exc, BrokenProcessPool):
            self._broken(job.pool)
            job.breaks += 1
            if job.alone and job.breaks >= 2:
                self.given_up += 1
                how = f"hung over {self.timeout:g} s" if job.hung else "died"
                logger.error(
                    "A parse worker %(how)s twice on %(url)s, the second time parsing it alone: the "
                    "page is recorded as a gatherer error and fetched again in a later batch",
                    {"how": how, "url": job.url},
                )
                job.done(WorkerDied(f"the parse worker {how} on {job.url} ({job.breaks} times)"))
            else:
                if not self._suspects:
                    logger.warning("A parse worker died: the pages it had are parsed again, one at a time")
                self._suspects.append(job)
        else:
            job.done(exc if exc is not None else future.result())
        self._next()

    def _next(self) -> None:
        if self._suspects:
            if not self._running:
                job = self._suspects.popleft()
                job.alone = True
                self._start(job)
            return
        while self._waiting and not self._alone_running():
            self._start(self._waiting.popleft())

    def _alone_running(self) -> bool:
        """Whether a job of a broken pool is being tried again alone: it starts only when nothing runs
        (``_next``), and nothing starts beside it, so it is then the one job running."""
        return len(self._running) == 1 and next(iter(self._running)).alone
