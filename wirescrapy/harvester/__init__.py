"""WIRE's harvester: fetches a batch politely, one connection per site (thesis §7.2.2).

A request goes one way through it — the scheduler, the downloader middlewares, the spider — and leaves as a
:class:`~wirescrapy.items.Fetch` for the gatherer's pipelines (``wirescrapy.gatherer.pipelines``):

* :mod:`~wirescrapy.harvester.politeness` — the pure core: a queue per site, a heap of sites by next visit
  (no Scrapy, no Twisted, no clock: what this package exports);
* :mod:`~wirescrapy.harvester.scheduler` — that core as Scrapy's ``SCHEDULER``;
* :mod:`~wirescrapy.harvester.middlewares` — what may be fetched and how much of it (batch, blocked
  addresses, robots.txt, MIME types, max file size);
* :mod:`~wirescrapy.harvester.spider` — the spider (``scrapy crawl harvester``; ``spiders/harvester.py`` is
  where Scrapy finds it): the cycle, the callbacks, robots.txt, sitemap and redirect requests;
* :mod:`~wirescrapy.harvester.fetch` and :mod:`~wirescrapy.harvester.redirects` — its pure parts: a response
  or failure as a ``Fetch``, where a redirect leads;
* :mod:`~wirescrapy.harvester.meta` — the ``Request.meta`` keys they pass each other;
* :mod:`~wirescrapy.harvester.robots` — robots.txt's one owner: every site's rules, what is due, what a
  robots.txt fetch writes;
* :mod:`~wirescrapy.harvester.session` — one run over a collection: the batch, what is done in it;
* :mod:`~wirescrapy.harvester.progress` — the progress line.
"""

from wirescrapy.harvester.politeness import Counts, DocTable, PolitenessQueue, Waits

__all__ = ["Counts", "DocTable", "PolitenessQueue", "Waits"]
