"""Reading a seeds file and adding its URLs to the collection (WIRE's seeder run with a start file).

The file has one URL a line, optionally followed by whitespace and a ``# comment``; blank lines and lines
starting with ``#`` are ignored. Seeds go through the same rules as links (``rules.py``, ``add.py``) at depth
0 and are flagged ``SEED``: a line that is not a URL, or a URL the rules would not fetch (another scheme, a
domain not accepted, a reject pattern, an ignored or multimedia extension), is reported with its line number
and skipped. The first seed of a new site also adds the site's home page (``WIRE_ADD_ROOT``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from wirescrapy.collection.metadata import DocFlag

from .add import AddReport, Outcome, add_decision
from .rules import Decision, Reason, SeederRules

logger = logging.getLogger(__name__)


@dataclass
class SeedReport:
    added: int = 0
    known: int = 0
    roots_added: int = 0
    over_limit: int = 0  # seeds of a site already holding WIRE_MAX_URLS_PER_SITE documents
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, message)


def read_seeds(
    lines, rules: SeederRules | None = None
) -> tuple[list[tuple[int, Decision]], list[tuple[int, str]]]:
    """The seeds to fetch with their line numbers, and the skipped lines with the reason."""
    rules = rules or SeederRules.default()
    good, bad = [], []
    for number, line in enumerate(lines, 1):
        words = line.lstrip("\ufeff").split()
        if not words or words[0].startswith("#"):
            continue
        decision = rules.classify(words[0])
        if decision.reason is Reason.BAD_URL:
            bad.append((number, decision.detail))
        elif decision.reason is not None:
            detail = f" ({decision.detail})" if decision.detail else ""
            bad.append((number, f"{decision.url[:200]}: {decision.reason.value}{detail}"))
        elif not decision.fetch:
            bad.append((number, f"{decision.url[:200]}: a multimedia file, logged but never fetched"))
        elif len(words) > 1 and not words[1].startswith("#"):
            bad.append((number, f"{line.strip()[:200]!r}: one URL a line (a comment starts with '#')"))
        else:
            good.append((number, decision))
    return good, bad


def seed(collection, lines, add_root: bool | None = None, rules: SeederRules | None = None) -> SeedReport:
    """Add the seeds in ``lines`` at depth 0 with the ``rules`` (WIRE's defaults if None); ``add_root``
    (by default the rules' ``WIRE_ADD_ROOT``) also adds each new site's home page."""
    rules = rules or SeederRules.default()
    report = SeedReport()
    good, report.bad = read_seeds(lines, rules)
    for number, message in report.bad:  # returned to the caller too, who shows them
        logger.info("seeds line %(line)d skipped: %(why)s", {"line": number, "why": message})
    roots = AddReport()
    for _, decision in good:
        _, outcome = add_decision(
            collection, rules, decision, flags=DocFlag.SEED, report=roots, add_root=add_root
        )
        report.added += outcome is Outcome.NEW
        report.known += outcome is Outcome.KNOWN
        report.over_limit += outcome is Outcome.OVER_LIMIT
    report.roots_added = roots.roots_added
    return report
