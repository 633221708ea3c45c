"""Endless response headers end their connection at ``WIRE_MAX_HEADER_SIZE``: measured on the connection, from
both ends, in a crawl through the harvester's download handler."""

from __future__ import annotations

import json
import time
from pathlib import Path

from scrapy import signals

from tests.test_scheduler import crawl
from wirescrapy.harvester.headerlimits import HeaderLimitsProtocol
from wirescrapy.testing.slowdown import SlowDownWeb

LIMIT = 65536
TIMEOUT = 8.0


class ReadCounter:
    """In the crawl's process: counts the bytes each connection of the download handler read, and writes them
    to ``READ_COUNTS`` when the spider closes."""

    def __init__(self, crawler):
        self.path = crawler.settings["READ_COUNTS"]
        self.counts: list[int] = []
        received = HeaderLimitsProtocol.dataReceived
        counts = self.counts

        def counting(protocol, data):
            if not hasattr(protocol, "_read_index"):
                protocol._read_index = len(counts)
                counts.append(0)
            counts[protocol._read_index] += len(data)
            return received(protocol, data)

        HeaderLimitsProtocol.dataReceived = counting
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def closed(self, spider):
        Path(self.path).write_text(json.dumps(self.counts))


def test_endless_headers_close_their_connection_at_the_limit(tmp_path):
    counts = tmp_path / "read.json"
    with SlowDownWeb("127.0.0.12", endless_seconds=TIMEOUT * 2) as web:
        site = web.url("endless.slow.test").rstrip("/")
        started = time.time()
        result = crawl(
            tmp_path,
            "endless",
            [[1, 1, site + "/headers.html"], [2, 1, site + "/after.html"]],
            [{"site_id": 1, "origin": site}],
            settings={
                "WIRE_DNS_HOSTS": {"slow.test": "127.0.0.12"},
                "DOWNLOAD_HANDLERS": {
                    "http": "wirescrapy.harvester.headerlimits.HeaderLimitsDownloadHandler"
                },
                "EXTENSIONS": {"tests.test_headerlimits.ReadCounter": 0},
                "READ_COUNTS": str(counts),
                "WIRE_MAX_HEADER_SIZE": LIMIT,
                "DOWNLOAD_TIMEOUT": TIMEOUT,
            },
        )
        log = list(web.log)
    outcomes = {o["doc"]: o.get("status", o.get("error")) for o in result["outcomes"]}
    assert outcomes == {1: "ResponseFailed", 2: 200}
    endless = next(r for r in log if r["path"] == "/headers.html")
    assert endless["end"] - endless["start"] < 1.0  # the server saw the client hang up, not time out
    assert time.time() - started < TIMEOUT
    read = json.loads(counts.read_text())
    # Up to the read of the socket (64 KiB at most) in which the limit was passed, and not a byte more.
    assert len(read) == 2 and read[0] <= LIMIT + 65536
