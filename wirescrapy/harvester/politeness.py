"""WIRE's short-term scheduling: a queue per site and a heap of sites by next visit (thesis §7.2.2).

The harvester keeps one FIFO queue of pages per site and a priority queue of sites keyed by the time each
may next be visited (the "penalty box"). A site is in exactly one of three states:

* **fetching**: one of its requests is in flight. It is in no heap: at most one connection per site.
* **queued**: it has pages and sits in the heap until its next visit time, ``end of its last fetch +
  its wait``; the wait starts when a fetch *ends*, success or failure.
* **empty**: nothing queued and nothing in flight (WIRE's idle site that exhausted its pages). It leaves
  the heap; a new page puts it back at its next visit time, which may already have passed.

The wait of a site is ``WIRE_WAIT_NORMAL`` (15 s), or ``WIRE_WAIT_LARGE_SITE`` (5 s) once the site has
more than ``WIRE_LARGE_SITE_PAGES`` (100) pages, or its robots.txt Crawl-delay when that is longer. Page
count and Crawl-delay can change at any time (robots.txt is fetched first, and its Crawl-delay arrives
after the site is already waiting): a waiting site's next visit is then recomputed from its last fetch.

Memory: the per-doc data of a batch is held column-wise in a :class:`DocTable` (arrays of machine ints
and one ``bytearray`` of URL paths), and a site's queue is an ``array('q')`` of row numbers, so a queued
URL costs its table row and one 8-byte queue entry, plus its path, and no Python object. A queue item that
is not a non-negative ``int`` (a full Scrapy request: a redirect follow-up, a robots.txt fetch) is kept by
reference behind a negative handle in the same FIFO, so both kinds keep their order.

Everything here is pure: no reactor, no I/O, no clock. Every method that depends on time takes ``now``
(any monotonic float, seconds), so tests and benchmarks drive it with a fake clock.
"""

from __future__ import annotations

import heapq
import itertools
from array import array
from collections import deque
from dataclasses import dataclass
from math import inf, isfinite
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

# Consumed items at the head of a site's array are dropped in one move once they are this many and at
# least half of it: O(1) amortised per pop, and a drained queue never holds its old rows.
_COMPACT_AT = 4096

_EMPTY, _QUEUED, _FETCHING = 0, 1, 2

# How long before its wait ends a site's next request may be handed out (``PolitenessQueue.pop_due``):
# what the engine and the downloader middlewares do for a request then overlaps the wait instead of adding
# to it, and the request is held at the last middleware until the wait is over (the request's ``meta``
# ``NOT_BEFORE``: ``FetchLimitsMiddleware``).
DISPATCH_LEAD = 0.002
# The middleware that holds such a request: without it enabled, no request is handed out early.
HOLDER = "wirescrapy.harvester.middlewares.fetchlimits.FetchLimitsMiddleware"


# The longest a response's last byte may come before the downloader is done with it and still be the access's
# end (a longer lag is a wall clock stepped meanwhile).
BODY_DONE_LAG = 1.0


def access_lag(body_done: float | None, now: float) -> float:
    """Seconds since a request's access ended, as its site's wait counts, at ``now`` (Unix time), when the
    downloader is done with it: since its response's last byte (``meta[BODY_DONE]``, stamped by
    ``FetchLimitsMiddleware`` when the body's announced length came in, or a response of no body) if that came
    up to ``BODY_DONE_LAG`` before; else 0 (a download that failed, was stopped, or announced no length)."""
    if body_done is None or not 0.0 <= now - body_done <= BODY_DONE_LAG:
        return 0.0
    return now - body_done


def dispatch_lead(middlewares: Iterable[Any]) -> float:
    """``DISPATCH_LEAD`` if ``HOLDER`` is among the enabled downloader ``middlewares`` (paths or classes, as
    Scrapy's ``build_component_list`` gives them), else 0."""
    paths = {m if isinstance(m, str) else f"{m.__module__}.{m.__qualname__}" for m in middlewares}
    return DISPATCH_LEAD if HOLDER in paths else 0.0


