from __future__ import annotations

import re

import pytest
from scrapy.settings import Settings

from wirescrapy.config import WireSettingsError
from wirescrapy.settingnames import KNOWN, REMOVED, check_setting_names, unknown_settings


def test_a_misspelled_setting_gets_the_closest_name():
    assert unknown_settings(["WIRE_BATCH_SIZ", "WIRE_BATCH_SIZE", "LOG_LEVEL", "WIRE_QQQQQQ"]) == [
        ("WIRE_BATCH_SIZ", "WIRE_BATCH_SIZE"),
        ("WIRE_QQQQQQ", None),
    ]


def test_an_unknown_wire_setting_is_an_error_naming_the_closest_one():
    with pytest.raises(
        WireSettingsError, match=r"^WIRE_WAIT_NORMALL: no such setting \(did you mean WIRE_WAIT_NORMAL\?\)$"
    ):
        check_setting_names(Settings({"WIRE_WAIT_NORMALL": 2, "WIRE_WAIT_NORMAL": 2}))
    with pytest.raises(WireSettingsError, match=r"^WIRE_QQQQQQ: no such setting \(see docs/settings\.md\)$"):
        check_setting_names(Settings({"WIRE_QQQQQQ": 1}))
    check_setting_names(Settings({"WIRE_WAIT_NORMAL": 2, "LOG_LEVEL": "INFO", "SOME_OTHER_SETTING": 1}))


def test_a_removed_setting_is_an_error_saying_what_took_its_place():
    # The batch settings the planner replaced (wirescrapy/manager/planner.py).
    assert set(REMOVED) == {
        "WIRE_BATCH_SITE_SHARE",
        "WIRE_BATCH_SITE_SPLIT",
        "WIRE_BATCH_SITE_UNSEEN",
        "WIRE_BATCH_SITE_CATCHUP",
        "WIRE_BATCH_TIME_SHARE",
        "WIRE_BATCH_TIME_LEAD",
    }
    assert not KNOWN & REMOVED.keys()
    for name, instead in REMOVED.items():
        message = rf"^{name}: removed, {re.escape(instead)} \(docs/planner\.md\)$"
        with pytest.raises(WireSettingsError, match=message):
            check_setting_names(Settings({"WIRE_WAIT_NORMAL": 2, name: "even"}))
    assert unknown_settings(REMOVED) == []  # not taken for a misspelling of a setting that is
