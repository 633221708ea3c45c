"""The WIRE configuration as Scrapy settings: names, defaults, validation, documentation.

WIRE reads an XML file through XPath names such as ``harvester/wait/normal`` (thesis §7.4, Table 7.1).
wirescrapy keeps each of those variables as a Scrapy setting named ``WIRE_…`` so it can be set in a settings
module, with ``-s`` on the command line, or per Scrapyd job. This package is the one place that knows them:

* ``table.SETTINGS`` lists every setting with its WIRE name, default, type and meaning; ``docs/settings.md``
  is generated from it (``python -m wirescrapy.config > docs/settings.md``) and a test keeps the two equal.
* ``WireConfig.from_settings`` reads and validates them once, at start, and hands typed attributes to the
  components. A wrong type or an impossible value raises ``WireSettingsError`` naming the setting.
* ``wirekeys.NOT_IMPLEMENTED`` lists the WIRE keys that have no setting here, and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import NamedTuple

from wirescrapy.config.page import settings_page, settings_table  # noqa: F401  (re-exported)
from wirescrapy.config.table import (  # noqa: F401  (re-exported: the package's public names)
    BLOCKED_NETWORKS,
    DAY,
    POLITENESS_GROUPS,
    SCORE_FUNCTIONS,
    SETTINGS,
    Setting,
    WireSettingsError,
    default_settings,
)
from wirescrapy.config.wirekeys import NOT_IMPLEMENTED  # noqa: F401  (re-exported)

_GETTERS = {
    "int": "getint",
    "float": "getfloat",
    "bool": "getbool",
    "str": "get",
    "list": "getlist",
    "dict": "getdict",
}


def _read(settings, spec: Setting):
    raw = settings.get(spec.name, spec.default)
    if raw is None:
        raise WireSettingsError(f"{spec.name}: must be set ({spec.doc})")
    if spec.kind in ("int", "float") and isinstance(raw, bool):
        raise WireSettingsError(f"{spec.name}: expected a number, got {raw!r}")
    try:
        value = getattr(settings, _GETTERS[spec.kind])(spec.name, spec.default)
    except (ValueError, TypeError) as exc:
        raise WireSettingsError(f"{spec.name}: expected {spec.kind}, got {raw!r} ({exc})") from None
    if spec.kind == "int" and isinstance(raw, float) and raw != int(raw):
        raise WireSettingsError(f"{spec.name}: expected an integer, got {raw!r}")
    if spec.minimum is not None and value < spec.minimum:
        raise WireSettingsError(f"{spec.name}: must be >= {spec.minimum}, got {value!r}")
    if spec.maximum is not None and value > spec.maximum:
        raise WireSettingsError(f"{spec.name}: must be <= {spec.maximum}, got {value!r}")
    if spec.kind == "list":
        value = tuple(str(v).strip() for v in value)
    if spec.kind == "dict":
        value = MappingProxyType(value)
    if spec.check is not None:
        problem = spec.check(value)
        if problem:
            raise WireSettingsError(f"{spec.name}: {problem}")
    return value


@dataclass(frozen=True)
class WireConfig:
    """Every WIRE_* setting, read and validated once: one field per entry of ``SETTINGS``, in its order, named
    by ``Setting.attribute`` (``wait_normal`` is ``WIRE_WAIT_NORMAL``) and typed by its kind; lists are tuples
    of str and dicts read-only mappings, so the components of a crawl can share one object."""

    collection_dir: str
    page_compression: int
    collection_wait: float
    max_sites: int
    max_urls_per_site: int
    accept_protocols: tuple[str, ...]
    accept_domain_suffixes: tuple[str, ...]
    extensions_static: tuple[str, ...]
    extensions_dynamic: tuple[str, ...]
    extensions_log: tuple[str, ...]
    extensions_ignore: tuple[str, ...]
    reject_patterns: tuple[str, ...]
    session_ids: tuple[str, ...]
    new_sites_per_page: int
    new_sites_per_site: int
    add_root: bool
    add_robots_rdf: bool
    max_depth_static: int
    max_depth_dynamic: int
    batch_size: int
    batch_samesite: int
    batch_site_growth: float
    batch_explore: float
    batch_count: int
    max_errors_same_batch: int
    max_errors_different_batch: int
    score_weights: Mapping[str, float]
    score_age_exponent: float
    score_boost_frontpage: float
    pagerank_damping: float
    pagerank_max_error: float
    hits_max_error: float
    siterank_max_error: float
    minperiod_unsuccessful: int
    minperiod_successful_not_ok: int
    minperiod_successful_ok: int
    robots_txt_valid_period: int
    robots_txt_invalid_period: int
    part_timeout: int
    wait_normal: float
    wait_large_site: float
    large_site_pages: int
    connections: int
    politeness_group: str
    max_sites_per_group: int
    max_retry_after: float
    max_backoff: float
    softmin: int
    softmin_time: float
    plan_ahead: bool
    connection_timeout: float
    max_file_size: int
    max_header_size: int
    max_headers: int
    accept_mime: tuple[str, ...]
    blocked_ips: tuple[str, ...]
    max_redirects: int
    sitemaps_per_site: int
    render_js: str
    render_subresources: int
    render_wait: float
    render_timeout: float
    render_frozen_after: float
    render_tries: int
    dns_hosts: Mapping[str, str]
    warc_dir: str
    warc_max_size: int
    max_stored_size: int
    link_attributes: tuple[str, ...]
    keep_tags: tuple[str, ...]
    keep_attributes: tuple[str, ...]
    discard_content: tuple[str, ...]
    default_charset: str
    obey_nofollow: bool
    follow_duplicate_links: bool
    parse_workers: int
    parse_timeout: float
    near_duplicates: bool
    near_duplicate_distance: int

    def __reduce__(self):
        # Pickled for a parse worker (gatherer/workers.py): its read-only mappings travel as dicts.
        values = {spec.name: getattr(self, spec.name) for spec in fields(self)}
        return _unpickled, (
            {name: dict(v) if isinstance(v, MappingProxyType) else v for name, v in values.items()},
        )

    @classmethod
    def from_settings(cls, settings) -> WireConfig:
        values = {spec.attribute: _read(settings, spec) for spec in SETTINGS}
        for small, large in (("wait_large_site", "wait_normal"), ("max_stored_size", "max_file_size")):
            if values[small] > values[large]:
                raise WireSettingsError(
                    f"WIRE_{small.upper()}: must not exceed WIRE_{large.upper()} "
                    f"({values[small]} > {values[large]})"
                )
        values["score_weights"] = MappingProxyType(
            {**dict.fromkeys(SCORE_FUNCTIONS, 0), **values["score_weights"]}
        )
        return cls(**values)

    @classmethod
    def from_crawler(cls, crawler) -> WireConfig:
        """The crawler's configuration, read once and shared by all its components (kept in the
        crawler). The spider and the extensions come before the crawler freezes its settings, which
        add-ons may still change: until then they are read again, and the object read before is returned
        while they still say the same."""
        shared = getattr(crawler, "_wire_config", None)
        if not isinstance(shared, _Shared) or not shared.final:
            config = cls.from_settings(crawler.settings)
            if isinstance(shared, _Shared) and shared.config == config:
                config = shared.config
            shared = crawler._wire_config = _Shared(config, crawler.settings.frozen)
        return shared.config


class _Shared(NamedTuple):  # a crawler's WireConfig, and whether its settings were frozen when it was read
    config: WireConfig
    final: bool


def _unpickled(values: dict) -> WireConfig:
    return WireConfig(
        **{name: MappingProxyType(v) if isinstance(v, dict) else v for name, v in values.items()}
    )
