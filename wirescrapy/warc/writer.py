"""WARC files of a harvest: each fetch appended as it ends, gzipped per record, rotated at a size.

A :class:`WarcWriter` writes into one directory files named
``wirescrapy-<batch>-<part>-<UTC yyyymmddhhmmss>-<serial>.warc.gz`` (``<batch>`` six digits, ``<serial>``
five, counting the files of one writer; a name already taken, by a second harvester writing into the same
directory, takes the next serial). Each file begins with a ``warcinfo`` record naming the software, the batch
and its part (``wirescrapy-batch``, ``wirescrapy-part``, ``wirescrapy-parts``, ``wirescrapy-collection``: the
collection that wrote the batch), then holds the record groups of :mod:`~wirescrapy.warc.records`, one group
per fetch, every record its own gzip member (WARC/1.1 Annex D), so that a reader can start at any record. A
file that has reached ``max_size`` bytes is closed and the next fetch opens a new one; a new batch (the next
cycle) opens a new file too, whose warcinfo names it.

A 304 to a conditional request is written as a ``revisit`` of the server-not-modified profile. Given the
directory's :class:`~wirescrapy.warc.digests.PayloadDigests` (a harvest with a collection), a whole body whose
payload the directory holds already is a ``revisit`` of the identical-payload-digest profile, and each file's
new payloads go to the store once the file is closed.

Each file's CDXJ index (:mod:`~wirescrapy.warc.index`) is written beside it when it is closed, from lines made
as its records were written. A file a kill left open has none; ``scrapy export --cdxj`` makes it.

Crash behaviour: a fetch's records are built in memory and appended with one ``write`` to a file opened with
``O_APPEND``. A process killed at any moment leaves every file a sequence of complete record groups (the
kernel has every ``write`` that returned, and a kill does not split one); only a machine's crash, or a full
disk, can leave a torn tail, which the reader (:mod:`~wirescrapy.warc.reader`) stops at. ``close`` fsyncs
the file.
"""

from __future__ import annotations

import logging
import os
import time
import zlib
from importlib.metadata import version
from io import BytesIO
from pathlib import Path

from warcio.warcwriter import WARCWriter

from wirescrapy.items import Fetch
from wirescrapy.warc import index
from wirescrapy.warc.digests import PayloadDigests, payload_digest
from wirescrapy.warc.records import (
    IDENTICAL_PAYLOAD,
    NOT_MODIFIED,
    WARC_VERSION,
    FetchRecords,
    Revisit,
    not_modified,
    warc_date,
    whole,
)

logger = logging.getLogger(__name__)

SUFFIX = ".warc.gz"
PREFIX = "wirescrapy"
# zlib's default level. warcio's own gzip writer uses 9, which costs much more time on real HTML pages for
# files barely smaller (``benchmarks/warc.py --only records`` measures both).
GZIP_LEVEL = 6
# Scrapy's version as installed, not imported: the writer's process starts sooner without Scrapy.
SCRAPY_VERSION = version("scrapy")


