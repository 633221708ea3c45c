"""The harvester's ``-a`` arguments (``scrapy crawl harvester -a NAME=VALUE``), checked together: by the
spider when it is built, and by ``scrapy crawl`` before Scrapy's start-up lines (``commands/crawl.py``), so
that a mistake is one line.

A name the harvester does not take is refused with the closest one it does, as a misspelled ``WIRE_*`` setting
is (``settingnames.py``): Scrapy would set it on the spider, where nothing reads it, and the crawl would run
as if it had not been given. Names with a leading underscore are Scrapyd's own (``_job``, ``_version``), which
it passes to every job.
"""

from __future__ import annotations

import difflib
from pathlib import Path

ARGUMENTS = ("batch", "cycles", "seeds", "warc")


def check_arguments(
    batch: str | None = None,
    seeds: str | None = None,
    cycles: str | int = 1,
    warc: str | None = None,
    **kwargs,
) -> int:
    """The number of cycles, once the arguments are found to fit together; a ValueError says what does not."""
    for name in sorted(kwargs):
        if not name.startswith("_"):
            close = difflib.get_close_matches(name, ARGUMENTS, n=1)
            hint = f"did you mean {close[0]}?" if close else f"its arguments: {', '.join(ARGUMENTS)}"
            raise ValueError(f"-a {name}: no such argument ({hint})")
    try:
        count = int(cycles)
    except ValueError:
        raise ValueError(f"cycles must be a whole number, got {cycles!r}") from None
    if count < 1:
        raise ValueError(f"cycles must be >= 1, got {cycles!r}")
    if batch and seeds:
        raise ValueError("give a batch or seeds, not both: seeds go into the next batch the manager writes")
    if warc and (not batch or seeds or count != 1):
        raise ValueError(
            "a detached harvest (-a warc=OUTDIR) needs a batch (-a batch=DIR), and takes no seeds "
            "and one cycle: the collection plans and ingests"
        )
    if seeds and not Path(seeds).is_file():
        raise ValueError(f"seeds file {seeds} does not exist")
    return count
