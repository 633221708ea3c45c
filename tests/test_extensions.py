import pytest
from scrapy.crawler import Crawler
from scrapy.exceptions import UsageError
from scrapy.settings import Settings

import settings.default as default_settings
from tests.data.empty_spider import EmptySpider
from wirescrapy.extensions import CallbackTurn, WireSettingsCheck, install_callback_turn, next_turn
from wirescrapy.testing.process import run_scrapy


def crawler(**overrides):
    values = {k: v for k, v in vars(default_settings).items() if k.isupper()}
    values.update(overrides)
    return Crawler(EmptySpider, Settings(values))


def test_valid_settings_pass():
    check = WireSettingsCheck.from_crawler(crawler())
    assert check.config.wait_normal == 15


def test_a_bad_setting_stops_the_crawler_naming_it():
    with pytest.raises(UsageError, match="WIRE_MAX_FILE_SIZE"):
        WireSettingsCheck.from_crawler(crawler(WIRE_MAX_FILE_SIZE="big"))


@pytest.mark.timeout(60)
def test_a_real_run_with_a_bad_setting_fetches_nothing_and_says_why():
    run = run_scrapy("runspider", "tests/data/empty_spider.py", "-s", "WIRE_WAIT_NORMAL=soon", timeout=60)
    assert "invalid setting: WIRE_WAIT_NORMAL: expected float, got 'soon'" in run.stderr
    assert "Spider opened" not in run.stderr


def test_a_misspelled_setting_stops_the_crawl_naming_the_closest_one():
    with pytest.raises(
        UsageError,
        match=r"invalid setting: WIRE_BATCH_SIZ: no such setting \(did you mean WIRE_BATCH_SIZE\?\)",
    ):
        WireSettingsCheck.from_crawler(crawler(WIRE_BATCH_SIZ=5))


def test_a_log_file_that_fails_is_said_once_counted_and_a_file_handler_installed_later_is_guarded_too(capsys):
    import contextlib
    import io
    import logging

    from scrapy.statscollectors import MemoryStatsCollector

    from wirescrapy.logfile import LogFileGuard

    c = crawler()
    stats, said = MemoryStatsCollector(c), io.StringIO()
    guard = LogFileGuard(stderr=said)
    guard.stats = stats
    logger = logging.getLogger("wirescrapy.test_log_file_guard")
    logger.propagate, logger.level = False, logging.INFO  # only the handlers below
    first, later = logging.FileHandler("/dev/full"), logging.FileHandler("/dev/full")
    try:
        logger.addHandler(first)
        logging.root.addHandler(first)  # the guard looks at the root logger's handlers
        guard.guard_file_handlers()
        logger.addHandler(guard)
        logger.addHandler(later)  # after the guard, as Scrapy's root handler is installed again
        logging.root.addHandler(later)
        for n in range(3):
            logger.info("line %d", n)
        assert stats.get_value("log/lines_lost") == 6  # three lines, two files
        assert said.getvalue().splitlines() == [
            (
                "wirescrapy: log file /dev/full: disk full; the crawl goes on, its log lines are lost "
                "while the file cannot be written"
            )
        ]  # one file name, said once
        guard.say_lost()  # at the process's end
        assert said.getvalue().splitlines()[-1] == "wirescrapy: 6 log lines could not be written to /dev/full"
        # Not the file's fault (a log call with bad arguments): reported as Python does, not counted.
        first.emit(logging.LogRecord("x", logging.INFO, __file__, 1, "%d", ("not a number",), None))
        assert "--- Logging error ---" in capsys.readouterr().err
        assert stats.get_value("log/lines_lost") == 6
    finally:
        logger.handlers.clear()
        for handler in (first, later):
            logging.root.removeHandler(handler)
            with contextlib.suppress(OSError):  # its buffer cannot be flushed: /dev/full
                handler.close()


def test_a_callback_waits_one_turn_of_the_reactor_not_a_tenth_of_a_second():
    from twisted.internet.task import Clock

    clock = Clock()
    turn = next_turn(clock)
    assert not turn.called  # the reactor still reads and writes its sockets first
    clock.advance(0)
    assert turn.called


def test_the_scrapers_sleep_before_callbacks_is_replaced_once_for_the_process():
    from scrapy.core import scraper

    CallbackTurn.from_crawler(crawler())
    assert scraper._defer_sleep is next_turn
    assert install_callback_turn()  # again: nothing to do


def test_a_scrapy_whose_scraper_sleeps_otherwise_is_left_alone_and_said(monkeypatch, caplog):
    from scrapy.core import scraper

    def own_sleep():
        raise AssertionError("not called here")

    monkeypatch.setattr(scraper, "_defer_sleep", own_sleep)
    assert not install_callback_turn()
    assert scraper._defer_sleep is own_sleep
    assert "its delay before each callback is left as it is" in caplog.text
