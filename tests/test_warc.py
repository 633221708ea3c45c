"""WARC files of a harvest (``wirescrapy.warc``): a fetch as request, response and metadata records and back,
rotation, what a kill leaves, and a collection's pages as WARC. Every file passes ``warcio check`` and reads
with FastWARC (``tests/warcfiles.py``)."""

from __future__ import annotations

import gzip
import logging
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from tests.components import Bench
from tests.warcfiles import fastwarc_records, warcio_check
from wirescrapy.items import Exchange, Fetch, FetchError, Kind
from wirescrapy.warc.export import write_collection_warc
from wirescrapy.warc.reader import archived_fetches, read_fetches, warc_files, warcinfo
from wirescrapy.warc.records import ERROR_HEADER, fetch_fields, fetch_of
from wirescrapy.warc.writer import WarcWriter

ROOT = Path(__file__).resolve().parents[1]
T0 = 1_700_000_000.0
HTML = b"<html><head><title>t</title></head><body><a href='/b.html'>b</a>" + b"x" * 500 + b"</body></html>"
INFO = {"batch": 7, "part": 1, "parts": 2, "collection": "/c"}


def page(
    url: str = "http://site1.wire.test/a.html",
    body: bytes = HTML,
    *,
    doc_id: int = 3,
    gzipped: bool = False,
    **fields,
) -> Fetch:
    """A page's fetch as the spider makes it, with the exchange the ReceivedMiddleware kept."""
    raw = gzip.compress(body, mtime=0) if gzipped else body
    headers = [(b"Content-Type", b"text/html; charset=utf-8"), (b"Transfer-Encoding", b"chunked")]
    if gzipped:
        headers.append((b"Content-Encoding", b"gzip"))
    exchange = Exchange(
        b"GET",
        [(b"Host", b"site1.wire.test"), (b"User-Agent", b"wirescrapy/0.1")],
        "HTTP/1.1",
        200,
        headers,
        raw,
    )
    fetch = Fetch(
        Kind.PAGE,
        url,
        doc_id,
        1,
        2,
        started=T0,
        ended=T0 + 0.5,
        status=200,
        mime="text/html",
        content_type="text/html; charset=utf-8",
        body=body,
        raw_length=len(raw),
        latency=0.1,
        ip="127.0.0.1",
        exchange=exchange,
    )
    for name, value in fields.items():
        setattr(fetch, name, value)
    return fetch


def written(directory: Path, *fetches: Fetch, max_size: int = 10**9) -> list[Path]:
    writer = WarcWriter(directory, max_size, INFO)
    for fetch in fetches:
        writer.write(fetch)
    writer.close()
    return writer.files


def test_a_fetch_is_a_request_a_response_as_received_and_its_metadata(tmp_path):
    compressed = page(gzipped=True)
    stopped = page("http://site1.wire.test/big.html", HTML[:100], doc_id=4, truncated=True)
    failed = Fetch(
        Kind.PAGE,
        "http://site2.wire.test/",
        5,
        2,
        0,
        started=T0,
        ended=T0 + 1,
        error=FetchError.DNS,
        message="no such host",
    )
    robots = page(
        "http://site1.wire.test/robots.txt",
        b"User-agent: *\nDisallow: /x\n",
        doc_id=0,
        kind=Kind.ROBOTS,
        origin="http://site1.wire.test",
    )
    files = written(tmp_path, compressed, stopped, failed, robots)
    assert len(files) == 1
    warcio_check(*files)
    records = fastwarc_records(files[0])
    assert [kind for kind, _, _ in records] == ["warcinfo"] + ["request", "response", "metadata"] * 2 + [
        "metadata"
    ] + ["request", "response", "metadata"]
    by_uri = {(kind, uri): headers for kind, uri, headers in records}
    assert by_uri[("response", stopped.url)]["WARC-Truncated"] == "length"
    assert "WARC-Truncated" not in by_uri[("response", compressed.url)]
    assert by_uri[("metadata", failed.url)][ERROR_HEADER] == "dns"
    assert by_uri[("metadata", robots.url)]["WIRE-Fetch-Kind"] == "robots"
    assert warcinfo(files[0])["wirescrapy-batch"] == "7" and warcinfo(files[0])["wirescrapy-part"] == "1"

    archived = list(read_fetches(files[0]))
    assert [a.fields["url"] for a in archived] == [compressed.url, stopped.url, failed.url, robots.url]
    first = archived[0]
    # The body as received: still gzip, with the server's Content-Encoding; the chunked coding Twisted removed
    # is kept under another name.
    assert first.body == compressed.exchange.body and gzip.decompress(first.body) == HTML
    assert ("Content-Encoding", "gzip") in first.headers and (
        "X-Wire-Transfer-Encoding",
        "chunked",
    ) in first.headers
    assert first.fields["decoded"] and not archived[1].fields["decoded"]
    for original, back in zip((compressed, stopped, failed, robots), archived, strict=True):
        body = gzip.decompress(back.body) if back.fields["decoded"] else back.body
        again = fetch_of(back.fields, body)
        assert fetch_fields(again) | {"decoded": back.fields["decoded"]} == fetch_fields(original)
        assert again.body == original.body


