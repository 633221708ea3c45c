"""The gatherer's item pipelines: each kind of fetch sent through ``ITEM_PIPELINES`` into a temporary
collection, and what it leaves in the document and site records, the page store and the link graph.

No reactor and no server: the fetches are the ``Fetch`` items the harvester's spider hands on, built on
the bench (``tests/components.py``).
"""

from __future__ import annotations

import ipaddress
import logging

import pytest
from scrapy.exceptions import DropItem

from tests.components import T0, Bench
from wirescrapy.collection.metadata import DocFlag, RobotsState
from wirescrapy.items import Fetch, FetchError, Kind

SITE = "http://site1.wire.test"
OTHER = "http://site2.wire.test"
END = 0.5  # a bench fetch ends this long after it starts
NO_RESPONSE = [
    error
    for error in FetchError
    if error
    not in (
        FetchError.ROBOTS_DISALLOWED,
        FetchError.REDIRECT_LOOP,
        FetchError.TOO_MANY_REDIRECTS,
        FetchError.BAD_STATUS,
        FetchError.GATHERER,
        FetchError.RENDER_FAILED,
        FetchError.RENDER_TIMEOUT,
    )
]


def html(*links: str, head: str = "", text: str = "Some text.") -> bytes:
    anchors = "".join(f'<a href="{href}">{href}</a>' for href in links)
    return (
        f"<html><head><title>A page</title>{head}</head><body><p>{text}</p>{anchors}</body></html>".encode()
    )


@pytest.fixture
def bench(tmp_path):
    with Bench(tmp_path) as bench:
        yield bench


def flags(record) -> DocFlag:
    return DocFlag(int(record["flags"]))


def ipv6_bytes(text: str) -> bytes:
    return ipaddress.IPv6Address(text).packed


# -- a page -----------------------------------------------------------------------------------------------


def test_a_page_is_recorded_stored_and_its_links_added(bench):
    bench.seed(SITE + "/a.html")
    body = html("/b.html", "c.html", OTHER + "/x.html", "/b.html")
    bench.gather(bench.page(SITE + "/a.html", 200, body))
    record = bench.record(SITE + "/a.html")
    assert (record["status"], record["mime"], record["errors"], record["raw_length"]) == (
        200,
        b"text/html",
        0,
        len(body),
    )
    assert record["visits"] == 1 and record["visits_changed"] == 0
    assert record["first_visit"] == record["last_visit"] == record["last_change"] == T0 + END
    assert record["latency"] == pytest.approx(0.1) and record["speed"] == pytest.approx(len(body) / 0.4)
    stored = bench.collection.load_page(bench.collection.lookup(SITE + "/a.html"))
    assert b"Some text." in stored and record["stored_length"] == len(stored)
    assert flags(record) & DocFlag.CHANGED  # a first visit finds new content
    # In page order, once each; new URLs one level deeper, and a new site brings its home page.
    assert bench.links(SITE + "/a.html") == [SITE + "/b.html", SITE + "/c.html", OTHER + "/x.html"]
    assert bench.record(SITE + "/b.html")["depth"] == 1 and bench.record(OTHER + "/x.html")["depth"] == 1
    assert bench.collection.lookup(OTHER + "/")
    site = bench.site(SITE + "/a.html")
    assert (site["fetched"], site["ok"], site["errors"], site["static"], site["dynamic"]) == (1, 1, 0, 1, 0)
    assert site["last_visit"] == site["ip_resolved"] == T0 + END and site["ip"] == ipv6_bytes(
        "::ffff:127.0.0.1"
    )
    stats = bench.stats
    assert stats["harvester/fetched/page"] == stats["harvester/status/200"] == stats["gatherer/parsed"] == 1
    assert stats["harvester/bytes"] == len(body) and stats["gatherer/stored_bytes"] == len(stored)
    assert stats["gatherer/links/found"] == 4 and stats["gatherer/links/new"] == 3


def test_the_language_of_the_last_ok_fetch_is_recorded(bench):
    spanish = (
        "El rastreador recorre los sitios de la web chilena y guarda en su colección "
        "las páginas que encuentra."
    )
    bench.seed(SITE + "/a.html")
    bench.seed(SITE + "/b.html")
    bench.gather(bench.page(SITE + "/a.html", 200, html(text=spanish), at=T0))
    bench.gather(bench.page(SITE + "/b.html", 200, html(text="12 34"), at=T0))
    assert (
        bench.record(SITE + "/a.html")["language"] == b"es"
        and bench.record(SITE + "/b.html")["language"] == b""
    )
    bench.gather(bench.page(SITE + "/a.html", 500, b"Internal error, try again later please", at=T0 + 100))
    assert bench.record(SITE + "/a.html")["language"] == b"es"  # of the last OK fetch


