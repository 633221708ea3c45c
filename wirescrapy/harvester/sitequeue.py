"""A site and a server group of the politeness queue: a site's FIFO of queued items, and what the politeness
of each depends on.

Memory: a site's queue is an ``array('q')`` of row numbers (a batch's page, in the scheduler's
``DocTable``), so a queued URL costs one 8-byte entry here and no Python object. An item that is not a
non-negative ``int`` (a full Scrapy request: a redirect follow-up, a robots.txt fetch) is kept by reference
behind a negative handle in the same FIFO, so both kinds keep their order. Items put in front (robots.txt, an
urgent follow-up) are taken first. :class:`~wirescrapy.harvester.politeness.PolitenessQueue` holds one per
site and keeps its state and times; everything here is pure.
"""

from __future__ import annotations

from array import array
from collections import deque
from math import inf
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

EMPTY, QUEUED, FETCHING = 0, 1, 2  # the state of a site or a group

# Consumed items at the head of a site's array are dropped in one move once they are this many and at
# least half of it: O(1) amortised per take, and a drained queue never holds its old rows.
_COMPACT_AT = 4096


class Site:
    """A site's queued items, and its politeness state (kept by the queue: ``state``, ``last_end``, its
    ``pages`` and ``crawl_delay``, the ``wait`` they give, and its server ``group``)."""

    __slots__ = (
        "crawl_delay",
        "front",
        "group",
        "handle",
        "head",
        "items",
        "key",
        "last_end",
        "moving_to",
        "objects",
        "pages",
        "state",
        "wait",
    )

    def __init__(self, key: str, wait: float, state: int):
        self.key = key
        self.items = array("q")  # row numbers (>= 0) and object handles (< 0); items[head:] are queued
        self.head = 0
        self.front: deque[Any] | None = None  # items put in front, taken before ``items``
        self.objects: dict[int, Any] | None = None  # handle -> item kept by reference
        self.handle = 0  # the last handle given
        self.state = state
        self.last_end = -inf  # when its last fetch ended
        self.pages = 0
        self.crawl_delay = 0.0
        self.wait = wait
        self.group: Group | None = None  # its server group; None: parked, not fetched until it has one
        self.moving_to: str | None = None  # the group it joins when its fetch in flight ends

    def __len__(self) -> int:
        return len(self.items) - self.head + (len(self.front) if self.front else 0)

    def has_items(self) -> bool:
        return self.head < len(self.items) or bool(self.front)

    def put(self, item: Any, front: bool = False) -> None:
        """Queue ``item`` at the back (at the front if ``front``)."""
        if front:
            if self.front is None:
                self.front = deque()
            self.front.appendleft(item)
        elif type(item) is int and item >= 0:
            self.items.append(item)
        else:
            if self.objects is None:
                self.objects = {}
            self.handle -= 1
            self.objects[self.handle] = item
            self.items.append(self.handle)

    def take(self) -> Any:
        """The first queued item, taken out."""
        if self.front:
            return self.front.popleft()
        items = self.items
        item = items[self.head]
        self.head += 1
        if self.head == len(items):
            del items[:]
            self.head = 0
        elif self.head >= _COMPACT_AT and 2 * self.head >= len(items):
            del items[: self.head]
            self.head = 0
        return self.objects.pop(item) if item < 0 else item

    def drop_rows(self) -> list[int]:
        """Take the queued rows (non-negative ``int`` items) out, leaving the others in their order."""
        queued = self.items[self.head :]
        self.items, self.head = array("q", (item for item in queued if item < 0)), 0
        return [item for item in queued if item >= 0]

    def pending(self) -> Iterator[Any]:
        """The queued items in FIFO order, without taking them."""
        if self.front:
            yield from self.front
        for index in range(self.head, len(self.items)):
            item = self.items[index]
            yield self.objects[item] if item < 0 else item


class Group:
    """A server group: its sites in turn, its last fetch, and what its server asked for (held, backed off)."""

    __slots__ = ("entry", "hold_until", "key", "last_end", "last_site", "state", "strikes", "turns")

    def __init__(self, key: str):
        self.key = key
        # Its queued sites, in turn; a site fetching is not among them. A list, not a deque: most groups are
        # one site, and an empty deque takes a block of memory that a short list does not.
        self.turns: list[Site] = []
        self.state = EMPTY
        self.last_end = -inf  # when its last fetch ended
        self.last_site: Site | None = None  # the site of that fetch, whose wait follows it
        self.hold_until = -inf  # a server's Retry-After
        self.strikes = 0  # the wait is doubled this many times (5xx answers and time-outs)
        self.entry = 0  # sequence number of its valid heap entry

    def gap(self, site: Site, max_backoff: float) -> float:
        """The wait after a fetch of ``site``: backing off doubles it per strike, but never past
        ``max_backoff``, nor below the site's plain wait."""
        if not self.strikes:
            return site.wait
        return min(site.wait * 2.0**self.strikes, max(site.wait, max_backoff))

    def ready(self, max_backoff: float) -> float:
        """When it may be visited next. After a fetch the group waits the fetched site's wait; the next site
        in turn waits its own wait since its own last fetch (it may have come from another group); a server's
        hold comes on top."""
        ready = self.hold_until
        last = self.last_site
        if last is not None:
            ready = max(ready, self.last_end + (self.gap(last, max_backoff) if self.strikes else last.wait))
        if self.turns:
            head = self.turns[0]
            ready = max(ready, head.last_end + head.wait)
        return ready
