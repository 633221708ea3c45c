"""Conditional revisits: the validators a server gives (``ETag``, ``Last-Modified``) kept exactly as sent,
carried by the batch, sent back by the harvester, and a 304 recorded as a visit that found no change without
touching the stored page. The sample web answers conditional requests as a static server does.

The crawls that measure them (bytes saved on a revisit cycle of the sample web, 304s from a real nginx) are in
``tests/e2e/test_revisits.py``.
"""

from __future__ import annotations

import json

import pytest
from xxhash import xxh3_64_hexdigest

from tests.components import T0, Bench
from tests.test_scheduler import scheduler, take
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.manager.batch import BatchSite, BatchURL, read_batch, write_batch
from wirescrapy.manager.freshness import PRIOR_RATE, change_rate
from wirescrapy.testing.sampleweb.model import PUBLISHED, SampleWeb, not_modified

SITE = "http://site1.wire.test"
ETAG = b'W/"5f2-1a2b"'
DATE = b"Tue, 03 Nov 2026 10:00:00 GMT"  # as the server wrote it: nginx answers 304 only to this string
PAGE = b'<html><body><a href="/b.html">b</a><p>text</p></body></html>'
REVISIT = {"WIRE_MINPERIOD_SUCCESSFUL_OK": 0, "WIRE_MINPERIOD_SUCCESSFUL_NOT_OK": 0}


@pytest.fixture
def bench(tmp_path):
    with Bench(tmp_path, **REVISIT) as bench:
        yield bench


def validators(record) -> tuple[bytes, bytes]:
    return bytes(record["etag"]), bytes(record["last_modified_header"])


def test_validators_are_kept_exactly_as_sent_and_only_for_a_stored_page(bench):
    url = SITE + "/a.html"
    bench.seed(url)
    bench.gather(bench.page(url, 200, PAGE, headers={"ETag": ETAG, "Last-Modified": DATE}))
    assert validators(bench.record(url)) == (ETAG, DATE)
    bench.gather(bench.page(url, 200, PAGE, headers={"ETag": b'"' + b"x" * 60 + b'"'}, at=T0 + 10))
    assert validators(bench.record(url)) == (b"", b"")  # too long to keep whole; and no Last-Modified now
    bench.gather(bench.page(url, 200, PAGE, headers={"ETag": ETAG}, at=T0 + 20))
    assert validators(bench.record(url)) == (ETAG, b"")
    bench.gather(bench.page(url, 404, b"gone", headers={"ETag": b'"404"'}, at=T0 + 30))
    assert validators(bench.record(url)) == (b"", b"")  # no stored page they describe


def test_a_304_is_a_visit_that_found_no_change_and_leaves_the_page_alone(bench):
    url = SITE + "/a.html"
    bench.seed(url)
    bench.gather(bench.page(url, 200, PAGE, headers={"ETag": ETAG, "Last-Modified": DATE}, at=T0))
    before = bench.record(url).copy()
    stored = bench.collection.load_page(bench.collection.lookup(url))
    record = bench.gather(bench.page(url, 304, b"", content_type="", headers={"ETag": ETAG}, at=T0 + 100))
    after = bench.record(url)
    assert record["status"] == 304 and not record["changed"]
    assert (after["status"], after["error"], after["visits"], after["visits_changed"]) == (304, 0, 2, 0)
    assert after["time_unchanged"] == pytest.approx(100.0) and after["last_visit"] > before["last_visit"]
    for field in (
        "content_hash",
        "stored_length",
        "raw_length",
        "mime",
        "first_visit",
        "last_change",
        "etag",
        "last_modified_header",
    ):
        assert after[field] == before[field], field
    assert not after["flags"] & (DocFlag.CHANGED | DocFlag.REDIRECT)
    assert bench.collection.load_page(bench.collection.lookup(url)) == stored
    assert bench.links(url) == [SITE + "/b.html"]
    site = bench.site(url)
    assert (site["fetched"], site["ok"], site["errors"]) == (2, 2, 0)
    # The freshness estimator counts it: one revisit that found no change estimates no change (the page's
    # own estimate), where a page seen once gets the prior.
    docs = bench.collection.documents.records[1 : bench.collection.documents.count + 1]
    assert change_rate(docs)[bench.collection.lookup(url) - 1] == 0.0 < PRIOR_RATE


