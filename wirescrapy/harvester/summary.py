"""The harvest's summary: what the run fetched and what the collection holds, logged last.

Scrapy dumps its stats once every ``spider_closed`` handler has run, and a page of them would bury the lines
a person reads first. So the summary is taken when the spider closes, while the collection is still open,
and logged once the engine has stopped (``engine_stopped``), after Scrapy's own closing lines.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from scrapy import signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from wirescrapy.config import WireConfig
    from wirescrapy.harvester.session import Harvest

BLOCKED_SHARE = 0.9  # of a harvest's page fetches refused as blocked addresses, from which it is warned of
BLOCKED_WARNING = (
    "%(blocked)d of %(pages)d page fetches were refused as blocked addresses: WIRE_BLOCKED_IPS refuses "
    "loopback, private and other non-public addresses by default. To try the crawler on this machine, use "
    "the test settings (SCRAPY_SETTINGS_MODULE=settings.test) or set WIRE_BLOCKED_IPS without your sites' "
    "range; the refused pages are not barred and are fetched in the next cycle."
)
DETACHED = (
    "Detached harvest summary (%(reason)s): %(pages)d page fetches, %(ok)d OK, %(robots)d "
    "robots.txt; errors: %(errors)s; %(bytes).1f MB of WARC in %(dir)s"
)
SUMMARY = (
    "Harvest summary (%(reason)s): %(cycles)d cycle(s), %(pages)d page fetches in %(elapsed).1f s "
    "(%(rate).1f/s), %(ok)d OK, %(dups)d duplicates, %(new)d new URLs, %(bytes).1f MB; errors: "
    "%(errors)s. Collection %(dir)s: %(docs)d documents of %(sites)d sites, %(fetched)d fetched, "
    "%(stored)d pages stored, %(links)d links.%(blocked)s%(stopped)s"
)
NEW_SITES = (
    "New sites: %(added)d added, %(refused)d more refused by the bounds on new sites "
    "(WIRE_NEW_SITES_PER_PAGE %(page)d, WIRE_NEW_SITES_PER_SITE %(site)d, WIRE_MAX_SITES %(max)d), "
    "not counted before on the site linking them (new_sites_refused: each once a linking site)"
)

SLOWED = (
    "Servers asked for slowness: %(groups)d holds of a server group (Retry-After, at most "
    "WIRE_MAX_RETRY_AFTER %(cap).0f s), %(pages)d pages held to be fetched again; %(strikes)d 5xx answers "
    "or time-outs backed their group off (WIRE_MAX_BACKOFF %(backoff).0f s)"
)

Line = tuple[int, str, dict]  # a log line: level, message template, values


def mostly_blocked(pages: int, blocked: int) -> bool:
    """Whether (nearly) all of a harvest's page fetches were refused as blocked addresses. A crawl of the Web
    meets a few names that resolve to private addresses and is right to refuse them quietly; nine in ten or
    more refused says the settings do not fit the sites — most often loopback, while trying the crawler on
    one's own machine."""
    return pages > 0 and blocked >= BLOCKED_SHARE * pages


class HarvestSummary:
    """``take`` when the spider closes, ``log`` when the engine has stopped (it connects itself to that)."""

    def __init__(self, crawler: Crawler, config: WireConfig, logger: logging.LoggerAdapter):
        self.crawler = crawler
        self.config = config
        self.logger = logger
        self.lines: list[Line] = []  # to log
        crawler.signals.connect(self.log, signal=signals.engine_stopped)

    def log(self) -> None:
        lines, self.lines = self.lines, []
        for level, message, values in lines:
            self.logger.log(level, message, values)

    def take(self, reason: str, harvest: Harvest, cycles: int) -> None:
        """The summary of a harvest closed for ``reason`` after ``cycles`` cycles, from the crawl's stats and
        the collection. Logged at once when the engine never started (the crawl failed as it opened): no
        ``engine_stopped`` will come."""
        stats = self.crawler.stats.get_stats()
        self.lines = (
            self._detached(reason, harvest, stats)
            if harvest.detached
            else self._harvest(reason, harvest, cycles, stats)
        )
        engine = self.crawler.engine
        if engine is None or engine.start_time is None:
            self.log()

    @staticmethod
    def _detached(reason: str, harvest: Harvest, stats: dict) -> list[Line]:
        errors = {k.rsplit("/", 1)[1]: v for k, v in stats.items() if k.startswith("warc/errors/")}
        return [
            (
                logging.INFO,
                DETACHED,
                {
                    "reason": reason,
                    "pages": stats.get("warc/fetched/page", 0),
                    "ok": stats.get("warc/status/200", 0),
                    "robots": stats.get("warc/fetched/robots", 0),
                    "errors": ", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "none",
                    "bytes": stats.get("warc/bytes", 0) / 1e6,
                    "dir": harvest.warc_dir,
                },
            )
        ]

    def _harvest(self, reason: str, harvest: Harvest, cycles: int, stats: dict) -> list[Line]:
        collection = harvest.collection.summary()
        started = stats.get("start_time")
        elapsed = (datetime.now(tz=UTC) - started).total_seconds() if started else 0.0
        errors = {k.rsplit("/", 1)[1]: v for k, v in stats.items() if k.startswith("harvester/errors/")}
        pages = stats.get("harvester/fetched/page", 0)
        blocked = stats.get("harvester/pages/blocked_ip", 0)
        warn = mostly_blocked(pages, blocked)
        lines = [
            (
                logging.INFO,
                SUMMARY,
                {
                    "reason": reason,
                    "cycles": cycles,
                    "pages": pages,
                    "elapsed": elapsed,
                    "rate": pages / elapsed if elapsed else 0.0,
                    "ok": stats.get("harvester/status/200", 0),
                    "dups": stats.get("gatherer/duplicates", 0),
                    "new": stats.get("gatherer/links/new", 0),
                    "bytes": stats.get("harvester/bytes", 0) / 1e6,
                    "errors": ", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "none",
                    "dir": collection["directory"],
                    "docs": collection["documents"],
                    "sites": collection["sites"],
                    "fetched": collection["fetched"],
                    "stored": collection["pages_stored"],
                    "links": collection["links"],
                    "blocked": (
                        f" {blocked} of {pages} page fetches refused as blocked addresses (WIRE_BLOCKED_IPS)."
                    )
                    if warn
                    else "",
                    "stopped": f" Stopped: {harvest.stopped}." if harvest.stopped else "",
                },
            )
        ]
        if warn:
            lines.append((logging.WARNING, BLOCKED_WARNING, {"blocked": blocked, "pages": pages}))
        holds, strikes = stats.get("harvester/holds/groups", 0), stats.get("harvester/backoff/strikes", 0)
        if holds or strikes:
            values = {
                "groups": holds,
                "pages": stats.get("harvester/holds/requeued", 0),
                "strikes": strikes,
                "cap": self.config.max_retry_after,
                "backoff": self.config.max_backoff,
            }
            lines.append((logging.INFO, SLOWED, values))
        refused = stats.get("gatherer/new_sites/refused", 0)
        if refused:
            lines.append(
                (
                    logging.INFO,
                    NEW_SITES,
                    {
                        "added": stats.get("gatherer/new_sites/added", 0),
                        "refused": refused,
                        "page": self.config.new_sites_per_page,
                        "site": self.config.new_sites_per_site,
                        "max": self.config.max_sites,
                    },
                )
            )
        return lines
