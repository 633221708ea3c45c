"""WIRE's harvester: fetches a batch politely, one connection per site (thesis §7.2.2).

A request goes one way through it — the scheduler, the downloader middlewares, the spider — and leaves as a
:class:`~wirescrapy.items.Fetch` for the gatherer's pipelines (``wirescrapy.gatherer.pipelines``):

* :mod:`~wirescrapy.harvester.politeness` — the pure core: a queue per site, a heap of sites by next visit
  (no Scrapy, no Twisted, no clock: what this package exports);
* :mod:`~wirescrapy.harvester.scheduler` — that core as Scrapy's ``SCHEDULER``;
* :mod:`~wirescrapy.harvester.middlewares` — what may be fetched and how much of it (batch, blocked
  addresses, robots.txt, MIME types, max file size);
* :mod:`~wirescrapy.harvester.spider` — the spider (``scrapy crawl harvester``; ``spiders/harvester.py`` is
  where Scrapy finds it): the cycle, the callbacks, redirects; and the collaborators it holds:
  :mod:`~wirescrapy.harvester.sitefiles` (robots.txt and sitemaps), :mod:`~wirescrapy.harvester.splash`
  (renders through Splash), :mod:`~wirescrapy.harvester.batchend` (softmin, the next batch planned ahead)
  and :mod:`~wirescrapy.harvester.summary` (the closing lines);
* :mod:`~wirescrapy.harvester.fetch` and :mod:`~wirescrapy.harvester.redirects` — its pure parts: a response
  or failure as a ``Fetch``, where a redirect leads;
* :mod:`~wirescrapy.harvester.meta` — the ``Request.meta`` keys they pass each other;
* :mod:`~wirescrapy.harvester.robots` — robots.txt's one owner: every site's rules, what is due, what a
  robots.txt fetch writes;
* :mod:`~wirescrapy.harvester.render` — which pages are rendered through Splash, and the request;
* :mod:`~wirescrapy.harvester.session` — one run over a collection: the batch, what is done in it; the
  spider announces it to the other components with the ``harvest_opened`` signal (``wirescrapy/signals.py``);
* :mod:`~wirescrapy.harvester.progress` and :mod:`~wirescrapy.harvester.largesites` — extensions: the
  progress line, the large-site wait given as soon as a site is found large.
"""

from wirescrapy.harvester.politeness import Counts, DocTable, PolitenessQueue, Waits

__all__ = ["Counts", "DocTable", "PolitenessQueue", "Waits"]