def test_a_304_with_new_validators_keeps_them(bench):
    url = SITE + "/a.html"
    bench.seed(url)
    bench.gather(bench.page(url, 200, PAGE, headers={"ETag": ETAG, "Last-Modified": DATE}, at=T0))
    bench.gather(bench.page(url, 304, b"", content_type="", headers={"ETag": b'"new"'}, at=T0 + 100))
    assert validators(bench.record(url)) == (b'"new"', DATE)


def test_the_manager_puts_the_validators_in_the_revisit_s_batch(bench):
    url = SITE + "/a.html"
    bench.seed(url)
    bench.gather(bench.page(url, 200, PAGE, headers={"ETag": ETAG, "Last-Modified": DATE}, at=T0))
    batch = bench.open_batch()
    revisit = next(u for u in batch.urls if u.url == url)
    assert (revisit.etag, revisit.last_modified_header) == (ETAG, DATE)
    assert all(not u.etag for u in batch.urls if u.url != url)


def test_the_batch_carries_redirect_hops_and_validators_byte_for_byte(tmp_path):
    odd = b'"a\tb%09c\xe9"'  # a tab, a "%09" and a latin-1 byte: each comes back as it was
    urls = [
        BatchURL(10, 1, 2, False, 0.5, T0, "http://a.example/x", 2, odd, DATE),
        BatchURL(11, 1, 0, False, 0.25, 0.0, "http://a.example/y"),
    ]
    (path,) = write_batch(tmp_path, 1, urls, [BatchSite(1, "http://a.example")])
    assert read_batch(path).urls == urls


def test_a_version_1_batch_is_still_read(tmp_path):
    (path,) = write_batch(
        tmp_path,
        1,
        [BatchURL(10, 1, 2, False, 0.5, T0, "http://a.example/x", 2, ETAG, DATE)],
        [BatchSite(1, "http://a.example")],
    )
    data = f"#docid\tsiteid\tdepth\tdynamic\tprofit\tlast_visit\turl\n10\t1\t2\t0\t0.5\t{T0:.0f}\thttp://a.example/x\n"
    (path / "urls.tsv").write_text(data)
    info = json.loads((path / "batch.json").read_text())
    info["version"] = 1
    info["files"]["urls.tsv"] = {"bytes": len(data), "xxh3_64": xxh3_64_hexdigest(data.encode())}
    (path / "batch.json").write_text(json.dumps(info))
    (url,) = read_batch(path).urls
    assert (url.doc_id, url.url, url.redirects, url.etag, url.last_modified_header) == (
        10,
        "http://a.example/x",
        0,
        b"",
        b"",
    )


def test_the_revisit_request_sends_the_validators_back_exactly():
    sched = scheduler()
    sched.enqueue_batch(
        [
            BatchURL(7, 1, 2, False, 0.0, T0, "http://a.cl/x", 0, ETAG, DATE),
            BatchURL(8, 2, 1, False, 0.0, 0.0, "http://b.cl/y", 2),
        ]
    )
    revisit, hopped = take(sched), take(sched)
    assert revisit.headers[b"If-None-Match"] == ETAG and revisit.headers[b"If-Modified-Since"] == DATE
    assert "wire_hops" not in revisit.meta
    assert b"If-None-Match" not in hopped.headers and b"If-Modified-Since" not in hopped.headers
    assert (
        hopped.meta["wire_hops"] == 2
    )  # redirects in earlier batches led to it: they count against the limit


def test_the_sample_web_answers_a_conditional_request_as_a_static_server_does():
    web = SampleWeb()
    reply = web.respond("site1.wire.test", "/page/1.html")
    headers = dict(reply.headers)
    etag = headers["ETag"]
    assert headers["Last-Modified"] == PUBLISHED and reply.status == 200
    assert not_modified(reply, etag, None) and not_modified(reply, f'"x", W/{etag}', None)
    assert not_modified(reply, None, PUBLISHED) and not_modified(reply, None, "Fri, 02 Jan 2026 00:00:00 GMT")
    assert not not_modified(reply, None, "Wed, 31 Dec 2025 23:59:59 GMT")
    assert not not_modified(reply, '"other"', PUBLISHED)  # If-None-Match decides alone (RFC 9110 §13.2.2)
    assert not not_modified(reply, None, "not a date") and not not_modified(reply, None, None)
    assert "ETag" not in dict(web.respond("site1.wire.test", "/missing/x").headers)
    assert web.respond("site1.wire.test", "/page/2.html").headers != reply.headers  # a hash of the bytes
