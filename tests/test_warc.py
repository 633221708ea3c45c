"""WARC files of a harvest (``wirescrapy.warc``): a fetch as request, response and metadata records and back,
rotation, what a kill leaves, and a collection's pages as WARC. Every file passes ``warcio check`` and reads
with FastWARC (``tests/warcfiles.py``)."""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from cdxj_indexer.main import write_cdx_index

from tests.components import Bench
from tests.warcfiles import fastwarc_records, warcio_check
from wirescrapy.items import Exchange, Fetch, FetchError, Kind
from wirescrapy.manager.batch import BatchError, BatchSite, BatchURL, read_batch, site_part, write_batch
from wirescrapy.warc import digests as store
from wirescrapy.warc import index
from wirescrapy.warc.digests import PayloadDigests, payload_digest
from wirescrapy.warc.export import write_collection_warc
from wirescrapy.warc.reader import Payloads, archived_fetches, read_fetches, warc_files, warcinfo
from wirescrapy.warc.records import (
    ERROR_HEADER,
    IDENTICAL_PAYLOAD,
    JSON_CONTENT_TYPE,
    NOT_MODIFIED,
    Revisit,
    fetch_fields,
    fetch_of,
    warc_date,
)
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


def not_modified(url: str = "http://site1.wire.test/a.html", *, conditional: bool = True, **fields) -> Fetch:
    """A 304 to a revisit, with the validators of the stored page when ``conditional``."""
    fetch = page(url, b"", status=304, **fields)
    fetch.exchange.status, fetch.exchange.body = 304, b""
    fetch.exchange.headers = [(b"ETag", b'"v1"')]
    if conditional:
        fetch.exchange.request_headers.append((b"If-None-Match", b'"v1"'))
    return fetch


def written(directory: Path, *fetches: Fetch, max_size: int = 10**9, revisits: bool = False) -> list[Path]:
    """The files of a writer of ``fetches``; with ``revisits``, a harvest's with a collection."""
    writer = WarcWriter(directory, max_size, INFO, PayloadDigests(directory) if revisits else None)
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
    assert "torn" in caplog.text and f"{file} at offset " in caplog.text


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


def revisit_headers(file: Path) -> list[dict]:
    return [headers for kind, _, headers in fastwarc_records(file) if kind == "revisit"]


def test_a_payload_the_directory_holds_is_a_revisit_to_its_original_in_this_cycle_or_a_later_one(tmp_path):
    a = page()
    copy = page("http://site1.wire.test/copy.html", doc_id=4, started=T0 + 5, ended=T0 + 6)
    other = page("http://site1.wire.test/other.html", HTML + b"!", doc_id=5)
    (first,) = written(tmp_path, a, copy, other, revisits=True)
    [revisit] = revisit_headers(first)
    assert revisit["WARC-Target-URI"] == copy.url and revisit["WARC-Profile"] == IDENTICAL_PAYLOAD
    assert revisit["WARC-Refers-To-Target-URI"] == a.url
    assert revisit["WARC-Refers-To-Date"] == "2023-11-14T22:13:20Z"  # a's response, T0
    assert revisit["WARC-Payload-Digest"] == payload_digest(HTML)
    # The next cycle's writer (another process) knows the payloads from the store the first one left.
    again = page(started=T0 + 86400, ended=T0 + 86401)
    (second,) = set(written(tmp_path, again, other, revisits=True)) - {first}
    assert [h["WARC-Refers-To-Target-URI"] for h in revisit_headers(second)] == [a.url, other.url]
    warcio_check(first, second)
    # Read back, a revisit is its response: the headers it came with, the original's body.
    for file, fetches in ((first, (a, copy, other)), (second, (again, other))):
        archived = list(read_fetches(file))
        assert [(x.fields["url"], x.status, x.body) for x in archived] == [
            (f.url, 200, f.exchange.body) for f in fetches
        ]


