"""A real Scrapyd on 127.0.0.1 and the project deployed to it, for the Scrapyd tests and ``benchmarks.warc``.

Each :class:`Scrapyd` has its own port, scrapyd.conf and directories. The project is deployed from a copy
(:func:`copy_project`), since the egg's build writes ``build/`` and ``*.egg-info`` next to ``setup.py``. A
job passes the test settings as ``setting=NAME=VALUE`` (:data:`JOB_SETTINGS`), as a user would.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from settings import test as test_settings
from wirescrapy.testing.process import ROOT

PROJECT = "wirescrapy"  # scrapy.cfg [deploy] project
JOB_TIMEOUT = 120
# settings/test.py's overrides, as a job passes them: setting=NAME=VALUE (lists comma-joined, dicts as JSON).
JOB_SETTINGS = {
    "WIRE_BLOCKED_IPS": ",".join(test_settings.WIRE_BLOCKED_IPS),
    "WIRE_DNS_HOSTS": json.dumps(test_settings.WIRE_DNS_HOSTS),
    "WIRE_WAIT_NORMAL": str(test_settings.WIRE_WAIT_NORMAL),
    "WIRE_WAIT_LARGE_SITE": str(test_settings.WIRE_WAIT_LARGE_SITE),
    # Batches as one manager run chooses them, as in every test (settings/test.py says why).
    "WIRE_PLAN_AHEAD": str(test_settings.WIRE_PLAN_AHEAD),
}
# Never copied into the project copy that scrapyd-deploy builds from.
NOT_COPIED = {
    ".git",
    "tests",
    "benchmarks",
    "build",
    "dist",
    "demo",
    "collection",
    "collection-test",
    ".pytest_cache",
    ".hypothesis",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def clean_env(home: Path) -> dict:
    """The caller's environment without what would make a job import the working tree or another
    project (PYTHONPATH, SCRAPY_SETTINGS_MODULE) or move Scrapyd (SCRAPYD_*); HOME is ``home``, so a
    user's ~/.scrapyd.conf or ~/.scrapy.cfg cannot change the test."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("PYTHONPATH", "SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT", "XDG_CONFIG_HOME")
        and not name.startswith("SCRAPYD_")
    }
    env["HOME"] = str(home)
    return env


def script(name: str) -> str:
    """A console script of this interpreter's environment (scrapyd-deploy, scrapyd-client)."""
    path = shutil.which(
        name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )
    assert path, f"{name} not installed (pip install -r requirements.txt)"
    return path


class Scrapyd:
    """A Scrapyd process on 127.0.0.1 with everything (config, eggs, logs, dbs) under ``directory``."""

    def __init__(self, directory: Path, env: dict):
        self.dir = directory
        self.env = env
        self.output = directory / "scrapyd.out"
        self.process: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Scrapyd:
        for _ in range(3):  # the free port may be taken before Scrapyd binds it: try another
            self.port = free_port()
            (self.dir / "scrapyd.conf").write_text(
                "[scrapyd]\n"
                "bind_address = 127.0.0.1\n"
                f"http_port = {self.port}\n"
                f"eggs_dir = {self.dir / 'eggs'}\n"
                f"logs_dir = {self.dir / 'logs'}\n"
                f"dbs_dir = {self.dir / 'dbs'}\n"
                "items_dir =\n"  # Scrapyd's default; see test_a_job_with_an_item_feed_logs_no_error
                "jobs_to_keep = 5\n"
                "poll_interval = 0.2\n"
                "max_proc = 2\n"
            )
            with open(self.output, "ab") as output:
                # Its own session: the jobs it spawns are in its process group, ended with it.
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "scrapyd"],
                    cwd=self.dir,
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            deadline = time.monotonic() + 30
            while self.process.poll() is None and time.monotonic() < deadline:
                try:
                    if self.get("daemonstatus")["status"] == "ok":
                        return self
                except OSError:
                    pass
                time.sleep(0.1)
            self.stop()
        raise RuntimeError(f"Scrapyd did not start:\n{self.output_tail()}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        # Scrapyd leads its own process group, which holds the jobs it spawned: SIGTERM to the group (while
        # Scrapyd is not yet reaped, the group id is surely ours) stops any job still running with it.
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        deadline = time.monotonic() + 10  # a job closes its collection; then, if one is still there, SIGKILL
        try:
            while time.monotonic() < deadline:
                os.killpg(process.pid, 0)
                time.sleep(0.1)
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group is empty

    def output_tail(self, size: int = 4000) -> str:
        return self.output.read_text(errors="replace")[-size:] if self.output.exists() else ""

    def get(self, endpoint: str, **params) -> dict:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}/{endpoint}.json{query}", timeout=10) as response:
            return json.load(response)

    def post(self, endpoint: str, data: list[tuple[str, str]]) -> dict:
        body = urllib.parse.urlencode(data).encode()
        with urllib.request.urlopen(f"{self.url}/{endpoint}.json", data=body, timeout=30) as response:
            return json.load(response)

    def wait(self, job: str, timeout: float = JOB_TIMEOUT) -> Path:
        """Wait until ``job`` has finished; its log file."""
        deadline = time.monotonic() + timeout
        while self.get("status", job=job, project=PROJECT)["currstate"] != "finished":
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job} not finished after {timeout} s:\n{self.output_tail()}")
            time.sleep(0.2)
        return self.log(job)

    def log(self, job: str) -> Path:
        return self.dir / "logs" / PROJECT / "harvester" / f"{job}.log"

    def exited_cleanly(self, job: str) -> bool:
        """Scrapyd logs "Process finished" for an exit status 0, "Process died" otherwise."""
        return f"Process finished: project='{PROJECT}' spider='harvester' job='{job}'" in self.output_tail(
            10**7
        )


def copy_project(destination: Path) -> Path:
    def ignore(directory, names):
        top = Path(directory).resolve() == ROOT
        return {
            name
            for name in names
            if name == "__pycache__" or name.endswith((".pyc", ".egg-info")) or (top and name in NOT_COPIED)
        }

    shutil.copytree(ROOT, destination, ignore=ignore)
    return destination


def project_url(port: int) -> str:
    """scrapy.cfg's [deploy] url, on ``port``."""
    config = configparser.ConfigParser()
    config.read(ROOT / "scrapy.cfg")
    url = urllib.parse.urlsplit(config.get("deploy", "url"))
    assert url.hostname in ("127.0.0.1", "localhost"), url
    return url._replace(netloc=f"127.0.0.1:{port}").geturl()