@dataclass(frozen=True)
class Waits:
    """WIRE's politeness waits, in seconds (``harvester/wait/*``)."""

    normal: float = 15.0
    large_site: float = 5.0
    large_site_pages: int = 100

    def __post_init__(self) -> None:
        if not (0 <= self.large_site <= self.normal and isfinite(self.normal)):
            raise ValueError(f"need 0 <= large_site <= normal < inf, got {self.large_site}, {self.normal}")
        if self.large_site_pages < 0:
            raise ValueError(f"large_site_pages must be >= 0, got {self.large_site_pages}")

    def of(self, pages: int, crawl_delay: float) -> float:
        # Large sites get the short wait because at the end of a batch only they are left, and a long
        # wait would leave the harvester idle (thesis §7.2.2); a Crawl-delay asked for is never cut.
        base = self.large_site if pages > self.large_site_pages else self.normal
        return max(base, crawl_delay)


@dataclass(frozen=True)
class Counts:
    """Sites by state and URLs, for the harvester's progress line."""

    fetching: int  # sites with a request in flight
    ready: int  # sites with URLs whose wait is over (only while connections are all busy)
    waiting: int  # sites with URLs, in the penalty box
    empty: int  # sites with nothing queued nor in flight: done, unless new URLs come
    urls: int  # URLs queued (in-flight ones excluded)
    fetches: int  # fetches ended so far (a network access, success or failure)


class _Site:
    __slots__ = (
        "crawl_delay",
        "entry",
        "front",
        "head",
        "items",
        "key",
        "last_end",
        "pages",
        "state",
        "wait",
    )

    def __init__(self, key: str, wait: float):
        self.key = key
        self.items = array("q")  # row numbers (>= 0) and object handles (< 0); items[head:] are queued
        self.head = 0
        self.front: deque[Any] | None = None  # items put in front, taken before ``items``
        self.state = _EMPTY
        self.last_end = -inf  # when its last fetch ended
        self.pages = 0
        self.crawl_delay = 0.0
        self.wait = wait
        self.entry = 0  # sequence number of its valid heap entry

    def __len__(self) -> int:
        return len(self.items) - self.head + (len(self.front) if self.front else 0)


