import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.crawler import Crawler
from scrapy.exceptions import UsageError
from scrapy.settings import Settings

import settings.default as default_settings
from tests.data.empty_spider import EmptySpider
from wirescrapy.extensions import WireSettingsCheck

ROOT = Path(__file__).resolve().parent.parent


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
    run = subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", "tests/data/empty_spider.py",
         "-s", "WIRE_WAIT_NORMAL=soon"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )
    assert "invalid setting: WIRE_WAIT_NORMAL: expected float, got 'soon'" in run.stderr
    assert "Spider opened" not in run.stderr


def test_a_misspelled_setting_stops_the_crawl_naming_the_closest_one():
    with pytest.raises(UsageError, match=r"invalid setting: WIRE_BATCH_SIZ: no such setting \(did you mean WIRE_BATCH_SIZE\?\)"):
        WireSettingsCheck.from_crawler(crawler(WIRE_BATCH_SIZ=5))
