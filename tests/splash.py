"""A real Splash for the rendering tests: the one CI starts (``.ci/run``: the shared ``tools/splash/supervise.sh``
on port 8050), or one a test starts for itself on a free port (a test that kills or freezes Splash must not do it to the
one the other tests share).

``tools/splash/install.sh`` (beside the checkout, in ``../shared``, or where ``WIRE_SPLASH_TOOLS`` says) installs
Splash 3.5 into ``/opt/splash-venv`` (``WIRE_SPLASH_VENV``). Without it the
rendering tests are skipped, unless ``WIRE_REQUIRE_SPLASH=1`` (set by ``.ci/run``), where they fail.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = Path(os.environ.get("WIRE_SPLASH_TOOLS", ROOT.parent / "shared" / "tools" / "splash"))
VENV = Path(os.environ.get("WIRE_SPLASH_VENV", "/opt/splash-venv"))
SHARED_URL = os.environ.get("WIRE_TEST_SPLASH_URL", "http://127.0.0.1:8050")


def alive(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/_ping", timeout=timeout) as answer:
            return answer.status == 200
    except OSError:
        return False


def require_installed() -> None:
    if not (VENV / "bin" / "splash").exists():
        message = f"Splash is not installed in {VENV} (tools/splash/install.sh)"
        if os.environ.get("WIRE_REQUIRE_SPLASH") == "1":
            pytest.fail(message)
        pytest.skip(message)


def wait_alive(url: str, timeout: float = 60.0) -> None:
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
    """A Splash of one test's own on a free port: ``supervise.sh`` (restarted when frozen, checked every
    ``check`` seconds) or ``run.sh`` alone (``supervised=False``: killed, it stays down)."""

    def __init__(self, workdir: Path, *, supervised: bool = True, check: int = 1):
        require_installed()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"splash-{self.port}.log"
        self.errors = workdir / f"splash-{self.port}.err"
        script = ["supervise.sh", str(VENV), str(self.port), str(check)] if supervised else \
            ["run.sh", str(VENV), str(self.port)]
        with open(self.log, "wb") as out, open(self.errors, "wb") as err:
            self.process = subprocess.Popen(["bash", str(TOOLS / script[0]), *script[1:]], stdout=out, stderr=err,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        wait_alive(self.url)

    def restarts(self) -> int:
        return self.errors.read_text(errors="replace").count("splash-supervise: restart")

    def kill_splash(self) -> None:
        """SIGKILL Splash itself, as a crash would: the supervisor starts a new one."""
        for child in psutil.Process(self.process.pid).children(recursive=True):
            if "splash" in " ".join(child.cmdline()):
                child.kill()

    def kill(self) -> None:
        """SIGKILL the whole process group: the supervisor, if any, and Splash."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # supervise.sh stops its Splash too; run.sh is Splash itself (exec)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


@pytest.fixture(scope="module")
def shared_splash(tmp_path_factory):
    """The URL of a running Splash: CI's, or one started for this module."""
    if alive(SHARED_URL):
        yield SHARED_URL
        return
    own = OwnSplash(tmp_path_factory.mktemp("splash"))
    try:
        yield own.url
    finally:
        own.stop()
