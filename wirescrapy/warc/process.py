"""The WARC writer in a process of its own: the harvest's reactor thread hands each fetch over and goes on.

Writing a fetch's records (building them, two SHA-1 passes over the body, a gzip member a record, the
index line, the write) is work the reactor thread would otherwise do for every page, while sites whose wait
has ended wait for their next request. Most of these calls let go of the GIL, and the reactor thread then
waits to take it back from the parse workers' pool threads (``gatherer/workers.py``). A thread of the
harvest's own would share that GIL. So :class:`WarcProcess` runs
:class:`~wirescrapy.warc.writer.WarcWriter` in a child process (``python -m wirescrapy.warc.process``), with
its payload digests (:mod:`~wirescrapy.warc.digests`), and talks to it over its standard input and output
through the reactor. The reactor thread pickles a fetch and queues the bytes; Twisted writes what is queued
when the pipe can take it, many fetches at a time.

The pipe carries frames: a 4-byte big-endian length, then a pickle. To the child:
``("start", directory, max_size, info, shipped, open_now)`` first, then ``("begin", info)`` (a new batch or
part) and ``("write", fetch)``. From the child, for each write in order: ``("written", bytes, profile)``
(``profile``: the revisit's, or ``""``), or ``("error", message)`` when it failed; at the end ``("closed",
fetches, bytes, files, cpu)`` (its CPU seconds). The parent closes the child's input to end it: the child
closes its file (fsync, index, digests) and exits.

Each write's Deferred fires once the child says the records are appended, so that the gatherer's steps after
the WARC pipeline, which record the fetch in the collection, come after its records are in the file, as with
a writer in the reactor thread. Crash behaviour: a harvest killed at any moment leaves the child reading the
end of its input; it closes its file as at a harvest's end, index included. A kill of both leaves the file
as :mod:`~wirescrapy.warc.writer` says. A child that dies fails every write that waits and every write after.
"""

from __future__ import annotations

import logging
import os
import pickle
import resource
import signal
import struct
import sys
from collections import deque
from typing import TYPE_CHECKING

from twisted.internet import defer, protocol
from twisted.python.failure import Failure

if TYPE_CHECKING:
    from wirescrapy.items import Fetch

logger = logging.getLogger(__name__)

_LENGTH = struct.Struct(">I")


def frame(message: tuple) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


class Frames:
    """Splits what a pipe delivered into the messages :func:`frame` made."""

    def __init__(self):
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple]:
        buffer = self._buffer
        buffer += data
        messages, start = [], 0
        while len(buffer) - start >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(buffer, start)
            end = start + _LENGTH.size + length
            if len(buffer) < end:
                break
            messages.append(pickle.loads(buffer[start + _LENGTH.size : end]))
            start = end
        del buffer[:start]
        return messages


class WarcProcessError(Exception):
    """The WARC writer's process failed a write, or is gone."""


class WarcProcess(protocol.ProcessProtocol):
    """The parent's end: :meth:`write` a fetch, :meth:`begin` a batch, :meth:`close` at the harvest's end."""

    def __init__(self, directory: str | os.PathLike, max_size: int, info: dict, shipped, open_now: bool):
        self._frames = Frames()
        self._waiting: deque[defer.Deferred] = deque()
        self._ended: defer.Deferred = defer.Deferred()
        self._error = ""  # why the child is gone, once it is
        self.info = dict(info)
        self.summary = (0, 0, [], 0.0)  # (fetches, bytes, files, CPU seconds) the child reported at its end
        self._start = ("start", str(directory), max_size, self.info, str(shipped or ""), open_now)

    def spawn(self, reactor) -> WarcProcess:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        reactor.spawnProcess(
            self,
            sys.executable,
            [sys.executable, "-m", __name__],
            env=env,
            childFDs={0: "w", 1: "r", 2: 2},
        )
        self.transport.write(frame(self._start))
        return self

    def begin(self, info: dict) -> None:
        if info != self.info:
            self.info = dict(info)
            self._send(("begin", self.info))

    def write(self, fetch: Fetch) -> defer.Deferred:
        """A Deferred of ``(bytes written, the revisit's profile or "")``, once the records are appended."""
        if self._error:
            return defer.fail(WarcProcessError(self._error))
        waiting = defer.Deferred()
        self._waiting.append(waiting)
        self._send(("write", fetch))
        return waiting

    def close(self) -> defer.Deferred:
        """End the child: it closes its file. The Deferred fires when it has exited."""
        if not self._error and self.transport is not None:
            self.transport.closeStdin()
        return self._ended

    def _send(self, message: tuple) -> None:
        if not self._error:
            self.transport.write(frame(message))

    def outReceived(self, data: bytes) -> None:
        for message in self._frames.feed(data):
            kind = message[0]
            if kind == "written":
                self._waiting.popleft().callback(message[1:])
            elif kind == "error":
                self._waiting.popleft().errback(WarcProcessError(message[1]))
            elif kind == "closed":
                self.summary = message[1:]

    def processEnded(self, reason: Failure) -> None:
        code, killed = getattr(reason.value, "exitCode", None), getattr(reason.value, "signal", None)
        if killed or code:
            how = f"was killed by signal {killed}" if killed else f"ended with status {code}"
            self._error = f"the WARC writer's process {how}"
        else:
            self._error = "the WARC writer's process has ended"
        while self._waiting:
            self._waiting.popleft().errback(WarcProcessError(self._error))
        self._ended.callback(None)


def serve(source, sink) -> None:
    """The child's loop: frames from ``source``, answers to ``sink`` (binary files), until ``source`` ends."""
    from wirescrapy.warc.digests import PayloadDigests
    from wirescrapy.warc.writer import WarcWriter

    def answer(message: tuple) -> None:
        try:
            sink.write(frame(message))
            sink.flush()
        except BrokenPipeError:  # the harvest is gone: its input ends next, and the file is closed then
            pass

    frames, writer = Frames(), None
    while True:
        data = source.read1(1 << 16)
        if not data:
            break
        for message in frames.feed(data):
            kind = message[0]
            if kind == "start":
                _, directory, max_size, info, shipped, open_now = message
                writer = WarcWriter(directory, max_size, info, PayloadDigests(directory, shipped or None))
                if open_now:
                    writer.open()
            elif kind == "begin":
                writer.begin(message[1])
            elif kind == "write":
                try:
                    written = writer.write(message[1])
                except Exception as exc:  # noqa: BLE001 (the parent logs it with the fetch, as Scrapy does)
                    answer(("error", f"{type(exc).__name__}: {exc}"))
                else:
                    profile = writer.revisit.profile if writer.revisit is not None else ""
                    answer(("written", written, profile))
    if writer is not None:
        writer.close()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        files = [str(path) for path in writer.files]
        answer(("closed", writer.fetches, writer.bytes, files, usage.ru_utime + usage.ru_stime))


def main() -> None:
    # Ctrl-C reaches the whole process group: the harvest stops gracefully and then ends this input.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
