"""A real nginx serving a directory of static files on 127.0.0.1, for tests and benchmarks.

    from tests import nginx
    process, access_log = nginx.start(root, nginx.free_port())   # root: the directory served
    ...
    nginx.stop(process)
    records = nginx.read_log(access_log)

Debian's ``nginx`` (``nginx-light`` is enough; ``.ci/run`` installs it), run unprivileged in the foreground with
its own configuration, pid file, logs and temporary directories in a directory of its own (beside ``root``,
``<root>.nginx/``), so nothing of the system's nginx is read or written. Every host name is served from
``root`` (``server_name _``), so a crawler may call it ``anything.wire.test``. nginx's defaults are kept where
they matter to a crawler: ``etag on`` and ``if_modified_since exact`` (a 304 only to the exact ``Last-Modified``
string or a matching ``ETag``); under ``/noetag/`` no ETag is sent, so only ``If-Modified-Since`` can match.

The access log has one JSON object a line: ``{"host", "method", "uri", "status", "bytes" (body bytes sent),
"if_none_match", "if_modified_since"}``; :func:`read_log` reads it. When run as root, nginx's workers stay
root (``user root``) so that they can read a test's private temporary directory.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

CONFIG = """\
daemon off;
master_process on;
worker_processes 1;
{user}
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    types {{ text/html html htm; text/plain txt; }}
    default_type application/octet-stream;
    log_format wire escape=json '{{"host":"$host","method":"$request_method","uri":"$request_uri",'
                                '"status":$status,"bytes":$body_bytes_sent,'
                                '"if_none_match":"$http_if_none_match","if_modified_since":"$http_if_modified_since"}}';
    access_log {dir}/access.log wire;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        server_name _;
        root {root};
        location /noetag/ {{ etag off; }}
    }}
}}
"""


def binary() -> str | None:
    """The nginx program, or None if it is not installed (it lives in /usr/sbin, often not on PATH)."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(root: str | os.PathLike, port: int, timeout: float = 10.0) -> tuple[subprocess.Popen, Path]:
    """Start nginx serving ``root`` on 127.0.0.1:``port``; the running process and its access log's path.
    ``RuntimeError`` with nginx's error log if it does not answer within ``timeout`` seconds."""
    program = binary()
    if program is None:
        raise RuntimeError("nginx is not installed (apt-get install nginx-light)")
    root = Path(root).resolve()
    workdir = root.with_name(root.name + ".nginx")
    workdir.mkdir(exist_ok=True)
    user = "user root root;" if os.geteuid() == 0 else ""
    config = workdir / "nginx.conf"
    config.write_text(CONFIG.format(dir=workdir, root=root, port=port, user=user))
    process = subprocess.Popen([program, "-p", str(workdir), "-c", str(config), "-e", str(workdir / "error.log")],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited with {process.returncode}: {_errors(process, workdir)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process, workdir / "access.log"
        except OSError:
            time.sleep(0.05)
    stop(process)
    raise RuntimeError(f"nginx did not answer on 127.0.0.1:{port} in {timeout} s: {_errors(process, workdir)}")


def stop(process: subprocess.Popen) -> None:
    """Stop nginx (its master and workers) and wait for it."""
    if process.poll() is None:
        process.terminate()  # SIGTERM: nginx's fast shutdown
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stderr is not None:
        process.stderr.close()


def read_log(path: str | os.PathLike) -> list[dict]:
    """The access log's records, oldest first (nginx writes a line when a response is finished)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _errors(process: subprocess.Popen, workdir: Path) -> str:
    log = workdir / "error.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    if process.poll() is not None and process.stderr is not None:
        text += process.stderr.read().decode(errors="replace")
    return text.strip()[-2000:] or "(no error logged)"
