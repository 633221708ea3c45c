"""A response or a failure as a Fetch (wirescrapy.harvester.fetch), without a reactor: built by hand."""

from __future__ import annotations

from ipaddress import ip_address

import pytest
from scrapy import Request
from scrapy.http import Response
from twisted.internet.error import DNSLookupError

from wirescrapy.harvester import meta
from wirescrapy.harvester.fetch import failure_fetch, kind_of, response_fetch
from wirescrapy.harvester.middlewares import BlockedIP
from wirescrapy.items import FetchError, Kind


def response(
    body: bytes = b"", status: int = 200, headers: dict | None = None, address: str | None = None, **meta
) -> Response:
    url = "http://a.cl/x"
    return Response(
        url,
        status=status,
        headers=headers,
        body=body,
        request=Request(url, meta=meta),
        ip_address=ip_address(address) if address else None,
    )


def test_a_page_is_what_the_response_and_the_middlewares_said():
    fetch = response_fetch(
        response(
            b"<p>hello",
            headers={
                "Content-Type": "text/HTML; charset=UTF-8",
                "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT",
            },
            **{
                meta.DOC_ID: 7,
                meta.SITE_ID: 2,
                meta.DEPTH: 3,
                meta.STARTED: 99.0,
                meta.IP: "10.0.0.1",
                meta.RECEIVED: 8,
                "download_latency": 0.25,
            },
        ),
        1000,
        now=100.5,
    )
    assert (fetch.kind, fetch.url, fetch.doc_id, fetch.site_id, fetch.depth) == (
        Kind.PAGE,
        "http://a.cl/x",
        7,
        2,
        3,
    )
    assert (fetch.started, fetch.ended, fetch.latency) == (99.0, 100.5, 0.25)
    assert (fetch.status, fetch.mime, fetch.content_type) == (200, "text/html", "text/HTML; charset=UTF-8")
    assert (fetch.body, fetch.raw_length, fetch.last_modified) == (b"<p>hello", 8, 784111777.0)
    assert fetch.ip == "10.0.0.1" and fetch.ok and not fetch.truncated and not fetch.mime_refused


def test_a_fetch_ends_when_its_download_ended_not_when_its_callback_ran():
    fetch = response_fetch(response(b"x", **{meta.STARTED: 99.0, meta.ENDED: 99.5}), 1000, now=101.0)
    assert (fetch.started, fetch.ended) == (99.0, 99.5)
    failed = failure_fetch(Request("http://a.cl/x", meta={meta.ENDED: 42.0}), DNSLookupError("x"), now=50.0)
    assert failed.ended == 42.0


def test_what_a_bare_response_leaves_out_has_defaults():
    fetch = response_fetch(response(b"abc", status=404, address="192.0.2.7"), 1000, now=5.0)
    assert (fetch.doc_id, fetch.site_id, fetch.depth, fetch.hops, fetch.origin) == (0, 0, 0, 0, "")
    assert (fetch.started, fetch.status, fetch.raw_length, fetch.mime, fetch.last_modified) == (
        5.0,
        404,
        3,
        "",
        0.0,
    )
    assert fetch.ip == "192.0.2.7"  # the address the response came from


def test_a_page_is_cut_at_the_max_file_size_a_robots_txt_is_not():
    page = response_fetch(response(b"x" * 10, **{meta.TRUNCATED: True}), 4, now=1.0)
    assert page.body == b"xxxx" and page.truncated and page.raw_length == 10
    robots = response_fetch(
        response(b"x" * 10, **{meta.KIND: "robots", meta.ORIGIN: "http://a.cl", meta.HOPS: 2}), 4, now=1.0
    )
    assert (robots.kind, robots.origin, robots.hops, robots.body) == (
        Kind.ROBOTS,
        "http://a.cl",
        2,
        b"x" * 10,
    )


def test_a_refused_media_type_keeps_no_body():
    fetch = response_fetch(
        response(
            b"MZ\x90",
            headers={"Content-Type": "application/x-msdownload"},
            **{meta.MIME_REFUSED: "application/x-msdownload", meta.RECEIVED: 3},
        ),
        1000,
        now=1.0,
    )
    assert fetch.mime_refused and fetch.body == b"" and fetch.raw_length == 3 and fetch.ok


def test_a_failure_is_its_error_in_place_of_a_status():
    request = Request("http://a.cl/robots.txt", meta={meta.KIND: "sitemap", meta.STARTED: 3.0})
    fetch = failure_fetch(request, DNSLookupError("a.cl: " + "no such host " * 40), now=4.0)
    assert (fetch.kind, fetch.error, fetch.status) == (Kind.SITEMAP, FetchError.DNS, 0)
    assert fetch.message.startswith("DNS lookup failed") and len(fetch.message) == 300
    assert (fetch.started, fetch.ended) == (3.0, 4.0) and not fetch.responded
    blocked = failure_fetch(Request("http://a.cl/"), BlockedIP("10.0.0.1"), now=4.0)
    assert blocked.error is FetchError.BLOCKED_IP and blocked.kind is Kind.PAGE


@pytest.mark.parametrize("status", [99999, 1000, 99, 0, -5])
def test_a_status_that_is_no_http_status_is_a_response_with_a_bad_status(status):
    fetch = response_fetch(response(b"<p>hello", status=status), 1000, now=1.0)
    assert (fetch.status, fetch.error, fetch.message) == (0, FetchError.BAD_STATUS, f"status {status}")
    assert fetch.responded and not fetch.ok


def test_the_kind_of_a_request():
    assert kind_of(Request("http://a.cl/")) is Kind.PAGE
    assert kind_of(Request("http://a.cl/robots.txt", meta={meta.KIND: Kind.ROBOTS.value})) is Kind.ROBOTS
