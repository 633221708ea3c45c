"""What a collection must satisfy whenever it is opened, after any crash: each store on its own and the stores
with one another. Shared by the disk-full tests and the kill campaign (``benchmarks/kills.py``); the kill
test of the stores alone (``tests/test_crash.py``) checks the same invariants on its own stream of writes.
"""

from __future__ import annotations

import numpy as np

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.manager.batch import batch_numbers, read_batch


def problems(collection) -> list[str]:
    """Every broken invariant found (empty: consistent)."""
    found: list[str] = []
    urls, docs, sites = collection.urls, collection.documents, collection.sites
    n, n_sites = urls.count, urls.site_count
    if docs.count != n or sites.count != n_sites:
        found.append(
            f"counts: {docs.count} document records for {n} URLs, {sites.count} site records for {n_sites}"
        )
        return found
    records = docs.records[1 : n + 1]
    if (records["docid"] != np.arange(1, n + 1)).any():
        found.append("a document record's docid is not its id")
    for doc_id, site_id, path in urls.iter_urls():
        if urls.lookup(site_id, path) != doc_id:
            found.append(f"URL store: doc {doc_id} not found by its URL")
        if records[doc_id - 1]["siteid"] != site_id:
            found.append(
                f"doc {doc_id}: record site {records[doc_id - 1]['siteid']}, URL store site {site_id}"
            )
    site_records = sites.records[1 : n_sites + 1]
    if (site_records["siteid"] != np.arange(1, n_sites + 1)).any():
        found.append("a site record's siteid is not its id")
    if int(site_records["docs"].sum()) != n:
        found.append(f"sites count {int(site_records['docs'].sum())} documents of {n}")
    for name, store in (("pages", collection.pages), ("links", collection.links)):
        try:
            store.check()
        except Exception as exc:  # noqa: BLE001 - a finding, not a failure of the check
            found.append(f"{name}: {exc}")
        if store.extents.max_id > n:
            found.append(f"{name}: a record of doc {store.extents.max_id}, past the {n} documents")
    csr = collection.links.to_csr(n + 1)
    if csr.nnz and (csr.indices.min() < 1 or csr.indices.max() > n):
        found.append("links: a target outside the documents")
    duplicates = np.flatnonzero(records["flags"] & DocFlag.DUPLICATE) + 1
    for doc_id in duplicates.tolist():
        original = int(records[doc_id - 1]["duplicate_of"])
        if not 1 <= original <= n:
            found.append(f"doc {doc_id}: duplicate of {original}, no document")
    robots = site_records["robots_docid"]
    if (robots > n).any():
        found.append("a site's robots.txt document is past the documents")
    batches = collection.dir / "batches"
    for number in batch_numbers(batches):
        path = batches / f"{number:06d}"
        parts = sorted(path.glob("part-*")) or [path]
        for part in parts:
            try:
                read_batch(part)
            except Exception as exc:  # noqa: BLE001
                found.append(f"batch {number}: {exc}")
    return found
