"""CDXJ indexes of WARC files, in pywb's format: what a replay tool looks a page up in.

Each line is ``URLKEY TIMESTAMP JSON``: the SURT form of the record's target URI, its WARC-Date as 14 digits,
and a JSON object with ``url``, ``mime`` (the response's media type, ``warc/revisit`` for a revisit),
``status``, ``digest`` (the payload's), ``length`` and ``offset`` (of the record's gzip member) and
``filename`` (the WARC file's name, in the same directory). A file's lines are sorted as text. Only
``response``, ``revisit`` and ``resource`` (a render's DOM) records are indexed: a replay tool serves them,
never a request or our metadata. A revisit of the server-not-modified profile is left out too: pywb replays
it as the empty 304 it is, where the page is the one the capture before it holds.

:class:`~wirescrapy.warc.writer.WarcWriter` makes the lines as it writes the records, and writes the index
beside each WARC file as it closes it: ``NAME.warc.gz`` has ``NAME.cdxj``. The lines are the ones
``cdxj-indexer`` (the package pywb's authors keep) writes for the same file, which the tests check, but
cost no second reading of the file, which would hold up the harvest at every file's close. A file with no
index (its harvester was killed) is indexed with ``cdxj-indexer`` by :func:`index_file`.

An index is written under a temporary name, fsynced and renamed: a kill leaves the whole index or none.
"""

from __future__ import annotations

import heapq
import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from warcio.timeutils import iso_date_to_timestamp

from wirescrapy.warc.records import NOT_MODIFIED

SUFFIX = ".cdxj"
RECORDS = ("response", "revisit", "resource")
_MEDIA_TYPE_END = re.compile(r"[;\s]")


class BadIndex(Exception):
    """An index that does not match its WARC file."""


def index_path(warc: str | os.PathLike) -> Path:
    """Where the index of the WARC file ``warc`` is."""
    warc = Path(warc)
    name = warc.name.removesuffix(".gz").removesuffix(".warc")
    return warc.with_name(name + SUFFIX)


def cdxj_line(record, offset: int, length: int, filename: str) -> str | None:
    """The index line of a warcio record written as the gzip member at ``offset``, ``length`` bytes long, of
    the file ``filename``; None for a record a replay tool does not serve."""
    if record.rec_type not in RECORDS or record.rec_headers.get_header("WARC-Profile") == NOT_MODIFIED:
        return None
    url = record.rec_headers.get_header("WARC-Target-URI")
    entry = {"url": url}
    if record.rec_type == "revisit":
        entry["mime"] = "warc/revisit"
    else:
        headers = record.http_headers if record.rec_type == "response" else record.rec_headers
        content_type = headers.get_header("Content-Type") if headers is not None else None
        if content_type:
            entry["mime"] = _MEDIA_TYPE_END.split(content_type, 1)[0].strip()
    if record.http_headers is not None:
        entry["status"] = record.http_headers.get_statuscode()
    digest = record.rec_headers.get_header("WARC-Payload-Digest")
    if digest:
        entry["digest"] = digest
    entry.update(length=str(length), offset=str(offset), filename=filename)
    timestamp = iso_date_to_timestamp(record.rec_headers.get_header("WARC-Date"))
    return f"{url_key(url)} {timestamp} {json.dumps(entry)}\n"


def url_key(url: str) -> str:
    import surt  # it brings in tldextract: loaded at the first index line, not at every harvester start

    try:
        return surt.surt(url)
    except Exception:  # noqa: BLE001 (as cdxj-indexer does: a URL SURT cannot parse is its own key)
        return url


def write_index(warc: str | os.PathLike, lines: Iterable[str]) -> Path:
    """Write ``lines`` (of the file ``warc``), sorted, as its index; the index's path."""
    path = index_path(warc)
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        out.writelines(sorted(lines))
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
    return path


def index_file(warc: str | os.PathLike) -> Path:
    """Index the WARC file ``warc`` with cdxj-indexer (a file with no index of its own); the index's path."""
    from cdxj_indexer.main import write_cdx_index

    lines = io.StringIO()
    write_cdx_index(lines, [str(warc)], {"sort": True, "records": ",".join(RECORDS)})
    return write_index(warc, (line for line in lines.getvalue().splitlines(True) if not not_modified(line)))


def not_modified(line: str) -> bool:
    """Whether a line of cdxj-indexer's is of a server-not-modified revisit (which :func:`cdxj_line` leaves
    out): the index does not name the profile, but only such a revisit has status 304."""
    entry = json.loads(line.split(" ", 2)[2])
    return entry.get("mime") == "warc/revisit" and entry.get("status") == "304"


def merged(warcs: Iterable[Path]) -> Iterator[str]:
    """The lines of the indexes of ``warcs``, each file's index written if it has none, as one sorted index.
    A line that points past the end of its WARC file is an error naming the index, the file and the offset."""
    streams = []
    for warc in warcs:
        path = index_path(warc)
        if not path.exists():
            index_file(warc)
        streams.append(_checked(path, warc))
    return heapq.merge(*streams)


def _checked(index: Path, warc: Path) -> Iterator[str]:
    size = warc.stat().st_size
    with open(index, encoding="utf-8") as lines:
        for line in lines:
            entry = json.loads(line.split(" ", 2)[2])
            offset, length = int(entry["offset"]), int(entry["length"])
            if entry.get("filename") != warc.name or offset + length > size:
                raise BadIndex(
                    f"{index}: a record at offset {offset} ({length} bytes) past the end of {warc} "
                    f"({size} bytes)"
                    if entry.get("filename") == warc.name
                    else f"{index}: a record at offset {offset} of another file, {entry.get('filename')}"
                )
            yield line
