"""benchmarks.realweb_makespan's checks: a site's wait from the documents the crawl knew of it, where the
time between two requests of the bound's site goes, and its idle time in each batch."""

from __future__ import annotations

import pytest

from benchmarks.realweb_makespan import idle_per_batch, known_site_docs, request_latency
from wirescrapy.collection import Collection
from wirescrapy.testing import nginx


def test_the_makespan_check_knows_a_site_s_wait_from_the_documents_its_batches_listed(tmp_path):
    """A crawl cut short (--max-cycles) may have fetched 100 pages or fewer of a site its batches already knew
    more than 100 documents of: the harvester gave it the large-site wait, and so does the check."""
    for batch, docs in (("000001", 40), ("000002", 130)):
        directory = tmp_path / "batches" / batch
        directory.mkdir(parents=True)
        (directory / "sites.jsonl").write_text(
            f'{{"siteid": 1, "origin": "http://Python.realweb.test:8080", "docs": {docs}}}\n'
            '{"siteid": 2, "origin": "http://sqlite.realweb.test:8080", "docs": 7}\n',
            encoding="utf-8",
        )
    split = tmp_path / "batches" / "000003" / "part-1"
    split.mkdir(parents=True)
    (split / "sites.jsonl").write_text(
        '{"siteid": 2, "origin": "http://sqlite.realweb.test:8080", "docs": 9}\n', encoding="utf-8"
    )
    assert known_site_docs(tmp_path) == {"python.realweb.test": 130, "sqlite.realweb.test": 9}


def test_the_makespan_check_knows_a_site_found_large_in_the_middle_of_a_batch(tmp_path):
    """The harvester gives a site the large-site wait once the collection knows more than 100 of its
    documents, in the middle of a batch too: the check reads the collection's site records."""
    with Collection(tmp_path) as collection:
        for n in range(130):
            collection.add_url(f"http://debref.realweb.test:8080/{n}.html", depth=1)
        collection.add_url("http://git.realweb.test:8080/", depth=0)
    batch = tmp_path / "batches" / "000001"
    batch.mkdir(parents=True)
    (batch / "sites.jsonl").write_text(
        '{"siteid": 1, "origin": "http://debref.realweb.test:8080", "docs": 1}\n', encoding="utf-8"
    )
    assert known_site_docs(tmp_path) == {"debref.realweb.test": 130, "git.realweb.test": 1}


def test_the_makespan_latency_splits_the_bound_s_site_s_time_between_two_requests():
    """``--latency``: the bound's site's requests matched with the harvester's items by URL; the time from one
    to the next split into the request's way, the response's way back and read, and the reactor late; a gap
    across a batch start is not counted as late."""
    host = "apache.realweb.test"
    requests = [
        nginx.Request(10.000, 10.010, host, 200, "GET /a HTTP/1.1", uri="/a"),
        nginx.Request(10.062, 10.070, host, 200, "GET /b?x=1 HTTP/1.1", uri="/b?x=1"),
        nginx.Request(12.000, 12.010, host, 200, "GET /c HTTP/1.1", uri="/c"),
        nginx.Request(10.5, 10.6, "git.realweb.test", 200, "GET /a HTTP/1.1", uri="/a"),
    ]
    fetches = [
        {"url": f"http://{host}:8080/a", "started": 9.999, "ended": 10.011},
        {"url": f"http://{host}:8080/b?x=1", "started": 10.061, "ended": 10.072},  # 0 ms late
        {"url": f"http://{host}:8080/c", "started": 11.999, "ended": 12.012},
        {"url": "http://git.realweb.test:8080/a", "started": 10.4, "ended": 10.7},
    ]
    line = request_latency(requests, host, 0.05, [(11.0, "batch")], fetches)
    assert line == (
        f"latency: {host}, 3 requests: sent to nginx's start 1.00 ms; nginx's end to the last byte "
        "read 1.67 ms (sum 0.0 s); the wait's end to the next sent 0.00 ms (sum 0.0 s; 0 of 5 ms or "
        "more, sum 0.0 s); inside batches, nginx's whole ms"
    )
    fetches[1]["started"] = 10.071  # 10 ms late
    assert "the wait's end to the next sent 10.00 ms (sum 0.0 s; 1 of 5 ms or more" in request_latency(
        requests, host, 0.05, [(11.0, "batch")], fetches
    )
    assert request_latency(requests, "python.realweb.test", 0.05, [], fetches) == (
        "latency: no fetch of python.realweb.test matched in the harvester's items"
    )


def test_the_bound_s_site_s_idle_time_beyond_its_waits_is_split_among_the_batches():
    """Batches queued at 0 and 10 s. The bound's site starts 1 s after the crawl's first request, keeps its
    wait of 0.05 s once, then waits 2.95 s across the batch start (1.95 of them in the first batch), and ends
    1 s before the crawl's last response."""
    host, other = "apache.realweb.test", "git.realweb.test"
    requests = [
        nginx.Request(0.0, 0.5, other, 200, "GET / HTTP/1.1"),
        nginx.Request(1.0, 2.0, host, 200, "GET / HTTP/1.1"),
        nginx.Request(2.05, 8.0, host, 200, "GET /a HTTP/1.1"),
        nginx.Request(11.0, 12.0, host, 200, "GET /b HTTP/1.1"),
        nginx.Request(12.0, 13.0, other, 200, "GET /a HTTP/1.1"),
    ]
    assert idle_per_batch(requests, host, 0.05, [10.0, 0.0]) == pytest.approx([1.0 + 1.95, 1.0 + 1.0])
    assert idle_per_batch(requests, "python.realweb.test", 0.05, [0.0]) == [0.0]  # no request of it
