"""WIRE's harvester: fetches a batch politely, one connection per site (thesis §7.2.2).

:mod:`~wirescrapy.harvester.politeness` is the pure core (a queue per site, a heap of sites by next visit);
:mod:`~wirescrapy.harvester.scheduler` wraps it as Scrapy's ``SCHEDULER``. The package imports neither
Scrapy nor Twisted, so the core can be used and tested alone.
"""

from wirescrapy.harvester.politeness import Counts, DocTable, PolitenessQueue, Waits, site_key

__all__ = ["Counts", "DocTable", "PolitenessQueue", "Waits", "site_key"]
