"""Collections written by an earlier wirescrapy: their record files converted to today's format, once.

``documents.rec`` of kind ``document/1`` kept a fetch's error kind as a negative ``status``; ``document/2``
keeps the server's status and our conclusion apart (``status`` and ``error``, see ``metadata.py``). The
upgrade reads every record in the old layout and writes them in the new one, a negative status becoming
``error`` with ``status`` 0 (the 3xx of a redirect error was not kept by ``document/1``), every other field
as it was.

Crash behaviour: the new file is written beside the old one (``documents.rec.upgrade``), flushed to disk,
then renamed over it: a kill leaves the old file or the new one, never a mix, and a leftover ``.upgrade``
file is written again by the next try. Only a writer upgrades (``Collection`` opened for writing, under its
lock); a reader of an old collection is told how to upgrade it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from .metadata import DOCUMENT_DTYPE, DOCUMENT_KIND
from .records import HEADER_DTYPE, MAGIC, RecordFile, RecordFileError

if TYPE_CHECKING:
    from pathlib import Path

# document/1: document/2 without ``error`` and its padding byte, ``status`` signed.
DOCUMENT_V1_KIND = "document/1"
DOCUMENT_V1_DTYPE = np.dtype([(name, "<i2" if name == "status" else DOCUMENT_DTYPE.fields[name][0])
                              for name in DOCUMENT_DTYPE.names if name not in ("error", "pad")])


def record_kind(path: Path) -> str:
    """The kind named in a record file's header ("" when the file does not exist or is no record file)."""
    try:
        head = np.fromfile(path, dtype=HEADER_DTYPE, count=1)
    except (FileNotFoundError, ValueError):
        return ""
    if len(head) != 1 or head[0]["magic"] != MAGIC:
        return ""
    return head[0]["kind"].decode("ascii", "replace")


def needs_upgrade(directory: Path) -> bool:
    return record_kind(directory / "documents.rec") == DOCUMENT_V1_KIND


def upgrade_documents(path: Path) -> int:
    """Convert a ``document/1`` file to ``document/2`` in place; the number of records converted."""
    old = RecordFile(path, DOCUMENT_V1_DTYPE, DOCUMENT_V1_KIND, readonly=True)
    try:
        count = old.count
        records = old.records[1:count + 1]
        converted = np.zeros(count, DOCUMENT_DTYPE)
        for name in DOCUMENT_V1_DTYPE.names:
            if name != "status":
                converted[name] = records[name]
        status = records["status"].astype(np.int32)
        failed = status < 0
        converted["status"] = np.where(failed, 0, status)
        converted["error"] = np.where(failed, -status, 0)
    finally:
        old.close()
    fresh = path.with_name(path.name + ".upgrade")
    fresh.unlink(missing_ok=True)
    new = RecordFile(fresh, DOCUMENT_DTYPE, DOCUMENT_KIND)
    try:
        new.ensure(count)
        new.records[1:count + 1] = converted
        new.count = count
        new.flush()
    finally:
        new.close()
    with open(fresh, "rb+") as done:
        os.fsync(done.fileno())
    os.replace(fresh, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return count


def check_current(directory: Path, readonly: bool) -> int:
    """Before a collection's stores are opened: upgrade them if a writer opens them (the records converted),
    or refuse a reader with what to do. 0 when there was nothing to do."""
    if not needs_upgrade(directory):
        return 0
    if readonly:
        raise RecordFileError(f"{directory}: a collection of an earlier wirescrapy ({DOCUMENT_V1_KIND} records); "
                              f"open it for writing once to upgrade it (scrapy seed, scrapy manager or a harvest)")
    return upgrade_documents(directory / "documents.rec")
