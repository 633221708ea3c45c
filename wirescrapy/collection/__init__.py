"""The collection on disk: URL store, metadata records, page store, link graph (thesis §7.3).

``Collection`` and friends are imported on first use, so that a tool needing one store (the URL store, a
record file) does not load them all (the link graph brings in scipy).
"""

_EXPORTS = {
    "Collection": ".collection",
    "split_url": ".collection",
    "CollectionLockedError": ".lock",
}

__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
