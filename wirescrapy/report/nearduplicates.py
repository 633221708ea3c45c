"""Near-duplicates in the report and the export: the clusters the gatherer recorded
(``collection/nearduplicates.py``), read from a read-only collection.

A cluster is the pages whose fingerprints came within the threshold of its representative's, the first of
them fetched; a near-duplicate is a page of a cluster that is not its representative. Exact duplicates
(content-seen) are counted beside them for comparison: a page can be both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.collection.nearduplicates import FINGERPRINTED, NO_FINGERPRINT, NearDuplicateFile

from .tables import Section, Table, histogram_table

LARGEST = 20  # clusters listed by size
EXAMPLES = 3  # URLs shown of each


def clusters(collection, n_docs: int) -> tuple[np.ndarray, int]:
    """The cluster of each doc-id up to ``n_docs`` (index = doc-id; 0: no fingerprint or not fetched yet),
    and how many pages had too little text for a fingerprint."""
    file = NearDuplicateFile(collection.dir, readonly=True)
    try:
        records = file.records[: n_docs + 1]
        cluster = np.zeros(n_docs + 1, np.int64)
        fingerprinted = records["state"] == FINGERPRINTED
        cluster[: len(records)][fingerprinted] = records["cluster"][fingerprinted]
        cluster[0] = 0
        cluster[cluster > n_docs] = 0  # a record written after the documents were read
        no_fingerprint = int(np.count_nonzero(records["state"] == NO_FINGERPRINT))
    finally:
        file.close()
    return cluster, no_fingerprint


def near_duplicates_section(data) -> Section:
    section = Section(
        "near-duplicates",
        "Near-duplicates",
        "Pages whose text differs from an earlier page's only in a few words (a date, a counter, a mirror's "
        "name), the site's own template left out. Each cluster's representative is its first page fetched.",
    )
    cluster, no_fingerprint = clusters(data.collection, data.n_docs)
    doc_ids = np.arange(len(cluster))
    member = (cluster > 0) & (cluster != doc_ids)
    sizes = np.bincount(cluster[cluster > 0], minlength=len(cluster))
    shared = sizes >= 2
    exact = data.flag(DocFlag.DUPLICATE) & data.real
    fingerprinted = int(np.count_nonzero(cluster))
    section.figures = {
        "fingerprinted": fingerprinted,
        "no_fingerprint": no_fingerprint,
        "clusters": int(np.count_nonzero(shared)),
        "near_duplicates": int(np.count_nonzero(member)),
        "near_duplicate_rate": round(float(np.count_nonzero(member)) / max(fingerprinted, 1), 4),
        "exact_duplicates": int(np.count_nonzero(exact)),
        "exact_duplicate_rate": round(
            float(np.count_nonzero(exact & data.fetched)) / max(int(np.count_nonzero(data.fetched)), 1), 4
        ),
    }
    section.tables.append(
        histogram_table(
            "near-duplicates-cluster-sizes", "Clusters by size (pages)", sizes[shared], unit="clusters"
        )
    )
    largest = np.flatnonzero(shared)
    largest = largest[np.argsort(-sizes[largest], kind="stable")][:LARGEST]
    url = data.collection.url
    examples = []
    for representative in largest.tolist():
        members = np.flatnonzero(member & (cluster == representative))[:EXAMPLES]
        examples.append(" ".join(url(doc_id) for doc_id in members.tolist()))
    section.tables.append(
        Table(
            "near-duplicates-largest",
            "The largest clusters",
            ["representative", "pages", "examples"],
            [[url(doc_id) for doc_id in largest.tolist()], sizes[largest], examples],
        )
    )
    site_of = data.site_of
    per_site = np.bincount(site_of[member], minlength=data.n_sites + 1)
    fingerprinted_per_site = np.bincount(site_of[cluster > 0], minlength=data.n_sites + 1)
    sites = np.flatnonzero(per_site)
    sites = sites[np.argsort(-per_site[sites], kind="stable")]
    section.tables.append(
        Table(
            "near-duplicates-sites",
            "Near-duplicates per site",
            ["site", "near_duplicates", "fingerprinted", "fraction"],
            [
                [data.site_names[site] for site in sites.tolist()],
                per_site[sites],
                fingerprinted_per_site[sites],
                per_site[sites] / np.maximum(fingerprinted_per_site[sites], 1),
            ],
        )
    )
    return section


def near_duplicate_rows(collection, selection) -> Iterator[dict]:
    """Every near-duplicate page of ``selection``'s doc-ids, sites and URL pattern, with its cluster (the
    representative's doc-id), the representative's URL and how many bits their fingerprints differ in."""
    count = min(collection.documents.count, collection.urls.count)
    last = count if selection.last is None else min(selection.last, count)
    pattern = re.compile(selection.pattern) if selection.pattern else None
    site_ids = {collection.urls.site_id(name.rstrip("/")) for name in selection.sites}
    file = NearDuplicateFile(collection.dir, readonly=True)
    try:
        records = file.records
        end = min(last, len(records) - 1)
        first = max(selection.first, 1)
        for start in range(first, end + 1, 1 << 16):
            chunk = np.array(records[start : min(start + (1 << 16), end + 1)])
            ids = np.arange(start, start + len(chunk))
            chosen = (chunk["state"] == FINGERPRINTED) & (chunk["cluster"] != ids) & (chunk["cluster"] > 0)
            chosen &= chunk["cluster"] <= count
            for i in np.flatnonzero(chosen).tolist():
                doc_id, representative = int(ids[i]), int(chunk["cluster"][i])
                record = collection.documents.records[doc_id]
                if site_ids and int(record["siteid"]) not in site_ids:
                    continue
                depth = int(record["depth"])
                if depth < selection.min_depth or depth > (selection.max_depth or depth):
                    continue
                url = collection.url(doc_id)
                if pattern is not None and not pattern.search(url):
                    continue
                distance = (int(chunk["simhash"][i]) ^ int(records[representative]["simhash"])).bit_count()
                yield {
                    "docid": doc_id,
                    "url": url,
                    "cluster": representative,
                    "representative": collection.url(representative),
                    "distance": distance,
                }
    finally:
        file.close()
