"""The collection on disk: URL store, metadata records, page store, link graph (thesis §7.3)."""

from .collection import Collection, split_url
from .lock import CollectionLockedError

__all__ = ["Collection", "CollectionLockedError", "split_url"]
