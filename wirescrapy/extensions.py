"""Scrapy extensions of wirescrapy."""

from __future__ import annotations

import logging

from scrapy.exceptions import UsageError
from twisted.internet.defer import Deferred

from wirescrapy.config import WireConfig, WireSettingsError
from wirescrapy.logfile import install_log_file_guard
from wirescrapy.settingnames import check_setting_names

logger = logging.getLogger(__name__)


class WireSettingsCheck:
    """Validates every WIRE_* setting when a crawl starts, so a bad value stops the run at once with a
    message naming the setting, instead of failing later deep inside a component; so does a ``WIRE_*``
    name that is no setting (a misspelling), naming the closest one."""

    def __init__(self, config: WireConfig):
        self.config = config

    @classmethod
    def from_crawler(cls, crawler):
        try:
            check_setting_names(crawler.settings)
            return cls(WireConfig.from_crawler(crawler))
        except WireSettingsError as exc:
            raise UsageError(f"invalid setting: {exc}") from None


class LogFileGuard:
    """The process's guard of a ``LOG_FILE`` that cannot be written (``wirescrapy.logfile``), installed for a
    crawl started without a wirescrapy command (a script's ``CrawlerProcess``), counting its lines lost
    in the crawl's stats (``log/lines_lost``)."""

    @classmethod
    def from_crawler(cls, crawler):
        guard = install_log_file_guard()
        guard.stats = crawler.stats
        return guard


class CallbackTurn:
    """A response reaches its callback at the reactor's next turn instead of after Scrapy's fixed delay.

    Scrapy 2.13's scraper sleeps ``scrapy.utils.defer._DEFER_DELAY`` (0.1 s) before every callback, so that
    the reactor reads and writes its sockets before the callback's work (``Scraper.call_spider_async``). A
    delayed call of 0 s does that too: both reactors Scrapy runs on (asyncio's loop and Twisted's) poll their
    sockets before they run a delayed call made while they ran the previous ones. The delay is not free for
    a crawler that works in batches: a batch ends when its last page is gathered, so every batch end and
    every job's end would wait that much more while the sites that go on in the next batch are idle
    (``benchmarks/realweb_makespan.py`` shows it as the time its largest site is idle across batch starts),
    and a site's first page would wait as long for its robots.txt's callback.

    It replaces the scraper module's ``_defer_sleep``, a private name of Scrapy's (the one other in
    ``harvester/scheduler.py``): for the whole process, once, and only while that name is Scrapy's own
    function, so a Scrapy that renamed or changed it is left alone (and logged)."""

    @classmethod
    def from_crawler(cls, crawler):
        install_callback_turn()
        return cls()


def next_turn(clock=None) -> Deferred[None]:
    """A Deferred that fires at the ``clock``'s (the reactor's) next turn."""
    if clock is None:
        from twisted.internet import reactor as clock

    deferred: Deferred[None] = Deferred()
    clock.callLater(0, deferred.callback, None)
    return deferred


def install_callback_turn() -> bool:
    """Make Scrapy's scraper wait one reactor turn before a callback (``CallbackTurn``); whether it does."""
    from scrapy.core import scraper
    from scrapy.utils import defer

    current = getattr(scraper, "_defer_sleep", None)
    if current is next_turn:
        return True
    if current is None or current is not getattr(defer, "_defer_sleep", None):
        logger.warning(
            "Scrapy's scraper has no _defer_sleep of scrapy.utils.defer: its delay before each "
            "callback is left as it is"
        )
        return False
    scraper._defer_sleep = next_turn
    return True