def test_the_last_pipeline_hands_on_the_fetch_as_a_feed_record(bench):
    bench.seed(SITE + "/a.html")
    record = bench.gather(bench.page(SITE + "/a.html", 200, html("/b.html")))
    stored = bench.record(SITE + "/a.html")["stored_length"]
    assert record == {
        "url": SITE + "/a.html",
        "kind": "page",
        "doc_id": 1,
        "site_id": 1,
        "depth": 0,
        "status": 200,
        "error": None,
        "mime": "text/html",
        "raw_length": len(html("/b.html")),
        "truncated": False,
        "stored_length": stored,
        "duplicate_of": 0,
        "changed": True,
        "links": 1,
        "redirect": None,
        "latency": 0.1,
        "started": T0,
        "ended": T0 + END,
        "ip": "127.0.0.1",
    }
    failed = bench.gather(bench.failure(SITE + "/b.html", FetchError.TIMEOUT))
    assert (failed["status"], failed["error"], failed["ip"], failed["stored_length"]) == (
        0,
        "timeout",
        None,
        0,
    )


def test_a_dynamic_page_and_a_text_page(bench):
    bench.seed(SITE + "/q?x=1", SITE + "/notes.txt")
    bench.gather(bench.page(SITE + "/q?x=1", 200, html("/b.html")))
    bench.gather(
        bench.page(
            SITE + "/notes.txt",
            200,
            b"Plain text, http://site1.wire.test/c.html\n",
            "text/plain; charset=utf-8",
        )
    )
    text = bench.record(SITE + "/notes.txt")
    assert text["mime"] == b"text/plain" and text["status"] == 200
    assert bench.collection.load_page(bench.collection.lookup(SITE + "/notes.txt")).startswith(b"Plain text")
    assert bench.links(SITE + "/notes.txt") == []  # a text page has no links
    site = bench.site(SITE + "/notes.txt")
    assert (site["ok"], site["static"], site["dynamic"]) == (2, 1, 1)


@pytest.mark.parametrize(
    "address, stored",
    [
        ("127.0.0.1", "::ffff:127.0.0.1"),
        ("2001:db8::1", "2001:db8::1"),
        ("", None),
        ("not an address", "::"),
    ],
)
def test_the_site_keeps_the_address_it_answered_from(bench, address, stored):
    bench.seed(SITE + "/")
    bench.gather(bench.page(SITE + "/", 200, html(), ip=address))
    site = bench.site(SITE + "/")
    if stored is None:
        assert site["ip"] == b"" and site["ip_resolved"] == 0
    else:
        assert site["ip"] == ipv6_bytes(stored).rstrip(b"\0") and site["ip_resolved"] == T0 + END


# -- statuses and errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [403, 404, 410, 429, 500, 503])
def test_an_error_status_is_a_failed_visit_and_leaves_no_page_nor_links(bench, status):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 200, html("/b.html"), at=T0))
    bench.gather(bench.page(SITE + "/a.html", status, b"<html>gone</html>", at=T0 + 100))
    record = bench.record(SITE + "/a.html")
    assert record["status"] == status and record["errors"] == 1 and record["visits"] == 2
    assert record["stored_length"] == 0 and record["last_visit"] == T0 + 100 + END
    assert bench.links(SITE + "/a.html") == []
    site = bench.site(SITE + "/a.html")
    assert (site["fetched"], site["ok"], site["errors"]) == (2, 1, 1)
    assert bench.stats[f"harvester/status/{status}"] == 1


@pytest.mark.parametrize("status", [204])
def test_a_status_that_is_neither_ok_nor_failed(bench, status):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", status, b""))
    record, site = bench.record(SITE + "/a.html"), bench.site(SITE + "/a.html")
    assert record["status"] == status and record["errors"] == 0 and record["visits"] == 1
    assert (site["fetched"], site["ok"], site["errors"]) == (1, 0, 0)


@pytest.mark.parametrize(
    "error", [e for e in NO_RESPONSE if e is not FetchError.BLOCKED_IP], ids=lambda e: e.label
)
def test_a_failure_is_recorded_by_kind_and_counted_until_a_success(bench, error):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.failure(SITE + "/a.html", error, at=T0))
    bench.gather(bench.failure(SITE + "/a.html", error, at=T0 + 10))
    record = bench.record(SITE + "/a.html")
    assert record["status"] == 0 and record["error"] == error and record["errors"] == 2
    assert record["visits"] == 0 and record["mime"] == b"" and record["first_visit"] == 0  # no response came
    assert record["last_visit"] == T0 + 10 + END  # tried: done in this batch
    site = bench.site(SITE + "/a.html")
    assert (site["fetched"], site["errors"], site["ok"]) == (2, 2, 0)
    assert bench.stats[f"harvester/errors/{error.label}"] == 2
    bench.gather(bench.page(SITE + "/a.html", 200, html(), at=T0 + 20))
    assert bench.record(SITE + "/a.html")["errors"] == 0 and bench.record(SITE + "/a.html")["status"] == 200


def test_a_blocked_address_is_recorded_but_counts_as_no_failure(bench):
    # Our WIRE_BLOCKED_IPS refused it before any access: the site did not fail, so the page's errors (and the
    # manager's period for failed pages) are untouched, and it stays done in this batch.
    bench.seed(SITE + "/a.html")
    bench.gather(bench.failure(SITE + "/a.html", FetchError.TIMEOUT, at=T0))
    bench.gather(bench.failure(SITE + "/a.html", FetchError.BLOCKED_IP, at=T0 + 10))
    record = bench.record(SITE + "/a.html")
    assert record["status"] == 0 and record["error"] == FetchError.BLOCKED_IP and record["errors"] == 1
    assert record["visits"] == 0 and record["last_visit"] == T0 + 10 + END
    site = bench.site(SITE + "/a.html")
    assert (site["fetched"], site["errors"], site["ok"]) == (2, 1, 0)
    assert bench.stats["harvester/errors/blocked_ip"] == 1 and bench.stats["harvester/pages/blocked_ip"] == 1


