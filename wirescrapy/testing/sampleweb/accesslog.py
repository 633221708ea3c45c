"""Politeness as the sample web's servers saw it, from the access log (``SampleWebProcess.access_log()``).

Each record has the host, the path, the request's arrival (``start``) and the end of the response (``end``),
both server times. A site's wait runs from the end of one response to the next request's arrival.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

# A response the client hung up on (a timeout, a stopped download: ``"dropped"``) ends on the server a moment
# after the client has moved on: its next request may seem this much early.
HUNG_UP_SLACK = 0.003


def by_host(records: Iterable[dict]) -> dict[str, list[dict]]:
    """host -> its records by arrival time."""
    hosts: dict[str, list[dict]] = {}
    for record in records:
        hosts.setdefault(record["host"], []).append(record)
    for host_records in hosts.values():
        host_records.sort(key=lambda r: r["start"])
    return hosts


def too_close(records: list[dict], wait: float) -> list[tuple[str, str, float]]:
    """(path before, path after, gap) for each request to one host that came less than ``wait`` after the
    previous response ended, or overlapped it (``records``: one host's, by arrival time)."""
    close = []
    for before, after in pairwise(records):
        gap = after["start"] - before["end"]
        if gap < wait - (HUNG_UP_SLACK if before.get("dropped") else 0.0):
            close.append((before["path"], after["path"], round(gap, 4)))
    return close