def test_a_writer_with_no_store_stores_every_payload(tmp_path):
    (file,) = written(tmp_path, page(), page("http://site1.wire.test/copy.html", doc_id=4))
    assert not revisit_headers(file) and not (tmp_path / store.FILENAME).exists()


def stored(directory: Path, *lines: tuple[str, float, str]) -> PayloadDigests:
    """A store of ``directory`` holding ``lines`` (digest, Unix time, URI), as harvests would leave it."""
    directory.mkdir(parents=True, exist_ok=True)
    digests = PayloadDigests(directory)
    for digest, at, uri in lines:
        digests.archived(digest, uri, warc_date(at))
    digests.commit()
    return PayloadDigests(directory)


def test_a_store_ships_the_last_payload_of_each_uri_of_some_sites_and_the_record_that_holds_it(tmp_path):
    a, b, c = (payload_digest(bytes([n])) for n in range(3))
    one, two = "http://site1.wire.test", "http://site2.wire.test"
    full = stored(
        tmp_path,
        (a, T0, f"{two}/x.html"),  # the first record of a: another site's
        (a, T0 + 1, f"{one}/copy.html"),
        (b, T0 + 2, f"{one}/copy.html"),  # changed, then changed back
        (a, T0 + 3, f"{one}/copy.html"),
        (c, T0 + 4, f"{one}/c.html"),
        (b, T0 + 5, f"{two}/b.html"),
    )
    part = tmp_path / "part"
    part.mkdir()
    (part / store.FILENAME).write_bytes(full.for_sites({one}))
    (tmp_path / "out").mkdir()
    shipped = PayloadDigests(tmp_path / "out", shipped=part / store.FILENAME)
    for uri in (f"{one}/copy.html", f"{one}/c.html"):
        assert shipped.last(uri) == full.last(uri)
        assert shipped.original(shipped.last(uri)) == full.original(full.last(uri))
    assert shipped.original(a) == (f"{two}/x.html", warc_date(T0))  # a record of another part's directory
    assert shipped.original(b) is None and shipped.last(f"{two}/b.html") is None  # not of these sites
    # Read-only: what the harvest archives goes to its own store.
    shipped.archived(b, f"{one}/new.html", warc_date(T0 + 9))
    shipped.commit()
    assert (part / store.FILENAME).read_bytes() == full.for_sites({one})
    assert PayloadDigests(tmp_path / "out").original(b) == (f"{one}/new.html", warc_date(T0 + 9))


def test_a_batch_ships_each_part_its_sites_payloads_checked_as_its_other_files(tmp_path):
    one, two = "http://site1.wire.test:80", "http://site2.wire.test:80"
    assert site_part(one, 2) != site_part(two, 2)
    collection = tmp_path / "collection"
    stored(collection, (payload_digest(b"1"), T0, f"{one}/a.html"), (payload_digest(b"2"), T0, f"{two}/b"))
    urls = [BatchURL(1, 1, 0, False, 1.0, T0, f"{one}/a.html"), BatchURL(2, 2, 0, False, 1.0, T0, f"{two}/b")]
    sites = [BatchSite(1, one), BatchSite(2, two)]
    for path in write_batch(collection / "batches", 1, urls, sites, parts=2):
        batch = read_batch(path)
        [url] = batch.urls
        digests = PayloadDigests(tmp_path / "out", shipped=path / store.FILENAME)
        assert len(digests) == 1 and digests.last(url.url)
        (path / store.FILENAME).write_bytes((path / store.FILENAME).read_bytes()[:-1])
        with pytest.raises(BatchError, match="payload-digests.txt: size or checksum differs"):
            read_batch(path)
    # A collection that has ingested no payload ships none.
    (path,) = write_batch(tmp_path / "other" / "batches", 1, urls, sites)
    assert not (path / store.FILENAME).exists() and read_batch(path).urls == urls


