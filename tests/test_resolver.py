"""The WIRE_DNS_HOSTS resolver: the mapping, and a real Scrapy crawl through it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from scrapy.resolver import CachingThreadedResolver
from scrapy.settings import Settings
from twisted.internet import defer

from wirescrapy.resolver import MappedResolver, parse_hosts
from wirescrapy.url import mapped_address as lookup


class FakeCrawler:
    """What Scrapy hands a resolver: CrawlerProcess, of which only settings are used."""

    def __init__(self, **settings):
        self.settings = Settings(settings)


def result_of(deferred: defer.Deferred):
    results = []
    deferred.addBoth(results.append)
    assert results, "the deferred should have fired already"
    return results[0]


def test_lookup_matches_domain_and_subdomains():
    hosts = parse_hosts({"wire.test": "127.0.0.1", "deep.wire.test": "127.0.0.2", "Other.Test.": "127.0.0.3"})
    assert lookup(hosts, "wire.test") == "127.0.0.1"
    assert lookup(hosts, "site0.wire.test") == "127.0.0.1"
    assert lookup(hosts, "SITE0.Wire.Test.") == "127.0.0.1"
    assert lookup(hosts, "a.deep.wire.test") == "127.0.0.2"
    assert lookup(hosts, "other.test") == "127.0.0.3"
    assert lookup(hosts, "notwire.test") is None
    assert lookup(hosts, "wire.test.example.com") is None
    assert lookup(hosts, "test") is None


@pytest.mark.parametrize(
    "value",
    [
        ["wire.test", "127.0.0.1"],
        {"wire.test": "localhost"},
        {"wire.test": "::1"},
        {"wire.test": "999.0.0.1"},
        {"wire.test": 127},
        {1: "127.0.0.1"},
        {"": "127.0.0.1"},
        {"wire..test": "127.0.0.1"},
    ],
)
def test_invalid_mapping_is_refused(value):
    with pytest.raises(ValueError, match="WIRE_DNS_HOSTS"):
        parse_hosts(value)


def test_from_crawler_validates_the_setting():
    with pytest.raises(ValueError, match="WIRE_DNS_HOSTS"):
        MappedResolver.from_crawler(FakeCrawler(WIRE_DNS_HOSTS={"wire.test": "nowhere"}), reactor=object())
    with pytest.raises(ValueError, match="WIRE_DNS_HOSTS"):
        MappedResolver.from_crawler(FakeCrawler(WIRE_DNS_HOSTS="not json"), reactor=object())
    # The JSON form, as "-s WIRE_DNS_HOSTS=..." gives it.
    as_json = FakeCrawler(WIRE_DNS_HOSTS='{"wire.test": "127.0.0.1"}')
    resolver = MappedResolver.from_crawler(as_json, reactor=object())
    assert resolver.hosts == {"wire.test": "127.0.0.1"}
    assert MappedResolver.from_crawler(FakeCrawler(), reactor=object()).hosts == {}


def test_mapped_names_skip_dns_and_others_are_delegated(monkeypatch):
    delegated = []

    def default_lookup(self, name, timeout=()):
        delegated.append(name)
        return defer.succeed("192.0.2.1")

    monkeypatch.setattr(CachingThreadedResolver, "getHostByName", default_lookup)
    crawler = FakeCrawler(WIRE_DNS_HOSTS={"wire.test": "127.0.0.1"})
    resolver = MappedResolver.from_crawler(crawler, reactor=object())
    assert result_of(resolver.getHostByName("site3.wire.test")) == "127.0.0.1"
    assert delegated == []
    assert result_of(resolver.getHostByName("example.org")) == "192.0.2.1"
    assert delegated == ["example.org"]


# -- a real crawl --------------------------------------------------------------

CRAWL_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import scrapy
    from scrapy.crawler import CrawlerProcess

    port, output = sys.argv[1], sys.argv[2]
    results = []

    class Probe(scrapy.Spider):
        name = "probe"

        async def start(self):
            for url in (
                f"http://site0.wire.test:{port}/",            # mapped by WIRE_DNS_HOSTS
                f"http://www.elsewhere.test:{port}/page/1.html",  # mapped, a subdomain
                f"http://localhost:{port}/",                   # delegated to the default resolver
            ):
                yield scrapy.Request(url, callback=self.parse, errback=self.failed, dont_filter=True)

        def parse(self, response):
            from twisted.internet import reactor
            results.append({
                "url": response.url,
                "status": response.status,
                "title": response.css("title::text").get(),
                "reactor": type(reactor).__name__,
                "resolver": type(reactor.resolver).__name__,
            })

        def failed(self, failure):
            results.append({"url": failure.request.url, "error": repr(failure.value)})

    process = CrawlerProcess({
        "DNS_RESOLVER": "wirescrapy.resolver.MappedResolver",
        "WIRE_DNS_HOSTS": {"wire.test": "127.0.0.1", "elsewhere.test": "127.0.0.1"},
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "ROBOTSTXT_OBEY": False,
        "RETRY_ENABLED": False,
        "HTTPERROR_ALLOW_ALL": True,
        "DOWNLOAD_TIMEOUT": 10,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
    })
    process.crawl(Probe)
    process.start()
    with open(output, "w") as out:
        json.dump(results, out)
    """
)


@pytest.mark.timeout(90)
def test_scrapy_crawl_reaches_the_sample_web_through_the_resolver(sample_web, tmp_path):
    script, output = tmp_path / "probe.py", tmp_path / "results.json"
    script.write_text(CRAWL_SCRIPT)
    run = subprocess.run(
        [sys.executable, str(script), str(sample_web.port), str(output)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = {r["url"]: r for r in json.loads(output.read_text())}
    port = sample_web.port

    home = results[f"http://site0.wire.test:{port}/"]
    assert (home["status"], home["title"]) == (200, "Site 0 home")
    assert home["reactor"] == "AsyncioSelectorReactor"
    assert home["resolver"] == "MappedResolver"
    # The server saw the host name, not an address: one host name per site works.
    elsewhere = results[f"http://www.elsewhere.test:{port}/page/1.html"]
    assert elsewhere["status"] == 404
    assert results[f"http://localhost:{port}/"]["title"] == "wirescrapy sample web"

    hosts = {(r["host"], r["path"]) for r in sample_web.access_log()}
    assert {("site0.wire.test", "/"), ("www.elsewhere.test", "/page/1.html"), ("localhost", "/")} <= hosts
