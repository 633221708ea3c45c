"""The harvester's ``-a`` arguments (``scrapy crawl harvester -a NAME=VALUE``), checked together: by the spider
when it is built, and by ``scrapy crawl`` before Scrapy's start-up lines (``commands/crawl.py``), so that a
mistake is one line."""

from __future__ import annotations

from pathlib import Path


def check_arguments(batch: str | None = None, seeds: str | None = None, cycles: str | int = 1,
                    warc: str | None = None, **kwargs) -> int:
    """The number of cycles, once the arguments are found to fit together; a ValueError says what does not.
    Other arguments (``kwargs``) are Scrapy's to set on the spider."""
    try:
        count = int(cycles)
    except ValueError:
        raise ValueError(f"cycles must be a whole number, got {cycles!r}") from None
    if count < 1:
        raise ValueError(f"cycles must be >= 1, got {cycles!r}")
    if batch and seeds:
        raise ValueError("give a batch or seeds, not both: seeds go into the next batch the manager writes")
    if warc and (not batch or seeds or count != 1):
        raise ValueError("a detached harvest (-a warc=OUTDIR) needs a batch (-a batch=DIR), and takes no seeds "
                         "and one cycle: the collection plans and ingests")
    if seeds and not Path(seeds).is_file():
        raise ValueError(f"seeds file {seeds} does not exist")
    return count