def test_a_reader_gives_the_digest_of_each_whole_payload_and_looks_in_earlier_parts(tmp_path, caplog):
    cut = page("http://site1.wire.test/big.html", doc_id=4, truncated=True)
    (first,) = written(tmp_path / "first", page(), revisits=True)
    (second,) = written(tmp_path / "second", cut, not_modified(), revisits=True)
    assert [a.digest for a in read_fetches(first)] == [payload_digest(HTML)]
    assert [a.digest for a in read_fetches(second)] == ["", ""]
    # A detached harvest given the first's store writes a revisit to its record, in another directory.
    shipped = tmp_path / "shipped.txt"
    shipped.write_bytes(PayloadDigests(tmp_path / "first").for_sites({"http://site1.wire.test"}))
    third = tmp_path / "third"
    writer = WarcWriter(third, 10**9, INFO, PayloadDigests(third, shipped=shipped))
    writer.write(page("http://site1.wire.test/copy.html", doc_id=5))
    writer.close()
    assert [h["WARC-Profile"] for h in revisit_headers(writer.files[0])] == [IDENTICAL_PAYLOAD]
    warcio_check(writer.files[0])
    [back] = read_fetches(writer.files[0], Payloads(warc_files(third), earlier=[first]))
    assert back.body == HTML and back.digest == payload_digest(HTML)
    with caplog.at_level(logging.ERROR):
        assert list(read_fetches(writer.files[0])) == []  # its own directory alone does not hold it
    assert "which no WARC file read" in caplog.records[-1].getMessage()


def test_a_304_to_a_conditional_request_is_a_server_not_modified_revisit(tmp_path):
    copy = page("http://site1.wire.test/copy.html", doc_id=4, started=T0 + 5, ended=T0 + 6)
    later = {"started": T0 + 86400, "ended": T0 + 86401}
    (file,) = written(
        tmp_path, page(), copy, not_modified(**later), not_modified(copy.url, **later), revisits=True
    )
    _, revisit, copy_revisit = revisit_headers(file)
    # The record of the same URI that held the payload the server says is unchanged: its date alone.
    assert revisit["WARC-Profile"] == NOT_MODIFIED
    assert revisit["WARC-Refers-To-Date"] == "2023-11-14T22:13:20Z"
    assert copy_revisit["WARC-Refers-To-Date"] == "2023-11-14T22:13:25Z"  # copy's own revisit, not page's
    assert all(
        "WARC-Refers-To-Target-URI" not in headers and "WARC-Payload-Digest" not in headers
        for headers in (revisit, copy_revisit)
    )
    warcio_check(file)
    archived = list(read_fetches(file))[2]
    assert archived.status == 304 and archived.body == b"" and ("ETag", '"v1"') in archived.headers
    # A writer that knows no earlier payload: the profile alone. A 304 to no condition is a response.
    detached = tmp_path / "detached"
    (file,) = written(
        detached, not_modified(), not_modified("http://site1.wire.test/b.html", conditional=False)
    )
    [revisit] = revisit_headers(file)
    assert revisit["WARC-Profile"] == NOT_MODIFIED and "WARC-Refers-To-Date" not in revisit
    assert [kind for kind, _, _ in fastwarc_records(file)].count("response") == 1
    assert [a.status for a in read_fetches(file)] == [304, 304]


