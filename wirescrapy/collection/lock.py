"""One writer per collection: an exclusive ``flock`` on ``<collection>/lock``.

The lock belongs to the open file description, so the kernel drops it when the process dies, ``kill -9``
included: a crashed crawl never leaves a stale lock behind. The file records who holds it, for the message
the second writer gets.

A writer may wait for the lock (``WIRE_COLLECTION_WAIT``): it asks again every ``POLL`` seconds until the
holder closes the collection or the wait is over. A ``flock`` that blocks cannot be given a time limit
without a signal, and a poll this short takes the collection within a few milliseconds of its release.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import time
from pathlib import Path

logger = logging.getLogger(__name__)

POLL = 0.005  # seconds between two tries of a waiting writer


class CollectionLockedError(RuntimeError):
    """Another process has the collection open for writing."""


class CollectionLock:
    def __init__(self, directory: str | os.PathLike):
        self.path = Path(directory) / "lock"
        self._fd: int | None = None
        self.waited_until: float | None = (
            None  # when it was taken after waiting for another writer (``clock``)
        )

    def acquire(self, wait: float = 0.0, clock=time.monotonic, sleep=time.sleep) -> None:
        """Take the lock, waiting up to ``wait`` seconds for its holder to release it; else
        ``CollectionLockedError``, which names the holder."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if self._wait_for(fd, wait, clock, sleep):
                self.waited_until = clock()
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {time.ctime()}\n".encode(), 0)
        self._fd = fd

    def _wait_for(self, fd: int, wait: float, clock, sleep) -> bool:
        """Lock ``fd``, trying every ``POLL`` seconds for up to ``wait``; whether it had to wait."""
        deadline = clock() + wait
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return waited
            except BlockingIOError:
                holder = os.pread(fd, 256, 0).decode("utf-8", "replace").strip() or "another process"
            left = deadline - clock()
            if left <= 0:
                raise CollectionLockedError(
                    f"collection {self.path.parent} is open for writing by {holder}"
                    f"{f' (waited {wait:g} s, WIRE_COLLECTION_WAIT)' if wait else ''}; "
                    "only one writer at a time (readers may open it with readonly=True)"
                )
            if not waited:
                logger.info(
                    "The collection %(dir)s is open for writing by %(holder)s: waiting up to %(wait)g s for "
                    "it (WIRE_COLLECTION_WAIT)",
                    {"dir": self.path.parent, "holder": holder, "wait": wait},
                )
                waited = True
            sleep(min(POLL, left))

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
