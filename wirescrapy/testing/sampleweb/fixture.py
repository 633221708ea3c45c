"""Run the sample web server in a subprocess, for tests, benchmarks and demos.

A subprocess keeps the server off the crawler's reactor and CPU core, so the
access log measures the crawler and not the server competing with it::

    with SampleWebProcess(sites=3, pages_per_site=20) as web:
        web.seeds                      # http://site0.wire.test:PORT/, ...
        web.truth.pages                # what a polite crawl should find
        web.access_log()               # what the server has answered so far
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import selectors
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from wirescrapy.testing.process import ROOT, run_scrapy
from wirescrapy.testing.sampleweb.config import SampleWebConfig
from wirescrapy.testing.sampleweb.model import SampleWeb
from wirescrapy.testing.sampleweb.truth import GroundTruth

# The line ``python -m wirescrapy.testing.sampleweb`` prints once it is listening.
READY = "wirescrapy sample web listening on"
_READY_RE = re.compile(re.escape(READY) + r" http://127\.[0-9.]+:(\d+)/")


def option(field: str) -> str:
    """The command-line flag of a :class:`SampleWebConfig` field."""
    return "--" + field.replace("_", "-")


def config_argv(config: SampleWebConfig) -> list[str]:
    """Flags that rebuild ``config`` on the command line."""
    argv = []
    for field in dataclasses.fields(config):
        argv += [option(field.name), str(getattr(config, field.name))]
    return argv


class SampleWebProcess:
    """The sample web served by ``python -m wirescrapy.testing.sampleweb`` in a child process."""

    def __init__(
        self,
        config: SampleWebConfig | None = None,
        *,
        workdir: str | os.PathLike[str] | None = None,
        access_log: str | os.PathLike[str] | None = None,
        startup_timeout: float = 30.0,
        **params,
    ):
        if config is not None and params:
            raise TypeError("give either a config or its fields, not both")
        self.config = config or SampleWebConfig(**params)
        self.startup_timeout = startup_timeout
        # Files outlive stop(), for reading the log afterwards; a temporary
        # directory is left in place unless the caller gives one it cleans.
        self._workdir = Path(workdir) if workdir else None
        self._access_log = Path(access_log) if access_log else None
        self._process: subprocess.Popen[str] | None = None
        self.web: SampleWeb | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> SampleWebProcess:
        if self._process is not None:
            raise RuntimeError("already started")
        self.workdir = self._workdir or Path(tempfile.mkdtemp(prefix="wire-sampleweb-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.access_log_path = self._access_log or self.workdir / "access.jsonl"
        # The server appends; a fresh server gets a fresh log here.
        self.access_log_path.unlink(missing_ok=True)
        self.seeds_file = self.workdir / "seeds.txt"
        self._stderr_path = self.workdir / "stderr.log"
        args = [
            "--port",
            "0",
            "--access-log",
            self.access_log_path,
            "--seeds-file",
            self.seeds_file,
            *config_argv(self.config),
        ]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        with open(self._stderr_path, "wb") as stderr:
            self._process = run_scrapy(
                *args,
                module="wirescrapy.testing.sampleweb",
                cwd=os.getcwd(),
                env=env,
                stderr=stderr,
                wait=False,
            )
        try:
            port = self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.web = SampleWeb(self.config, port)
        return self

    def _wait_ready(self) -> int:
        """Read the child's one line; its port is the only thing we need from it."""
        assert self._process is not None and self._process.stdout is not None
        deadline = time.monotonic() + self.startup_timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    wait = self.startup_timeout
                    raise RuntimeError(f"sample web not ready after {wait}s{self._stderr_tail()}")
                if selector.select(left):
                    line = self._process.stdout.readline()
                    if not line:
                        code = self._process.wait()
                        raise RuntimeError(f"sample web exited with {code}{self._stderr_tail()}")
                    if match := _READY_RE.search(line):
                        return int(match.group(1))

    def _stderr_tail(self) -> str:
        text = self._stderr_path.read_text(errors="replace")[-2000:]
        return f":\n{text}" if text else ""

    def stop(self, timeout: float = 10.0) -> int | None:
        """Stop the server with SIGTERM (SIGKILL after ``timeout``); return its exit code."""
        process, self._process = self._process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()
        return process.returncode

    def __enter__(self) -> SampleWebProcess:  # noqa: PYI034 (the class is not subclassed)
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # -- what tests use ----------------------------------------------------

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def port(self) -> int:
        return self._web().port

    @property
    def seeds(self) -> list[str]:
        return self._web().seeds()

    @property
    def hosts(self) -> list[str]:
        return self._web().hosts()

    @property
    def truth(self) -> GroundTruth:
        return self._web().ground_truth()

    def url(self, host: str | int, path: str = "/") -> str:
        return self._web().url(host, path)

    def access_log(self) -> list[dict]:
        """Every request the server has finished so far, oldest first."""
        records = []
        with open(self.access_log_path, encoding="utf-8") as log:
            for line in log:
                # A line being written right now may be incomplete.
                if line.endswith("\n"):
                    records.append(json.loads(line))
        return records

    def _web(self) -> SampleWeb:
        if self.web is None:
            raise RuntimeError("sample web not started")
        return self.web
