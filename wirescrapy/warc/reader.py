"""Reading back what :mod:`~wirescrapy.warc.writer` wrote: the warcinfo of a file, its fetches in order.

A file is read with warcio's ``ArchiveIterator`` from its first record; each ``metadata`` record of a fetch
(:mod:`~wirescrapy.warc.records`), or a revisit holding its fetch's fields, closes a group and yields an
:class:`~wirescrapy.warc.records.Archived` with the response of its group. Records of other tools are
passed over. A torn tail (a machine's crash or a full disk while the harvester wrote) ends the file's reading
with a warning naming the file and the offset: every complete group before it is read.

A ``revisit`` stands for its response. Of the server-not-modified profile, it is a 304 with no body. Of the
identical-payload-digest profile, its body is the payload of the response with its ``WARC-Payload-Digest``,
looked up in the WARC files of the same directory, or of others given (:class:`Payloads`). A response whose
payload does not match its digest, or a revisit whose payload is nowhere, is an error of one line naming the
file and the record's offset, and its fetch is passed over: the fetches after it are read.
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from wirescrapy.warc.digests import payload_digest
from wirescrapy.warc.records import FETCH_FIELD, IDENTICAL_PAYLOAD, NOT_MODIFIED, Archived, fetch_json
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


class Payloads:
    """Where the payloads of some WARC files are, by digest: the bodies of revisits. The files are scanned for
    their responses on the first digest not met yet in what was read; the ``earlier`` files (of the parts
    ingested before, which a detached harvest's revisits may name) on the first not in those either."""

    def __init__(self, files: list[Path], earlier: Iterable[Path] = ()):
        self.files = files
        self.earlier = earlier
        self._where: dict[str, tuple[Path, int]] = {}  # digest: (file, offset) of a response holding it
        self._scanned = self._scanned_earlier = False

    def add(self, digest: str, path: Path, offset: int) -> None:
        self._where.setdefault(digest, (path, offset))

    def load(self, digest: str) -> bytes | None:
        """The payload whose digest is ``digest``, or None when no response of the files holds it."""
        if digest not in self._where and not self._scanned:
            self._scanned = True
            for file in self.files:
                self._scan(file)
        if digest not in self._where and not self._scanned_earlier:
            self._scanned_earlier = True
            for file in self.earlier:
                self._scan(file)
        where = self._where.get(digest)
        if where is None:
            return None
        path, offset = where
        try:
            with open(path, "rb") as stream:
                stream.seek(offset)
                body = next(iter(ArchiveIterator(stream))).raw_stream.read()
        except (*_TORN, StopIteration) as exc:
            raise WarcError(f"{path} at offset {offset}: no readable response ({exc})") from None
        if payload_digest(body) != digest:
            raise WarcError(f"{path} at offset {offset}: the payload does not match its digest {digest}")
        return body

    def _scan(self, path: Path) -> None:
        try:
            with open(path, "rb") as stream:
                records = ArchiveIterator(stream)
                for record in records:
                    if record.rec_type == "response":
                        digest = record.rec_headers.get_header("WARC-Payload-Digest")
                        if digest:
                            self.add(digest, Path(path), records.offset)
        except _TORN:
            pass  # its readable part is scanned; read_fetches says where it is torn


def read_fetches(
    path: str | os.PathLike, payloads: Payloads | None = None, bodies: bool = True
) -> Iterator[Archived]:
    """The fetches of one WARC file, in the order they were written. ``payloads``: where the bodies of its
    revisits are (by default, the WARC files of its directory). Without ``bodies``, a revisit of the
    identical-payload-digest profile is read with no body, wherever its payload is: what was fetched, not
    what it held."""
    path = Path(path)
    if payloads is None:
        payloads = Payloads(warc_files(path.parent) if bodies else [])
    responses: dict[str, tuple[int, list, bytes, str] | None] = {}  # None: a response not to be read
    records = None
    group = None  # the offset of the first record of a group whose metadata has not come yet
    try:
        with open(path, "rb") as stream:
            records = ArchiveIterator(stream, no_record_parse=False)
            for record in records:
                kind = record.rec_type
                if kind in ("request", "response", "revisit", "resource") and group is None:
                    group = records.offset
                if kind == "resource" and group is not None:  # a render's DOM
                    responses[record.rec_headers.get_header("WARC-Record-ID")] = (
                        0,
                        None,
                        record.raw_stream.read(),
                        "",
                    )
                elif kind in ("response", "revisit") and record.http_headers is not None:
                    record_id = record.rec_headers.get_header("WARC-Record-ID")
                    line = record.rec_headers.get_header(FETCH_FIELD) if kind == "revisit" else None
                    try:
                        responses[record_id] = _response(record, path, records.offset, payloads, bodies)
                    except WarcError as exc:
                        logger.error("%(error)s; its fetch is passed over", {"error": exc})
                        responses[record_id] = None
                    if line is not None:  # a revisit that holds its fetch's fields: the group's end
                        group = None
                        response = responses.pop(record_id)
                        responses.clear()
                        if response is not None:
                            archived = Archived(json.loads(line), record_id)
                            archived.status, archived.headers, archived.body, archived.digest = response
                            yield archived
                elif kind == "metadata":
                    fields = fetch_json(
                        record.rec_headers.get_header("Content-Type") or "", record.content_stream().read()
                    )
                    if fields is None:
                        continue  # another tool's
                    group = None
                    refers_to = record.rec_headers.get_header("WARC-Refers-To") or ""
                    response = responses.pop(refers_to, None)
                    responses.clear()  # a group's records come together: what is left had no metadata
                    if response is None and refers_to:
                        continue  # its response was bad, said above
                    archived = Archived(fields, record.rec_headers.get_header("WARC-Record-ID"))
                    if response is not None:
                        archived.status, archived.headers, archived.body, archived.digest = response
                    yield archived
        if group is not None:
            raise EOFError("a fetch's records with no metadata record")
    except _TORN as exc:
        logger.warning(
            "%(path)s at offset %(offset)s: stopped at a torn or unreadable record (%(error)s); the fetches "
            "before it are read",
            {
                "path": path,
                "offset": group if group is not None else getattr(records, "offset", 0),
                "error": exc,
            },
        )


def _response(
    record, path: Path, offset: int, payloads: Payloads, bodies: bool = True
) -> tuple[int, list, bytes, str]:
    """(status, headers, body, digest) of a response or revisit record read at ``offset`` of ``path``; the
    digest is that of a whole payload, one an archive holds once (``records.whole``), else ``""``."""
    status = int(record.http_headers.get_statuscode() or 0)
    headers = list(record.http_headers.headers)
    digest = record.rec_headers.get_header("WARC-Payload-Digest") or ""
    if record.rec_type == "response":
        body = record.raw_stream.read()
        if digest and payload_digest(body) != digest:
            raise WarcError(f"{path} at offset {offset}: the payload does not match its digest {digest}")
        if digest:
            payloads.add(digest, path, offset)
        whole = body and status != 304 and not record.rec_headers.get_header("WARC-Truncated")
        return status, headers, body, digest if whole else ""
    profile = record.rec_headers.get_header("WARC-Profile") or ""
    if profile == NOT_MODIFIED:
        return status, headers, b"", ""
    if profile != IDENTICAL_PAYLOAD:
        raise WarcError(f"{path} at offset {offset}: a revisit of an unknown profile {profile!r}")
    if not bodies:
        return status, headers, b"", digest
    body = payloads.load(digest)
    if body is None:
        raise WarcError(
            f"{path} at offset {offset}: a revisit to the payload {digest}, which no WARC file read "
            f"(of {path.parent} and the parts ingested before) holds"
        )
    return status, headers, body, digest


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
        for archived in read_fetches(file, bodies=False):  # a revisit's payload may be another part's
            yield archived.fields["url"], int(archived.fields["doc_id"])
