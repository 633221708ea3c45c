"""``scrapy crawl harvester``: WIRE's harvester, as Scrapy's spider loader and Scrapyd find it.

The spider is :class:`wirescrapy.harvester.spider.HarvesterSpider`; its module says what it does and which
arguments it takes. Scrapy lists only the spider classes defined in a module of ``SPIDER_MODULES`` (a class's
``__module__`` must be the module's), so the class is defined here, as a subclass, not imported.
"""

from wirescrapy.gatherer.workers import prestart
from wirescrapy.harvester import spider


class HarvesterSpider(spider.HarvesterSpider):
    """WIRE's harvester: a batch at a time, politely (:mod:`wirescrapy.harvester.spider`)."""

    def before_waiting(self) -> None:
        # The gatherer's parse workers start while the job waits for the collection, not in its first
        # batch (wirescrapy/harvester/startup.py): the harvester's layer does not reach the gatherer's, this
        # one does.
        if self.config.parse_workers:
            prestart(self.config, self.config.parse_workers)
        super().before_waiting()