@pytest.mark.parametrize("status", [99999, 1000, 99, 0, -5, -8, -32768])
def test_a_status_that_is_no_http_status_is_recorded_as_a_bad_status(bench, status):
    # -5 and -8 were stored as our own blocked_ip and too_many_redirects; 99999 did not fit and was lost.
    bench.seed(SITE + "/a.html")
    record = bench.gather(bench.page(SITE + "/a.html", status, html("/b.html")))
    assert (record["status"], record["error"]) == (0, "bad_status")
    document = bench.record(SITE + "/a.html")
    assert (document["status"], document["error"]) == (0, FetchError.BAD_STATUS)
    assert document["errors"] == 1 and document["visits"] == 1 and bench.links(SITE + "/a.html") == []
    assert bench.stats["harvester/errors/bad_status"] == 1 and bench.collection.summary()["ok"] == 0


def test_consecutive_errors_stop_counting_at_the_field_s_limit(bench):
    bench.seed(SITE + "/a.html")
    bench.record(SITE + "/a.html")["errors"] = 0xFFFF
    bench.gather(bench.failure(SITE + "/a.html", FetchError.DNS))
    assert bench.record(SITE + "/a.html")["errors"] == 0xFFFF


# -- redirects --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_recorded_with_its_target_as_its_only_link(bench, status):
    bench.seed(SITE + "/dir/a.html")
    depth = int(bench.record(SITE + "/dir/a.html")["depth"])
    bench.gather(
        bench.page(SITE + "/dir/a.html", status, html("/ignored.html"), redirect=OTHER + "/moved.html")
    )
    record = bench.record(SITE + "/dir/a.html")
    assert record["status"] == status and flags(record) & DocFlag.REDIRECT and record["visits"] == 1
    assert record["errors"] == 0 and record["stored_length"] == 0
    assert bench.links(SITE + "/dir/a.html") == [OTHER + "/moved.html"]
    moved = bench.record(OTHER + "/moved.html")  # a redirect hop is a link, one deeper, and one hop
    assert (moved["depth"], moved["redirects"]) == (depth + 1, 1)
    assert not bench.collection.lookup(SITE + "/ignored.html")  # the body of a redirect is not read


def test_the_follow_up_of_a_redirect_finds_its_target_s_record(bench):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 301, b"", redirect=SITE + "/b.html"))
    follow_up = bench.page(SITE + "/b.html", 200, html("/c.html"), hops=1)
    follow_up.doc_id = follow_up.site_id = 0  # the spider's follow-up request knows neither
    record = bench.gather(follow_up)
    assert record["doc_id"] == bench.collection.lookup(SITE + "/b.html") and record["site_id"] == 1
    assert bench.record(SITE + "/b.html")["status"] == 200
    assert bench.links(SITE + "/b.html") == [SITE + "/c.html"]


def test_a_redirect_follow_up_to_a_url_the_collection_lacks_is_added_or_dropped_by_the_rules(bench, caplog):
    added = bench.gather(Fetch(Kind.PAGE, SITE + "/new.html", 0, 0, 2, T0, T0 + 1, status=200, body=html()))
    assert added["doc_id"] == bench.collection.lookup(SITE + "/new.html")
    assert bench.record(SITE + "/new.html")["depth"] == 2
    with caplog.at_level(logging.INFO), pytest.raises(DropItem, match="not accepted by the seeder rules"):
        bench.gather(Fetch(Kind.PAGE, SITE + "/login.html", 0, 0, 1, T0, T0 + 1, status=200, body=html()))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # a refusal, not a failure
    assert not bench.collection.lookup(SITE + "/login.html")


def test_a_redirect_to_a_file_that_is_never_fetched_adds_it_but_no_link(bench):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 302, b"", redirect=SITE + "/report.pdf"))
    assert flags(bench.record(SITE + "/a.html")) & DocFlag.REDIRECT
    assert bench.links(SITE + "/a.html") == []
    assert bench.collection.lookup(SITE + "/report.pdf") and bench.site(SITE + "/a.html")["multimedia"] == 1


@pytest.mark.parametrize("error", [FetchError.REDIRECT_LOOP, FetchError.TOO_MANY_REDIRECTS], ids=str)
def test_a_redirect_error_is_a_response_with_its_target_as_its_link(bench, error):
    bench.seed(SITE + "/loop/a")
    bench.gather(bench.page(SITE + "/loop/a", 302, b"", redirect=SITE + "/loop/b", error=error))
    record = bench.record(SITE + "/loop/a")
    assert (record["status"], record["error"]) == (302, error)  # what the server said, what we concluded
    assert record["errors"] == 1 and record["visits"] == 1
    assert flags(record) & DocFlag.REDIRECT and record["mime"] == b"text/html"
    assert bench.links(SITE + "/loop/a") == [SITE + "/loop/b"]


