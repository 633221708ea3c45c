"""The scheduler's server groups: which group each site is in, and what its server's answers do to it.

:class:`ServerGroups` is a collaborator of ``WireScheduler``; the policy is in the pure
:class:`~wirescrapy.harvester.politeness.PolitenessQueue` (one fetch per group, holds, back-off) and
:func:`~wirescrapy.collection.groups.group_key` (a site's group). Here is what needs the crawl:

* By address (``WIRE_POLITENESS_GROUP = ip``), a site whose address its batch record does not name is parked
  while its name resolves through the crawl's resolver (whose cache the download then uses), so that its first
  access too keeps to its server's turn; a name ``WIRE_DNS_HOSTS`` maps gets its address from there at once.
  A name that does not resolve leaves the site a group of its own host: its fetch says the error.
* A fetch that went to another address (``meta[IP]``, from ``BlockedIPMiddleware``) moves its site to that
  address's group when the fetch ends.
* When a fetch ends: a 429 or 503 with ``Retry-After`` holds the group until then (at most
  ``WIRE_MAX_RETRY_AFTER``), logged once a hold; a 5xx answer backs the group off; any other answer brings it
  back. A time-out backs it off too (``timed_out``, from ``ServerHoldMiddleware``).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from wirescrapy.collection.groups import group_key
from wirescrapy.harvester.meta import IP
from wirescrapy.harvester.retryafter import HOLD_STATUSES, retry_after
from wirescrapy.url import host_name, host_of, mapped_address

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Mapping

    from scrapy import Request
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from wirescrapy.harvester.politeness import PolitenessQueue

logger = logging.getLogger(__name__)


class ServerGroups:
    def __init__(
        self,
        queue: PolitenessQueue,
        mode: str,
        max_retry_after: float,
        dns_hosts: Mapping[str, str],
        stats: StatsCollector,
        clock: Callable[[], float],
        wake: Callable[[], None],
    ):
        self.queue = queue
        self.mode = mode
        self.max_retry_after = max_retry_after
        self.dns_hosts = {host_name(name): address for name, address in dns_hosts.items()}
        self.stats = stats
        self.clock = clock
        self.wake = wake
        self._assigned: set[str] = set()
        self._answers: dict[Request, tuple[int, float | None]] = {}  # status and Retry-After of a response

    def assign(self, site: str, ip: str = "") -> None:
        """Put ``site`` in its group, once; ``ip``: the address its batch record names (``""``: none)."""
        if site in self._assigned and not ip:
            return
        self._assigned.add(site)
        host = host_of(site)
        ip = ip or (mapped_address(self.dns_hosts, host) or "" if self.mode == "ip" else "")
        if self.mode != "ip" or ip:
            self.queue.set_group(site, group_key(self.mode, site, ip))
            return
        from twisted.internet import reactor

        self.queue.set_group(site, None)
        resolving = reactor.resolve(host)
        resolving.addCallbacks(
            lambda address: self._resolved(site, group_key("ip", site, address)),
            lambda failure: self._resolved(site, group_key("host", site)),
        )

    def _resolved(self, site: str, group: str) -> None:
        if self.queue.group_of(site) is None:
            self.queue.set_group(site, group)
            self.wake()

    def downloaded(self, response: Response, request: Request, in_flight: Container[Request]) -> None:
        """The response of ``request`` came in whole (``response_downloaded``): what its server said."""
        if request in in_flight:
            wait = None
            if response.status in HOLD_STATUSES:
                wait = retry_after(response.headers.get(b"Retry-After"), time.time())
            self._answers[request] = (response.status, wait)

    def left(self, site: str, request: Request) -> None:
        """The download of ``request`` for ``site`` is over: by address, the site goes to the group of the
        address it was fetched from, when its fetch ends."""
        if self.mode == "ip" and request.meta.get(IP):
            self.queue.set_group(site, group_key("ip", site, request.meta[IP]))

    def ended(self, site: str, request: Request, fetched: bool) -> None:
        """The fetch of ``request`` for ``site`` ended (after ``PolitenessQueue.finished``)."""
        status, wait = self._answers.pop(request, (0, None))
        if not (fetched and status):
            return
        if wait is not None:
            seconds = min(wait, self.max_retry_after)
            now = self.clock()
            self.stats.inc_value("harvester/holds/pages")
            if self.queue.hold(site, now + seconds, now):
                self.stats.inc_value("harvester/holds/groups")
                logger.info(
                    "Server of %(site)s answered %(status)d with Retry-After: its group %(group)s is held "
                    "%(seconds).0f s",
                    {"site": site, "status": status, "group": self.queue.group_of(site), "seconds": seconds},
                )
        elif status >= 500:
            self.timed_out(site)
        else:
            self.queue.success(site)

    def timed_out(self, site: str) -> None:
        """``site``'s server answered 5xx, or not in time: its group backs off."""
        self.stats.inc_value("harvester/backoff/strikes")
        self.queue.strike(site)
