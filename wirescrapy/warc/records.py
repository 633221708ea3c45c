"""One fetch as WARC/1.1 records, and back: what the harvester writes and ``scrapy ingest`` reads.

Every :class:`~wirescrapy.items.Fetch` the harvester hands over is written as a group of records, in this
order, with one ``WARC-Record-ID`` tying them together:

``request`` (when a response came that is not written as a revisit)
    ``application/http;msgtype=request``: the request line and the headers Scrapy sent (``Host`` added when
    Scrapy left it to Twisted). ``WARC-Concurrent-To`` names the response.
``response`` (when a response came)
    ``application/http;msgtype=response``: the status line (Scrapy keeps no reason phrase: the status's
    standard one), the headers as received and the body **as received**: a gzip- or br-encoded body stays
    encoded, with its ``Content-Encoding`` as the server sent it. Twisted removes the chunked transfer
    coding before Scrapy sees a body, so a ``Transfer-Encoding`` header is kept as
    ``X-Wire-Transfer-Encoding`` (the body in the record is not chunked). A body stopped at its size limit
    has ``WARC-Truncated: length``; one stopped after its headers (a media type not accepted) is empty, with
    ``WARC-Truncated: unspecified``. ``WARC-IP-Address`` is the address it came from.
``revisit`` (in place of the response and its request, of a 304 or of a payload the archive holds)
    ``application/http;msgtype=response`` with the status line and headers of the response and no body, of
    one of two WARC/1.1 profiles (:class:`Revisit`). ``identical-payload-digest``: a whole body (of any
    status) that, as received, is one the archive's directory holds already, at this URL or another, from
    this harvest or an earlier one (:mod:`~wirescrapy.warc.digests`). It carries the payload's
    ``WARC-Payload-Digest`` and, when the archive knows it, the record that holds it
    (``WARC-Refers-To-Target-URI``, ``WARC-Refers-To-Date``): pywb finds the payload by them.
    ``server-not-modified``: a 304 to a conditional request (``If-None-Match`` or ``If-Modified-Since``),
    written by every harvest. It carries ``WARC-Refers-To-Date`` alone, when the archive knows it: the first
    record of the same URI that held its last payload. The profile says the payload is the one whose
    validators were sent, so neither its digest nor the URI would add anything.
``resource`` (a render: no response of its own)
    ``text/html; charset=utf-8``: the DOM Splash rendered, which is what the crawler saw and parsed, so that a
    replay tool shows the page as the crawl had it. The raw HTML the site sent is in the metadata's JSON.
``metadata`` (last; for every fetch but a revisit's)
    ``application/warc-fields`` with one field, ``WIRE-Fetch``, whose value is one line of JSON: what the
    harvester concluded (:func:`fetch_fields`: kind, doc-id, depth, times, status, error kind, redirect,
    sitemap entries…). Being warc-fields, as Heritrix's metadata records are, replay tools leave it out of
    their indexes (cdxj-indexer, pywb), so that a page replays as its response and never as this record.
    A record of earlier harvests, ``application/vnd.wirescrapy.fetch+json`` with the JSON alone, reads the
    same. With the headers
    ``WIRE-Fetch-Kind`` (``page``, ``robots``, ``sitemap``) and, for a failure with no response (DNS, timeout,
    refused, blocked address, robots.txt disallows…), ``WIRE-Fetch-Error`` (its :class:`FetchError` label),
    so that another tool can list the failures without reading JSON. ``WARC-Refers-To`` names the response
    (or its revisit).

A revisit has no ``metadata`` record and no ``request``: its own WARC header holds the fetch's named fields
(``WIRE-Fetch``, ``WIRE-Fetch-Kind``, ``WIRE-Fetch-Error``), extension fields as WARC/1.1 allows. A recrawl of
unchanged pages is mostly revisits, and each record of its own (its WARC header, digests and gzip member)
weighs about as much as the revisit. WARC/1.1 makes a ``request`` record optional, and Heritrix has a switch
for it (``writeRequests``). pywb reads one only to match a request with a body (a POST). A revisit's would
hold what every request of the harvest sends, and for a 304 the validators the request sent: the
server-not-modified profile states that they matched. A file of earlier harvests, with a revisit's
``request`` before it or its ``metadata`` record after it, reads the same.

A group is complete when its ``metadata`` record, or a revisit with ``WIRE-Fetch``, is there: a reader takes a
``request`` or ``response`` without one as the torn end of a killed write and leaves it. The JSON has
``"format": "wirescrapy-fetch/1"``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from io import BytesIO

from warcio.recordbuilder import RecordBuilder
from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date

from wirescrapy.items import Fetch, FetchError, Kind

FETCH_FORMAT = "wirescrapy-fetch/1"
FETCH_CONTENT_TYPE = "application/warc-fields"
FETCH_FIELD = "WIRE-Fetch"
JSON_CONTENT_TYPE = "application/vnd.wirescrapy.fetch+json"  # the metadata of earlier harvests
KIND_HEADER = "WIRE-Fetch-Kind"
ERROR_HEADER = "WIRE-Fetch-Error"
WARC_VERSION = "WARC/1.1"
IDENTICAL_PAYLOAD = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
_CONDITIONAL = (b"if-none-match", b"if-modified-since")
_HOP_BY_HOP = b"transfer-encoding"


def warc_date(seconds: float) -> str:
    """A WARC/1.1 date (microseconds) of Unix ``seconds``."""
    moment = datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)
    return datetime_to_iso_date(moment, use_micros=True)


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


# What the gatherer's pipelines fill in, and what the records hold apart from the JSON.
_NOT_IN_JSON = frozenset({"body", "exchange", "page", "original", "changed", "links"})
_FIELDS = tuple(f.name for f in dataclasses.fields(Fetch) if f.name not in _NOT_IN_JSON)
# Fields of bytes (header values as sent, a render's raw HTML): in JSON as the str of the same code points.
_BYTES = frozenset(f.name for f in dataclasses.fields(Fetch) if f.name in _FIELDS and f.default == b"")
_DEFAULTS = {
    f.name: f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
    for f in dataclasses.fields(Fetch)
    if f.name in _FIELDS and not (f.default is f.default_factory is dataclasses.MISSING)
}


def fetch_fields(fetch: Fetch) -> dict:
    """What the harvester concluded of a fetch, as JSON values: every field of ``Fetch`` it fills (a field
    added to ``Fetch`` later comes along by itself), none of the gatherer's. A field at its default is left
    out (:func:`fetch_of` gives it back): a recrawl's records are mostly such fields."""
    fields = {"format": FETCH_FORMAT}
    for name in _FIELDS:
        value = getattr(fetch, name)
        if name in _DEFAULTS and value == _DEFAULTS[name]:
            continue
        if name == "kind":
            value = value.value
        elif name == "error":
            value = value.label if value is not None else None
        elif name == "listed":
            value = [list(pair) for pair in value]
        elif isinstance(value, enum.Enum):
            value = value.value
        elif name in _BYTES:
            value = value.decode("latin-1")
        fields[name] = value
    fields["body_length"] = len(fetch.body)
    # The body the harvester handed on is not the one received (Scrapy decoded its Content-Encoding).
    fields["decoded"] = fetch.exchange is not None and not fetch.exchange.body.startswith(fetch.body)
    return fields


