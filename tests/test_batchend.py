"""The next batch planned while one finishes (``WIRE_PLAN_AHEAD``, ``harvester/batchend.py``), through the
harvester's spider, scheduler and pipelines over a collection: a plan made ahead that left out a page which was
then not fetched is not written; the manager plans the next batch again, with that page in it."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
from scrapy.dupefilters import RFPDupeFilter
from scrapy.settings import Settings
from scrapy.signalmanager import SignalManager
from scrapy.statscollectors import MemoryStatsCollector

from tests.test_spider import Engine, answer, read
from wirescrapy.gatherer.pipelines.document import DocumentPipeline
from wirescrapy.gatherer.pipelines.metadata import MetadataPipeline
from wirescrapy.harvester.scheduler import WireScheduler
from wirescrapy.harvester.spider import HarvesterSpider
from wirescrapy.manager.batch import read_batch

SITE = "http://a.cl"


@pytest.fixture
def crawl(tmp_path):
    """A spider that plans ahead, over a collection of one site's five pages in batches of three; waits of 0."""
    settings = Settings({"SCHEDULER": "wirescrapy.harvester.scheduler.WireScheduler", "USER_AGENT": "wirescrapy",
                         "WIRE_COLLECTION_DIR": str(tmp_path / "collection"), "WIRE_WAIT_NORMAL": 0,
                         "WIRE_WAIT_LARGE_SITE": 0, "LOGSTATS_INTERVAL": 0, "WIRE_PLAN_AHEAD": True,
                         "WIRE_BATCH_SIZE": 3})
    crawler = SimpleNamespace(settings=settings, signals=SignalManager())
    crawler.stats = MemoryStatsCollector(crawler)
    crawler.engine = engine = Engine(crawler)
    spider = HarvesterSpider.from_crawler(crawler)
    scheduler = engine._slot.scheduler = WireScheduler(crawler, RFPDupeFilter())
    scheduler.open(spider)
    pipelines = [DocumentPipeline.from_crawler(crawler), MetadataPipeline.from_crawler(crawler)]
    spider.harvest.seed([f"{SITE}/{n}.html" for n in range(5)])
    yield spider, engine, pipelines
    spider._stop_watching()
    spider.harvest.close()


def fetched(spider, engine, pipelines, request, status: int = 200, body: bytes = b"<html></html>") -> None:
    engine.downloaded(request)
    fetch, _ = read(spider, answer(request, status, body))
    for pipeline in pipelines:
        fetch = pipeline.process_item(fetch, spider)


def test_a_page_left_out_of_the_plan_ahead_and_not_fetched_is_planned_again(crawl, caplog):
    spider, engine, pipelines = crawl
    harvest = spider.harvest
    spider.batch, spider.done = harvest.open_batch(harvest.plan_next())
    first = {url.url for url in spider.batch.urls}
    assert len(first) == 3
    spider._begin()
    fetched(spider, engine, pipelines, engine.take(), 404, b"")  # robots.txt: none
    page = engine.take()
    assert page.url in first
    # Its pages need no time (waits of 0): the next batch is planned now, leaving out the three not fetched yet.
    spider._look()
    assert spider._ahead is not None and spider._left_out == {harvest.collection.lookup(url) for url in first}
    spider._ahead.result()
    fetched(spider, engine, pipelines, page)
    # The batch ends with its other two pages not fetched (as softmin leaves them, or a harvest stopped).
    with caplog.at_level(logging.INFO, logger="wirescrapy.harvester.batchend"):
        path = spider._planned_next()
    assert "2 pages left out of the batch planned ahead were not fetched: planning it again" in caplog.text
    assert not spider.crawler.stats.get_value("harvester/planned_ahead")
    second = {url.url for url in read_batch(path).urls}
    assert first - {page.url} <= second and page.url not in second
    assert not read_batch(path).info.get("planned_ahead")
