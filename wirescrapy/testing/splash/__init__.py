"""A real Splash 3.5 for the rendering tests and benchmarks, from this package's scripts (no Docker).

``install.sh [VENV]`` installs it, as root: Debian's Qt5/QtWebKit, PyPI ``splash==3.5`` and the fixes of
``patch_py311.py``. ``supervise.sh [VENV] [PORT] [CHECK_S]`` serves it on 127.0.0.1 and restarts it when it
stops answering. ``.ci/run`` runs both, on port 8050, before the tests.

``OwnSplash`` is a supervised Splash on a free port, for a test that kills or freezes its Splash.
``running_splash`` gives the Splash that answers at a URL, or starts an own one when none does. The venv is
``WIRE_SPLASH_VENV`` (``/opt/splash-venv``). Without one, both raise ``SplashMissing``, whose message says
how to install it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Self

import psutil

HERE = Path(__file__).resolve().parent
INSTALL = HERE / "install.sh"
SUPERVISE = HERE / "supervise.sh"
VENV = Path(os.environ.get("WIRE_SPLASH_VENV", "/opt/splash-venv"))
DEFAULT_URL = "http://127.0.0.1:8050"  # supervise.sh's default port, and SPLASH_URL's in the settings
RESTART = "splash-supervise: restart"  # the line supervise.sh writes on stderr for each restart
START_TIMEOUT = 60.0  # a loaded machine may take this long to start Splash (Qt, WebKit, the Lua runtime)


class SplashMissing(RuntimeError):
    """No Splash is installed in the venv: the message is one line, with the command that installs it."""


def installed(venv: Path = VENV) -> bool:
    return (venv / "bin" / "splash").exists()


def require_installed(venv: Path = VENV) -> None:
    if not installed(venv):
        raise SplashMissing(
            f"Splash is not installed in {venv}; install it (as root) with: bash {INSTALL} {venv}"
        )


def alive(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/_ping", timeout=timeout) as answer:
            return answer.status == 200
    except OSError:
        return False


def wait_alive(url: str, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not alive(url, 1.0):
        if time.monotonic() > deadline:
            raise RuntimeError(f"Splash at {url} did not answer within {timeout} s")
        time.sleep(0.2)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OwnSplash:
    """``supervise.sh`` on a free port, checking Splash every ``check`` seconds; its output in ``workdir``.

    Its own process group, so that ``kill`` ends the supervisor and Splash together.
    """

    def __init__(self, workdir: Path, *, check: int = 1, venv: Path = VENV):
        require_installed(venv)
        self.venv = venv
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"splash-{self.port}.log"
        self.errors = workdir / f"splash-{self.port}.err"
        command = ["bash", str(SUPERVISE), str(venv), str(self.port), str(check)]
        with open(self.log, "wb") as out, open(self.errors, "wb") as err:
            self.process = subprocess.Popen(
                command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True
            )
        try:
            wait_alive(self.url)
        except RuntimeError:
            self.stop()
            raise

    def restarts(self) -> int:
        return self.errors.read_text(errors="replace").count(RESTART)

    def kill_splash(self) -> None:
        """SIGKILL Splash itself, as a crash would: the supervisor starts a new one."""
        program = str(self.venv / "bin" / "splash")
        for child in psutil.Process(self.process.pid).children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                if program in child.cmdline():
                    child.kill()

    def kill(self) -> None:
        """SIGKILL the supervisor and Splash at once."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        """Stop the supervisor, which stops its Splash; SIGKILL what is left after a few seconds."""
        if self.process.poll() is None:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(10)
        self.kill()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def running_splash(url: str, workdir: Path) -> Iterator[str]:
    """The URL of a Splash that answers: ``url``'s (CI's, a person's), else an own one's for the block."""
    if alive(url):
        yield url
        return
    with OwnSplash(workdir) as own:
        yield own.url
