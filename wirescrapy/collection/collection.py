"""The collection: one directory, the crawl's only state.

It ties the stores together — the URL store (``urls.py``), the document and site metadata records
(``metadata.py`` in ``records.py`` files), the page store (``pages.py``) and the link graph (``links.py``) —
and keeps them consistent with one another:

* **One writer.** Opening for writing takes an exclusive lock (``lock.py``); a second writer waits up to
  ``wait`` seconds (``WIRE_COLLECTION_WAIT``) for the first to close it, then gets ``CollectionLockedError``.
  Readers (``readonly=True``) take no lock and may open the collection while a
  crawl runs: they see the stores as they were when opened (records written later are not seen; a record
  being written at that instant may be seen half-written). Reports and the manager should run between
  harvests.
* **Order of writes.** A document's metadata record is written before its URL reaches the URL log, and the
  URL log is the commit: the number of documents is the number of URL records. Sites likewise: the site
  record first, then the line in ``sites.log``. Counters that can be derived (documents per site) are
  recomputed on open.
* **Crash safety.** After ``kill -9`` at any instant, opening again finds every store consistent and at most
  the record being written lost; nothing a call had returned is lost.

* **Ids.** The collection has an id (``identity.py``), made by the first writer; a batch names it, so that
  a batch is harvested into its own collection only. A write under a doc-id or site-id that names no
  record (0, or past the last) is refused by every id-indexed store: the records (``RecordFile.record``),
  the page store and the link graph (``id_limit``, targets too).

* **Upgrades.** A collection written by an earlier wirescrapy is converted when a writer opens it
  (``upgrade.py``); a reader is told to let a writer open it first.

Layout of the directory::

    lock            the writer's lock (see lock.py)          id    the collection's id (identity.py)
    sites.log       site names, one a line          urls.log / urls.blk / urls.fpi   the URL store
    sites.rec       site metadata records            documents.rec                    document metadata
    outlinks.json   links out of the crawl, counted  refused.fpi      new sites refused, per linking site
    pages.idx/.dat  page store                       links.idx/.dat                   link graph
    nearduplicates.rec  each document's near-duplicate fingerprint and cluster (nearduplicates.py)
    batches/        batches written by the manager
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xxhash import xxh3_64_intdigest

from wirescrapy.url import split

from .identity import ensure_id, read_id
from .links import LinkGraph
from .lock import CollectionLock
from .metadata import DOCUMENT_DTYPE, DOCUMENT_KIND, SITE_DTYPE, SITE_KIND, DocFlag
from .outlinks import OutLinks
from .pages import PageStore
from .records import RecordFile, RecordIdError
from .refused import RefusedSites
from .upgrade import check_current
from .urls import URLStore

logger = logging.getLogger(__name__)


def split_url(url: str) -> tuple[str, bytes]:
    """(site name, path) of a canonical http(s) URL (``wirescrapy.url.canonicalize``): path and query,
    without a fragment."""
    site, path = split(url)
    _check_site(site)
    return site, path.partition("#")[0].encode("utf-8", "surrogateescape")


def _check_site(site: str) -> None:
    if not site.startswith(("http://", "https://")):
        raise ValueError(f"not an http(s) site: {site!r}")


class Collection:
    def __init__(
        self, directory: str | os.PathLike, readonly: bool = False, compression: int = 3, wait: float = 0.0
    ):
        self.dir = Path(directory)
        self.readonly = readonly
        self._lock = None
        if not readonly:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._lock = CollectionLock(self.dir)
            self._lock.acquire(wait)
        elif not (self.dir / "urls.log").exists():
            raise FileNotFoundError(f"no collection in {self.dir}")
        try:
            for name, count in check_current(self.dir, readonly).items():
                logger.info(
                    "collection %(dir)s: %(n)d records of %(name)s upgraded to today's format",
                    {"dir": self.dir, "n": count, "name": name},
                )
            self.urls = URLStore(self.dir, readonly=readonly)
            self.documents = RecordFile(self.dir / "documents.rec", DOCUMENT_DTYPE, DOCUMENT_KIND, readonly)
            self.sites = RecordFile(self.dir / "sites.rec", SITE_DTYPE, SITE_KIND, readonly)
            self.pages = PageStore(self.dir, compression=compression, readonly=readonly)
            self.links = LinkGraph(self.dir, readonly=readonly)
            self.pages.id_limit = self.links.id_limit = self._last_doc_id
            self.id = read_id(self.dir) if readonly else ensure_id(self.dir)
            self.outlinks = OutLinks(self.dir, readonly=readonly)  # links the seeder turned away, counted
            self.refused = RefusedSites(self.dir, readonly=readonly)  # new sites counted as refused, per site
        except BaseException:
            if self._lock:
                self._lock.release()
            raise
        if not readonly:
            self._recover()

    @property
    def waited_until(self) -> float | None:
        """When (``time.monotonic``) this writer took the collection after waiting for another one to close
        it (``wait``); None if it did not wait."""
        return self._lock.waited_until if self._lock else None

    @classmethod
    def from_config(cls, config, readonly: bool = False) -> Collection:
        return cls(
            config.collection_dir,
            readonly=readonly,
            compression=config.page_compression,
            wait=config.collection_wait,
        )

    def _recover(self) -> None:
        """Make the record counts follow the logs, which are the commits."""
        self.documents.ensure(self.urls.count)
        self.documents.count = self.urls.count
        self.sites.ensure(self.urls.site_count)
        self.sites.count = self.urls.site_count
        docs = self.documents.records[1 : self.urls.count + 1]
        sites = self.sites.records
        per_site = np.bincount(docs["siteid"], minlength=self.urls.site_count + 1)
        sites["docs"][: len(per_site)] = per_site[: len(sites)]

    def _last_doc_id(self) -> int:
        return self.urls.count

    # -- sites and URLs ------------------------------------------------------------------------------

    def add_site(self, name: str) -> int:
        site_id = self.urls.site_id(name)
        if site_id:
            return site_id
        site_id = self.urls.site_count + 1
        self.sites.ensure(site_id)
        self.sites.records[site_id] = np.zeros(1, SITE_DTYPE)[0]
        self.sites.records[site_id]["siteid"] = site_id
        added, _ = self.urls.add_site(name)
        assert added == site_id
        self.sites.count = site_id
        return site_id

    def find(self, site: str, path: str | bytes) -> tuple[int, int]:
        """(site-id, doc-id) of a canonical URL given as its site and path (``wirescrapy.url.split``); 0 for
        what the collection does not hold."""
        site_id = self.urls.site_id(site)
        if not site_id:
            return 0, 0
        if isinstance(path, str):
            path = path.encode("utf-8", "surrogateescape")
        return site_id, self.urls.lookup(site_id, path)

    def add_document(
        self,
        site: str,
        path: str | bytes,
        depth: int = 0,
        flags: int = 0,
        site_id: int = 0,
        redirects: int = 0,
    ) -> int:
        """Add a URL the collection does not hold (``find`` said so); its new doc-id. ``site_id``: the site's,
        when ``find`` knew it; ``redirects``: the redirect hops that led to it (0: a plain link)."""
        if isinstance(path, str):
            path = path.encode("utf-8", "surrogateescape")
        if not site_id:
            _check_site(site)
            site_id = self.add_site(site)
        doc_id = self.urls.count + 1
        self.documents.ensure(doc_id)
        record = np.zeros(1, DOCUMENT_DTYPE)
        record["docid"], record["siteid"], record["depth"], record["flags"] = doc_id, site_id, depth, flags
        record["redirects"] = redirects
        self.documents.records[doc_id] = record[0]
        added, new = self.urls.add(site_id, path)
        assert new and added == doc_id
        self.documents.count = doc_id
        self.sites.record(site_id)["docs"] += 1
        return doc_id

    def reach(self, doc_id: int, depth: int, flags: int = 0, redirects: int = 0) -> None:
        """A known document found again at ``depth``, after ``redirects`` redirect hops: it keeps its smallest
        depth (the shortest path from a seed counts, WIRE §7.2.4) and fewest hops, and gains ``flags``."""
        record = self.documents.record(doc_id)
        record["depth"] = min(record["depth"], depth)
        record["redirects"] = min(record["redirects"], redirects)
        if flags:
            record["flags"] |= flags

    def reach_many(self, reached: Sequence[tuple[int, int, int, int]]) -> None:
        """``reach`` for many documents at once: (doc-id, depth, flags, redirects) each, a doc-id maybe more
        than once (a page's links to the documents the collection holds: one array operation per field, not
        six record accesses per link)."""
        if not reached:
            return
        ids, depths, flags, redirects = (
            np.fromiter(column, np.int64, len(reached)) for column in zip(*reached)
        )
        if ids.min() < 1 or ids.max() > self.documents.count:
            raise RecordIdError(
                f"documents: no record {ids.max() if ids.min() >= 1 else ids.min()} "
                f"({self.documents.count} records)"
            )
        records = self.documents.records
        for field, values, add in (
            ("depth", depths, np.minimum),
            ("redirects", redirects, np.minimum),
            ("flags", flags, np.bitwise_or),
        ):
            column = records[field]
            add.at(column, ids, values.astype(column.dtype))

    def add_url(self, url: str, depth: int = 0, flags: int = 0) -> tuple[int, bool]:
        """The doc-id of a canonical URL and whether it is new (a known one is ``reach``-ed)."""
        site, path = split_url(url)
        site_id, doc_id = self.find(site, path)
        if doc_id:
            self.reach(doc_id, depth, flags)
            return doc_id, False
        return self.add_document(site, path, depth, flags, site_id), True

    def lookup(self, url: str) -> int:
        """The doc-id of a canonical URL, or 0."""
        return self.find(*split_url(url))[1]

    def url(self, doc_id: int) -> str:
        site_id, path = self.urls.url(doc_id)
        return self.urls.site_name(site_id) + path.decode("utf-8", "surrogateescape")

    # -- contents and links --------------------------------------------------------------------------

    def store_page(self, doc_id: int, content: bytes) -> int:
        """Store a page's content; returns ``doc_id``, or the original's doc-id for an exact duplicate.

        A duplicate is stored as a reference: its record gets the DUPLICATE flag, ``duplicate_of`` and the
        content hash, and no bytes. If the original changes later, the duplicate keeps its hash but its
        bytes are gone with the original's old content (a revisit stores them again).
        """
        record = self.documents.record(doc_id)
        original = self.pages.store(doc_id, content)
        flags = int(record["flags"])
        record["stored_length"] = len(content)
        record["content_hash"] = xxh3_64_intdigest(content)
        if original != doc_id:
            record["duplicate_of"] = original
            record["flags"] = flags | DocFlag.DUPLICATE
            self.pages.delete(doc_id)  # its earlier content, if any, is no longer its content
        else:
            record["flags"] = flags & ~DocFlag.DUPLICATE
            record["duplicate_of"] = 0
        return original

    def load_page(self, doc_id: int) -> bytes | None:
        """The stored content of ``doc_id``, that of its original when it is a duplicate; None if none."""
        record = self.documents.records[doc_id]
        if record["flags"] & DocFlag.DUPLICATE and record["duplicate_of"]:
            return self.pages.load(int(record["duplicate_of"]))
        return self.pages.load(doc_id)

    # -- summary -------------------------------------------------------------------------------------

    def summary(self) -> dict:
        docs = self.documents.records[1 : self.documents.count + 1]
        fetched = docs["visits"] > 0
        return {
            "directory": str(self.dir.resolve()),
            "sites": self.sites.count,
            "documents": self.documents.count,
            "fetched": int(fetched.sum()),
            "ok": int((((docs["status"] == 200) | (docs["status"] == 304)) & (docs["error"] == 0)).sum()),
            "duplicates": int(((docs["flags"] & DocFlag.DUPLICATE) != 0).sum()),
            "pages_stored": self.pages.count(),
            "links": self.links.count_links(),
            "dynamic": int(((docs["flags"] & DocFlag.DYNAMIC) != 0).sum()),
        }

    # -- lifecycle -----------------------------------------------------------------------------------

    def checkpoint(self) -> None:
        for store in (
            self.urls,
            self.documents,
            self.sites,
            self.pages,
            self.links,
            self.outlinks,
            self.refused,
        ):
            (getattr(store, "checkpoint", None) or store.flush)()

    def close(self) -> None:
        """Close every store, even when one fails to (a full disk: its checkpoint is not written, and the
        next open replays its log); the first failure is raised once all are closed."""
        if self.urls is None:
            return
        failure = None
        try:
            for store in (
                self.refused,
                self.outlinks,
                self.links,
                self.pages,
                self.sites,
                self.documents,
                self.urls,
            ):
                try:
                    store.close()
                except Exception as exc:  # noqa: BLE001 - raised below, once every store is closed
                    failure = failure or exc
        finally:
            self.urls = None
            if self._lock:
                self._lock.release()
        if failure is not None:
            raise failure

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
