"""The next batch planned while one finishes (``WIRE_PLAN_AHEAD``, ``harvester/batchend.py``), through the
harvester's spider, scheduler and pipelines over a collection: a plan made ahead that left out a page which
was then not fetched is not written; the manager plans the next batch again, with that page in it. And
softmin's weighing of a batch that does not say what its sites left for later batches (written before it was
recorded)."""

from __future__ import annotations

import dataclasses
import json
import logging

import pytest
from scrapy import signals
from xxhash import xxh3_64_hexdigest

from tests import test_spider
from tests.test_spider import answer, read
from wirescrapy.gatherer.pipelines.document import DocumentPipeline
from wirescrapy.gatherer.pipelines.metadata import MetadataPipeline
from wirescrapy.harvester.batchend import critical_idle
from wirescrapy.harvester.scheduler import WireScheduler
from wirescrapy.manager.batch import read_batch

SITE = "http://a.cl"


def spider_over(tmp_path, **settings):
    """A harvester's spider over a collection in ``tmp_path``, the engine's part and the pipelines that record
    a fetch."""
    spider, _, engine = test_spider.spider_over(tmp_path, **settings)
    pipelines = [DocumentPipeline.from_crawler(spider.crawler), MetadataPipeline.from_crawler(spider.crawler)]
    spider.crawler.signals.send_catch_log(signals.spider_opened, spider=spider)  # harvest_opened follows
    return spider, engine, pipelines


@pytest.fixture
def crawl(tmp_path):
    """A spider that plans ahead, over a collection of one site's five pages in batches of three;
    waits of 0."""
    spider, engine, pipelines = spider_over(
        tmp_path, WIRE_WAIT_NORMAL=0, WIRE_WAIT_LARGE_SITE=0, WIRE_PLAN_AHEAD=True, WIRE_BATCH_SIZE=3
    )
    spider.harvest.seed([f"{SITE}/{n}.html" for n in range(5)])
    yield spider, engine, pipelines
    spider.batch_end.stop()
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
    # Its pages need no time (waits of 0): the next batch is planned now, leaving out the three not fetched
    # yet.
    spider.batch_end.look()
    end = spider.batch_end
    assert end._ahead is not None and end._left_out == {harvest.collection.lookup(url) for url in first}
    end._ahead.result()
    fetched(spider, engine, pipelines, page)
    # The batch ends with its other two pages not fetched (as softmin leaves them, or a harvest stopped).
    with caplog.at_level(logging.INFO, logger="wirescrapy.harvester.batchend"):
        path = spider.batch_end.next_batch()
    assert "2 pages left out of the batch planned ahead were not fetched: planning it again" in caplog.text
    assert not spider.crawler.stats.get_value("harvester/planned_ahead")
    second = {url.url for url in read_batch(path).urls}
    assert first - {page.url} <= second and page.url not in second
    assert not read_batch(path).info.get("planned_ahead")


def written_before_left(path) -> None:
    """Make the batch at ``path`` as a manager wrote it before its sites' pages left were recorded: no "left"
    in sites.jsonl, whose checksum batch.json holds."""
    sites = "".join(
        json.dumps({k: v for k, v in json.loads(line).items() if k != "left"}) + "\n"
        for line in (path / "sites.jsonl").read_text().splitlines()
    ).encode()
    (path / "sites.jsonl").write_bytes(sites)
    info = json.loads((path / "batch.json").read_text())
    info["files"]["sites.jsonl"] = {"bytes": len(sites), "xxh3_64": xxh3_64_hexdigest(sites)}
    (path / "batch.json").write_text(json.dumps(info))


def test_softmin_may_end_early_a_batch_resumed_that_does_not_say_what_its_sites_left(tmp_path):
    """A batch written before ``left`` (pages the manager left for later batches) was recorded, resumed by a
    harvester's only cycle: its stragglers are weighed by their longest queue, as it does not say that nothing
    is left (0s would: softmin would never end it early)."""
    spider, _, _ = spider_over(tmp_path, WIRE_WAIT_NORMAL=2.0, WIRE_WAIT_LARGE_SITE=2.0, WIRE_SOFTMIN=2)
    try:
        spider.harvest.seed([*(f"{SITE}/{n}.html" for n in range(4)), "http://b.cl/"])
        path = spider.harvest.plan_next()
        written_before_left(path)
        spider.batch, spider.done = spider.harvest.open_batch(path)
        spider._begin()
        queue = WireScheduler.of(spider.crawler).queue
        now = WireScheduler.of(spider.crawler).clock()
        # a.cl's five pages queued (four waits), b.cl's one: what ending the batch now gains is a.cl's queue.
        gain = spider.batch_end._softmin_gain(queue, now)
        assert gain == pytest.approx(max(queue.site_times(now).values())) and gain >= 4 * 2.0
    finally:
        spider.batch_end.stop()
        spider.harvest.close()


def test_softmin_weighs_a_batch_the_slowest_site_led_by_that_site_s_idle_time_in_every_cycle(tmp_path):
    """A batch whose time the slowest site's share set (the planner's lead: batch.json's "time_led") lets
    the sites with slack end before that site on purpose: in a harvester's earlier cycle too, ending it gains
    only what the stragglers keep the slowest site idle — nothing when the straggler is that site — where
    another batch gains the longest queue's time."""
    spider, _, _ = spider_over(tmp_path, WIRE_WAIT_NORMAL=2.0, WIRE_WAIT_LARGE_SITE=2.0, WIRE_SOFTMIN=2)
    try:
        spider.cycles, spider.cycles_done = 5, 0  # the first of five cycles
        spider.harvest.seed([*(f"{SITE}/{n}.html" for n in range(4)), "http://b.cl/"])
        spider.batch, spider.done = spider.harvest.open_batch(spider.harvest.plan_next())
        spider._begin()
        queue = WireScheduler.of(spider.crawler).queue
        now = WireScheduler.of(spider.crawler).clock()
        later = {site: left * queue.wait_of(site) for site, left in spider.batch_end._later.items()}
        longest = max(queue.site_times(now).values())
        assert (
            4 * 2.0 <= longest
        )  # a.cl's five pages queued (four waits): the slowest site, its own straggler
        spider.batch.info["time_led"] = False
        assert spider.batch_end._softmin_gain(queue, now) == pytest.approx(longest)
        spider.batch.info["time_led"] = True
        gain = spider.batch_end._softmin_gain(queue, now)
        assert gain == pytest.approx(critical_idle(queue.site_times(now), later))
        assert spider.batch_end._softmin_gain(queue, now) <= 0
        # The sites the batch planned to end together (sites.jsonl's "critical") are read when it is queued.
        assert spider.batch_end._together == frozenset()
        spider.batch.sites = {
            key: dataclasses.replace(site, critical=True) for key, site in spider.batch.sites.items()
        }
        spider.batch_end.watch(spider.batch, last_cycle=False)
        assert spider.batch_end._together == frozenset(queue.site_times(now)) == {SITE, "http://b.cl"}
    finally:
        spider.batch_end.stop()
        spider.harvest.close()
