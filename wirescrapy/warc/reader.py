"""Reading back what :mod:`~wirescrapy.warc.writer` wrote: the warcinfo of a file, its fetches in order.

A file is read with warcio's ``ArchiveIterator`` from its first record; each ``metadata`` record of a fetch
(:mod:`~wirescrapy.warc.records`) closes a group and yields an :class:`~wirescrapy.warc.records.Archived`
with the response of its group. Records of other tools are passed over. A torn tail (a machine's crash or a
full disk while the harvester wrote) ends the file's reading with a warning: every complete group before it
is read.
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from wirescrapy.warc.records import FETCH_CONTENT_TYPE, Archived
from wirescrapy.warc.writer import SUFFIX

logger = logging.getLogger(__name__)

_TORN = (ArchiveLoadFailed, EOFError, zlib.error, ValueError, OSError)


class WarcError(Exception):
    """Not a WARC file of a harvest, or not readable."""


def warc_files(directory: str | os.PathLike) -> list[Path]:
    """The WARC files of a harvest's output directory, in the order they were written."""
    path = Path(directory)
    if not path.is_dir():
        raise WarcError(f"{path}: no such directory")
    return sorted(p for p in path.iterdir() if p.name.endswith(SUFFIX) and p.is_file())


def warcinfo(path: str | os.PathLike) -> dict[str, str]:
    """The fields of the ``warcinfo`` record that begins ``path``."""
    try:
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type != "warcinfo":
                    break
                fields = {}
                for line in record.content_stream().read().decode("utf-8", "replace").splitlines():
                    name, _, value = line.partition(":")
                    fields[name.strip()] = value.strip()
                return fields
    except _TORN as exc:
        raise WarcError(f"{path}: not a readable WARC file ({exc})") from None
    raise WarcError(f"{path}: does not begin with a warcinfo record")


def read_fetches(path: str | os.PathLike) -> Iterator[Archived]:
    """The fetches of one WARC file, in the order they were written."""
    responses: dict[str, tuple[int, list, bytes]] = {}
    try:
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream, no_record_parse=False):
                kind = record.rec_type
                if kind == "response" and record.http_headers is not None:
                    record_id = record.rec_headers.get_header("WARC-Record-ID")
                    status = int(record.http_headers.get_statuscode() or 0)
                    responses[record_id] = (
                        status,
                        list(record.http_headers.headers),
                        record.raw_stream.read(),
                    )
                elif (
                    kind == "metadata" and record.rec_headers.get_header("Content-Type") == FETCH_CONTENT_TYPE
                ):
                    fields = json.loads(record.content_stream().read())
                    response = responses.pop(record.rec_headers.get_header("WARC-Refers-To") or "", None)
                    archived = Archived(fields, record.rec_headers.get_header("WARC-Record-ID"))
                    if response is not None:
                        archived.status, archived.headers, archived.body = response
                    responses.clear()  # a group's records come together: what is left had no metadata
                    yield archived
    except _TORN as exc:
        logger.warning(
            "%(path)s: stopped at a torn or unreadable record (%(error)s); the fetches before it are read",
            {"path": path, "error": exc},
        )


def archived_fetches(directory: str | os.PathLike, batch: int, part: int) -> Iterator[tuple[str, int]]:
    """(URL, doc-id) of every fetch the WARC files in ``directory`` hold for ``batch``'s ``part``: what a
    restarted detached harvest has fetched already."""
    path = Path(directory)
    if not path.is_dir():
        return
    for file in warc_files(path):
        try:
            info = warcinfo(file)
        except WarcError:
            continue
        if info.get("wirescrapy-batch") != str(batch) or info.get("wirescrapy-part") != str(part):
            continue
        for archived in read_fetches(file):
            yield archived.fields["url"], int(archived.fields["doc_id"])
