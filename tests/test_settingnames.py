from __future__ import annotations

import logging

from scrapy.settings import Settings

from wirescrapy import settingnames
from wirescrapy.settingnames import unknown_settings, warn_unknown_settings


def test_a_misspelled_setting_gets_the_closest_name():
    assert unknown_settings(["WIRE_BATCH_SIZ", "WIRE_BATCH_SIZE", "LOG_LEVEL", "WIRE_QQQQQQ"]) == [
        ("WIRE_BATCH_SIZ", "WIRE_BATCH_SIZE"), ("WIRE_QQQQQQ", None)]


def test_each_unknown_setting_is_warned_of_once(caplog, monkeypatch):
    monkeypatch.setattr(settingnames, "_warned", set())
    settings = Settings({"WIRE_WAIT_NORMALL": 2, "WIRE_WAIT_NORMAL": 2})
    with caplog.at_level(logging.WARNING):
        warn_unknown_settings(settings)
        warn_unknown_settings(settings)
    assert [r.getMessage() for r in caplog.records] == [
        "Unknown setting WIRE_WAIT_NORMALL ignored: did you mean WIRE_WAIT_NORMAL?"]
