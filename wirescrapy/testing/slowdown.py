"""Servers that ask a crawler to slow down, for the tests and ``benchmarks/politeness.py``.

One HTTP server on a loopback address, every host name sent to it a site of its own (so one server is as many
virtual hosts as a test names), answering:

* with ``throttle_every=N``: every Nth request, ``429 Too Many Requests`` with ``Retry-After: retry_after``;
* with ``outage=T``: every request in the first ``T`` seconds after the first one, robots.txt included,
  ``503 Service Unavailable`` with ``Retry-After: retry_after``; then it recovers;
* ``/headers.html``: a status line and then header lines without end, for at most ``endless_seconds``, the
  bytes the client took counted in ``header_bytes``;
* ``/robots.txt``: everything allowed; anything else: a small page.

``retry_after_date=True`` sends the ``Retry-After`` as an HTTP date instead of seconds.

The server is asyncio in a thread of its own. Its access log, ``log``, has a record per request: when it came
(``start``) and when its answer ended (``end``), Unix seconds; the ``host`` (without port), ``path``,
``status`` and the server ``address``. It imports no crawler code.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from itertools import pairwise

from wirescrapy.testing.loopback import LoopbackServer

_PAGE = b"<html><head><title>%s</title></head><body><p>%s</p></body></html>"


class SlowDownWeb(LoopbackServer):
    """``with SlowDownWeb(throttle_every=5, retry_after=3) as web:`` serves until the block ends."""

    def __init__(
        self,
        address: str = "127.0.0.1",
        *,
        throttle_every: int = 0,
        outage: float = 0.0,
        retry_after: int = 3,
        retry_after_date: bool = False,
        endless_seconds: float = 30.0,
    ):
        super().__init__(address)
        self.throttle_every = throttle_every
        self.outage = outage
        self.retry_after = retry_after
        self.retry_after_date = retry_after_date
        self.endless_seconds = endless_seconds
        self.log: list[dict] = []
        self._count = 0
        self._first: float | None = None

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        record = {"start": time.time(), "host": "", "path": "/", "status": 0, "address": self.address}
        try:
            record["host"], record["path"] = await self.read_request(reader)
            record["status"] = await self._answer(record["path"], writer, record)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            record["end"] = time.time()
            self.log.append(record)

    async def _answer(self, path: str, writer: asyncio.StreamWriter, record: dict) -> int:
        self._count += 1
        now = time.time()
        if self._first is None:
            self._first = now
        if self.outage and now < self._first + self.outage:
            return await self._slow_down(writer, b"503 Service Unavailable", now, record)
        if self.throttle_every and self._count % self.throttle_every == 0:
            return await self._slow_down(writer, b"429 Too Many Requests", now, record)
        if path == "/headers.html":
            await self.endless_headers(writer, self.endless_seconds)
            return 200
        if path == "/robots.txt":
            body, kind = b"User-agent: *\nAllow: /\n", b"text/plain"
        else:
            body, kind = (
                _PAGE % (path.encode(), b"A page of a server that asks for slowness. " * 10),
                b"text/html",
            )
        writer.write(_head(b"200 OK", kind, body) + body)
        await writer.drain()
        return 200

    async def _slow_down(self, writer: asyncio.StreamWriter, status: bytes, now: float, record: dict) -> int:
        if self.retry_after_date:
            # An HTTP date has whole seconds: the time asked for is the second it names.
            value = email.utils.formatdate(now + self.retry_after, usegmt=True).encode()
            record["until"] = float(int(now + self.retry_after))
        else:
            value = b"%d" % self.retry_after
        body = b"slow down"
        writer.write(_head(status, b"text/plain", body, b"Retry-After: %s\r\n" % value) + body)
        await writer.drain()
        if not self.retry_after_date:
            record["until"] = time.time() + self.retry_after
        return int(status[:3])


def _head(status: bytes, content_type: bytes, body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n%s\r\n" % (
        status,
        content_type,
        len(body),
        extra,
    )


def overlaps(records: list[dict]) -> list[tuple[str, str]]:
    """Pairs of requests (``host + path``) of ``records``, one server's, in flight at once."""
    ordered = sorted(records, key=lambda r: r["start"])
    return [
        (a["host"] + a["path"], b["host"] + b["path"]) for a, b in pairwise(ordered) if b["start"] < a["end"]
    ]


def early(records: list[dict], slack: float = 0.01) -> list[tuple[str, float]]:
    """Requests (``host + path``, seconds early) of ``records``, one server's, that came before the time a
    429 or 503 before them asked for in its ``Retry-After`` (``until``)."""
    ordered = sorted(records, key=lambda r: r["start"])
    found = []
    until = 0.0
    for record in ordered:
        if record["start"] < until - slack:
            found.append((record["host"] + record["path"], round(until - record["start"], 3)))
        if "until" in record:
            until = max(until, record["until"])
    return found
