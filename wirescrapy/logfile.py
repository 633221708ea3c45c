"""A log file that cannot be written: one line on stderr, not a traceback for every log line."""

from __future__ import annotations

import atexit
import errno
import functools
import logging
import sys
import weakref


class LogFileGuard(logging.Handler):
    """A ``LOG_FILE`` that cannot be written (its disk full, its directory gone) costs the crawl its log
    lines, not a traceback on stderr for every line, which is what Python's logging prints. The first
    failure is said in one line on stderr, the lines lost are counted (stat ``log/lines_lost`` of the crawl),
    and their count is said in one more line when the process ends. The crawl goes on: its collection is
    elsewhere, and stops on its own full disk. Errors other than the file's (a log call with bad arguments)
    are reported as Python reports them.

    One guard a process (``install_log_file_guard``: by every wirescrapy command at its start, and by the
    ``wirescrapy.extensions.LogFileGuard`` extension for a crawl started otherwise). It is a handler of the
    root logger ahead of Scrapy's, which Scrapy installs again when a crawl starts: each record it sees first
    guards any file handler not guarded yet (a few attribute checks a record)."""

    def __init__(self, stderr=None):
        super().__init__()
        self.stderr = stderr
        self.stats = None
        self.lost = 0
        self.files: list[str] = []
        self.guarded: weakref.WeakSet[logging.Handler] = weakref.WeakSet()

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
        if self.stats is not None:
            self.stats.inc_value("log/lines_lost")
        if handler.baseFilename not in self.files:
            self.files.append(handler.baseFilename)
            what = (
                "disk full" if error.errno in (errno.ENOSPC, errno.EDQUOT) else (error.strerror or str(error))
            )
            self._say(
                f"log file {handler.baseFilename}: {what}; the crawl goes on, its log lines are lost while "
                "the file cannot be written"
            )

    def say_lost(self) -> None:
        if self.lost:
            self._say(
                f"{self.lost} log line{'s' * (self.lost != 1)} could not be written to "
                f"{', '.join(self.files)}"
            )

    def _say(self, line: str) -> None:
        stream = self.stderr or sys.stderr
        stream.write(f"wirescrapy: {line}\n")
        stream.flush()


_GUARD: LogFileGuard | None = None


def install_log_file_guard() -> LogFileGuard:
    """The process's guard, added to the root logger the first time (and the count said at the process's
    end)."""
    global _GUARD  # one a process
    if _GUARD is None:
        _GUARD = LogFileGuard()
        logging.root.addHandler(_GUARD)
        atexit.register(_GUARD.say_lost)
    _GUARD.guard_file_handlers()
    return _GUARD