class PolitenessQueue:
    """Per-site FIFO queues behind a heap of sites keyed by next visit time.

    ``add`` queues an item for a site, ``pop_ready(now)`` takes the first item of the site whose visit
    time came first (if it has come) and marks the site fetching, ``finished(site, now)`` ends that
    fetch and starts the site's wait. Sites are any hashable keys; use :func:`wirescrapy.url.origin` for URLs.
    """

    def __init__(self, waits: Waits | None = None):
        self.waits = waits or Waits()
        self._sites: dict[str, _Site] = {}
        self._heap: list[tuple[float, int, _Site]] = []
        self._seq = itertools.count(1)
        self._objects: dict[int, Any] = {}
        self._handles = itertools.count(-1, -1)
        self._urls = 0
        self._queued_sites = 0
        self._fetching = 0
        self._fetches = 0

    # -- queueing --------------------------------------------------------------------------------------

    def add(self, site: str, item: Any, *, front: bool = False) -> None:
        """Queue ``item`` at the back of ``site``'s FIFO (at its front if ``front``: robots.txt, which
        must come before the pages, or an urgent follow-up). A non-negative ``int`` is stored in 8
        bytes; anything else is kept by reference."""
        entry = self._site(site)
        if front:
            if entry.front is None:
                entry.front = deque()
            entry.front.appendleft(item)
        elif type(item) is int and item >= 0:
            entry.items.append(item)
        else:
            handle = next(self._handles)
            self._objects[handle] = item
            entry.items.append(handle)
        self._urls += 1
        if entry.state == _EMPTY:
            entry.state = _QUEUED
            self._queued_sites += 1
            self._push(entry)

    def pop_ready(self, now: float) -> tuple[str, Any] | None:
        """The next ``(site, item)`` whose site may be visited at ``now``, the site marked fetching; or
        None. Among ready sites, the one that became ready first (then the one queued first) wins."""
        popped = self.pop_due(now)
        return None if popped is None else popped[:2]

    def pop_due(self, now: float, lead: float = 0.0) -> tuple[str, Any, float] | None:
        """``pop_ready`` for a site that may be visited by ``now + lead``: ``(site, item, ready)``, where
        ``ready`` is when it may be (its request must not reach the network before; ``-inf`` for a site
        never visited)."""
        heap = self._heap
        while heap:
            ready, seq, site = heap[0]
            if site.entry != seq or site.state != _QUEUED:
                heapq.heappop(heap)  # superseded by a later entry of the same site
                continue
            if ready > now + lead:
                return None
            heapq.heappop(heap)
            site.entry = 0
            site.state = _FETCHING
            self._queued_sites -= 1
            self._fetching += 1
            self._urls -= 1
            return site.key, self._take(site), ready
        return None

    def next_ready_time(self) -> float | None:
        """When the next queued site may be visited (``-inf``: it never was), or None if none is queued.
        Sites fetching are not counted: they have no time until their fetch ends."""
        heap = self._heap
        while heap:
            ready, seq, site = heap[0]
            if site.entry == seq and site.state == _QUEUED:
                return ready
            heapq.heappop(heap)
        return None

    def finished(self, site: str, now: float, *, fetched: bool = True) -> None:
        """The fetch in flight for ``site`` ended at ``now``: its wait starts. ``fetched=False`` when the
        request never reached the network (refused by a middleware, served from a cache): the site is
        released without a new wait, its next visit still counted from its last real fetch."""
        entry = self._sites.get(site)
        if entry is None or entry.state != _FETCHING:
            raise ValueError(f"{site!r} has no fetch in flight")
        self._fetching -= 1
        if fetched:
            self._fetches += 1
            entry.last_end = max(entry.last_end, now)
        if len(entry):
            entry.state = _QUEUED
            self._queued_sites += 1
            self._push(entry)
        else:
            entry.state = _EMPTY

    def drop_rows(self) -> list[int]:
        """Take every queued row (a non-negative ``int`` item: a batch's page) out of the queue, leaving the
        other items (robots.txt, follow-ups) queued and the sites' last fetches as they were; returns the
        rows dropped (``WIRE_SOFTMIN``: the batch ends and its pages left go to the next)."""
        dropped: list[int] = []
        for site in self._sites.values():
            queued = site.items[site.head :]
            dropped += (item for item in queued if item >= 0)
            site.items, site.head = array("q", (item for item in queued if item < 0)), 0
            if site.state == _QUEUED and not len(site):
                site.state = _EMPTY  # its heap entry is ignored from now on
                self._queued_sites -= 1
        self._urls -= len(dropped)
        return dropped

    def visited(self, site: str, now: float) -> None:
        """Count an access to ``site`` that ended at ``now`` outside this queue (before a restart, say):
        its next visit is not before ``now`` + its wait."""
        entry = self._site(site)
        if now > entry.last_end:
            entry.last_end = now
            self._requeue(entry)

    # -- per-site parameters ---------------------------------------------------------------------------

    def set_crawl_delay(self, site: str, seconds: float) -> None:
        """The Crawl-delay of ``site``'s robots.txt (0: none); applies to its current wait too."""
        if not (seconds >= 0 and isfinite(seconds)):
            raise ValueError(f"Crawl-delay must be a finite number >= 0, got {seconds!r}")
        entry = self._site(site)
        entry.crawl_delay = float(seconds)
        self._rewait(entry)

    def set_pages(self, site: str, pages: int) -> None:
        """How many pages ``site`` has (the batch's ``docs``): above ``large_site_pages`` it gets the
        shorter wait, its current one included."""
        if pages < 0:
            raise ValueError(f"pages must be >= 0, got {pages!r}")
        entry = self._site(site)
        entry.pages = pages
        self._rewait(entry)

    def wait_of(self, site: str) -> float:
        """Seconds ``site`` waits after each fetch."""
        entry = self._sites.get(site)
        return entry.wait if entry is not None else self.waits.normal

    # -- state -----------------------------------------------------------------------------------------

    def __len__(self) -> int:
        """URLs queued, in-flight ones excluded."""
        return self._urls

    @property
    def fetching(self) -> int:
        """Sites (so requests) in flight."""
        return self._fetching

    def is_fetching(self, site: str) -> bool:
        entry = self._sites.get(site)
        return entry is not None and entry.state == _FETCHING

    def queued(self, site: str) -> int:
        """URLs queued for ``site``."""
        entry = self._sites.get(site)
        return len(entry) if entry is not None else 0

    def counts(self, now: float) -> Counts:
        """Sites by state at ``now``; O(sites waiting), meant for a progress line, not a loop."""
        ready = sum(1 for when, seq, site in self._heap if when <= now and site.entry == seq)
        return Counts(
            fetching=self._fetching,
            ready=ready,
            waiting=self._queued_sites - ready,
            empty=len(self._sites) - self._fetching - self._queued_sites,
            urls=self._urls,
            fetches=self._fetches,
        )

    def time_left(self, now: float) -> float:
        """The least time the queued URLs can take, fetch times aside: the longest of ``site_times``."""
        return max((seconds for _, seconds in self._site_times(now)), default=0.0)

    def site_times(self, now: float) -> dict[str, float]:
        """Per site with URLs queued or a fetch in flight, the least time its queued URLs can take, fetch
        times aside: the time until the site is ready plus one wait per URL after its first (0 for a site
        with a fetch in flight and nothing queued). O(sites), for a progress line or a timer."""
        return dict(self._site_times(now))

    def _site_times(self, now: float) -> Iterator[tuple[str, float]]:
        for key, site in self._sites.items():
            queued = len(site)
            if queued:
                ready = max(site.last_end + site.wait - now, 0.0) if site.state == _QUEUED else site.wait
                yield key, ready + (queued - 1) * site.wait
            elif site.state == _FETCHING:
                yield key, 0.0

    def pending(self) -> Iterator[tuple[str, Any]]:
        """Every queued ``(site, item)``, site by site in FIFO order, without taking them."""
        for key, site in self._sites.items():
            if site.front:
                for item in site.front:
                    yield key, item
            for index in range(site.head, len(site.items)):
                item = site.items[index]
                yield key, (self._objects[item] if item < 0 else item)

    # -- internals -------------------------------------------------------------------------------------

    def _site(self, key: str) -> _Site:
        site = self._sites.get(key)
        if site is None:
            site = self._sites[key] = _Site(key, self.waits.normal)
        return site

    def _push(self, site: _Site) -> None:
        seq = next(self._seq)
        site.entry = seq
        heapq.heappush(self._heap, (site.last_end + site.wait, seq, site))

    def _rewait(self, site: _Site) -> None:
        wait = self.waits.of(site.pages, site.crawl_delay)
        if wait != site.wait:
            site.wait = wait
            self._requeue(site)

    def _requeue(self, site: _Site) -> None:
        # The old heap entry stays behind, ignored: its sequence number is no longer the site's.
        if site.state == _QUEUED:
            self._push(site)

    def _take(self, site: _Site) -> Any:
        if site.front:
            return site.front.popleft()
        items = site.items
        item = items[site.head]
        site.head += 1
        if site.head == len(items):
            del items[:]
            site.head = 0
        elif site.head >= _COMPACT_AT and 2 * site.head >= len(items):
            del items[: site.head]
            site.head = 0
        return self._objects.pop(item) if item < 0 else item


