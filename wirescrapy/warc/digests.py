"""The payloads an archive directory already holds: what a harvest with a collection writes revisits against.

A payload is known by its WARC-Payload-Digest (``sha1:`` and the SHA-1 in base 32, as warcio writes it). For
each one the store keeps the first response record that holds it, by target URI and WARC-Date: that is what a
``revisit`` record of the identical-payload-digest profile names. It also keeps, for each URI, the payload
its last whole response held, so that a 304 (a ``revisit`` of the server-not-modified profile) can name the
record whose payload the server said is unchanged.

It lives in the archive's directory, beside the WARC files it describes, as ``payload-digests.txt``::

    # wirescrapy payload digests 1
    DIGEST DATE URI

one line per record that holds a payload new to the directory, or new to its URI, with ``DATE`` the record's
WARC-Date and ``URI`` its target URI (no spaces: a canonical URL has none). The first line of a digest is its
original; the last line of a URI says its payload.

Lines are appended when the WARC file holding their records is closed and fsynced, with one ``write`` to a
file opened with ``O_APPEND``. So every line names a record on disk. Originals of the
file still open are known in memory only. A kill loses them, and the next harvest stores those payloads again
as responses, which costs bytes but is never a revisit to nothing. A torn last line (a machine's crash) is
passed over. Revisits name only records of this directory, so the directory replays on its own.

A collection whose batches are harvested detached keeps a store of the same format in its own directory: the
payloads ``scrapy ingest`` brought in, with the records of the parts' WARC directories that hold them. The
manager ships with each batch, in its directory, the lines of its sites (:meth:`PayloadDigests.for_sites`:
the last payload of each of their URIs and the record that holds it). A detached harvest loads that file
read-only beside its own store, and writes revisits against both. What it holds is bounded by the sites of the
part, not the collection. Those revisits name records of other directories: keep the parts' WARC directories
together to replay them, as ``scrapy ingest`` needs them to read them.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from collections.abc import Container
from pathlib import Path

logger = logging.getLogger(__name__)

FILENAME = "payload-digests.txt"
HEADER = b"# wirescrapy payload digests 1\n"


def payload_digest(payload: bytes) -> str:
    """The WARC-Payload-Digest of ``payload``, as warcio writes it."""
    return "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode("ascii")


class PayloadDigests:
    """The store of ``directory``, and, read-only, the lines of the file ``shipped`` (a batch's), if any."""

    def __init__(self, directory: str | os.PathLike, shipped: str | os.PathLike | None = None):
        self.path = Path(directory) / FILENAME
        self._originals: dict[str, tuple[str, str]] = {}  # digest: (URI, date) of the first record
        self._last: dict[str, tuple[str, str]] = {}  # URI: (digest, date) of its last payload's record
        self._pending: list[tuple[str, str, str]] = []  # (digest, date, URI) of the file still open
        if shipped is not None:
            self._load(Path(shipped))
        self._load(self.path)

    def __len__(self) -> int:
        return len(self._originals)

    def original(self, digest: str) -> tuple[str, str] | None:
        """(URI, date) of the record that holds the payload ``digest``, if any."""
        return self._originals.get(digest)

    def last(self, uri: str) -> str | None:
        """The digest of the last payload archived for ``uri`` (a response's or a revisit's), if any."""
        last = self._last.get(uri)
        return last[0] if last else None

    def last_record(self, uri: str) -> tuple[str, str] | None:
        """(digest, date) of the first record of ``uri`` that held its last payload, if any."""
        return self._last.get(uri)

    def archived(self, digest: str, uri: str, date: str) -> None:
        """A response, or a revisit of the identical-payload-digest profile, of ``uri`` dated ``date`` was
        written to the file still open. A line is kept when the payload is new, or new for ``uri``."""
        new = digest not in self._originals
        if new:
            self._originals[digest] = (uri, date)
        if new or self.last(uri) != digest:
            self._last[uri] = (digest, date)
            self._pending.append((digest, date, uri))

    def commit(self) -> None:
        """The file still open is closed and fsynced: the lines of its records go to the store on disk."""
        if not self._pending:
            return
        data = b"".join(f"{d} {date} {uri}\n".encode() for d, date, uri in self._pending)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            if os.fstat(fd).st_size == 0:
                data = HEADER + data
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        self._pending.clear()

    def for_sites(self, origins: Container[str]) -> bytes:
        """A store of this format for the sites ``origins`` (``scheme://host[:port]``): for each of their
        URIs, the line of the record that first held its last payload, then, after all those, the line of
        its last one. So a detached harvest of those sites writes revisits of both profiles as one with this
        store would."""
        first: dict[tuple[str, str, str], None] = {}
        last = []
        for uri, (digest, date) in self._last.items():
            if _site(uri) in origins:
                original, original_date = self._originals[digest]
                first[(digest, original_date, original)] = None
                last.append((digest, date, uri))
        return HEADER + b"".join(f"{d} {date} {uri}\n".encode() for d, date, uri in (*first, *last))

    def _load(self, path: Path) -> None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        if not data.startswith(HEADER):
            raise ValueError(f"{path} at offset 0: not a payload digest store")
        offset = len(HEADER)
        for line in data[offset:].split(b"\n")[:-1]:  # what follows the last newline is a torn line
            fields = line.decode("utf-8", "replace").split(" ", 2)
            if len(fields) == 3 and fields[0].startswith("sha1:"):
                digest, date, uri = fields
                self._originals.setdefault(digest, (uri, date))
                self._last[uri] = (digest, date)
            else:
                logger.warning(
                    "%(path)s at offset %(offset)d: not a digest line, passed over",
                    {"path": path, "offset": offset},
                )
            offset += len(line) + 1


def _site(uri: str) -> str:
    """The origin of a URI the harvester archived (a canonical URL): what precedes its path."""
    start = uri.find("://")
    end = uri.find("/", start + 3) if start >= 0 else -1
    return uri if end < 0 else uri[:end]