def test_files_rotate_at_their_size_each_beginning_with_a_warcinfo(tmp_path):
    fetches = [page(f"http://site1.wire.test/{n}.html", doc_id=n + 1) for n in range(40)]
    files = written(tmp_path, *fetches, max_size=5000)
    assert len(files) > 3 and files == warc_files(tmp_path)
    warcio_check(*files)
    for file in files:
        assert fastwarc_records(file)[0][0] == "warcinfo"
        assert warcinfo(file)["wirescrapy-parts"] == "2"
    urls = [a.fields["url"] for file in files for a in read_fetches(file)]
    assert urls == [f.url for f in fetches]
    assert sorted(archived_fetches(tmp_path, 7, 1)) == sorted((f.url, f.doc_id) for f in fetches)
    assert not list(archived_fetches(tmp_path, 7, 0))  # another part's


def test_a_torn_tail_is_left_and_the_fetches_before_it_read(tmp_path, caplog):
    (file,) = written(tmp_path, *(page(f"http://site1.wire.test/{n}.html", doc_id=n + 1) for n in range(5)))
    data = file.read_bytes()
    file.write_bytes(data[:-200])  # the last group's metadata record cut short
    with caplog.at_level(logging.WARNING):
        assert len(list(read_fetches(file))) == 4
    assert "torn" in caplog.text


WRITE_FOREVER = """
import sys
from tests.test_warc import page
from wirescrapy.warc.writer import WarcWriter
writer = WarcWriter(sys.argv[1], 200_000, {"batch": 1, "part": 0})
n = 0
while True:
    n += 1
    writer.write(page(f"http://site1.wire.test/{n}.html", doc_id=n))
    if n == 50:
        print("writing", flush=True)
"""


def test_a_kill_leaves_every_finished_record_readable(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-c", WRITE_FOREVER, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdout.readline() == b"writing\n"
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("*.warc.gz"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # killed while it writes its third file
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    files = warc_files(tmp_path)
    assert len(files) > 1  # rotated while it wrote
    warcio_check(*files)  # every record whole, to the end of every file
    numbers = [int(a.fields["url"].rsplit("/", 1)[1].split(".")[0]) for f in files for a in read_fetches(f)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) > 50


@pytest.fixture
def bench(tmp_path):
    with Bench(tmp_path) as bench:
        yield bench


def test_a_collection_is_written_as_response_records_and_its_duplicates_as_revisits(bench, tmp_path):
    a, b, c = (
        "http://site1.wire.test/a.html",
        "http://site1.wire.test/b.html",
        "http://site1.wire.test/c.html",
    )
    bench.seed(a, b, c)
    bench.gather(bench.page(a, body=HTML))
    bench.gather(bench.page(b, body=HTML))  # an exact duplicate of a
    bench.gather(bench.page(c, body=b"<html><body>other</body></html>"))
    path = tmp_path / "collection.warc.gz"
    assert write_collection_warc(bench.collection, path) == 3
    warcio_check(path)
    records = fastwarc_records(path)
    kinds = {uri: kind for kind, uri, _ in records}
    assert kinds[a] == "response" and kinds[c] == "response" and kinds[b] == "revisit"
    revisit = next(headers for kind, uri, headers in records if uri == b)
    assert revisit["WARC-Refers-To-Target-URI"] == a
    assert records[0][0] == "warcinfo" and not list(tmp_path.glob(".*.tmp"))


def test_every_record_is_its_own_gzip_member(tmp_path):
    """WARC/1.1 Annex D: a reader can start at any record's offset."""
    (path,) = written(tmp_path, page(), page("http://site1.wire.test/b.html", gzipped=True))
    data, members = path.read_bytes(), []
    while data:
        member = zlib.decompressobj(zlib.MAX_WBITS + 16)
        members.append(member.decompress(data))
        data = member.unused_data
    assert len(members) == 1 + 2 * 3  # the warcinfo, then a request, a response and a metadata record a fetch
    assert all(member.startswith(b"WARC/1.1\r\n") for member in members)
    assert [member.split(b"WARC-Type: ")[1].split(b"\r\n")[0] for member in members] == [
        b"warcinfo",
        *[b"request", b"response", b"metadata"] * 2,
    ]
