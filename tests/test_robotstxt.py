"""The harvest's robots.txt owner (wirescrapy.harvester.robots), without a reactor: a collection on disk,
fetches built by hand, and the gatherer's pipelines writing what the owner returns."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from scrapy.settings import BaseSettings, Settings
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.misc import load_object

import settings.default as default_settings
from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag, RobotsState
from wirescrapy.config import WireConfig
from wirescrapy.harvester.robots import (
    RobotsRecord,
    RobotsTxt,
    Verdict,
    fetch_origin,
    origin_of,
)
from wirescrapy.harvester.session import Harvest
from wirescrapy.items import Fetch, FetchError, Kind
from wirescrapy.manager.batch import BatchSite

SITE = "http://a.cl"
RULES = b"User-agent: *\nDisallow: /private\nCrawl-delay: 2\n"
USER_AGENT = "wirescrapy/0.1"
CONFIG = WireConfig.from_settings(BaseSettings())
DAY = 86400.0


@pytest.fixture
def harvest(tmp_path):
    harvest = Harvest(CONFIG, Collection(tmp_path / "collection"), USER_AGENT)
    yield harvest
    harvest.close()


def robots_fetch(
    status: int,
    body: bytes = b"",
    ended: float = 1000.0,
    url: str = SITE + "/robots.txt",
    error: FetchError | None = None,
) -> Fetch:
    return Fetch(
        Kind.ROBOTS,
        url,
        0,
        0,
        0,
        started=ended - 1,
        ended=ended,
        status=status,
        body=body,
        error=error,
        origin=SITE,
    )


def gather(harvest: Harvest, fetch: Fetch) -> Fetch:
    """``fetch`` through the gatherer's pipelines, in their order (the WARC pipeline before them writes only
    when the harvest archives)."""
    crawler = SimpleNamespace(settings=Settings())
    crawler.stats = MemoryStatsCollector(crawler)
    for path in sorted(default_settings.ITEM_PIPELINES, key=default_settings.ITEM_PIPELINES.get):
        if path.startswith("wirescrapy.gatherer."):
            load_object(path)(crawler).process(fetch, harvest)
    return fetch


def site_record(harvest: Harvest):
    return harvest.collection.sites.records[harvest.collection.urls.site_id(SITE)]


def test_the_site_of_a_url_and_of_a_fetch():
    assert origin_of("http://a.cl:81/x?y") == "http://a.cl:81" and origin_of("not a URL") == ""
    assert fetch_origin(robots_fetch(200, url="http://b.cl/moved.txt")) == SITE  # a redirect led elsewhere
    assert fetch_origin(Fetch(Kind.PAGE, "http://b.cl/x", 1, 1, 0, 0.0, 0.0)) == "http://b.cl"


def test_a_site_never_fetched_is_unknown_due_and_requested_once_a_batch(harvest):
    robots = harvest.robots
    assert robots.verdict(SITE + "/page") is Verdict.UNKNOWN
    assert robots.request_due(SITE, 1000.0) and not robots.request_due(SITE, 1000.0)
    robots.new_batch()
    assert robots.request_due(SITE, 1000.0)


def test_a_response_settles_the_site_and_the_rules_answer(harvest):
    robots = harvest.robots
    assert robots.request_due(SITE, 1000.0)
    policy = robots.fetched(robots_fetch(200, RULES))
    assert policy.state is RobotsState.VALID and policy.crawl_delay == 2.0
    assert robots.verdict(SITE + "/page") is Verdict.ALLOWED
    assert robots.verdict(SITE + "/private/x") is Verdict.DISALLOWED
    assert not robots.request_due(SITE, 1000.0 + DAY)  # valid for WIRE_ROBOTS_TXT_VALID_PERIOD
    assert robots.request_due(SITE, 1000.0 + CONFIG.robots_txt_valid_period)


@pytest.mark.parametrize(
    "status, state, verdict",
    [
        (404, RobotsState.MISSING, Verdict.ALLOWED),
        (301, RobotsState.MISSING, Verdict.ALLOWED),  # a redirect not followed
        (503, RobotsState.UNREACHABLE, Verdict.UNREACHABLE),
    ],
)
def test_what_other_answers_leave(harvest, status, state, verdict):
    robots = harvest.robots
    assert robots.fetched(robots_fetch(status, b"User-agent: *\nDisallow: /\n")).state is state
    assert robots.verdict(SITE + "/private/x") is verdict


def test_a_failure_leaves_the_site_unreachable_until_the_retry(harvest):
    robots = harvest.robots
    assert robots.request_due(SITE, 1000.0)
    assert robots.failed(robots_fetch(0, error=FetchError.DNS)).state is RobotsState.UNREACHABLE
    assert robots.verdict(SITE + "/page") is Verdict.UNREACHABLE
    assert not robots.request_due(SITE, 1000.0 + CONFIG.robots_txt_invalid_period - 1)
    assert robots.request_due(SITE, 1000.0 + CONFIG.robots_txt_invalid_period)


def test_what_a_fetch_writes_is_the_owner_s_record(harvest):
    robots = harvest.robots
    fetch = robots_fetch(200, RULES)
    robots.fetched(fetch)
    assert robots.record(fetch) == RobotsRecord(SITE + "/robots.txt", RULES, RobotsState.VALID, 1000.0, 2.0)
    missing = robots_fetch(404, b"not here", ended=2000.0)
    robots.fetched(missing)
    record = robots.record(missing)
    assert record == RobotsRecord(SITE + "/robots.txt", None, RobotsState.MISSING, 2000.0, 0.0)
    assert record.site_fields(9) == {
        "robots_state": int(RobotsState.MISSING),
        "robots_fetched": 2000.0,
        "robots_docid": 9,
        "crawl_delay": 0.0,
    }


def test_the_rules_written_are_the_rules_a_later_harvest_loads(harvest, tmp_path):
    fetch = robots_fetch(200, RULES)
    harvest.robots.fetched(fetch)
    gather(harvest, fetch)
    site = site_record(harvest)
    assert RobotsState(int(site["robots_state"])) is RobotsState.VALID and site["crawl_delay"] == 2.0
    assert harvest.collection.load_page(int(site["robots_docid"])) == RULES
    harvest.collection.checkpoint()
    later = RobotsTxt(CONFIG, USER_AGENT, harvest.collection)
    assert (
        later.verdict(SITE + "/private/x") is Verdict.DISALLOWED and later.policy(SITE).fetched_at == 1000.0
    )
    newer = BatchSite(1, SITE, robots_state=RobotsState.MISSING, robots_fetched=5000.0)
    assert RobotsTxt(CONFIG, USER_AGENT, harvest.collection).policy(SITE, newer).state is RobotsState.MISSING


def test_changed_rules_let_the_pages_they_refused_be_fetched_again(harvest):
    collection = harvest.collection
    first = robots_fetch(200, RULES)
    harvest.robots.fetched(first)
    gather(harvest, first)
    refused, _ = collection.add_url(SITE + "/private/x", flags=DocFlag.ROBOTS_DISALLOWED)
    same = robots_fetch(200, RULES, ended=2000.0)
    harvest.robots.fetched(same)
    gather(harvest, same)
    assert collection.documents.records[refused]["flags"] & DocFlag.ROBOTS_DISALLOWED  # the same rules
    gone = robots_fetch(404, ended=3000.0)
    harvest.robots.fetched(gone)
    gather(harvest, gone)
    assert not collection.documents.records[refused]["flags"] & DocFlag.ROBOTS_DISALLOWED


@pytest.mark.parametrize("status", [200, 203, 206])
def test_a_2xx_robots_txt_is_stored_and_obeyed_like_a_200(harvest, status):
    fetch = robots_fetch(status, RULES)
    assert harvest.robots.fetched(fetch).state is RobotsState.VALID
    assert harvest.robots.verdict(SITE + "/private/x") is Verdict.DISALLOWED  # in this harvest
    assert harvest.robots.record(fetch).body == RULES
    gather(harvest, fetch)
    assert harvest.collection.load_page(int(site_record(harvest)["robots_docid"])) == RULES
    later = RobotsTxt(CONFIG, USER_AGENT, harvest.collection)  # the next harvest, or a restart
    assert later.verdict(SITE + "/private/x") is Verdict.DISALLOWED
    assert later.verdict(SITE + "/page") is Verdict.ALLOWED and later.policy(SITE).crawl_delay == 2.0


def test_a_site_stays_held_while_its_robots_txt_chain_is_on_another_site():
    assert RobotsTxt.keeps_hold(SITE, "http://b.cl/rules.txt")
    assert RobotsTxt.keeps_hold(SITE, "https://a.cl/robots.txt")  # another scheme is another site
    assert not RobotsTxt.keeps_hold(SITE, SITE + "/robots-new.txt")  # the hop holds the site in turn