def test_a_page_that_stops_redirecting_loses_the_redirect_flag_and_link(bench):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 301, b"", redirect=SITE + "/b.html", at=T0))
    bench.gather(bench.page(SITE + "/a.html", 200, html("/c.html"), at=T0 + 100))
    assert not flags(bench.record(SITE + "/a.html")) & DocFlag.REDIRECT
    assert bench.links(SITE + "/a.html") == [SITE + "/c.html"]


def test_the_redirect_hop_limit_holds_across_batches(bench):
    limit = bench.config.max_redirects
    bench.seed(SITE + "/a.html", SITE + "/z.html")
    # /a.html was reached by limit - 1 hops in earlier batches (the batch says so: Fetch.hops): its target is
    # the last hop allowed, and is added with its hops.
    bench.gather(bench.page(SITE + "/a.html", 301, b"", redirect=OTHER + "/b.html", hops=limit - 1))
    assert bench.record(OTHER + "/b.html")["redirects"] == limit
    # Fetched in a later batch, /b.html redirects again: the chain is too long, and its new target is not
    # added.
    bench.gather(
        bench.page(
            OTHER + "/b.html",
            301,
            b"",
            redirect=OTHER + "/c.html",
            hops=limit,
            error=FetchError.TOO_MANY_REDIRECTS,
        )
    )
    assert not bench.collection.lookup(OTHER + "/c.html") and bench.links(OTHER + "/b.html") == []
    assert bench.stats["gatherer/redirects/over_limit"] == 1
    # A plain link to a redirect target makes it an ordinary page: no hops led to it.
    bench.gather(bench.page(SITE + "/z.html", 200, html(OTHER + "/b.html")))
    assert bench.record(OTHER + "/b.html")["redirects"] == 0


# -- content: duplicates, changes, limits -----------------------------------------------------------------


def test_an_exact_duplicate_is_a_reference_to_its_original_and_its_links_are_ignored(bench):
    original, copy = bench.seed(SITE + "/a.html", SITE + "/copy.html")
    body = html("/b.html")
    bench.gather(bench.page(SITE + "/a.html", 200, body))
    record = bench.gather(bench.page(SITE + "/copy.html", 200, body))
    duplicate = bench.record(SITE + "/copy.html")
    assert flags(duplicate) & DocFlag.DUPLICATE and duplicate["duplicate_of"] == original
    assert bench.collection.pages.load(copy) is None  # no bytes of its own
    assert bench.collection.load_page(copy) == bench.collection.load_page(original)
    assert bench.links(SITE + "/copy.html") == [] and bench.links(SITE + "/a.html") == [SITE + "/b.html"]
    assert record["duplicate_of"] == original and record["links"] == 0
    assert not flags(bench.record(SITE + "/a.html")) & DocFlag.DUPLICATE
    assert bench.stats["gatherer/duplicates"] == 1


def test_a_copy_at_another_path_follows_the_links_its_original_s_do_not_reach(tmp_path):
    """WIRE_FOLLOW_DUPLICATE_LINKS: relative links in a copy stored elsewhere lead elsewhere; those are
    kept."""
    with Bench(tmp_path, WIRE_FOLLOW_DUPLICATE_LINKS=True) as bench:
        original, _ = bench.seed(SITE + "/en/a.html", SITE + "/da/a.html")
        body = html("b.html", "/index.html", OTHER + "/x.html")
        bench.gather(bench.page(SITE + "/en/a.html", 200, body))
        record = bench.gather(bench.page(SITE + "/da/a.html", 200, body))
        assert (
            flags(bench.record(SITE + "/da/a.html")) & DocFlag.DUPLICATE
            and record["duplicate_of"] == original
        )
        assert bench.links(SITE + "/en/a.html") == [
            SITE + "/en/b.html",
            SITE + "/index.html",
            OTHER + "/x.html",
        ]
        assert bench.links(SITE + "/da/a.html") == [SITE + "/da/b.html"]  # the others its original reaches
        assert bench.record(SITE + "/da/b.html")["depth"] == bench.record(SITE + "/da/a.html")["depth"] + 1
        assert bench.stats["gatherer/links/duplicates"] == 1
        # A copy under its original's path (a trap repeating one page), or on another site: links ignored.
        bench.seed(SITE + "/en/a.html/x/", OTHER + "/en/a.html")
        bench.gather(bench.page(SITE + "/en/a.html/x/", 200, body))
        bench.gather(bench.page(OTHER + "/en/a.html", 200, body))
        assert bench.links(SITE + "/en/a.html/x/") == [] and bench.links(OTHER + "/en/a.html") == []
        assert not bench.collection.lookup(SITE + "/en/a.html/x/b.html")


