"""WIRE's manager: long-term scheduling (thesis §7.2.1, paper §2.1).

The entry point is ``manage(collection, config)`` (``run``): one manager run over a collection, which
reads its records and links, has ``plan`` choose the next batches, writes them and stores the scores.
``plan`` (``planning``) is the pure core, arrays in and batches out, which the benchmarks and the tests drive
directly. The rest are its parts: ``profit`` (filters, intrinsic quality, profit, the choice of a batch),
``ranking`` (PageRank, HITS, weighted link rank, site rank, OPIC), ``sites`` (each site's estimated pages and
share of the PageRank), ``freshness`` (Pr(fresh)) and ``batch`` (the batch directory a harvester reads).

This package only hands those names on; every module stays reachable as ``wirescrapy.manager.<module>``.
"""

from __future__ import annotations

from .batch import read_batch
from .planning import (
    Plan,
    batch_site_weights,
    crawl_start,
    fetch_order,
    pages_of_closed_sites,
    plan,
)
from .run import ManagerReport, manage

__all__ = [
    "ManagerReport",
    "Plan",
    "batch_site_weights",
    "crawl_start",
    "fetch_order",
    "manage",
    "pages_of_closed_sites",
    "plan",
    "read_batch",
]
