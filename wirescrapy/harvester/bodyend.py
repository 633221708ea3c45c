"""When a response's last byte came in: the moment a site's access ended, from which its wait counts.

Scrapy says a download is over (``request_left_downloader``) once its handler is done with the response:
after Twisted's HTTP parser has seen the body's end, Scrapy has built the Response, and the Deferreds between
them have run, some a reactor turn later. On loopback that is about 2 ms after the server sent its last byte
(issue 17's measurements); on a site whose wait is 0.05 s, 4 % of every wait.

:class:`BodyEnds` watches Scrapy's ``headers_received`` and ``bytes_received`` signals and notes the moment
the response's last byte arrived, when the response says how long it is: a ``Content-Length`` body once
that many bytes have arrived, a body of length 0 (an empty body, 204, 304) when its headers have. A body
without a length (chunked, or ended by closing the connection) may still be under way after its last data,
so it gets no stamp, and nor does a download that ends before its body is complete (a failure,
``DOWNLOAD_MAXSIZE``, a ``StopDownload``). The server has sent every byte the client has read, so a wait
counted from that moment is never shorter than one counted from the server's end.

Pure bookkeeping: the signal handlers do a dictionary look-up and a subtraction per chunk; ``pop`` hands
the stamp to the scheduler when the request leaves the downloader, and forgets the request.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from scrapy import signals

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.crawler import Crawler


class BodyEnds:
    """Per request in download: the body bytes still to come, then when the last one came (clock, wall)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._left: dict[Request, int] = {}
        self._ends: dict[Request, tuple[float, float]] = {}

    def connect(self, crawler: Crawler) -> None:
        crawler.signals.connect(self.headers_received, signal=signals.headers_received)
        crawler.signals.connect(self.bytes_received, signal=signals.bytes_received)

    def headers_received(self, headers: object, body_length: object, request: Request, **kwargs: object) -> None:
        self._ends.pop(request, None)
        if type(body_length) is not int or body_length < 0:  # Twisted's UNKNOWN_LENGTH is a str
            self._left.pop(request, None)
        elif body_length == 0:
            self._left.pop(request, None)
            self._ends[request] = (self._clock(), time.time())
        else:
            self._left[request] = body_length

    def bytes_received(self, data: bytes, request: Request, **kwargs: object) -> None:
        left = self._left.get(request)
        if left is None:
            return
        left -= len(data)
        if left > 0:
            self._left[request] = left
            return
        del self._left[request]
        self._ends[request] = (self._clock(), time.time())

    def pop(self, request: Request) -> tuple[float, float] | None:
        """(clock, Unix time) at which ``request``'s complete body arrived, or None; forgets the request."""
        self._left.pop(request, None)
        return self._ends.pop(request, None)

    def __len__(self) -> int:
        return len(self._left) + len(self._ends)