def fetch_line(fetch: Fetch) -> str:
    """:func:`fetch_fields` as one line of ASCII JSON, whatever the fetch holds: a warc-field's value
    cannot span lines."""
    return json.dumps(fetch_fields(fetch), separators=(",", ":"))


def fetch_json(content_type: str, block: bytes) -> dict | None:
    """The fields of a fetch (:func:`fetch_fields`) a metadata record holds, or None if it is not one."""
    if content_type == JSON_CONTENT_TYPE:
        return json.loads(block)
    if content_type != FETCH_CONTENT_TYPE:
        return None
    prefix = f"{FETCH_FIELD}:".encode("ascii")
    for line in block.splitlines():
        if line.startswith(prefix):
            return json.loads(line[len(prefix) :])
    return None


def fetch_of(fields: dict, body: bytes) -> Fetch:
    """The fetch ``fields`` describe (:func:`fetch_fields`), with ``body``, the body the harvester kept."""
    if fields.get("format") != FETCH_FORMAT:
        raise ValueError(f"not a {FETCH_FORMAT} record: {fields.get('format')!r}")
    values = {name: fields[name] for name in _FIELDS if name in fields}
    values["kind"] = Kind(values["kind"])
    error = values.get("error")
    values["error"] = FetchError[error.upper()] if error else None
    values["listed"] = [(url, modified) for url, modified in values.get("listed", ())]
    for name in _BYTES & values.keys():
        values[name] = values[name].encode("latin-1")
    return Fetch(**values, body=body[: fields["body_length"]])


