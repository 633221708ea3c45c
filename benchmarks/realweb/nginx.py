"""A real nginx serving static trees on loopback addresses, with an access log, for benchmarks.

``Nginx(servers, workdir)`` writes its own configuration into ``workdir`` (nothing under /etc is read but
nginx's ``mime.types``), runs ``nginx -p workdir -c nginx.conf`` in the foreground as a child process on a
free high port shared by every address, and stops it with SIGQUIT (graceful), then SIGKILL. Each server is
a host name, a loopback address and a document root.

The access log has one line per request, fields separated by a tab::

    msec  host  server_addr  remote_addr  request_time  status  bytes  request_line

``msec`` is when the response ended (seconds since the epoch, millisecond resolution) and ``request_time``
how long it took, so a request started at ``msec - request_time``. :func:`read_log` parses it and
:func:`politeness` checks it against the waits a polite crawler keeps between requests to one host.

(Another launcher, ``tests/nginx.py``, is written for the tests at the same time; the two may be merged.)
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Self

LOG_FORMAT = "$msec\\t$host\\t$server_addr\\t$remote_addr\\t$request_time\\t$status\\t$body_bytes_sent\\t$request"
MIME_TYPES = Path("/etc/nginx/mime.types")


@dataclass(frozen=True)
class Server:
    host: str
    address: str
    root: str
    index: str = "index.html"


@dataclass(frozen=True)
class Request:
    start: float
    end: float
    host: str
    status: int
    line: str


def free_port(addresses: list[str]) -> int:
    """A TCP port free on every one of ``addresses`` (a race with other processes stays possible)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind((addresses[0], 0))
            port = probe.getsockname()[1]
        if port < 20000:
            continue
        try:
            for address in addresses[1:]:
                with socket.socket() as other:
                    other.bind((address, port))
        except OSError:
            continue
        return port
    raise RuntimeError("no TCP port free on every loopback address")


class Nginx:
    """nginx serving ``servers`` on one port; use as a context manager."""

    def __init__(self, servers: list[Server], workdir: str | Path, port: int | None = None):
        binary = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
        if binary is None:
            raise RuntimeError("nginx is not installed (apt-get install nginx-light)")
        self.binary = binary
        self.servers = servers
        self.workdir = Path(workdir)
        self.port = port
        self.process: subprocess.Popen | None = None

    @property
    def access_log(self) -> Path:
        return self.workdir / "access.log"

    def config(self) -> str:
        temp = "\n".join(f"    {kind}_temp_path {self.workdir / 'temp' / kind};"
                         for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        types = f"    include {MIME_TYPES};" if MIME_TYPES.exists() else "    types { text/html html htm; }"
        servers = "\n".join(
            f"    server {{\n        listen {s.address}:{self.port};\n        server_name {s.host};\n"
            f"        root {s.root};\n        index {s.index};\n    }}" for s in self.servers)
        return f"""daemon off;
worker_processes 1;
pid {self.workdir / 'nginx.pid'};
error_log {self.workdir / 'error.log'} warn;
events {{
    worker_connections 1024;
}}
http {{
{types}
    default_type application/octet-stream;
    log_format timed "{LOG_FORMAT}";
    access_log {self.access_log} timed;
{temp}
    sendfile on;
    keepalive_timeout 30;
    server_tokens off;
{servers}
}}
"""

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "temp").mkdir(exist_ok=True)
        self.port = self.port or free_port([s.address for s in self.servers])
        conf = self.workdir / "nginx.conf"
        conf.write_text(self.config(), encoding="utf-8")
        with open(self.workdir / "stderr.log", "wb") as stderr:
            self.process = subprocess.Popen([self.binary, "-p", str(self.workdir), "-c", str(conf),
                                             "-e", str(self.workdir / "error.log")],
                                            stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
        deadline = time.monotonic() + 10
        pending = [s.address for s in self.servers]
        while pending:
            if self.process.poll() is not None:
                error = (self.workdir / "stderr.log").read_text(errors="replace").strip()
                raise RuntimeError(f"nginx exited with {self.process.returncode}: {error[-500:]}")
            try:
                with socket.create_connection((pending[0], self.port), timeout=1):
                    pending.pop(0)
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"nginx did not listen on {pending[0]}:{self.port} in 10 s") from None
                time.sleep(0.05)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGQUIT)  # graceful: the access log is complete when it exits
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def read_log(path: str | Path, since: float = 0.0) -> list[Request]:
    """The requests of an access log written with ``LOG_FORMAT`` that started at ``since`` or later."""
    requests = []
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 8:
                continue
            end, duration = float(fields[0]), float(fields[4])
            if end - duration >= since:
                requests.append(Request(end - duration, end, fields[1].lower(), int(fields[5]), fields[7]))
    return requests


@dataclass
class Politeness:
    host: str
    requests: int
    overlaps: int  # requests started before the previous one to the host had ended
    short_gaps: int  # requests started less than the wait after the previous one ended
    smallest_gap: float  # seconds, between one request's end and the next one's start


def politeness(requests: list[Request], wait_of: dict[str, float], slack: float = 0.002) -> list[Politeness]:
    """Per host, requests that broke the wait ``wait_of[host]`` (with ``slack`` s for the log's
    millisecond clock); hosts without a wait get 0, i.e. only overlapping requests count."""
    by_host: dict[str, list[Request]] = {}
    for request in requests:
        by_host.setdefault(request.host, []).append(request)
    report = []
    for host, items in sorted(by_host.items()):
        items.sort(key=lambda r: r.start)
        wait = wait_of.get(host, 0.0)
        overlaps = short = 0
        smallest = float("inf")
        for previous, request in pairwise(items):
            gap = request.start - previous.end
            smallest = min(smallest, gap)
            overlaps += gap < -slack
            short += gap < wait - slack
        report.append(Politeness(host, len(items), overlaps, short, smallest))
    return report
