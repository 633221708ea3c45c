"""What wirescrapy's commands share: validated WIRE settings, and a failure at start as one line.

``WireCommand`` is a mixin, not a ``ScrapyCommand``: Scrapy offers every ``ScrapyCommand`` subclass found in
``COMMANDS_MODULE`` as a command named after its module, so a base class here would be listed as
``scrapy base``. A command is ``class Command(WireCommand, ScrapyCommand)``.

A person who gives a bad setting, a bad ``-a`` argument, a collection another process writes or a damaged
batch gets one line, ``scrapy: error: <what>``, and exit status 2, not a traceback (``InputError``; a
command called the wrong way, a ``UsageError``, gets Scrapy's usage text with it): the errors below are the
ones a command's input causes. Any other exception is a bug and keeps its traceback.

A full disk (or a failing one: ``collection/writes.py``) is said the same way, ``collection DIR: disk full``,
by every command that writes the collection, at start or later: the offline commands exit with status 2, a
crawl stops at the first failed write, logs that line and exits with status 1.
"""

from __future__ import annotations

import functools
import logging
import sys
from contextlib import contextmanager
from pathlib import Path

from scrapy.exceptions import NotConfigured, UsageError

from wirescrapy.collection import Collection
from wirescrapy.collection.lock import CollectionLockedError
from wirescrapy.collection.records import RecordFileError
from wirescrapy.collection.writes import failure_message, is_write_failure
from wirescrapy.config import WireConfig, WireSettingsError
from wirescrapy.logfile import install_log_file_guard
from wirescrapy.manager.batch import BatchError
from wirescrapy.settingnames import check_setting_names

logger = logging.getLogger(__name__)


class InputError(UsageError):
    """What a person gave is wrong — a setting's value, a file, the collection (another process writes it, or
    the disk is full) — rather than how the command was called: said in one line, ``scrapy: error: <what>``,
    exit status 2, without the usage text Scrapy prints with any other ``UsageError``, which says nothing
    about it."""


def _one_line(run):
    """``run`` (a command's ``run`` or ``process_options``) with an ``InputError`` said in one line on stderr,
    and exit status 2."""

    @functools.wraps(run)
    def wrapper(self, args, opts):
        try:
            return run(self, args, opts)
        except InputError as exc:
            sys.stderr.write(f"scrapy: error: {exc}\n")
            raise SystemExit(2) from None

    return wrapper


# What a person's input causes at start; ValueError is what a spider raises for a bad -a argument.
INPUT_ERRORS = (
    UsageError,
    WireSettingsError,
    CollectionLockedError,
    BatchError,
    NotConfigured,
    OSError,
    ValueError,
)


def input_error_message(exc: BaseException, spider: str = "", collection_dir: str = "") -> str:
    """The line that says what was wrong, for an exception of ``INPUT_ERRORS``."""
    if is_write_failure(exc):
        return failure_message(collection_dir or Path(exc.filename or ".").parent, exc)
    if isinstance(exc, WireSettingsError):
        return f"invalid setting: {exc}"
    if isinstance(exc, (UsageError, CollectionLockedError, BatchError, OSError)) or not spider:
        return str(exc)
    return f"{spider}: {exc}"


class WireCommand:
    requires_project = True
    quiet = True  # the offline commands print their own report; Scrapy's start-up INFO lines would bury it

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("run", "process_options"):  # process_options: a check before Scrapy's start-up lines
            if name in cls.__dict__:
                setattr(cls, name, _one_line(cls.__dict__[name]))

    def process_options(self, args, opts):
        super().process_options(args, opts)
        # Before Scrapy's root handler: a LOG_FILE that cannot be written is one line.
        install_log_file_guard()
        if self.quiet and not opts.loglevel:
            self.settings.set("LOG_LEVEL", "WARNING", priority="cmdline")

    def wire_config(self) -> WireConfig:
        try:
            check_setting_names(self.settings)
            return WireConfig.from_settings(self.settings)
        except WireSettingsError as exc:
            raise InputError(input_error_message(exc)) from None

    def open_collection(self, config: WireConfig, readonly: bool = False) -> Collection:
        try:
            return Collection.from_config(config, readonly=readonly)
        except (CollectionLockedError, OSError) as exc:
            raise InputError(input_error_message(exc, collection_dir=config.collection_dir)) from None

    def read_collection(self, config: WireConfig) -> Collection:
        """The collection, open read-only without a lock (it may be read while a crawl writes it)."""
        if not (Path(config.collection_dir) / "urls.log").exists():
            raise InputError(f"no collection in {config.collection_dir}")
        try:
            return self.open_collection(config, readonly=True)
        except RecordFileError as exc:
            raise InputError(str(exc)) from None

    @contextmanager
    def writing(self, config: WireConfig):
        """Around a command's writes to the collection: a full disk is one line (the stores are left as the
        failed write found them, consistent)."""
        try:
            yield
        except OSError as exc:
            if not is_write_failure(exc):
                raise
            raise InputError(failure_message(config.collection_dir, exc)) from None

    def crawl(self, spider: str, **kwargs) -> None:
        """Run one spider to its end; a failure at start caused by the input is an ``InputError``."""
        failures = []
        crawler = self.crawler_process.create_crawler(spider)
        # The errback takes the failure, so Twisted does not also print it as "Unhandled error in Deferred".
        self.crawler_process.crawl(crawler, **kwargs).addErrback(failures.append)
        if not failures:
            self.crawler_process.start()
        if failures:
            failure = failures[0]
            if not isinstance(failure.value, INPUT_ERRORS):
                failure.raiseException()
            message = input_error_message(failure.value, spider, self.settings.get("WIRE_COLLECTION_DIR", ""))
            logger.debug("The crawl failed at start", exc_info=failure.value)
            if self.settings.get("LOG_FILE"):  # a Scrapyd job: its log, not stderr, is what a person reads
                logger.error("The crawl failed at start: %(message)s", {"message": message})
            raise InputError(message)
        if self.crawler_process.bootstrap_failed or getattr(self.crawler_process, "has_exception", False):
            self.exitcode = 1
        if crawler.stats is not None and crawler.stats.get_value("harvester/stopped"):
            self.exitcode = 1  # a failed write stopped it: said in the log, in one line