def test_a_duplicate_that_changes_becomes_an_original(bench):
    _, copy = bench.seed(SITE + "/a.html", SITE + "/copy.html")
    bench.gather(bench.page(SITE + "/a.html", 200, html(), at=T0))
    bench.gather(bench.page(SITE + "/copy.html", 200, html(), at=T0))
    bench.gather(bench.page(SITE + "/copy.html", 200, html("/b.html", text="Its own."), at=T0 + 100))
    record = bench.record(SITE + "/copy.html")
    assert not flags(record) & DocFlag.DUPLICATE and record["duplicate_of"] == 0
    assert b"Its own." in bench.collection.pages.load(copy)
    assert bench.links(SITE + "/copy.html") == [SITE + "/b.html"]


def test_a_revisit_that_finds_the_page_unchanged(bench):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 200, html("/b.html"), at=T0))
    before = bench.record(SITE + "/a.html").copy()
    record = bench.gather(bench.page(SITE + "/a.html", 200, html("/b.html"), at=T0 + 100))
    after = bench.record(SITE + "/a.html")
    assert after["visits"] == 2 and after["visits_changed"] == 0 and not record["changed"]
    assert after["first_visit"] == after["last_change"] == before["first_visit"] == T0 + END
    assert after["last_visit"] == T0 + 100 + END and after["time_unchanged"] == pytest.approx(100)
    assert not flags(after) & DocFlag.CHANGED and after["content_hash"] == before["content_hash"]
    assert bench.links(SITE + "/a.html") == [SITE + "/b.html"]


def test_a_revisit_that_finds_the_page_changed(bench):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 200, html("/b.html"), at=T0))
    before = bench.record(SITE + "/a.html").copy()
    record = bench.gather(bench.page(SITE + "/a.html", 200, html("/c.html", text="New."), at=T0 + 100))
    after = bench.record(SITE + "/a.html")
    assert after["visits"] == 2 and after["visits_changed"] == 1 and record["changed"]
    assert after["first_visit"] == T0 + END and after["last_change"] == T0 + 100 + END
    assert after["time_unchanged"] == 0 and flags(after) & DocFlag.CHANGED
    assert after["content_hash"] != before["content_hash"]
    assert b"New." in bench.collection.load_page(bench.collection.lookup(SITE + "/a.html"))
    assert bench.links(SITE + "/a.html") == [SITE + "/c.html"]


def test_a_later_last_modified_is_kept(bench):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 200, html(), at=T0, last_modified=T0 - 50))
    bench.gather(bench.page(SITE + "/a.html", 200, html(), at=T0 + 100, last_modified=0.0))
    assert bench.record(SITE + "/a.html")["last_modified"] == T0 - 50


def test_an_empty_page_keeps_the_links_it_had(bench):
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 200, html("/b.html"), at=T0))
    bench.gather(bench.page(SITE + "/a.html", 200, b"", at=T0 + 100))
    record = bench.record(SITE + "/a.html")
    assert record["status"] == 200 and record["visits"] == 2 and record["stored_length"] == 0
    assert bench.links(SITE + "/a.html") == [SITE + "/b.html"]


def test_a_page_cut_at_the_max_file_size_is_kept_and_flagged(tmp_path):
    with Bench(tmp_path, WIRE_MAX_FILE_SIZE=2000, WIRE_MAX_STORED_SIZE=2000) as bench:
        bench.seed(SITE + "/big.html")
        body = (b'<html><body><a href="/b.html">b</a><p>' + b"x" * 3000 + b'</p><a href="/after.html">c</a>')[
            :2000
        ]
        bench.gather(bench.page(SITE + "/big.html", 200, body, raw_length=2100, truncated=True, at=T0))
        record = bench.record(SITE + "/big.html")
        assert flags(record) & DocFlag.TRUNCATED and record["status"] == 200
        assert record["raw_length"] == 2100 and 0 < record["stored_length"] <= 2000
        assert bench.links(SITE + "/big.html") == [SITE + "/b.html"]  # the links past the cut are not seen
        assert bench.stats["harvester/truncated"] == 1
        bench.gather(bench.page(SITE + "/big.html", 200, html(), at=T0 + 100))
        assert not flags(bench.record(SITE + "/big.html")) & DocFlag.TRUNCATED


def test_a_document_over_the_max_stored_size_is_cut_and_flagged(tmp_path):
    with Bench(tmp_path, WIRE_MAX_STORED_SIZE=1000) as bench:
        bench.seed(SITE + "/long.html")
        record = bench.gather(bench.page(SITE + "/long.html", 200, html(text="word " * 1000)))
        stored = bench.record(SITE + "/long.html")
        assert flags(stored) & DocFlag.TRUNCATED and 0 < stored["stored_length"] <= 1000
        assert record["stored_length"] == stored["stored_length"] and not record["truncated"]


def test_a_refused_media_type_is_recorded_as_multimedia_without_content(bench):
    bench.seed(SITE + "/a.html", SITE + "/file")
    bench.gather(bench.page(SITE + "/file", 200, html("/b.html"), at=T0))
    bench.gather(
        bench.page(SITE + "/file", 200, b"", "application/pdf", raw_length=0, mime_refused=True, at=T0 + 100)
    )
    record = bench.record(SITE + "/file")
    assert record["status"] == 200 and record["mime"] == b"application/pdf" and record["stored_length"] == 0
    assert flags(record) & DocFlag.MULTIMEDIA  # never fetched again
    assert bench.links(SITE + "/file") == []
    assert bench.stats["harvester/mime_refused"] == 1 and "gatherer/parsed" in bench.stats


