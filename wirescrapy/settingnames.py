"""A misspelled WIRE setting: Scrapy takes any setting name, so ``-s WIRE_WAIT_NORML=1`` would be silently
ignored and the crawl would run with the default wait. Every ``WIRE_*`` name that is not a setting of
``wirescrapy.config`` is an error (``WireSettingsError``, one line with the closest known name): the run stops
before it starts, as for a bad value."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from wirescrapy.config import SETTINGS, WireSettingsError

KNOWN = frozenset(spec.name for spec in SETTINGS)
# Settings that shaped a batch before the planner (wirescrapy/manager/planner.py) replaced them; each name
# says what took its place, so a settings file written for an older version fails in one clear line.
REMOVED = {
    "WIRE_BATCH_SITE_SHARE": "every batch is shared among sites by their estimated value",
    "WIRE_BATCH_SITE_SPLIT": "every batch is shared among sites by their estimated share of the PageRank",
    "WIRE_BATCH_SITE_UNSEEN": "a site's unseen pages are those its known pages left can reveal",
    "WIRE_BATCH_SITE_CATCHUP": "every batch makes up for what earlier batches gave each site",
    "WIRE_BATCH_TIME_SHARE": "every site's part of a batch is what it can fetch in the batch's time",
    "WIRE_BATCH_TIME_LEAD": "the site that sets the politeness bound always leads",
}


def unknown_settings(names: Iterable[str]) -> list[tuple[str, str | None]]:
    """Each ``WIRE_*`` name that is no setting, with the closest known one (``None`` if none is close)."""
    return [
        (name, next(iter(difflib.get_close_matches(name, KNOWN, n=1)), None))
        for name in sorted(set(names))
        if name.startswith("WIRE_") and name not in KNOWN and name not in REMOVED
    ]


def check_setting_names(settings: Iterable[str]) -> None:
    """Raise ``WireSettingsError`` for the first ``WIRE_*`` name of ``settings`` that is no setting."""
    for name in sorted(set(settings) & REMOVED.keys()):
        raise WireSettingsError(f"{name}: removed, {REMOVED[name]} (docs/planner.md)")
    for name, closest in unknown_settings(settings):
        hint = f"did you mean {closest}?" if closest else "see docs/settings.md"
        raise WireSettingsError(f"{name}: no such setting ({hint})")
