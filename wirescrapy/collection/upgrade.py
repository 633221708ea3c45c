"""Collections written by an earlier wirescrapy: their record files converted to the current format, once.

Each earlier kind of ``documents.rec`` and ``sites.rec`` is listed in ``EARLIER`` with its layout. The upgrade
reads every record in the old layout and writes it in the current one: fields of the same name are copied,
fields added since are zero. ``document/1`` kept a fetch's error kind as a negative ``status``; ``document/2``
and later keep the server's status and our conclusion apart (``status`` and ``error``, see ``metadata.py``): a
negative status becomes ``error`` with ``status`` 0 (the 3xx of a redirect error was not kept by
``document/1``).

A side file added since needs no conversion: a collection without ``nearduplicates.rec`` is one whose pages
have no near-duplicate fingerprint yet (``nearduplicates.py``); the first harvest creates the file, and each
page gets its fingerprint at its next visit.

Crash behaviour: the new file is written beside the old one (``documents.rec.upgrade``), flushed to disk,
then renamed over it: a kill leaves the old file or the new one, never a mix, and a leftover ``.upgrade``
file is written again by the next try. Only a writer upgrades (``Collection`` opened for writing, under its
lock); a reader of an old collection is told how to upgrade it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .metadata import DOCUMENT_DTYPE, DOCUMENT_KIND, SITE_DTYPE, SITE_KIND
from .records import HEADER_DTYPE, MAGIC, RecordFile, RecordFileError
from .writes import fsync_directory

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


class Current(NamedTuple):
    dtype: np.dtype
    kind: str


def _fields(dtype: np.dtype, *names: str) -> list[tuple[str, np.dtype]]:
    return [(name, dtype.fields[name][0]) for name in names]


_DOCUMENT_V2_NAMES = DOCUMENT_DTYPE.names[: DOCUMENT_DTYPE.names.index("profit") + 1]
# document/2: document/3 without the fields after ``profit``; its ``redirects`` byte was padding.
DOCUMENT_V2_KIND = "document/2"
DOCUMENT_V2_DTYPE = np.dtype(
    [("pad" if name == "redirects" else name, DOCUMENT_DTYPE.fields[name][0]) for name in _DOCUMENT_V2_NAMES]
)
# document/1: document/2 without ``error`` and its padding byte, ``status`` signed.
DOCUMENT_V1_KIND = "document/1"
DOCUMENT_V1_DTYPE = np.dtype(
    [
        (name, "<i2" if name == "status" else DOCUMENT_DTYPE.fields[name][0])
        for name in _DOCUMENT_V2_NAMES
        if name not in ("error", "redirects")
    ]
)
# site/1: site/2 without the fields after ``pagerank_sum``; its ``render`` byte was padding.
SITE_V1_KIND = "site/1"
SITE_V1_DTYPE = np.dtype(
    [
        ("pad" if name == "render" else name, SITE_DTYPE.fields[name][0])
        for name in SITE_DTYPE.names[: SITE_DTYPE.names.index("pagerank_sum") + 1]
    ]
)


def _negative_status(old: np.ndarray, new: np.ndarray) -> None:
    status = old["status"].astype(np.int32)
    failed = status < 0
    new["status"] = np.where(failed, 0, status)
    new["error"] = np.where(failed, -status, 0)


# file: (its current layout, {earlier kind: (its layout, what copying same-named fields does not do)})
EARLIER: dict[str, tuple[Current, dict[str, tuple[np.dtype, Callable | None]]]] = {
    "documents.rec": (
        Current(DOCUMENT_DTYPE, DOCUMENT_KIND),
        {
            DOCUMENT_V1_KIND: (DOCUMENT_V1_DTYPE, _negative_status),
            DOCUMENT_V2_KIND: (DOCUMENT_V2_DTYPE, None),
        },
    ),
    "sites.rec": (Current(SITE_DTYPE, SITE_KIND), {SITE_V1_KIND: (SITE_V1_DTYPE, None)}),
}


def record_kind(path: Path) -> str:
    """The kind named in a record file's header ("" when the file does not exist or is no record file)."""
    try:
        head = np.fromfile(path, dtype=HEADER_DTYPE, count=1)
    except (FileNotFoundError, ValueError):
        return ""
    if len(head) != 1 or head[0]["magic"] != MAGIC:
        return ""
    return head[0]["kind"].decode("ascii", "replace")


def outdated(directory: Path) -> dict[str, str]:
    """The record files of ``directory`` in an earlier format: {file name: its kind}."""
    found = {}
    for name, (_, earlier) in EARLIER.items():
        kind = record_kind(directory / name)
        if kind in earlier:
            found[name] = kind
    return found


def upgrade(path: Path, kind: str) -> int:
    """Convert the record file ``path`` of the earlier ``kind`` to the current format in place; the number of
    records converted."""
    current, earlier = EARLIER[path.name]
    old_dtype, special = earlier[kind]
    old = RecordFile(path, old_dtype, kind, readonly=True)
    try:
        count = old.count
        records = old.records[1 : count + 1]
        converted = np.zeros(count, current.dtype)
        for name in old_dtype.names:
            if name in current.dtype.names and name != "pad":
                converted[name] = records[name]
        if special is not None:
            special(records, converted)
    finally:
        old.close()
    fresh = path.with_name(path.name + ".upgrade")
    fresh.unlink(missing_ok=True)
    new = RecordFile(fresh, current.dtype, current.kind)
    try:
        new.ensure(count)
        new.records[1 : count + 1] = converted
        new.count = count
        new.flush()
    finally:
        new.close()
    with open(fresh, "rb+") as done:
        os.fsync(done.fileno())
    os.replace(fresh, path)
    fsync_directory(path.parent)
    return count


def check_current(directory: Path, readonly: bool) -> dict[str, int]:
    """Before a collection's stores are opened: upgrade them if a writer opens them ({file: records
    converted}), or refuse a reader with what to do. Empty when there was nothing to do."""
    found = outdated(directory)
    if found and readonly:
        kinds = ", ".join(f"{name}: {kind}" for name, kind in found.items())
        raise RecordFileError(
            f"{directory}: a collection of an earlier wirescrapy ({kinds}); "
            f"open it for writing once to upgrade it (scrapy seed, scrapy manager or a harvest)"
        )
    return {name: upgrade(directory / name, kind) for name, kind in found.items()}