# -- nofollow ---------------------------------------------------------------------------------------------


def test_rel_nofollow_links_are_not_followed(bench):
    bench.seed(SITE + "/a.html")
    body = b'<html><body><a href="/b.html">b</a><a rel="nofollow" href="/n.html">n</a></body></html>'
    bench.gather(bench.page(SITE + "/a.html", 200, body))
    assert bench.links(SITE + "/a.html") == [SITE + "/b.html"]
    assert not bench.collection.lookup(SITE + "/n.html")
    assert not flags(bench.record(SITE + "/a.html")) & DocFlag.NOFOLLOW


@pytest.mark.parametrize(
    "content, expected",
    [
        ("nofollow", DocFlag.NOFOLLOW),
        ("noindex", DocFlag.NOINDEX),
        ("none", DocFlag.NOFOLLOW | DocFlag.NOINDEX),
        ("NoIndex, NoFollow", DocFlag.NOFOLLOW | DocFlag.NOINDEX),
    ],
)
def test_a_robots_meta_tag_flags_the_page_and_nofollow_adds_no_links(bench, content, expected):
    bench.seed(SITE + "/a.html")
    body = html("/b.html", head=f'<meta name="robots" content="{content}">')
    bench.gather(bench.page(SITE + "/a.html", 200, body))
    record = bench.record(SITE + "/a.html")
    assert flags(record) & (DocFlag.NOFOLLOW | DocFlag.NOINDEX) == expected
    followed = not expected & DocFlag.NOFOLLOW
    assert bench.links(SITE + "/a.html") == ([SITE + "/b.html"] if followed else [])
    assert bool(bench.collection.lookup(SITE + "/b.html")) == followed
    assert record["stored_length"] > 0  # noindex is a flag for an index; the page is stored


def test_with_nofollow_not_obeyed_nofollow_links_are_followed(tmp_path):
    with Bench(tmp_path, WIRE_OBEY_NOFOLLOW=False) as bench:
        bench.seed(SITE + "/a.html", SITE + "/m.html")
        body = b'<html><body><a href="/b.html">b</a><a rel="nofollow" href="/n.html">n</a></body></html>'
        bench.gather(bench.page(SITE + "/a.html", 200, body))
        bench.gather(
            bench.page(SITE + "/m.html", 200, html("/c.html", head='<meta name="robots" content="nofollow">'))
        )
        assert bench.links(SITE + "/a.html") == [SITE + "/b.html", SITE + "/n.html"]
        assert bench.links(SITE + "/m.html") == [SITE + "/c.html"]


# -- robots.txt and sitemaps ------------------------------------------------------------------------------

ROBOTS = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"


def test_a_robots_txt_is_stored_and_its_state_and_crawl_delay_written_to_the_site(bench):
    bench.seed(SITE + "/")
    record = bench.robots(SITE, 200, ROBOTS, at=T0)
    site = bench.site(SITE + "/")
    robots_doc = bench.collection.lookup(SITE + "/robots.txt")
    assert RobotsState(int(site["robots_state"])) is RobotsState.VALID
    assert site["robots_fetched"] == T0 + END and site["robots_docid"] == robots_doc
    assert site["crawl_delay"] == 2.0
    assert bench.collection.load_page(robots_doc) == ROBOTS
    assert (
        bench.record(SITE + "/robots.txt")["status"] == 200
        and bench.record(SITE + "/robots.txt")["visits"] == 1
    )
    assert (record["kind"], record["doc_id"], record["site_id"]) == ("robots", robots_doc, 1)
    assert bench.stats["harvester/fetched/robots"] == 1 and "harvester/status/200" not in bench.stats


@pytest.mark.parametrize(
    "status, state",
    [
        (404, RobotsState.MISSING),
        (410, RobotsState.MISSING),
        (429, RobotsState.UNREACHABLE),
        (500, RobotsState.UNREACHABLE),
        (503, RobotsState.UNREACHABLE),
    ],
)
def test_a_robots_txt_status_decides_the_site_s_state(bench, status, state):
    bench.seed(SITE + "/")
    bench.robots(SITE, status, b"<html>error page</html>", at=T0)
    site = bench.site(SITE + "/")
    assert RobotsState(int(site["robots_state"])) is state and site["crawl_delay"] == 0
    assert site["robots_fetched"] == T0 + END and site["robots_docid"] == bench.collection.lookup(
        SITE + "/robots.txt"
    )
    assert bench.collection.load_page(int(site["robots_docid"])) is None  # only a valid one is stored


@pytest.mark.parametrize("error", [FetchError.REFUSED, FetchError.TIMEOUT], ids=str)
def test_an_unreachable_robots_txt_is_recorded_with_its_error(bench, error):
    bench.seed(SITE + "/")
    bench.robots(SITE, at=T0, error=error)
    site = bench.site(SITE + "/")
    assert RobotsState(int(site["robots_state"])) is RobotsState.UNREACHABLE and site["errors"] == 1
    assert site["robots_fetched"] == T0 + END and site["crawl_delay"] == 0
    assert (bench.record(SITE + "/robots.txt")["status"], bench.record(SITE + "/robots.txt")["error"]) == (
        0,
        error,
    )
    assert bench.stats[f"harvester/errors/{error.label}"] == 1


