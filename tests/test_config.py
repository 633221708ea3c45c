import dataclasses
import re
import typing
from collections.abc import Mapping, MutableMapping
from pathlib import Path

import pytest
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.settings import Settings

from wirescrapy.config import (
    SETTINGS,
    WireConfig,
    WireSettingsError,
    default_settings,
    settings_page,
)

# The type each kind of setting is read into, as ``WireConfig`` declares it.
KIND_TYPES = {"int": int, "float": float, "bool": bool, "str": str, "list": tuple, "dict": Mapping}


def config(**overrides):
    return WireConfig.from_settings(Settings(overrides))


def test_wire_defaults_of_table_7_1():
    c = config()
    assert c.wait_normal == 15 and c.wait_large_site == 5 and c.large_site_pages == 100
    assert c.max_urls_per_site == 25_000
    assert (c.max_depth_dynamic, c.max_depth_static) == (5, 15)
    assert (c.batch_size, c.batch_samesite) == (100_000, 500)
    assert (c.max_file_size, c.max_stored_size) == (400_000, 300_000)
    assert c.connections == 300 and c.connection_timeout == 30
    assert c.collection_dir == "./collection"
    assert "127.0.0.0/8" in c.blocked_ips and "10.0.0.0/8" in c.blocked_ips


def test_values_from_the_command_line_are_converted():
    c = config(
        WIRE_WAIT_NORMAL="7.5",
        WIRE_BATCH_SIZE="10",
        WIRE_ADD_ROOT="false",
        WIRE_ACCEPT_DOMAIN_SUFFIXES=".cl,.uchile.cl",
    )
    assert c.wait_normal == 7.5 and c.batch_size == 10 and c.add_root is False
    assert c.accept_domain_suffixes == (".cl", ".uchile.cl")


@pytest.mark.parametrize(
    "name, value",
    [
        ("WIRE_WAIT_NORMAL", "soon"),
        ("WIRE_WAIT_NORMAL", -1),
        ("WIRE_BATCH_SIZE", 0),
        ("WIRE_BATCH_SIZE", 2.5),
        ("WIRE_BATCH_SIZE", True),
        ("WIRE_ADD_ROOT", "perhaps"),
        ("WIRE_BLOCKED_IPS", ["300.1.1.1"]),
        ("WIRE_EXTENSIONS_DYNAMIC", ["php"]),
        ("WIRE_SCORE_WEIGHTS", {"pagerenk": 1}),
        ("WIRE_SCORE_WEIGHTS", {"pagerank": -1}),
        ("WIRE_DNS_HOSTS", {"wire.test": "localhost"}),
        ("WIRE_LINK_ATTRIBUTES", ["href"]),
        ("WIRE_PAGE_COMPRESSION", 30),
        ("WIRE_PAGERANK_DAMPING", 1.5),
        ("WIRE_RENDER_JS", "autoo"),  # a mode misspelled would be a host suffix that matches nothing
        ("WIRE_RENDER_JS", "on"),
        ("WIRE_RENDER_JS", "*.gov.cl"),
        ("WIRE_ACCEPT_DOMAIN_SUFFIXES", [".cl", "http://uchile.cl"]),
    ],
)
def test_bad_values_are_refused_naming_the_setting(name, value):
    with pytest.raises(WireSettingsError, match=name):
        config(**{name: value})


def test_render_js_takes_national_domains_close_to_its_mode_names():
    """Short country suffixes near ``auto`` and ``off`` (.au, .at, .to) are suffixes, not misspelled modes."""
    for value in ("au", ".at,to", "auto.cl", "auto", "OFF"):
        assert config(WIRE_RENDER_JS=value).render_js == value


def test_impossible_combinations_are_refused():
    with pytest.raises(WireSettingsError, match="WIRE_WAIT_LARGE_SITE"):
        config(WIRE_WAIT_NORMAL=1, WIRE_WAIT_LARGE_SITE=2)
    with pytest.raises(WireSettingsError, match="WIRE_MAX_STORED_SIZE"):
        config(WIRE_MAX_FILE_SIZE=1000, WIRE_MAX_STORED_SIZE=2000)


def test_every_setting_is_documented_and_named():
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    for spec in SETTINGS:
        assert spec.name.startswith("WIRE_") and spec.doc and spec.component
    assert set(default_settings()) == set(names)