def test_a_revisit_holds_its_fetchs_fields_where_earlier_harvests_wrote_a_metadata_record(tmp_path):
    fetch = not_modified(error=FetchError.REDIRECT_LOOP)
    (file,) = written(tmp_path, page(), fetch, revisits=True)
    records = fastwarc_records(file)
    assert [kind for kind, _, _ in records] == [
        "warcinfo",
        "request",
        "response",
        "metadata",
        "revisit",  # no request: what a revisit's says is in the harvest's other requests and the profile
    ]
    revisit = records[-1][2]
    assert revisit["WIRE-Fetch-Kind"] == "page" and revisit[ERROR_HEADER] == "redirect_loop"
    assert json.loads(revisit["WIRE-Fetch"]) == fetch_fields(fetch)
    warcio_check(file)
    # As earlier harvests wrote it: a request, the revisit with no fields, then the fetch's metadata record.
    earlier = tmp_path / "earlier"
    writer = WarcWriter(earlier, 10**9, INFO)
    revisit = Revisit(NOT_MODIFIED)
    request = writer.records.records(fetch)[0]
    [response] = writer.records.records(fetch, revisit)
    response.rec_headers.remove_header("WIRE-Fetch")
    block = f"WIRE-Fetch: {json.dumps(fetch_fields(fetch))}\r\n".encode()
    metadata = writer.records.create_warc_record(
        fetch.url,
        "metadata",
        payload=io.BytesIO(block),
        length=len(block),
        warc_content_type="application/warc-fields",
        warc_headers_dict={"WARC-Refers-To": response.rec_headers.get_header("WARC-Record-ID")},
    )
    writer.write_records([request, response, metadata])
    writer.close()
    for path in (file, *writer.files):
        back = list(read_fetches(path))[-1]
        assert fetch_fields(fetch_of(back.fields, back.body)) == fetch_fields(fetch) and back.status == 304


def test_a_truncated_or_refused_body_is_never_an_original(tmp_path):
    cut = page("http://site1.wire.test/big.html", HTML, doc_id=4, truncated=True)
    (file,) = written(tmp_path, cut, page(), revisits=True)
    assert not revisit_headers(file)


def test_the_store_names_only_records_of_closed_files_and_passes_a_torn_line_over(tmp_path):
    writer = WarcWriter(tmp_path, 10**9, INFO, PayloadDigests(tmp_path))
    writer.write(page())
    assert not (tmp_path / store.FILENAME).exists()  # a kill now: the next harvest stores the payload again
    writer.close()
    lines = (tmp_path / store.FILENAME).read_bytes()
    assert lines.count(b"\n") == 2 and payload_digest(HTML).encode() in lines
    (tmp_path / store.FILENAME).write_bytes(lines + b"sha1:TORN 2023")
    digests = PayloadDigests(tmp_path)
    assert len(digests) == 1
    assert digests.original(payload_digest(HTML)) == (page().url, "2023-11-14T22:13:20Z")


def test_a_payload_that_does_not_match_its_digest_is_one_error_and_its_fetch_passed_over(tmp_path, caplog):
    (file,) = written(tmp_path, page(), page("http://site1.wire.test/b.html", doc_id=4))
    records = list(_members(file.read_bytes()))  # the warcinfo, then the first fetch's request, response…
    response = gzip.decompress(records[2]).replace(b"xxxx", b"yyyy", 1)  # the same length, another payload
    file.write_bytes(b"".join(records[:2]) + gzip.compress(response) + b"".join(records[3:]))
    with caplog.at_level(logging.ERROR):
        archived = list(read_fetches(file))
    assert [a.fields["url"] for a in archived] == ["http://site1.wire.test/b.html"]
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    offset = len(records[0]) + len(records[1])
    assert f"{file} at offset {offset}: the payload does not match its digest" in line
    assert "\n" not in line


def test_a_revisit_to_a_payload_no_file_holds_is_one_error(tmp_path, caplog):
    (file,) = written(tmp_path, page(), page("http://site1.wire.test/copy.html", doc_id=4), revisits=True)
    records = list(_members(file.read_bytes()))
    file.write_bytes(records[0] + b"".join(records[4:]))  # the original's group gone
    with caplog.at_level(logging.ERROR):
        assert list(read_fetches(file)) == []
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert f"{file} at offset {len(records[0])}: a revisit to the payload" in line  # the revisit, no request


def _members(data: bytes):
    """Each gzip member of ``data``, compressed as it is."""
    while data:
        member = zlib.decompressobj(zlib.MAX_WBITS + 16)
        member.decompress(data)
        yield data[: len(data) - len(member.unused_data)]
        data = member.unused_data


