"""Write failures of the collection's stores: a full disk and its kin.

A store's write that fails with one of ``WRITE_ERRNOS`` (the disk or a quota is full, the device failed,
the filesystem turned read-only, a file is over the system's size limit) raises that ``OSError`` and leaves
the store as it was before the call, on disk and in memory: each store writes in an order a kill cannot
break (``collection.py``), cuts back what it half wrote (``urls.py``) and allocates space before it maps it
(``records.py``). So nothing stored is lost, and the collection opens consistent afterwards; but nothing
more can be stored, and a command stops at the first such error and says it in one line
(``failure_message``).
"""

from __future__ import annotations

import errno
import os

WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EFBIG})
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_write_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a failed write to the disk (not a bug, not a bad input)."""
    return isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS


def failure_message(directory: str | os.PathLike, exc: OSError) -> str:
    """The one line a person is told: ``collection DIR: disk full``, or the system's words for the error."""
    what = "disk full" if exc.errno in DISK_FULL else (exc.strerror or str(exc))
    return f"collection {os.fspath(directory)}: {what}"


def short_write(path: str | os.PathLike, written: int, size: int) -> OSError:
    """The error for a ``write`` that stored ``written`` of ``size`` bytes (the kernel's way of saying that
    the disk is full before it says ENOSPC)."""
    return OSError(
        errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} ({written} of {size} bytes written)", os.fspath(path)
    )


def fsync_directory(path: str | os.PathLike) -> None:
    """Flush directory ``path`` to disk: a file created or renamed in it survives a crash."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
