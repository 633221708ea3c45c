"""An archive directory as one WACZ file (``scrapy export --wacz FILE``), with the ``wacz`` package.

WACZ 1.1.1 is a ZIP holding the WARC files (``archive/``), their CDXJ index (``indexes/``), a pages list
(``pages/pages.jsonl``) and ``datapackage.json`` with each file's digest: what replay tools (pywb,
ReplayWeb.page) open as one file. Every WARC file of the directory goes in, since a revisit's payload may be
in any of them. The ``wacz`` package writes the index and the datapackage. The pages list is ours: each URL
whose response was HTML with status 200, once, at its last capture with status 200 (a response, or a revisit
of the identical-payload-digest profile). The file is written beside ``path`` under a temporary name and
renamed: a kill leaves the old file or none.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from warcio.timeutils import timestamp_to_iso_date

from wirescrapy.warc import index

HTML = ("text/html", "application/xhtml+xml")


class WaczError(Exception):
    """The wacz package could not write or validate the file."""


def pages(lines: Iterable[str]) -> list[dict]:
    """The pages list of a sorted CDXJ index: each HTML page with status 200, at its last such capture. A
    page's ``id`` is of its URL, as the URL is listed once."""
    html: set[str] = set()
    last: dict[str, str] = {}  # URL: the timestamp of its last capture with status 200
    for line in lines:
        _, timestamp, data = line.split(" ", 2)
        entry = json.loads(data)
        if entry.get("status") != "200":
            continue
        url = entry["url"]
        if entry.get("mime") in HTML:
            html.add(url)
        last[url] = max(timestamp, last.get(url, ""))
    return [
        {
            "id": hashlib.sha1(url.encode()).hexdigest()[:20],
            "url": url,
            "ts": timestamp_to_iso_date(last[url]),
        }
        for url in sorted(html)
    ]


def write_wacz(warcs: list[Path], path: str | os.PathLike, title: str = "") -> int:
    """Write the WARC files ``warcs`` as the WACZ file ``path``, and validate it; the number of pages."""
    from wacz.main import main as wacz

    path = Path(path)
    listed = pages(index.merged(warcs))
    temporary = path.with_name(f".{path.name}.tmp")
    pages_file = path.with_name(f".{path.name}.pages.jsonl")
    header = {"format": "json-pages-1.0", "id": "pages", "title": title or "All Pages"}
    pages_file.write_text("".join(json.dumps(p) + "\n" for p in [header, *listed]), encoding="utf-8")
    try:
        # The package prints its progress: to stderr, so that stdout stays the command's.
        with contextlib.redirect_stdout(sys.stderr):
            arguments = ["create", "-o", str(temporary), "-p", str(pages_file), "--copy-pages"]
            if title:
                arguments += ["--title", title]
            if wacz([*arguments, *map(str, warcs)]):
                raise WaczError(f"{path}: the wacz package could not write it")
            if wacz(["validate", "-f", str(temporary)]):
                raise WaczError(f"{path}: the file written does not pass the wacz package's validator")
        os.replace(temporary, path)
    finally:
        pages_file.unlink(missing_ok=True)
        temporary.unlink(missing_ok=True)
    return len(listed)
