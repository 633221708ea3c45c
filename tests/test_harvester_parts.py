"""The harvester's pure parts, without a reactor: failure kinds, headers, blocked addresses, fetch records."""

from __future__ import annotations

import pytest
from scrapy.exceptions import IgnoreRequest
from twisted.internet.error import (
    ConnectionRefusedError,
    DNSLookupError,
    TCPTimedOutError,
    TimeoutError,
)
from twisted.python.failure import Failure
from twisted.web._newclient import ParseError, ResponseFailed

from wirescrapy.harvester.fetch import classify, http_date
from wirescrapy.harvester.middlewares import (
    BlockedIP,
    BlockedIPMiddleware,
    RobotsDisallowed,
    media_type,
)
from wirescrapy.items import Fetch, FetchError, Kind


@pytest.mark.parametrize(
    "exc, kind",
    [
        (BlockedIP("x"), FetchError.BLOCKED_IP),
        (RobotsDisallowed("x"), FetchError.ROBOTS_DISALLOWED),
        (DNSLookupError("x"), FetchError.DNS),
        (ConnectionRefusedError(), FetchError.REFUSED),
        (TimeoutError(), FetchError.TIMEOUT),
        (TCPTimedOutError(), FetchError.TIMEOUT),
        (ResponseFailed([]), FetchError.CONNECTION_LOST),
        (IgnoreRequest("x"), FetchError.OTHER),
        (
            ResponseFailed([Failure(ParseError("non-integer status code", b"HTTP/1.1 OK OK"))]),
            FetchError.BAD_STATUS,
        ),
        (ResponseFailed([Failure(ParseError("wrong number of parts", b"HTTP/1.1"))]), FetchError.BAD_STATUS),
        (ResponseFailed([Failure(ParseError("wrong header", b"Content-Type"))]), FetchError.CONNECTION_LOST),
        (ValueError("x"), FetchError.OTHER),
    ],
)
def test_failures_get_their_kind(exc, kind):
    assert classify(exc) is kind


def test_headers_are_read_leniently():
    assert media_type(b"Text/HTML; charset=UTF-8") == "text/html"
    assert media_type(None) == media_type(b"") == ""
    assert media_type("application/xhtml+xml") == "application/xhtml+xml"
    assert http_date(b"Sun, 06 Nov 1994 08:49:37 GMT") == 784111777.0
    assert http_date(b"not a date") == http_date(None) == 0.0


def test_blocked_networks_cover_ipv4_ipv6_and_mapped_addresses():
    middleware = BlockedIPMiddleware(["127.0.0.0/8", "10.0.0.0/8", "::1/128", "fe80::/10"])
    assert middleware.blocked("127.0.0.2") and middleware.blocked("10.1.2.3")
    assert middleware.blocked("::1") and middleware.blocked("fe80::1")
    assert middleware.blocked("::ffff:10.0.0.1")  # an IPv4-mapped IPv6 address is its IPv4 address
    assert not middleware.blocked("200.1.2.3") and not middleware.blocked("2001:db8::1")


def test_a_fetch_knows_whether_a_response_came():
    fetch = Fetch(Kind.PAGE, "http://a.cl/", 1, 1, 0, started=10.0, ended=12.5)
    assert fetch.ok and fetch.responded and fetch.duration == 2.5
    fetch.error = FetchError.REDIRECT_LOOP
    assert not fetch.ok and fetch.responded
    fetch.error = FetchError.TIMEOUT
    assert not fetch.responded


def test_a_changed_robots_txt_lets_its_refused_pages_be_fetched_again(tmp_path):
    from wirescrapy.collection import Collection
    from wirescrapy.collection.metadata import DocFlag
    from wirescrapy.gatherer.pipelines.metadata import _forget_disallowed

    with Collection(tmp_path / "c") as collection:
        a, _ = collection.add_url("http://a.cl/private", flags=DocFlag.ROBOTS_DISALLOWED | DocFlag.DYNAMIC)
        b, _ = collection.add_url("http://b.cl/private", flags=DocFlag.ROBOTS_DISALLOWED)
        site_a = int(collection.documents.records[a]["siteid"])
        _forget_disallowed(collection, site_a)
        assert collection.documents.records[a]["flags"] == DocFlag.DYNAMIC
        assert collection.documents.records[b]["flags"] == DocFlag.ROBOTS_DISALLOWED
