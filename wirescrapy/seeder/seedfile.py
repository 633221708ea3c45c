"""Reading a seeds file and adding its URLs to the collection (WIRE's seeder run with a start file)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag

from .canonical import BadURL, canonicalize

logger = logging.getLogger(__name__)


@dataclass
class SeedReport:
    added: int = 0
    known: int = 0
    roots_added: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, message)


def read_seeds(lines) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """Canonical seed URLs with their line numbers, and the bad lines with the reason."""
    good, bad = [], []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            url = canonicalize(text)
        except BadURL as exc:
            bad.append((number, str(exc)))
            continue
        if not url.startswith(("http://", "https://")):
            bad.append((number, f"{text!r}: only http and https URLs are crawled"))
            continue
        good.append((number, url))
    return good, bad


def seed(collection: Collection, lines, add_root: bool = True) -> SeedReport:
    """Add the seeds in ``lines`` at depth 0; with ``add_root`` each new site's home page too."""
    report = SeedReport()
    good, report.bad = read_seeds(lines)
    for number, message in report.bad:
        logger.warning("seeds line %(line)d skipped: %(why)s", {"line": number, "why": message})
    for _, url in good:
        _, new = collection.add_url(url, depth=0, flags=DocFlag.SEED)
        report.added += new
        report.known += not new
        if add_root:
            root = url.split("/", 3)
            root_url = "/".join(root[:3]) + "/"
            doc_id, new = collection.add_url(root_url, depth=0, flags=DocFlag.SEED | DocFlag.FRONT_PAGE)
            collection.documents.records[doc_id]["flags"] |= DocFlag.FRONT_PAGE
            report.roots_added += new
    return report
