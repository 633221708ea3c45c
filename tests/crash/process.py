"""Writers to kill: a function run in a forked child process, its acknowledgements written to a file.

Forked from the test process, which has imported the collection's modules already, a writer starts in
milliseconds instead of the half second a new interpreter takes; the kill is the same SIGKILL at a random
moment of its work. Acknowledgements go to a file, not a pipe: a full pipe would block the writer between two
operations, and the kill would then never land inside one.
"""

from __future__ import annotations

import os
import signal
import time
import traceback
from collections.abc import Callable
from pathlib import Path


def fork_writer(target: Callable[..., None], *args, out: Path) -> int:
    """Run ``target(*args, fd)`` in a child process, ``fd`` open on ``out``; the child's pid."""
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    pid = os.fork()
    if pid == 0:  # the writer: never returns into the test process's code
        status = 0
        try:
            target(*args, fd)
        except Exception:  # noqa: BLE001 (the forked writer reports any error and exits)
            os.write(fd, ("error\n" + traceback.format_exc()).encode())
            status = 1
        finally:
            os._exit(status)
    os.close(fd)
    return pid


def wait_for(out: Path, line: bytes, pid: int, timeout: float = 10.0) -> None:
    """Until the writer has written ``line`` (it is ready); fails if it died or took too long."""
    deadline = time.monotonic() + timeout
    while line not in out.read_bytes():
        done, status = os.waitpid(pid, os.WNOHANG)
        assert not done, f"writer died ({status}): {out.read_bytes()[-2000:].decode(errors='replace')}"
        assert time.monotonic() < deadline, "writer did not start"
        time.sleep(0.002)


def kill(pid: int) -> None:
    """SIGKILL, and reap it."""
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
