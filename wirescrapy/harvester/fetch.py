"""One network access as a :class:`~wirescrapy.items.Fetch`: a response of any status, or a failure.

Pure: a Scrapy ``Response`` (or the ``Request`` of a failure) and its ``meta`` are read, nothing is fetched
or written, and the time is given, so a test builds a response by hand and looks at the ``Fetch``.

* :func:`response_fetch` — a response of any status, a download stopped after its headers (a media type
  not accepted: no body) or at its size limit (the body kept, ``truncated``); a status that is no HTTP status
  (outside 100–999: Twisted takes any integer) is a response with the error ``BAD_STATUS``, its status 0;
* :func:`failure_fetch` — no response: the failure's :class:`~wirescrapy.items.FetchError` (:func:`classify`),
  status 0; a status line that is not even a number fails in Twisted's parser and is ``BAD_STATUS`` too;
* :func:`render_fetch` — Splash's answer to a render (``harvester/render.py``): the rendered DOM is the body,
  the raw HTML the site sent is kept apart (``raw_body``), with the raw status and media type;
  headers past their limits (:mod:`~wirescrapy.harvester.headerlimits`) are ``HEADERS_TOO_LARGE``;
* :func:`http_date` — an HTTP date header as Unix seconds (``Last-Modified``).

What the downloader middlewares measured comes in ``Request.meta`` (:mod:`wirescrapy.harvester.meta`).
"""

from __future__ import annotations

import base64
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

from scrapy.exceptions import StopDownload
from twisted.internet.error import (
    ConnectError,
    ConnectionLost,
    ConnectionRefusedError,
    DNSLookupError,
    TCPTimedOutError,
    TimeoutError,
)
from twisted.web._newclient import ParseError, ResponseFailed, ResponseNeverReceived

from wirescrapy.collection.metadata import RenderState
from wirescrapy.harvester.headerlimits import HeadersTooLarge
from wirescrapy.harvester.meta import (
    DEPTH,
    DOC_ID,
    ENDED,
    EXCHANGE,
    HOPS,
    IP,
    KIND,
    MIME_REFUSED,
    ORIGIN,
    RECEIVED,
    RENDER,
    SITE_ID,
    STARTED,
    TRUNCATED,
)
from wirescrapy.harvester.middlewares import BlockedIP, RobotsDisallowed, media_type
from wirescrapy.harvester.render import page_url
from wirescrapy.items import Fetch, FetchError, Kind

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response

HTTP_STATUSES = range(100, 1000)  # RFC 9110 §15: three digits
_STATUS_LINE_ERRORS = {
    ("wrong number of parts",),
    ("non-integer status code",),
}  # Twisted's, status line only


def kind_of(request: Request) -> Kind:
    """What a request fetches: a page, unless ``meta`` says robots.txt or sitemap."""
    return Kind(request.meta.get(KIND, "page"))


def response_fetch(response: Response, max_file_size: int, now: float) -> Fetch:
    """The fetch of a response that ended at ``now``; a page's body is cut at ``max_file_size`` bytes."""
    fetch = _fetch(response.request, now)
    meta = response.meta
    headers = response.headers
    if HTTP_STATUSES.start <= response.status < HTTP_STATUSES.stop:
        fetch.status = response.status
    else:
        fetch.error = FetchError.BAD_STATUS
        fetch.message = f"status {response.status}"[:300]
    content_type = headers.get(b"Content-Type") or b""
    fetch.content_type = content_type.decode("latin-1")
    fetch.mime = media_type(content_type)
    fetch.latency = float(meta.get("download_latency", 0.0))
    fetch.raw_length = meta.get(RECEIVED, len(response.body))
    if response.ip_address is not None:
        fetch.ip = str(response.ip_address)
    fetch.last_modified = http_date(headers.get(b"Last-Modified"))
    fetch.etag = headers.get(b"ETag") or b""
    fetch.last_modified_header = headers.get(b"Last-Modified") or b""
    fetch.exchange = meta.get(EXCHANGE)
    if meta.get(MIME_REFUSED):
        fetch.mime_refused = True
        return fetch
    body = response.body
    if fetch.kind is Kind.PAGE and len(body) > max_file_size:
        body = body[:max_file_size]
    fetch.body = body
    fetch.truncated = bool(meta.get(TRUNCATED))
    return fetch