def test_a_robots_txt_refused_as_a_blocked_address_leaves_the_site_s_state_as_it_was(bench):
    bench.seed(SITE + "/")
    bench.robots(SITE, at=T0, error=FetchError.BLOCKED_IP)
    site = bench.site(SITE + "/")
    assert RobotsState(int(site["robots_state"])) is RobotsState.UNKNOWN and site["robots_fetched"] == 0
    assert site["errors"] == 0 and bench.policy(SITE).due(T0 + 60)  # asked again once the setting allows it
    assert bench.record(SITE + "/robots.txt")["error"] == FetchError.BLOCKED_IP
    bench.robots(SITE, 200, b"User-agent: *\nDisallow: /x/\n", at=T0 + 60)
    bench.robots(SITE, at=T0 + 120, error=FetchError.BLOCKED_IP)
    site = bench.site(SITE + "/")
    assert (
        RobotsState(int(site["robots_state"])) is RobotsState.VALID
        and site["robots_fetched"] == T0 + 60 + END
    )


def test_a_page_refused_by_robots_txt_is_marked_done_without_a_visit(bench):
    bench.seed(SITE + "/private/a.html")
    record = bench.gather(bench.failure(SITE + "/private/a.html", FetchError.ROBOTS_DISALLOWED, at=T0))
    stored = bench.record(SITE + "/private/a.html")
    assert flags(stored) & DocFlag.ROBOTS_DISALLOWED and stored["last_visit"] == T0 + END
    assert stored["status"] == 0 and stored["visits"] == 0 and stored["errors"] == 0
    assert bench.site(SITE + "/")["fetched"] == 0 and bench.site(SITE + "/")["errors"] == 0
    assert record["error"] == "robots_disallowed" and bench.stats["harvester/pages/robots_disallowed"] == 1


