"""WIRE's harvester: fetches a batch politely, one connection per site (thesis §7.2.2).

* :mod:`~wirescrapy.harvester.politeness` — the pure core: a queue per site, a heap of sites by next visit
  (no Scrapy, no Twisted, no clock: what this package exports);
* :mod:`~wirescrapy.harvester.scheduler` — that core as Scrapy's ``SCHEDULER``;
* :mod:`~wirescrapy.harvester.middlewares` — what may be fetched and how much of it (batch, blocked
  addresses, robots.txt, MIME types, max file size);
* :mod:`~wirescrapy.items` — a :class:`~wirescrapy.items.Fetch` per network access, for
  the gatherer's pipelines (``wirescrapy.gatherer.pipelines``);
* :mod:`~wirescrapy.harvester.session` — one run over a collection: the batch, what is done, robots.txt;
* :mod:`~wirescrapy.harvester.progress` — the progress line.

The spider that ties them together is :mod:`~wirescrapy.harvester.spider` (``scrapy crawl harvester``;
``spiders/harvester.py`` is where Scrapy finds it).
"""

from wirescrapy.harvester.politeness import Counts, DocTable, PolitenessQueue, Waits

__all__ = ["Counts", "DocTable", "PolitenessQueue", "Waits"]
