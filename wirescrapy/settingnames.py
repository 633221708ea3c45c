"""A misspelled WIRE setting: Scrapy takes any setting name, so ``-s WIRE_WAIT_NORML=1`` would be silently
ignored and the crawl would run with the default wait. Every ``WIRE_*`` name that is not a setting of
``wirescrapy.config`` is an error (``WireSettingsError``, one line with the closest known name): the run stops
before it starts, as for a bad value."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from wirescrapy.config import SETTINGS, WireSettingsError

KNOWN = frozenset(spec.name for spec in SETTINGS)


def unknown_settings(names: Iterable[str]) -> list[tuple[str, str | None]]:
    """Each ``WIRE_*`` name that is no setting, with the closest known one (``None`` if none is close)."""
    return [
        (name, next(iter(difflib.get_close_matches(name, KNOWN, n=1)), None))
        for name in sorted(set(names))
        if name.startswith("WIRE_") and name not in KNOWN
    ]


def check_setting_names(settings: Iterable[str]) -> None:
    """Raise ``WireSettingsError`` for the first ``WIRE_*`` name of ``settings`` that is no setting."""
    for name, closest in unknown_settings(settings):
        hint = f"did you mean {closest}?" if closest else "see docs/settings.md"
        raise WireSettingsError(f"{name}: no such setting ({hint})")