@pytest.mark.parametrize(
    "second, forgotten",
    [
        (b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n", False),  # the same rules
        (b"User-agent: *\nDisallow: /secret/\n", True),  # other rules
        (None, True),  # 404: everything allowed
    ],
    ids=["same rules", "other rules", "missing"],
)
def test_a_changed_robots_txt_makes_the_pages_it_refused_fetchable_again(bench, caplog, second, forgotten):
    bench.seed(SITE + "/private/a.html", OTHER + "/private/a.html")
    bench.robots(SITE, 200, ROBOTS, at=T0)
    bench.robots(OTHER, 200, ROBOTS, at=T0)
    for url in (SITE + "/private/a.html", OTHER + "/private/a.html"):
        bench.gather(bench.failure(url, FetchError.ROBOTS_DISALLOWED, at=T0 + 10))
    with caplog.at_level(logging.INFO):
        if second is None:
            bench.robots(SITE, 404, b"", at=T0 + 8 * 86400)
        else:
            bench.robots(SITE, 200, second, at=T0 + 8 * 86400)
    assert bool(flags(bench.record(SITE + "/private/a.html")) & DocFlag.ROBOTS_DISALLOWED) is not forgotten
    assert flags(bench.record(OTHER + "/private/a.html")) & DocFlag.ROBOTS_DISALLOWED  # another site's
    assert ("pages it refused may be fetched again" in caplog.text) is forgotten


def test_a_sitemap_adds_its_urls_with_their_last_modified_and_has_no_record(bench):
    bench.seed(SITE + "/")
    known = bench.collection.lookup(SITE + "/")
    listed = [
        (SITE + "/s1.html", T0 - 3600),
        (SITE + "/s2.html", None),
        (OTHER + "/x.html", None),
        (SITE + "/", T0 - 60),
        (SITE + "/style.css", None),
    ]
    record = bench.sitemap(SITE, listed)
    assert bench.record(SITE + "/s1.html")["last_modified"] == T0 - 3600
    assert (
        bench.record(SITE + "/s1.html")["depth"] == 1
        and bench.record(SITE + "/s2.html")["last_modified"] == 0
    )
    assert bench.collection.lookup(OTHER + "/x.html")
    assert bench.collection.documents.records[known]["last_modified"] == T0 - 60
    assert bench.collection.documents.records[known]["depth"] == 0  # a known URL keeps its depth
    assert not bench.collection.lookup(SITE + "/style.css") and not bench.collection.lookup(
        SITE + "/sitemap.xml"
    )
    assert bench.site(SITE + "/")["fetched"] == 0  # the sitemap's fetch is not a page's
    assert (record["kind"], record["doc_id"]) == ("sitemap", 0)
    assert bench.stats["gatherer/sitemap_urls"] == 5
    assert bench.stats["gatherer/links/new"] == 3  # s1, s2 and x; site2's home page came with x


# -- what is not the gatherer's, and failures ---------------------------------------------------------------


def test_items_that_are_not_fetches_and_a_crawl_without_a_harvest_pass_untouched(bench, tmp_path):
    other = {"url": SITE + "/a.html"}
    assert bench.gather(other) is other
    with Bench(tmp_path / "plain", announce=False) as plain:  # no harvest_opened: a crawl of another spider
        fetch = plain.page(SITE + "/a.html", 200, html("/b.html"))
        item = plain.gather(fetch)
        assert item["url"] == SITE + "/a.html" and item["doc_id"] == 0  # the feed record, nothing written
        assert fetch.page is None and plain.collection.documents.count == 0


def test_a_fetch_that_has_no_document_is_logged_and_dropped_when_a_pipeline_fails(bench, caplog):
    fetch = Fetch(Kind.PAGE, "mailto:someone@site1.wire.test", 0, 0, 0, T0, T0 + 1, status=200, body=html())
    with caplog.at_level(logging.INFO), pytest.raises(DropItem, match="DocumentPipeline failed on mailto:"):
        bench.gather(fetch)
    [failure] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert failure.levelno == logging.ERROR and failure.exc_info and "mailto:someone" in failure.getMessage()
    assert bench.stats["gatherer/failed/DocumentPipeline"] == 1
    bench.seed(SITE + "/a.html")
    bench.gather(bench.page(SITE + "/a.html", 200, html()))  # the next item goes through
    assert bench.record(SITE + "/a.html")["status"] == 200


def test_a_link_too_long_to_store_is_left_out_and_the_page_and_its_other_links_recorded(bench):
    bench.seed(SITE + "/a.html")
    fetch = bench.gather(bench.page(SITE + "/a.html", 200, html("/" + "x" * 100_000 + ".html", "/b.html")))
    assert fetch["error"] is None and bench.record(SITE + "/a.html")["visits"] == 1
    assert bench.links(SITE + "/a.html") == [SITE + "/b.html"]


@pytest.mark.parametrize(
    "step", ["ParsePipeline", "PageStorePipeline", "LinkGraphPipeline", "MetadataPipeline"]
)
def test_a_pipeline_s_failure_is_recorded_as_a_gatherer_error_on_its_page(bench, caplog, monkeypatch, step):
    bench.seed(SITE + "/a.html", SITE + "/b.html")
    bench.gather(bench.page(SITE + "/a.html", 200, html("/c.html"), at=T0))
    [pipeline] = [p for p in bench.pipelines if type(p).__name__ == step]
    broken = (
        "_response" if step == "MetadataPipeline" else "process"
    )  # metadata: fail with its record half written

    def fail(*args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(pipeline, broken, fail)
    with caplog.at_level(logging.INFO):
        fed = bench.gather(bench.page(SITE + "/a.html", 200, html("/d.html"), at=T0 + 100))
    assert fed["error"] == "gatherer" and fed["status"] == 200
    record = bench.record(SITE + "/a.html")
    assert (record["status"], record["error"], record["errors"]) == (200, FetchError.GATHERER, 1)
    assert record["last_visit"] == T0 + 100 + END  # recorded: done in this batch
    # before the failing step: the old links kept; the metadata step comes after the link graph
    assert bench.links(SITE + "/a.html") == [SITE + ("/d.html" if step == "MetadataPipeline" else "/c.html")]
    assert bench.stats["harvester/errors/gatherer"] == 1
    assert bench.stats[f"gatherer/failed/{step}"] == 1 and bench.collection.summary()["ok"] == 0
    [failure] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert failure.exc_info and SITE + "/a.html" in failure.getMessage()
    monkeypatch.undo()
    bench.gather(bench.page(SITE + "/b.html", 200, html()))  # the next page goes through
    assert bench.record(SITE + "/b.html")["status"] == 200 and bench.record(SITE + "/b.html")["error"] == 0


def test_each_pipeline_does_its_part_in_order(bench):
    bench.seed(SITE + "/a.html")
    fetch = bench.page(SITE + "/a.html", 200, html("/b.html"))
    fetch.doc_id = fetch.site_id = 0
    names = [type(pipeline).__name__ for pipeline in bench.pipelines]
    # The WARC writer comes first, and passes every fetch by unless the harvest archives (tests/test_warc.py).
    assert names == [
        "WarcPipeline",
        "DocumentPipeline",
        "ParsePipeline",
        "PageStorePipeline",
        "NearDuplicatePipeline",
        "LinkGraphPipeline",
        "MetadataPipeline",
    ]
    _, document, parse, pagestore, _near, linkgraph, metadata = bench.pipelines
    assert document.process_item(fetch, bench.spider) is fetch and (fetch.doc_id, fetch.site_id) == (1, 1)
    assert parse.process_item(fetch, bench.spider) is fetch and [link.url for link in fetch.page.links] == [
        SITE + "/b.html"
    ]
    assert pagestore.process_item(fetch, bench.spider) is fetch and fetch.original == 1 and fetch.changed
    assert bench.record(SITE + "/a.html")["visits"] == 0  # stored, not yet recorded
    assert linkgraph.process_item(fetch, bench.spider) is fetch and fetch.links == [
        bench.collection.lookup(SITE + "/b.html")
    ]
    assert metadata.process_item(fetch, bench.spider)["links"] == 1
    assert bench.record(SITE + "/a.html")["visits"] == 1