class WarcWriter:
    def __init__(
        self,
        directory: str | os.PathLike,
        max_size: int,
        info: dict | None = None,
        digests: PayloadDigests | None = None,
    ):
        self.dir = Path(directory)
        self.digests = digests
        self.max_size = max_size
        self.info = dict(info or {})  # the warcinfo fields: batch, part, parts, collection...
        self.records = FetchRecords()
        # One warcio writer into one buffer for every record: warcio's writer asks the system for the host's
        # name when it is made.
        self._buffer = BytesIO()
        self._warc = WARCWriter(self._buffer, gzip=False, warc_version=WARC_VERSION)
        self._fd: int | None = None
        self._path: Path | None = None
        self._size = 0
        self._index: list[str] = []  # the CDXJ lines of the file being written
        self._serial = 0
        self.files: list[Path] = []  # every file this writer opened
        self.fetches = 0
        self.bytes = 0
        self.revisit: Revisit | None = None  # the last fetch's revisit, if it was written as one

    @property
    def path(self) -> Path | None:
        """The file being written, if one is open."""
        return self._path

    def open(self) -> None:
        """Begin a file now (its warcinfo), not at the first fetch."""
        if self._fd is None:
            self._open()

    def begin(self, info: dict) -> None:
        """A new batch (or part): its fetches go to a new file whose warcinfo names it."""
        if info != self.info:
            self.close()
            self.info = dict(info)

    def write(self, fetch: Fetch) -> int:
        """Append the records of ``fetch``; the bytes written."""
        self.revisit, digest = self._revisit(fetch)
        written = self._add(self.records.records(fetch, self.revisit, digest))
        if digest and self.digests is not None:  # with the file that holds it, before it is closed
            self.digests.archived(digest, fetch.url, warc_date(fetch.started))
        self.fetches += 1
        self._rotate()
        return written

    def _revisit(self, fetch: Fetch) -> tuple[Revisit | None, str]:
        """Whether ``fetch``'s response is written as a revisit, and its payload's digest if it has one."""
        digests = self.digests
        if not_modified(fetch):
            last = digests.last_record(fetch.url) if digests is not None else None
            return Revisit(NOT_MODIFIED, date=last[1] if last else ""), ""
        if digests is None or not whole(fetch):
            return None, ""
        digest = payload_digest(fetch.exchange.body)
        original = digests.original(digest)
        if original is None:
            return None, digest
        return Revisit(IDENTICAL_PAYLOAD, digest, *original), digest

    def write_records(self, records: list) -> int:
        """Append records built with ``self.records`` (one fetch's, or a collection's pages), in one
        ``write``; the bytes written."""
        written = self._add(records)
        self._rotate()
        return written

    def _add(self, records: list) -> int:
        members = self._serialize(records)
        if self._fd is None:
            self._open()
        offset = self._size
        for record, member in zip(records, members, strict=True):
            line = index.cdxj_line(record, offset, len(member), self._path.name)
            if line is not None:
                self._index.append(line)
            offset += len(member)
        data = b"".join(members)
        self._append(data)
        self.bytes += len(data)
        return len(data)

    def _rotate(self) -> None:
        if self._size >= self.max_size:
            self.close()

    def _append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:  # a regular file takes it whole; a short write only on a full disk, which raises next
            view = view[os.write(self._fd, view) :]
        self._size += len(data)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        index.write_index(self._path, self._index)
        self._index = []
        if self.digests is not None:
            self.digests.commit()  # after the fsync: every line names a record on disk
        logger.info("WARC file %(path)s closed: %(bytes)d bytes", {"path": self._path, "bytes": self._size})
        self._path = None

    def _serialize(self, records: list) -> list[bytes]:
        """The records, each as its own gzip member."""
        members = []
        buffer = self._buffer
        for record in records:
            buffer.seek(0)
            buffer.truncate()
            self._warc.write_record(record)
            members.append(zlib.compress(buffer.getvalue(), GZIP_LEVEL, wbits=zlib.MAX_WBITS + 16))
        return members

    def _open(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
        batch, part = int(self.info.get("batch") or 0), int(self.info.get("part") or 0)
        while True:
            name = f"{PREFIX}-{batch:06d}-{part}-{stamp}-{self._serial:05d}{SUFFIX}"
            self._serial += 1
            try:
                fd = os.open(self.dir / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
            except FileExistsError:
                continue
            break
        self._fd, self._path, self._size = fd, self.dir / name, 0
        self.files.append(self._path)
        info = {
            "software": f"wirescrapy (Scrapy {SCRAPY_VERSION}, warcio)",
            "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
            **{f"wirescrapy-{key}": str(value) for key, value in self.info.items()},
        }
        self._append(b"".join(self._serialize([self.records.warcinfo(name, info, time.time())])))
