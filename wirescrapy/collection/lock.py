"""One writer per collection: an exclusive ``flock`` on ``<collection>/lock``.

The lock belongs to the open file description, so the kernel drops it when the process dies, ``kill -9``
included: a crashed crawl never leaves a stale lock behind. The file records who holds it, for the message
the second writer gets.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from pathlib import Path


class CollectionLockedError(RuntimeError):
    """Another process has the collection open for writing."""


class CollectionLock:
    def __init__(self, directory: str | os.PathLike):
        self.path = Path(directory) / "lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 256, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise CollectionLockedError(
                f"collection {self.path.parent} is open for writing by {holder}; "
                "only one writer at a time (readers may open it with readonly=True)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {time.ctime()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
