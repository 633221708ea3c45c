"""Scrapy extensions of wirescrapy."""

from __future__ import annotations

import functools
import logging
import sys
import weakref

from scrapy import signals
from scrapy.exceptions import UsageError

from wirescrapy.collection.writes import DISK_FULL
from wirescrapy.config import WireConfig, WireSettingsError
from wirescrapy.settingnames import check_setting_names


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


class LogFileGuard(logging.Handler):
    """A ``LOG_FILE`` that cannot be written (its disk full, its directory gone) costs the crawl its log
    lines, not a traceback on stderr for every line, which is what Python's logging prints. The first
    failure is said in one line on stderr, the lines lost are counted (stat ``log/lines_lost``), and their
    count is said in one more line when the spider closes. The crawl goes on: its collection is elsewhere,
    and stops on its own full disk. Errors other than the file's (a log call with bad arguments) are
    reported as Python reports them.

    Scrapy installs its root handler again after the extensions are built (``Crawler.crawl``), so this is
    also a handler of the root logger, ahead of Scrapy's: each record it sees first guards any file handler
    not guarded yet (a few attribute checks a record)."""

    def __init__(self, stats, stderr=None):
        super().__init__()
        self.stats = stats
        self.stderr = stderr
        self.lost = 0
        self.files: list[str] = []
        self.guarded: weakref.WeakSet[logging.Handler] = weakref.WeakSet()

    @classmethod
    def from_crawler(cls, crawler):
        guard = cls(crawler.stats)
        guard.guard_file_handlers()
        logging.root.addHandler(guard)
        crawler.signals.connect(guard.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(guard.engine_stopped, signal=signals.engine_stopped)
        return guard

    def guard_file_handlers(self) -> None:
        for handler in logging.root.handlers:
            if isinstance(handler, logging.FileHandler) and handler not in self.guarded:
                self.guarded.add(handler)
                handler.handleError = functools.partial(self._failed, handler, handler.handleError)

    def handle(self, record: logging.LogRecord) -> bool:
        self.guard_file_handlers()
        return True

    def emit(self, record: logging.LogRecord) -> None:  # handle() does the work, for every level
        pass

    def _failed(self, handler: logging.FileHandler, handle_error, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            handle_error(record)
            return
        self.lost += 1
        self.stats.inc_value("log/lines_lost")
        if handler.baseFilename not in self.files:
            self.files.append(handler.baseFilename)
            what = "disk full" if error.errno in DISK_FULL else (error.strerror or str(error))
            self._say(f"log file {handler.baseFilename}: {what}; the crawl goes on, its log lines are lost while "
                      "the file cannot be written")

    def spider_closed(self, spider) -> None:
        if self.lost:
            self._say(f"{self.lost} log line{'s' * (self.lost != 1)} could not be written to {', '.join(self.files)}")

    def engine_stopped(self) -> None:
        logging.root.removeHandler(self)

    def _say(self, line: str) -> None:
        stream = self.stderr or sys.stderr
        stream.write(f"wirescrapy: {line}\n")
        stream.flush()