class DocTable:
    """The per-doc data of a batch, column-wise: append-only rows of doc-id, site-id, depth, a small tag
    and the URL's path (its part after the site, UTF-8): 27 bytes a row (ids 8 + 8, depth 2, tag 1, the
    path's end 8) plus the path.

    Rows are never removed; the table lives as long as its batch.
    """

    def __init__(self) -> None:
        self.doc_ids = array("q")
        self.site_ids = array("q")
        self.depths = array("H")
        self.tags = array("B")
        self._ends = array("Q", [0])
        self._paths = bytearray()

    def append(self, doc_id: int, site_id: int, depth: int, path: str, tag: int = 0) -> int:
        """Store a row and return its number. ``OverflowError`` if depth or tag do not fit (0–65535,
        0–255) or an id is over 2**63, and the table is left as it was."""
        row = len(self.doc_ids)
        data = path.encode("utf-8")
        columns = (self.depths, self.tags, self.site_ids, self.doc_ids)
        try:
            for column, value in zip(columns, (depth, tag, site_id, doc_id)):
                column.append(value)
        except (OverflowError, TypeError):
            for column in columns:
                del column[row:]
            raise
        self._paths += data
        self._ends.append(len(self._paths))
        return row

    def __len__(self) -> int:
        return len(self.doc_ids)

    def path(self, row: int) -> str:
        return self._paths[self._ends[row] : self._ends[row + 1]].decode("utf-8")

    def get(self, row: int) -> tuple[int, int, int, str, int]:
        """``(doc_id, site_id, depth, path, tag)`` of a row."""
        return self.doc_ids[row], self.site_ids[row], self.depths[row], self.path(row), self.tags[row]
