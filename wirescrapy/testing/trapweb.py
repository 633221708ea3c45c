"""A web of traps that add sites: one server on 127.0.0.1 answers every host name (``settings.test`` maps
``*.wire.test`` there), told apart by the ``Host`` header. Used by ``tests/e2e/test_traps.py`` and
``benchmarks/traps.py``.

* ``hN.wire.test/`` redirects (301) to ``hN+1.wire.test/``: a redirect chain to ever-new host names;
* ``fan.wire.test/`` links to ``fan`` new hosts, ``n0.wire.test/`` …, and to ``/more.html``, which links to
  ``fan`` more (``m0.wire.test/`` …): a site whose pages link to thousands of new sites;
* ``/robots.txt`` is 404 everywhere, every other URL a small page.
"""

from __future__ import annotations

import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class TrapWeb(ThreadingHTTPServer):
    """The trap web, linking ``fan`` new hosts from each fan page. ``hosts``: the host names that were sent a
    request."""

    daemon_threads = True
    request_queue_size = 512  # the harvester opens up to WIRE_CONNECTIONS at once: no SYN dropped

    def __init__(self, fan: int = 3000):
        super().__init__(("127.0.0.1", 0), TrapHandler)
        self.fan = fan
        self.hosts: set[str] = set()
        self._pages = {}

    def fan_page(self, prefix: str, more: bool) -> bytes:
        if prefix not in self._pages:
            links = [f'<a href="{self.url(f"{prefix}{n}")}">{n}</a>' for n in range(self.fan)]
            if more:
                links.append('<a href="/more.html">more</a>')
            self._pages[prefix] = f"<html><body>{''.join(links)}</body></html>".encode()
        return self._pages[prefix]

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}.wire.test:{self.server_address[1]}{path}"


class TrapHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        web = self.server
        host = self.headers["Host"].split(".", 1)[0]
        web.hosts.add(host)
        status, headers, body = 200, {"Content-Type": "text/html"}, b"<html><body><p>a page</p></body></html>"
        if self.path == "/robots.txt":
            status = 404
        elif (chain := re.fullmatch(r"h(\d+)", host)) and self.path == "/":
            status, headers = 301, {"Location": web.url(f"h{int(chain.group(1)) + 1}")}
        elif host == "fan" and self.path in ("/", "/more.html"):
            body = web.fan_page("n", more=True) if self.path == "/" else web.fan_page("m", more=False)
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass
