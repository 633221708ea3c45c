"""A misspelled WIRE setting: Scrapy takes any setting name, so ``-s WIRE_BATCH_SIZ=5`` would be silently
ignored and the crawl would run with the default. Every ``WIRE_*`` name that is not a setting of
``wirescrapy.config`` is logged once, at WARNING, with the closest known name."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable

from wirescrapy.config import SETTINGS

logger = logging.getLogger(__name__)

KNOWN = frozenset(spec.name for spec in SETTINGS)
_warned: set[str] = set()  # once a process: a command and its crawl's settings check both look


def unknown_settings(names: Iterable[str]) -> list[tuple[str, str | None]]:
    """Each ``WIRE_*`` name that is no setting, with the closest known one (``None`` if none is close)."""
    return [(name, next(iter(difflib.get_close_matches(name, KNOWN, n=1)), None))
            for name in sorted(set(names)) if name.startswith("WIRE_") and name not in KNOWN]


def warn_unknown_settings(settings: Iterable[str]) -> None:
    for name, closest in unknown_settings(settings):
        if name in _warned:
            continue
        _warned.add(name)
        if closest:
            logger.warning("Unknown setting %(name)s ignored: did you mean %(closest)s?",
                           {"name": name, "closest": closest})
        else:
            logger.warning("Unknown setting %(name)s ignored: no WIRE setting has this name (see the README's "
                           "settings table)", {"name": name})