def test_the_config_declares_one_typed_field_per_setting():
    assert [f.name for f in dataclasses.fields(WireConfig)] == [spec.attribute for spec in SETTINGS]
    hints = typing.get_type_hints(WireConfig)
    c = config()
    for spec in SETTINGS:
        declared, value = hints[spec.attribute], getattr(c, spec.attribute)
        assert (typing.get_origin(declared) or declared) is KIND_TYPES[spec.kind], spec.name
        if spec.kind == "list":
            assert type(value) is tuple and all(type(v) is str for v in value), spec.name
        elif spec.kind == "dict":
            assert isinstance(value, Mapping) and not isinstance(value, MutableMapping), spec.name
        else:
            assert type(value) is KIND_TYPES[spec.kind], spec.name


def test_the_config_is_read_only():
    c = config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.batch_size = 1
    with pytest.raises(TypeError):
        c.score_weights["pagerank"] = 0
    assert c == config() and c != config(WIRE_BATCH_SIZE=10)


def test_a_crawler_reads_its_config_once_and_shares_it(monkeypatch):
    crawler = Crawler(Spider, Settings({"WIRE_BATCH_SIZE": 10}))
    first = WireConfig.from_crawler(crawler)
    assert first.batch_size == 10 and WireConfig.from_crawler(crawler) is first
    # Before the crawler freezes its settings (the spider and the extensions are built then), an add-on may
    # still change them.
    crawler.settings.set("WIRE_BATCH_SIZE", 20)
    second = WireConfig.from_crawler(crawler)
    assert second.batch_size == 20
    crawler.settings.freeze()
    assert WireConfig.from_crawler(crawler) is second
    monkeypatch.setattr(WireConfig, "from_settings", classmethod(lambda cls, _: pytest.fail("read again")))
    assert WireConfig.from_crawler(crawler) is second
    monkeypatch.undo()
    assert WireConfig.from_crawler(Crawler(Spider, Settings({"WIRE_BATCH_SIZE": 20}))) is not second


def test_settings_page_matches_the_code():
    page = Path(__file__).parent.parent / "docs" / "settings.md"
    regenerate = "regenerate with: python -m wirescrapy.config > docs/settings.md"
    assert page.read_text() == settings_page(), regenerate


def test_settings_modules_use_the_defaults():
    from settings import default, test

    assert default.WIRE_WAIT_NORMAL == 15 and default.WIRE_CONNECTIONS == 300
    assert "127.0.0.0/8" not in test.WIRE_BLOCKED_IPS
    assert all(re.match(r"^[0-9a-f.:/]+$", net) for net in test.WIRE_BLOCKED_IPS)


def test_scrapy_settings_follow_the_wire_ones():
    from scrapy.settings import Settings

    from wirescrapy.addon import WireAddon

    settings = Settings(
        {"WIRE_CONNECTIONS": 42, "WIRE_CONNECTION_TIMEOUT": 7.5, "WIRE_MAX_ERRORS_SAME_BATCH": 3},
        priority="cmdline",
    )
    settings.set("DOWNLOAD_TIMEOUT", 99, priority="project")  # explicit: not overridden
    WireAddon().update_settings(settings)
    assert settings.getint("CONCURRENT_REQUESTS") == 42 and settings.getint("RETRY_TIMES") == 2
    assert settings.getfloat("DOWNLOAD_TIMEOUT") == 99
    settings = Settings({"WIRE_CONNECTIONS": "many"})
    WireAddon().update_settings(settings)  # left for WireSettingsCheck to report
    assert settings.getint("CONCURRENT_REQUESTS") == 16


def test_without_cookies_scrapy_s_cookies_middleware_is_not_even_loaded():
    from scrapy.settings import Settings
    from scrapy.utils.conf import build_component_list

    from wirescrapy.addon import COOKIES_MIDDLEWARE, WireAddon

    for enabled in (False, True):
        settings = Settings({"COOKIES_ENABLED": enabled})
        WireAddon().update_settings(settings)
        middlewares = build_component_list(settings.getwithbase("DOWNLOADER_MIDDLEWARES"))
        assert (COOKIES_MIDDLEWARE in middlewares) is enabled
