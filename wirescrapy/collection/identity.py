"""The collection's id: what a batch names to say which collection it belongs to.

A path does not say it: a collection can be moved or copied, and a fresh collection can be created where
another one was. The id is random, written once when a writer first opens the collection (a new one, or
one written before collections had ids) and never changed.

File ``id`` in the collection directory: 32 lowercase hexadecimal digits and a newline. Written into
``id.new``, fsynced and renamed, so a kill leaves either no id (the next writer makes one) or the whole id.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from .writes import fsync_directory

ID_FILE = "id"
_ID = re.compile(r"^[0-9a-f]{32}$")


class CollectionIdError(Exception):
    """The ``id`` file is not an id."""


def read_id(directory: str | os.PathLike) -> str:
    """The collection's id; "" if it has none yet."""
    path = Path(directory) / ID_FILE
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except FileNotFoundError:
        return ""
    if not _ID.match(text):
        raise CollectionIdError(f"{path}: not a collection id ({text[:40]!r})")
    return text


def ensure_id(directory: str | os.PathLike) -> str:
    """The collection's id, made and written now if it has none (a writer's open)."""
    existing = read_id(directory)
    if existing:
        return existing
    value = secrets.token_hex(16)
    path = Path(directory) / ID_FILE
    tmp = path.with_name(ID_FILE + ".new")
    with open(tmp, "w", encoding="ascii") as f:
        f.write(value + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_directory(path.parent)
    return value
