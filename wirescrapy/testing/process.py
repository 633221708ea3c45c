"""Child processes for tests and benchmarks: a command run from the project, and what it used.

A crawl under test runs as a user runs it, ``python -m scrapy ...`` in a process of its own. Its reactor, its
memory and its exit status are then its own. :func:`run_scrapy` runs one (or ``python -m`` another module);
:func:`measure` waits for one and reads its peak RSS and CPU time from the kernel.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The project's directory: scrapy.cfg, settings/ and spiders/ are found from here.
ROOT = Path(__file__).resolve().parents[2]
# The settings of tests, benchmarks and the demo: the sample web's host names on loopback, short waits.
TEST_SETTINGS = "settings.test"


def scrapy_env(settings: str = TEST_SETTINGS, code: Path = ROOT) -> dict[str, str]:
    """This process's environment with Scrapy's settings module, and ``code`` (a checkout) to import from."""
    return {**os.environ, "SCRAPY_SETTINGS_MODULE": settings, "PYTHONPATH": str(code)}


def run_scrapy(
    *args: str | os.PathLike[str] | int,
    module: str = "scrapy",
    settings: Mapping[str, Any] | None = None,
    cwd: str | os.PathLike[str] = ROOT,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 120,
    stdout: Any = subprocess.PIPE,
    stderr: Any = subprocess.PIPE,
    wait: bool = True,
    **popen: Any,
) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    """``python -m scrapy ARGS`` in a child process, then ``-s NAME=VALUE`` for each of ``settings``.

    ``module`` runs another module instead of Scrapy. The child runs from ``cwd`` (the project), with ``env``
    (this process's environment when None, :func:`scrapy_env` for the test settings), and never reads its
    standard input. By default the call waits at most ``timeout`` seconds (then the child is killed and
    ``subprocess.TimeoutExpired`` raised), captures the output as text and leaves the exit status to the
    caller. With ``wait=False`` it returns the running process, to a caller that kills it, reads it as it
    goes or :func:`measure` s it; ``popen`` goes to ``subprocess.Popen`` (``start_new_session``).
    """
    command = [sys.executable, "-m", module, *map(str, args)]
    for name, value in (settings or {}).items():
        command += ["-s", f"{name}={value}"]
    options = {
        "cwd": cwd,
        "env": None if env is None else dict(env),
        "stdin": subprocess.DEVNULL,
        "stdout": stdout,
        "stderr": stderr,
        "text": True,
        **popen,
    }
    if not wait:
        return subprocess.Popen(command, **options)
    return subprocess.run(command, timeout=timeout, check=False, **options)


@dataclass(frozen=True)
class Usage:
    """What the kernel counted of a child process that has ended."""

    returncode: int
    peak_rss: int  # bytes: the largest resident set it had
    cpu: float  # seconds of CPU, user and system


def measure(process: subprocess.Popen) -> Usage:
    """Wait for ``process`` and reap it: its exit status, peak RSS and CPU time.

    The figures come from ``os.wait4`` on that one process, so they are its own: neither this process's nor
    those of its other children. A caller that needs a deadline kills the process from another thread.
    """
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return Usage(process.returncode, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime)
