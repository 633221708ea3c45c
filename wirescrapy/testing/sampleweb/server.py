"""Serve a :class:`~wirescrapy.testing.sampleweb.model.SampleWeb` over real HTTP.

One Twisted Web :class:`~twisted.web.server.Site` on 127.0.0.1 serves every
site of the web: the resource dispatches on the ``Host`` header (port
stripped), as a virtual-hosting server does, so a crawler that resolves
``siteN.wire.test`` to 127.0.0.1 (see :mod:`wirescrapy.resolver`) sees
separate sites. The server binds to loopback only.

Access log format (``access_log``), one JSON object a line, written when the
response is finished or the connection is lost::

    {"host": "site0.wire.test", "path": "/page/1.html", "method": "GET",
     "status": 200, "start": 1767225600.125, "end": 1767225600.127, "bytes": 2311}

``start`` is when the request had arrived, ``end`` when its response was
finished (``time.time()`` floats), so a test can check politeness from the
server's side: no two overlapping requests to one host, and the gaps between
them. ``bytes``: body bytes sent (0 for a 304). A connection closed
mid-response adds ``"dropped": true``.

A conditional GET whose validators match the page's gets a 304
(:func:`~wirescrapy.testing.sampleweb.model.not_modified`).
"""

from __future__ import annotations

import ipaddress
import json
import time
from typing import IO, TYPE_CHECKING

from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site

from wirescrapy.testing.sampleweb.config import SampleWebConfig
from wirescrapy.testing.sampleweb.model import SampleWeb, not_modified

if TYPE_CHECKING:
    from twisted.internet.defer import Deferred
    from twisted.internet.interfaces import IListeningPort
    from twisted.web.server import Request

    from wirescrapy.testing.sampleweb.model import Reply


class SampleWebResource(Resource):
    """Answers every request from the model, by ``Host`` and raw path."""

    isLeaf = True

    def __init__(self, web: SampleWeb, reactor, access_log: IO[str] | None = None):
        super().__init__()
        self.web = web
        self.reactor = reactor
        self.access_log = access_log

    def render_GET(self, request: Request) -> bytes | int:
        start = time.time()
        host = request.getRequestHostname().decode("ascii", "replace")
        path = origin_form(request.uri.decode("latin-1"))
        reply = self.web.respond(host, path)
        if self.access_log is not None:
            request.notifyFinish().addBoth(self._log, request, host, path, start)
        if not_modified(reply, _header(request, b"if-none-match"), _header(request, b"if-modified-since")):
            request.setResponseCode(304)
            for name, value in reply.headers:
                if name in ("ETag", "Last-Modified"):
                    request.setHeader(name, value)
            return b""
        request.setResponseCode(reply.status)
        for name, value in reply.headers:
            request.setHeader(name, value)
        if reply.delay:
            call = self.reactor.callLater(reply.delay, self._answer_late, request, reply)
            request.notifyFinish().addErrback(lambda _: call.active() and call.cancel())
            return NOT_DONE_YET
        if reply.cut is not None:
            # Promise the whole body, send part of it, then hang up.
            request.setHeader("Content-Length", str(len(reply.body)))
            request.write(reply.body[: reply.cut])
            request.transport.loseConnection()
            return NOT_DONE_YET
        return reply.body

    render_HEAD = render_GET

    def _answer_late(self, request: Request, reply: Reply) -> None:
        request.setHeader("Content-Length", str(len(reply.body)))
        request.write(reply.body)
        request.finish()

    def _log(self, result: Failure | None, request: Request, host: str, path: str, start: float) -> None:
        record = {
            "host": host,
            "path": path,
            "method": request.method.decode("ascii", "replace"),
            "status": request.code,
            "start": start,
            "end": time.time(),
            "bytes": request.sentLength,
        }
        if isinstance(result, Failure):
            record["dropped"] = True
        self.access_log.write(json.dumps(record) + "\n")
        # Flushed per line so a test can read the log while the server runs.
        self.access_log.flush()


def _header(request: Request, name: bytes) -> str | None:
    value = request.getHeader(name)
    return None if value is None else value.decode("latin-1")


class SampleWebServer:
    """A listening sample web: its model bound to the real port."""

    def __init__(self, web: SampleWeb, listening: IListeningPort):
        self.web = web
        self.listening = listening

    @property
    def port(self) -> int:
        return self.web.port

    def url(self, host: str | int, path: str = "/") -> str:
        return self.web.url(host, path)

    def stop(self) -> Deferred[None]:
        return self.listening.stopListening()


def origin_form(target: str) -> str:
    """The path and query of a request target: an HTTP proxy's client (Splash, sent here as to a proxy for
    the sample web's names) asks for the absolute form, ``GET http://host:port/path``, which every server must
    accept (RFC 9112 §3.2.2); the ``Host`` header names the site either way."""
    if target.startswith(("http://", "https://")):
        slash = target.find("/", target.find("://") + 3)
        return target[slash:] if slash != -1 else "/"
    return target


def check_loopback(interface: str) -> None:
    """Refuse to serve on anything but an IPv4 loopback address."""
    try:
        address = ipaddress.IPv4Address(interface)
    except ValueError:
        raise ValueError(f"not an IPv4 address: {interface!r}") from None
    if not address.is_loopback:
        raise ValueError(f"the sample web serves on loopback (127.0.0.0/8) only, not {interface}")


def listen(
    config: SampleWebConfig | None = None,
    port: int = 0,
    interface: str = "127.0.0.1",
    access_log: IO[str] | None = None,
    reactor=None,
) -> SampleWebServer:
    """Start serving on ``interface:port`` (0: any free port).

    The model is built after binding, because its absolute links carry the
    port actually bound.
    """
    check_loopback(interface)
    if reactor is None:
        from twisted.internet import reactor
    resource = SampleWebResource(SampleWeb(config, port), reactor, access_log)
    site = Site(resource)
    site.noisy = False
    site.displayTracebacks = False
    listening = reactor.listenTCP(port, site, interface=interface)
    resource.web = resource.web.at_port(listening.getHost().port)
    return SampleWebServer(resource.web, listening)
