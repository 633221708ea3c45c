"""An HTTP server on a loopback address, asyncio in a thread of its own: what the tests' hand-written servers
share (``hostile.py``, ``slowdown.py``).

A subclass answers each request in ``_serve`` (``read_request`` reads the request line and the ``Host``
header); ``endless_headers`` sends a status line and header lines without end, as fast as the client takes
them, for a while, and counts the bytes taken in ``header_bytes``. ``with Server() as server:`` serves until
the block ends. It imports no crawler code.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Self

_HEADER_BLOCK = b"".join(b"X-Endless-%d: %s\r\n" % (i, b"a" * 80) for i in range(600))


class LoopbackServer:
    def __init__(self, address: str = "127.0.0.1"):
        self.address = address
        self.port = 0
        self.header_bytes = 0  # bytes of endless headers the clients took
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, self.address, 0, backlog=1024), self._loop
        )
        self._server = started.result(timeout=10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc) -> None:
        async def stop():
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    @staticmethod
    async def read_request(reader: asyncio.StreamReader) -> tuple[str, str]:
        """The request's ``Host`` header (without its port; ``""`` if none) and its path (``/`` if none)."""
        request_line = await reader.readline()
        host = ""
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"host":
                text = value.strip().decode("latin-1")
                host = text.rpartition(":")[0] or text
        parts = request_line.split()
        return host, parts[1].decode("latin-1") if len(parts) >= 2 else "/"

    async def endless_headers(self, writer: asyncio.StreamWriter, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
        while loop.time() < deadline:
            writer.write(_HEADER_BLOCK)
            await writer.drain()
            self.header_bytes += len(_HEADER_BLOCK)