@dataclass(frozen=True, slots=True)
class Revisit:
    """What a ``revisit`` record says in place of a response: its profile and, when known, the payload's
    digest and the record that holds it (a server-not-modified revisit: its date alone)."""

    profile: str  # IDENTICAL_PAYLOAD or NOT_MODIFIED
    digest: str = ""  # WARC-Payload-Digest (identical-payload-digest)
    uri: str = ""  # WARC-Refers-To-Target-URI (identical-payload-digest)
    date: str = ""  # WARC-Refers-To-Date


def not_modified(fetch: Fetch) -> bool:
    """Whether ``fetch`` is a 304 to a conditional request: a revisit of the server-not-modified profile."""
    exchange = fetch.exchange
    return (
        exchange is not None
        and exchange.status == 304
        and any(name.lower() in _CONDITIONAL for name, _ in exchange.request_headers)
    )


def whole(fetch: Fetch) -> bool:
    """Whether ``fetch`` received a whole body, of any status: a payload the archive can hold once. A 304
    is not one (:func:`not_modified`)."""
    exchange = fetch.exchange
    return (
        exchange is not None
        and exchange.status != 304
        and bool(exchange.body)
        and not fetch.truncated
        and not fetch.mime_refused
    )


@dataclass(slots=True)
class Archived:
    """A fetch read back from WARC: the harvester's conclusions and the response as received."""

    fields: dict
    record_id: str  # the metadata record's WARC-Record-ID
    status: int = 0  # the response record's, 0 if none
    headers: list[tuple[str, str]] | None = None  # the response's headers as received; None: no response
    body: bytes = b""  # the response's body as received
    digest: str = ""  # its payload's WARC-Payload-Digest when whole (a response's or a revisit's), else ""

    @property
    def ended(self) -> float:
        return float(self.fields["ended"])


