"""Scrapy extensions of wirescrapy."""

from __future__ import annotations

from scrapy.exceptions import UsageError

from wirescrapy.config import WireConfig, WireSettingsError
from wirescrapy.logfile import install_log_file_guard
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


class LogFileGuard:
    """The process's guard of a ``LOG_FILE`` that cannot be written (``wirescrapy.logfile``), installed for a
    crawl started without a wirescrapy command (a script's ``CrawlerProcess``), counting its lines lost
    in the crawl's stats (``log/lines_lost``)."""

    @classmethod
    def from_crawler(cls, crawler):
        guard = install_log_file_guard()
        guard.stats = crawler.stats
        return guard
