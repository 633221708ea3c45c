"""A real nginx serving static trees on loopback addresses, with an access log, for tests and benchmarks.

    from wirescrapy.testing import nginx
    with nginx.Nginx([nginx.Server("docs.wire.test", "127.0.0.1", root)], workdir) as server:
        ...                                  # http://docs.wire.test:{server.port}/ answers on 127.0.0.1
    requests = nginx.read_log(server.access_log)

Debian's ``nginx`` (``nginx-light`` is enough; ``.ci/run`` installs it). ``Nginx(servers, workdir)`` writes
its own configuration, pid file, logs and temporary directories into ``workdir`` (nothing under /etc is read
but nginx's ``mime.types``), runs ``nginx -p workdir -c nginx.conf`` in the foreground as a child process on
a free high port shared by every address, and stops it with SIGQUIT (graceful: the access log is complete
when it exits), then SIGKILL. Each server is a host name, a loopback address and a document root; the first
server on an address also answers any other host name sent to that address, so a single server may be
called anything. nginx's defaults are kept where they matter to a crawler: ``etag on`` and
``if_modified_since exact`` (a 304 only to the exact ``Last-Modified`` string or a matching ``ETag``); under a
server's ``no_etag`` paths no ETag is sent, so only ``If-Modified-Since`` can match. When run as root,
nginx's workers stay root (``user root``) so that they can read a test's private temporary directory.

The access log has one JSON object per request (``LOG_FORMAT``); :func:`read_log` reads it into
:class:`Request` records: when the request started and ended (``msec`` is when the response ended, in seconds
since the epoch at millisecond resolution, ``request_time`` how long it took), the host, the status, the body
bytes sent, the request line and the conditional headers the client sent. :func:`politeness` checks them
against the waits a polite crawler keeps between requests to one host.
"""

from __future__ import annotations

import json
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

LOG_FORMAT = (
    '{"msec":$msec,"request_time":$request_time,"host":"$host","server_addr":"$server_addr",'
    '"remote_addr":"$remote_addr","status":$status,"bytes":$body_bytes_sent,"method":"$request_method",'
    '"uri":"$request_uri","request":"$request","if_none_match":"$http_if_none_match",'
    '"if_modified_since":"$http_if_modified_since"}'
)
MIME_TYPES = Path("/etc/nginx/mime.types")


@dataclass(frozen=True)
class Server:
    host: str
    address: str
    root: str
    index: str = "index.html"
    no_etag: tuple[str, ...] = ()  # path prefixes ("/noetag/") answered without an ETag


@dataclass(frozen=True)
class Request:
    start: float
    end: float
    host: str
    status: int
    line: str  # the request line, "GET /a.html HTTP/1.1"
    method: str = ""
    uri: str = ""  # as the client sent it, query included
    bytes: int = 0  # body bytes sent
    if_none_match: str = ""
    if_modified_since: str = ""
    address: str = ""  # the server address the request came to


def binary() -> str | None:
    """The nginx program, or None if it is not installed (it lives in /usr/sbin, often not on PATH)."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


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
        program = binary()
        if program is None:
            raise RuntimeError("nginx is not installed (apt-get install nginx-light)")
        self.binary = program
        self.servers = servers
        self.workdir = Path(workdir)
        self.port = port
        self.process: subprocess.Popen | None = None

    @property
    def access_log(self) -> Path:
        return self.workdir / "access.log"

    def config(self) -> str:
        temp = "\n".join(
            f"    {kind}_temp_path {self.workdir / 'temp' / kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        types = (
            f"    include {MIME_TYPES};"
            if MIME_TYPES.exists()
            else "    types { text/html html htm; text/plain txt; }"
        )
        user = "user root root;\n" if os.geteuid() == 0 else ""
        servers = "\n".join(
            f"    server {{\n        listen {s.address}:{self.port};\n        server_name {s.host};\n"
            f"        root {Path(s.root).absolute()};\n        index {s.index};\n"
            + "".join(f"        location {path} {{ etag off; }}\n" for path in s.no_etag)
            + "    }"
            for s in self.servers
        )
        return f"""daemon off;
worker_processes 1;
{user}pid {self.workdir / "nginx.pid"};
error_log {self.workdir / "error.log"} warn;
events {{
    worker_connections 1024;
}}
http {{
{types}
    default_type application/octet-stream;
    log_format wire escape=json '{LOG_FORMAT}';
    access_log {self.access_log} wire;
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
            self.process = subprocess.Popen(
                [
                    self.binary,
                    "-p",
                    str(self.workdir),
                    "-c",
                    str(conf),
                    "-e",
                    str(self.workdir / "error.log"),
                ],
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
            )
        deadline = time.monotonic() + 10
        pending = [s.address for s in self.servers]
        while pending:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.process.returncode}: {self._errors()}")
            try:
                with socket.create_connection((pending[0], self.port), timeout=1):
                    pending.pop(0)
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"nginx did not listen on {pending[0]}:{self.port} in 10 s: {self._errors()}"
                    ) from None
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

    def _errors(self) -> str:
        text = "".join(
            path.read_text(errors="replace")
            for path in (self.workdir / "error.log", self.workdir / "stderr.log")
            if path.exists()
        )
        return text.strip()[-1000:] or "(no error logged)"

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def read_log(path: str | Path, since: float = 0.0) -> list[Request]:
    """The requests of an access log written with ``LOG_FORMAT`` that started at ``since`` or later, in the
    order nginx finished them (it writes a line when a response is finished); none if there is no log yet."""
    path = Path(path)
    if not path.exists():
        return []
    requests = []
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            end, duration = float(entry["msec"]), float(entry["request_time"])
            if end - duration >= since:
                requests.append(
                    Request(
                        end - duration,
                        end,
                        entry["host"].lower(),
                        int(entry["status"]),
                        entry["request"],
                        entry["method"],
                        entry["uri"],
                        int(entry["bytes"]),
                        entry["if_none_match"],
                        entry["if_modified_since"],
                        entry.get("server_addr", ""),
                    )
                )
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