class FetchRecords(RecordBuilder):
    """Builds the records of one fetch (and the warcinfo of a file) with warcio."""

    def __init__(self):
        super().__init__(warc_version=WARC_VERSION)
        self._ids = random.Random()  # seeded once from the system's entropy

    def _make_warc_id(self) -> str:
        """A record's ID, a random (version 4) UUID as warcio's own, drawn from a generator seeded once:
        warcio reads the system's entropy for each, a system call for every record."""
        return f"<urn:uuid:{uuid.UUID(int=self._ids.getrandbits(128), version=4)}>"

    def warcinfo(self, filename: str, info: dict, at: float):
        record = self.create_warcinfo_record(filename, info)
        record.rec_headers.replace_header("WARC-Date", warc_date(at))
        return record

    def records(self, fetch: Fetch, revisit: Revisit | None = None, digest: str = "") -> list:
        """The request, response and metadata records of ``fetch`` (the first two when a response came), or
        its ``revisit`` record alone when ``revisit`` says so. ``digest``: the response's payload digest,
        when the caller has it already."""
        out = []
        date = warc_date(fetch.started)
        meta_headers = {
            "WARC-Date": warc_date(fetch.ended),
            "Content-Type": FETCH_CONTENT_TYPE,
            KIND_HEADER: fetch.kind.value,
        }
        exchange = fetch.exchange
        if exchange is not None and revisit is not None:
            return [self._response(fetch, date, self._make_warc_id(), revisit, digest)]
        if exchange is not None:
            response_id = self._make_warc_id()
            response = self._response(fetch, date, response_id, revisit, digest)
            request = self.create_warc_record(
                fetch.url,
                "request",
                payload=BytesIO(b""),
                length=0,
                warc_headers_dict={"WARC-Date": date, "WARC-Concurrent-To": response_id},
                http_headers=StatusAndHeaders(
                    f"{exchange.method.decode('ascii', 'replace')} {_target(fetch.url)} {exchange.protocol}",
                    _text_pairs(exchange.request_headers),
                    protocol="",
                    is_http_request=True,
                ),
            )
            out += [request, response]
            meta_headers["WARC-Refers-To"] = response_id
        elif fetch.body:  # a render
            rendered = self.create_warc_record(
                fetch.url,
                "resource",
                payload=BytesIO(fetch.body),
                length=len(fetch.body),
                warc_content_type="text/html; charset=utf-8",
                warc_headers_dict={"WARC-Date": date},
            )
            out.append(rendered)
            meta_headers["WARC-Refers-To"] = rendered.rec_headers.get_header("WARC-Record-ID")
            if fetch.error is not None:
                meta_headers[ERROR_HEADER] = fetch.error.label
        elif fetch.error is not None:
            meta_headers[ERROR_HEADER] = fetch.error.label
        if exchange is not None and fetch.error is not None:
            meta_headers[ERROR_HEADER] = fetch.error.label  # a response with an error (a redirect loop…)
        data = f"{FETCH_FIELD}: {fetch_line(fetch)}\r\n".encode("ascii")
        out.append(
            self.create_warc_record(
                fetch.url,
                "metadata",
                payload=BytesIO(data),
                length=len(data),
                warc_content_type=FETCH_CONTENT_TYPE,
                warc_headers_dict=meta_headers,
            )
        )
        return out

    def _response(self, fetch: Fetch, date: str, record_id: str, revisit: Revisit | None, digest: str):
        exchange = fetch.exchange
        headers = {"WARC-Record-ID": record_id, "WARC-Date": date}
        if digest:
            headers["WARC-Payload-Digest"] = digest
        if fetch.ip:
            headers["WARC-IP-Address"] = fetch.ip
        if fetch.truncated:
            headers["WARC-Truncated"] = "length"
        elif fetch.mime_refused:
            headers["WARC-Truncated"] = "unspecified"
        pairs = [
            (b"X-Wire-Transfer-Encoding" if name.lower() == _HOP_BY_HOP else name, value)
            for name, value in exchange.headers
        ]
        http = StatusAndHeaders(
            f"{exchange.status} {reason(exchange.status)}".strip(),
            _text_pairs(pairs),
            protocol=exchange.protocol,
        )
        if revisit is not None:
            headers[KIND_HEADER] = fetch.kind.value
            if fetch.error is not None:
                headers[ERROR_HEADER] = fetch.error.label
            headers[FETCH_FIELD] = fetch_line(fetch)
            return self._revisit(fetch.url, http, headers, revisit)
        return self.create_warc_record(
            fetch.url,
            "response",
            payload=BytesIO(exchange.body),
            length=len(exchange.body),
            warc_headers_dict=headers,
            http_headers=http,
        )

    def _revisit(self, url: str, http: StatusAndHeaders, headers: dict, revisit: Revisit):
        headers = {**headers, "WARC-Profile": revisit.profile, "WARC-Refers-To-Date": revisit.date}
        if revisit.profile == IDENTICAL_PAYLOAD:
            # What pywb finds the payload by (the URI, then the digest among its captures near the date).
            headers["WARC-Payload-Digest"] = revisit.digest
            headers["WARC-Refers-To-Target-URI"] = revisit.uri
        return self.create_warc_record(
            url, "revisit", warc_headers_dict={k: v for k, v in headers.items() if v}, http_headers=http
        )

    def page(self, url: str, body: bytes, content_type: str, at: float, extra: dict | None = None):
        """A response record of a stored page (``write_collection_warc``): status 200, the stored bytes."""
        http = StatusAndHeaders(
            "200 OK",
            [("Content-Type", content_type), ("Content-Length", str(len(body)))],
            protocol="HTTP/1.1",
        )
        return self.create_warc_record(
            url,
            "response",
            payload=BytesIO(body),
            length=len(body),
            warc_headers_dict={"WARC-Date": warc_date(at), **(extra or {})},
            http_headers=http,
        )


def _target(url: str) -> str:
    """The request target of an absolute URL: its path and query."""
    rest = url.split("://", 1)[-1]
    slash = rest.find("/")
    return rest[slash:] if slash >= 0 else "/"


def _text_pairs(pairs: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    # warcio writes header text as UTF-8; latin-1 maps every byte to one character and back.
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in pairs]