def failure_fetch(request: Request, exc: BaseException, now: float) -> Fetch:
    """The fetch of a request that failed at ``now`` with ``exc`` and no response."""
    fetch = _fetch(request, now)
    fetch.error = classify(exc)
    fetch.message = str(exc)[:300]
    return fetch


def render_fetch(response: Response, data: dict, max_file_size: int, now: float) -> Fetch:
    """The fetch of a render that Splash answered at ``now`` with ``data`` (what :data:`render.LUA`
    returns): the rendered DOM, UTF-8, as the body; the raw HTML apart, both cut at ``max_file_size`` (by the
    script already) and ``truncated`` when either was longer."""
    fetch = _fetch(response.request, now)
    raw = data.get("raw") or {}
    status = int(raw.get("status") or 0)
    if HTTP_STATUSES.start <= status < HTTP_STATUSES.stop:
        fetch.status = status
    else:
        fetch.error = FetchError.BAD_STATUS
        fetch.message = f"status {status}"
    fetch.mime = media_type(raw.get("type") or "")
    fetch.content_type = "text/html; charset=utf-8"
    fetch.latency = float(response.meta.get("download_latency", 0.0))
    fetch.raw_body = _base64(raw.get("body64"))[:max_file_size]
    fetch.raw_length = max(_length(raw.get("length")), len(fetch.raw_body))
    fetch.body = _base64(data.get("html64"))[:max_file_size]
    fetch.truncated = max(_length(data.get("html_length")), len(fetch.body), fetch.raw_length) > max_file_size
    views = data.get("views") or []
    fetch.script_links = [str(v) for v in (views.values() if isinstance(views, dict) else views)]
    fetch.render = RenderState.RENDERED
    fetch.render_follow_up = response.request.meta.get(RENDER) == "follow"
    return fetch


def _base64(text) -> bytes:
    """The bytes of a base64 text of the render script's; none when it is not one."""
    try:
        return base64.b64decode(text or "", validate=True)
    except (TypeError, ValueError):
        return b""


def _length(value) -> int:
    """A length the render script reported; 0 when it is not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _fetch(request: Request, now: float) -> Fetch:
    meta = request.meta
    return Fetch(
        kind=kind_of(request),
        url=page_url(request),
        doc_id=meta.get(DOC_ID, 0),
        site_id=meta.get(SITE_ID, 0),
        depth=meta.get(DEPTH, 0),
        started=meta.get(STARTED, now),
        ended=meta.get(ENDED, now),
        hops=meta.get(HOPS, 0),
        ip=meta.get(IP, ""),
        origin=meta.get(ORIGIN, ""),
    )


def classify(exc: BaseException) -> FetchError:
    """The FetchError of a request's failure."""
    if isinstance(exc, BlockedIP):
        return FetchError.BLOCKED_IP
    if isinstance(exc, RobotsDisallowed):
        return FetchError.ROBOTS_DISALLOWED
    if isinstance(exc, DNSLookupError):
        return FetchError.DNS
    if isinstance(exc, ConnectionRefusedError):
        return FetchError.REFUSED
    if isinstance(exc, (TimeoutError, TCPTimedOutError)):
        return FetchError.TIMEOUT
    if isinstance(exc, ResponseFailed) and any(_bad_status_line(reason) for reason in exc.reasons):
        return FetchError.BAD_STATUS
    if isinstance(exc, ResponseFailed) and any(_reason(r, HeadersTooLarge) for r in exc.reasons):
        return FetchError.HEADERS_TOO_LARGE
    if isinstance(exc, (ResponseFailed, ResponseNeverReceived, ConnectionLost, ConnectError, StopDownload)):
        return FetchError.CONNECTION_LOST
    return FetchError.OTHER


def _bad_status_line(reason) -> bool:
    """Whether a reason of a ``ResponseFailed`` is Twisted's parser refusing the status line."""
    exc = getattr(reason, "value", reason)
    return isinstance(exc, ParseError) and exc.args[:1] in _STATUS_LINE_ERRORS


def _reason(reason, kind: type[BaseException]) -> bool:
    """Whether a reason of a ``ResponseFailed`` (a Failure or an exception) is a ``kind``."""
    return isinstance(getattr(reason, "value", reason), kind)


def http_date(value: bytes | None) -> float:
    """Unix seconds of an HTTP date header; 0 if absent or unreadable."""
    if not value:
        return 0.0
    try:
        return parsedate_to_datetime(value.decode("latin-1")).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return 0.0
