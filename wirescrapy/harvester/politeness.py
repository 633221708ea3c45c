"""WIRE's short-term scheduling: a queue per site and a heap of server groups by next visit (thesis §7.2.2).

The harvester keeps one FIFO queue of pages per site and a priority queue keyed by the time each may next be
visited (the "penalty box"). WIRE keys it by site; here by *server group*, the sites one server serves
(``WIRE_POLITENESS_GROUP``: an address, a host, a registered domain; a site alone when not told). A group is
in exactly one of three states:

* **fetching**: one of its sites' requests is in flight. It is in no heap: at most one connection per group.
* **queued**: its sites have pages and it sits in the heap until its next visit time, ``end of its last fetch
  + the wait of the site fetched``, and not before the next site in turn has waited its own wait since its
  own last fetch, nor before a server's hold (``Retry-After``) is over. The wait starts when a fetch *ends*,
  success or failure. The group's sites take turns, in the order they were queued.
* **empty**: nothing queued and nothing in flight (WIRE's idle site that exhausted its pages). It leaves
  the heap; a new page puts it back at its next visit time, which may already have passed.

A server's 5xx answers and time-outs double its group's waits, up to a cap, and its other answers halve them
back: a struggling server is given room, and a recovered one its pace again.

The wait of a site is ``WIRE_WAIT_NORMAL`` (15 s), or ``WIRE_WAIT_LARGE_SITE`` (5 s) once the site has
more than ``WIRE_LARGE_SITE_PAGES`` (100) pages, or its robots.txt Crawl-delay when that is longer. Page
count and Crawl-delay can change at any time (robots.txt is fetched first, and its Crawl-delay arrives
after the site is already waiting): a waiting site's next visit is then recomputed from its last fetch.

Memory: a queued URL is a row of the batch's :class:`~wirescrapy.harvester.doctable.DocTable` and one 8-byte
entry of its site's FIFO (:class:`~wirescrapy.harvester.sitequeue.Site`), and no Python object.

Everything here is pure: no reactor, no I/O, no clock. Every method that depends on time takes ``now``
(any monotonic float, seconds), so tests and benchmarks drive it with a fake clock.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from math import isfinite
from typing import TYPE_CHECKING, Any

from wirescrapy.harvester.doctable import DocTable  # noqa: F401  (re-exported: the batch's rows)
from wirescrapy.harvester.sitequeue import EMPTY, FETCHING, QUEUED, Group, Site

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


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


class PolitenessQueue:
    """Per-site FIFO queues in server groups, behind a heap of groups keyed by next visit time.

    ``add`` queues an item for a site, ``pop_ready(now)`` takes the first item of the next site in turn of the
    group whose visit time came first (if it has come) and marks the group fetching, ``finished(site, now)``
    ends that fetch and starts the group's wait. Sites are any hashable keys; use
    :func:`wirescrapy.url.origin` for URLs.

    A site is its own group until :meth:`set_group` puts it in another (``WIRE_POLITENESS_GROUP``): a group
    has one fetch at a time, and after each it waits the wait of the site fetched. Its sites take turns, in
    the order they were queued, and each site's own wait holds too. A server's signals act on the group:
    :meth:`hold` keeps it until a time (``Retry-After``), :meth:`strike` doubles its waits (a 5xx answer or
    a time-out, up to ``max_backoff`` seconds) and :meth:`success` halves them back.
    """

    def __init__(self, waits: Waits | None = None, max_backoff: float = 600.0):
        if not max_backoff >= 0:
            raise ValueError(f"max_backoff must be >= 0, got {max_backoff!r}")
        self.waits = waits or Waits()
        self.max_backoff = max_backoff
        self._sites: dict[str, Site] = {}
        self._groups: dict[str, Group] = {}
        self._heap: list[tuple[float, int, Group]] = []
        self._seq = itertools.count(1)
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
        entry.put(item, front)
        self._urls += 1
        if entry.state == EMPTY:
            entry.state = QUEUED
            self._queued_sites += 1
            self._join_turns(entry)

    def pop_ready(self, now: float) -> tuple[str, Any] | None:
        """The next ``(site, item)`` whose group may be visited at ``now``, the site marked fetching; or
        None. Among ready groups, the one that became ready first (then the one queued first) wins."""
        popped = self.pop_due(now)
        return None if popped is None else popped[:2]

    def pop_due(self, now: float, lead: float = 0.0) -> tuple[str, Any, float] | None:
        """``pop_ready`` for a group that may be visited by ``now + lead``: ``(site, item, ready)``, where
        ``ready`` is when it may be (its request must not reach the network before; ``-inf`` for a group and
        site never visited)."""
        heap = self._heap
        while heap:
            ready, seq, group = heap[0]
            if group.entry != seq or group.state != QUEUED:
                heapq.heappop(heap)  # superseded by a later entry of the same group
                continue
            if ready > now + lead:
                return None
            heapq.heappop(heap)
            group.entry = 0
            group.state = FETCHING
            site = group.turns.pop(0)
            site.state = FETCHING
            self._queued_sites -= 1
            self._fetching += 1
            self._urls -= 1
            return site.key, site.take(), ready
        return None

    def next_ready_time(self) -> float | None:
        """When the next queued group may be visited (``-inf``: it never was), or None if none is queued.
        Groups fetching are not counted: they have no time until their fetch ends."""
        heap = self._heap
        while heap:
            ready, seq, group = heap[0]
            if group.entry == seq and group.state == QUEUED:
                return ready
            heapq.heappop(heap)
        return None

    def finished(self, site: str, now: float, *, fetched: bool = True) -> None:
        """The fetch in flight for ``site`` ended at ``now``: its group's wait starts. ``fetched=False`` when
        the request never reached the network (refused by a middleware, served from a cache): the group is
        released without a new wait, its next visit still counted from its last real fetch."""
        entry = self._sites.get(site)
        if entry is None or entry.state != FETCHING:
            raise ValueError(f"{site!r} has no fetch in flight")
        group = entry.group
        assert group is not None
        self._fetching -= 1
        if fetched:
            self._fetches += 1
            entry.last_end = max(entry.last_end, now)
            group.last_end = max(group.last_end, now)
            group.last_site = entry
        entry.state = EMPTY
        group.state = EMPTY
        if entry.moving_to is not None:
            key, entry.moving_to = entry.moving_to, None
            self._move(entry, key)
        if entry.has_items():
            entry.state = QUEUED
            self._queued_sites += 1
            self._join_turns(entry)
        if group.state == EMPTY:
            self._settle(group)  # its other sites' turn

    def drop_rows(self) -> list[int]:
        """Take every queued row (a non-negative ``int`` item: a batch's page) out of the queue, leaving the
        other items (robots.txt, follow-ups) queued and the groups' last fetches as they were; returns the
        rows dropped (``WIRE_SOFTMIN``: the batch ends and its pages left go to the next)."""
        dropped: list[int] = []
        for site in self._sites.values():
            dropped += site.drop_rows()
            if site.state == QUEUED and not len(site):
                site.state = EMPTY
                self._queued_sites -= 1
                if site.group is not None:
                    site.group.turns.remove(site)
                    self._settle(site.group)
        self._urls -= len(dropped)
        return dropped

    def visited(self, site: str, now: float) -> None:
        """Count an access to ``site`` that ended at ``now`` outside this queue (before a restart, say):
        its next visit is not before ``now`` + its wait."""
        entry = self._site(site)
        if now > entry.last_end:
            entry.last_end = now
            self._requeue(entry.group)

    # -- groups and the servers' signals ---------------------------------------------------------------

    def set_group(self, site: str, group: str | None) -> None:
        """Put ``site`` in server group ``group`` (None: parked, not fetched until it has one, while its
        address is being resolved). A site fetching moves when its fetch ends."""
        entry = self._site(site)
        if entry.state == FETCHING:
            entry.moving_to = group if group is not None else entry.key
            return
        entry.moving_to = None
        self._move(entry, group)

    def group_of(self, site: str) -> str | None:
        """The key of ``site``'s group (None: parked)."""
        entry = self._site(site)
        return entry.group.key if entry.group is not None else None

    def hold(self, site: str, until: float, now: float) -> bool:
        """A server asked not to be visited before ``until`` (``Retry-After``): ``site``'s whole group waits
        until then. Whether the group was not held already at ``now`` (a new hold, to log once)."""
        group = self._site(site).group
        if group is None:
            return False
        new = group.hold_until <= now
        if until > group.hold_until:
            group.hold_until = until
            self._requeue(group)
        return new

    def strike(self, site: str) -> None:
        """``site``'s server answered 5xx or not at all: its group's waits double, up to ``max_backoff``."""
        group = self._site(site).group
        if group is not None and group.strikes < 32:
            group.strikes += 1
            self._requeue(group)

    def success(self, site: str) -> None:
        """``site``'s server answered: its group's waits halve back towards the plain wait."""
        group = self._site(site).group
        if group is not None and group.strikes:
            group.strikes -= 1
            self._requeue(group)

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
        """Seconds ``site``'s group waits after a fetch of it (its own wait, longer while backing off)."""
        entry = self._sites.get(site)
        if entry is None:
            return self.waits.normal
        return entry.group.gap(entry, self.max_backoff) if entry.group is not None else entry.wait

    # -- state -----------------------------------------------------------------------------------------

    def __len__(self) -> int:
        """URLs queued, in-flight ones excluded."""
        return self._urls

    @property
    def fetching(self) -> int:
        """Sites (so requests, and groups) in flight."""
        return self._fetching

    def is_fetching(self, site: str) -> bool:
        entry = self._sites.get(site)
        return entry is not None and entry.state == FETCHING

    def queued(self, site: str) -> int:
        """URLs queued for ``site``."""
        entry = self._sites.get(site)
        return len(entry) if entry is not None else 0

    def counts(self, now: float) -> Counts:
        """Sites by state at ``now``; O(groups waiting), meant for a progress line, not a loop."""
        ready = sum(len(group.turns) for when, seq, group in self._heap if when <= now and group.entry == seq)
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
        times aside: the time until its group is ready plus one wait per URL of the group after its first
        (0 for a site with a fetch in flight and nothing queued). The sites of a group take turns, so they
        all get the group's time. O(sites), for a progress line or a timer."""
        return dict(self._site_times(now))

    def _site_times(self, now: float) -> Iterator[tuple[str, float]]:
        members: dict[Group, list[Site]] = {}
        for site in self._sites.values():
            if site.group is None:
                if len(site):
                    yield site.key, len(site) * site.wait  # parked: its group is not known yet
            elif len(site) or site.state == FETCHING:
                members.setdefault(site.group, []).append(site)
        for group, sites in members.items():
            waits = sum(len(site) * group.gap(site, self.max_backoff) for site in sites)
            if not waits and group.state == FETCHING:
                seconds = 0.0  # its last fetch in flight
            elif group.state == QUEUED:
                head = group.turns[0]
                seconds = (
                    max(group.ready(self.max_backoff) - now, 0.0) + waits - group.gap(head, self.max_backoff)
                )
            else:
                seconds = waits
            for site in sites:
                yield site.key, max(seconds, 0.0)

    def pending(self) -> Iterator[tuple[str, Any]]:
        """Every queued ``(site, item)``, site by site in FIFO order, without taking them."""
        for key, site in self._sites.items():
            for item in site.pending():
                yield key, item

    # -- internals -------------------------------------------------------------------------------------

    def _site(self, key: str) -> Site:
        site = self._sites.get(key)
        if site is None:
            site = self._sites[key] = Site(key, self.waits.normal, EMPTY)
            self._move(site, key)
        return site

    def _move(self, site: Site, key: str | None) -> None:
        # A site not fetching leaves its group (and its turns) for group ``key``, at the back of its turns.
        old = site.group
        new = None if key is None else self._groups.get(key)
        if key is not None and new is None:
            new = self._groups[key] = Group(key)
        if new is old:
            return
        if old is not None:
            if site.state == QUEUED:
                old.turns.remove(site)
            self._settle(old)  # an empty group is kept: its last fetch still bounds the next
        site.group = new
        if new is not None and site.state == QUEUED:
            self._join_turns(site)

    def _join_turns(self, site: Site) -> None:
        group = site.group
        if group is None:
            return
        group.turns.append(site)
        if group.state == EMPTY:
            group.state = QUEUED
            self._push(group)

    def _settle(self, group: Group) -> None:
        # After a fetch ends or a site leaves: the group waits its turn again, or is empty.
        if group.state == FETCHING:
            return
        if group.turns:
            group.state = QUEUED
            self._push(group)
        else:
            group.state = EMPTY

    def _push(self, group: Group) -> None:
        seq = next(self._seq)
        group.entry = seq
        heapq.heappush(self._heap, (group.ready(self.max_backoff), seq, group))

    def _rewait(self, site: Site) -> None:
        wait = self.waits.of(site.pages, site.crawl_delay)
        if wait != site.wait:
            site.wait = wait
            self._requeue(site.group)

    def _requeue(self, group: Group | None) -> None:
        # The old heap entry stays behind, ignored: its sequence number is no longer the group's.
        if group is not None and group.state == QUEUED:
            self._push(group)
