"""WIRE's manager: long-term scheduling (thesis §7.2.1, paper §2.1).

The entry point is ``manage(collection, config)`` (``run``): one manager run over a collection, which
reads its records and links, has ``plan`` choose the next batches, writes them and stores the scores.
``plan`` (``planning``) is the pure core, arrays in and batches out, which the benchmarks and the tests drive
directly. The rest are its parts: ``profit`` (filters, intrinsic quality, profit, the choice of a batch),
``ranking`` (PageRank, HITS, weighted link rank, site rank, OPIC), ``sites`` (each site's estimated pages and
share of the PageRank), ``freshness`` (Pr(fresh)) and ``batch`` (the batch directory a harvester reads).

This package only hands those names on, each imported on first use: a harvester that reads a batch and plans
none does not load the link analysis (scipy). Every module stays reachable as ``wirescrapy.manager.<module>``.
"""

from __future__ import annotations

_EXPORTS = {
    "ManagerReport": ".run",
    "Plan": ".planning",
    "batch_site_weights": ".planning",
    "crawl_start": ".planning",
    "fetch_order": ".planning",
    "manage": ".run",
    "pages_of_closed_sites": ".planning",
    "plan": ".planning",
    "read_batch": ".batch",
}

__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