def cdxj_indexer(file: Path) -> str:
    """The sorted CDXJ index cdxj-indexer writes of ``file``'s responses and revisits."""
    out = io.StringIO()
    write_cdx_index(out, [str(file)], {"sort": True, "records": "response,revisit,resource"})
    return "".join(line for line in out.getvalue().splitlines(True) if not index.not_modified(line))


def rendered(url: str = "http://site1.wire.test/js/a.html") -> Fetch:
    """A render's fetch, as the spider makes it of Splash's answer: no exchange, the DOM as the body."""
    return Fetch(
        Kind.PAGE,
        url,
        9,
        1,
        1,
        started=T0,
        ended=T0 + 1,
        status=200,
        mime="text/html",
        content_type="text/html; charset=utf-8",
        body=b"<html><body><a href='/b.html'>built by a script</a></body></html>",
        raw_body=b"<html><body><script>build()</script></body></html>",
        render=1,
    )


def test_a_render_is_archived_as_the_dom_the_crawler_saw(tmp_path):
    fetch = rendered()
    (file,) = written(tmp_path, fetch)
    warcio_check(file)
    kinds = [(kind, headers.get("Content-Type")) for kind, _, headers in fastwarc_records(file)]
    assert kinds[1:] == [("resource", "text/html; charset=utf-8"), ("metadata", "application/warc-fields")]
    [back] = read_fetches(file)
    again = fetch_of(back.fields, back.body)
    assert again.body == fetch.body and again.raw_body == fetch.raw_body and again.render == 1


def test_each_file_is_indexed_as_it_is_closed_as_cdxj_indexer_indexes_it(tmp_path):
    fetches = [page(), page("http://site1.wire.test/copy.html", doc_id=4), not_modified(), rendered()]
    fetches += [
        page(f"http://site1.wire.test/{n}.html", HTML * n, doc_id=n + 5, gzipped=n % 2) for n in range(9)
    ]
    writer = WarcWriter(tmp_path, 6000, INFO, PayloadDigests(tmp_path))
    for fetch in fetches:
        writer.write(fetch)
        assert not index.index_path(writer.path).exists() if writer.path else True  # not while it is open
    writer.close()
    assert len(writer.files) > 2
    lines = 0
    for file in writer.files:
        text = index.index_path(file).read_text()
        assert text == cdxj_indexer(file)
        lines += text.count("\n")
    assert lines == len(fetches) - 1  # a line a fetch but the 304; no request, no metadata
    merged = list(index.merged(writer.files))
    assert merged == sorted(merged) and len(merged) == lines


def test_a_file_with_no_index_is_indexed_and_an_index_past_the_end_is_one_error(tmp_path):
    files = written(tmp_path, page(), page("http://site1.wire.test/b.html", doc_id=4), max_size=1000)
    index.index_path(files[0]).unlink()  # a harvester killed before it closed the file
    assert len(list(index.merged(files))) == 2 and index.index_path(files[0]).exists()
    data = files[1].read_bytes()
    files[1].write_bytes(data[: len(data) // 2])  # cut short after it was indexed
    with pytest.raises(index.BadIndex, match=f"past the end of {files[1]}") as error:
        list(index.merged(files))
    assert "at offset " in str(error.value) and "\n" not in str(error.value)


def test_the_json_metadata_of_earlier_harvests_reads_the_same(tmp_path):
    fetch = page()
    writer = WarcWriter(tmp_path, 10**9, INFO)
    records = writer.records.records(fetch)
    fields = json.dumps(fetch_fields(fetch)).encode()
    old = writer.records.create_warc_record(
        fetch.url,
        "metadata",
        payload=io.BytesIO(fields),
        length=len(fields),
        warc_content_type=JSON_CONTENT_TYPE,
        warc_headers_dict={"WARC-Refers-To": records[1].rec_headers.get_header("WARC-Record-ID")},
    )
    writer.write_records([*records[:2], old])
    writer.close()
    [back] = read_fetches(writer.files[0])
    assert fetch_fields(fetch_of(back.fields, back.body)) == fetch_fields(fetch)
