"""A collection's stored pages as one WARC/1.1 file (``scrapy export --warc FILE``).

After a ``warcinfo`` record naming the collection, every document with a stored page, in doc-id order, is a
``response`` record: its URL, ``HTTP/1.1 200 OK``, ``Content-Type`` its media type with ``charset=utf-8``
(the gatherer stores the cleaned page, in UTF-8) and the stored bytes, dated its last visit. An exact
duplicate (content-seen) is a ``revisit`` record of the identical-payload-digest profile that refers to its
original's record. The stored page is what is kept of a page, not the bytes the server sent: those are in the
harvest's own WARC files (``WIRE_WARC_DIR``, ``-a warc=OUTDIR``). Each record is its own gzip member.

The file is written beside ``path`` under a temporary name, fsynced and renamed: a kill leaves the old file or
none, never half of the new one.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import scrapy
from warcio.warcwriter import WARCWriter

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.warc.records import WARC_VERSION, FetchRecords, warc_date

if TYPE_CHECKING:
    from wirescrapy.collection import Collection


def write_collection_warc(collection: Collection, path: str | os.PathLike) -> int:
    """Write the stored pages of ``collection`` (open, read-only is enough) to the WARC file ``path``
    (gzipped per record); the number of page records written (responses and revisits)."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    builder = FetchRecords()
    written = 0
    with open(temporary, "wb") as stream:
        writer = WARCWriter(stream, gzip=True, warc_version=WARC_VERSION)
        info = {
            "software": f"wirescrapy (Scrapy {scrapy.__version__}, warcio)",
            "format": "WARC File Format 1.1",
            "wirescrapy-collection": str(collection.dir.resolve()),
            "description": "the stored (cleaned) pages of a wirescrapy collection",
        }
        writer.write_record(builder.warcinfo(path.name, info, time.time()))
        records = collection.documents.records
        originals: dict[int, tuple[str, str, str, str]] = {}  # doc-id: (record id, URL, date, digest)
        for doc_id in range(1, collection.documents.count + 1):
            record = records[doc_id]
            if record["flags"] & DocFlag.DUPLICATE and record["duplicate_of"]:
                original = originals.get(int(record["duplicate_of"]))
                if original is not None:
                    writer.write_record(_revisit(builder, collection.url(doc_id), record, original))
                    written += 1
                continue
            body = collection.load_page(doc_id)
            if body is None:
                continue
            url = collection.url(doc_id)
            mime = bytes(record["mime"]).decode("ascii", "replace") or "application/octet-stream"
            response = builder.page(url, body, f"{mime}; charset=utf-8", float(record["last_visit"]))
            writer.write_record(response)
            originals[doc_id] = (
                response.rec_headers.get_header("WARC-Record-ID"),
                url,
                response.rec_headers.get_header("WARC-Date"),
                response.rec_headers.get_header("WARC-Payload-Digest"),
            )
            written += 1
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)
    return written


def _revisit(builder: FetchRecords, url: str, record, original: tuple):
    record_id, original_url, original_date, digest = original
    revisit = builder.create_revisit_record(
        url,
        digest,
        original_url,
        original_date,
        warc_headers_dict={"WARC-Date": warc_date(float(record["last_visit"])), "WARC-Refers-To": record_id},
    )
    return revisit
