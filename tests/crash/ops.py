"""A deterministic stream of collection writes, shared by the writer that gets killed and the checker.

Operation *k* of run *r* is a pure function of (r, k): the checker recomputes what every acknowledged
operation wrote and compares it with what a reopened collection holds.
"""

from __future__ import annotations

import random

import numpy as np

N_URLS = 400  # a small pool, so that URLs, pages and links are written again and again
CONTENTS = [b"<html><body>page %d " % i + b"x" * (i * 137 % 5000) + b"</body></html>" for i in range(60)]


def url(i: int) -> str:
    return f"http://site{i % 7}.wire.test/dir{i % 13}/page{i}.html"


def op(run: int, k: int):
    """One of ("url", url index) / ("page", url index, content index) / ("links", url index, [url indexes])
    / ("meta", url index, value)."""
    rnd = random.Random(run * 1_000_003 + k)
    kind = rnd.choices(["url", "page", "links", "meta"], weights=[4, 4, 2, 2])[0]
    i = rnd.randrange(N_URLS)
    if kind == "url":
        return ("url", i)
    if kind == "page":
        return ("page", i, rnd.randrange(len(CONTENTS)))
    if kind == "links":
        return ("links", i, [rnd.randrange(N_URLS) for _ in range(rnd.randrange(0, 40))])
    return ("meta", i, rnd.randrange(1, 1_000_000))


def meta_fields(value: int) -> dict:
    """Several fields derived from one value: a torn record shows as fields that disagree."""
    return {"visits": value, "last_visit": value * 1.5, "raw_length": value * 3, "pagerank": value / 7}


def apply(collection, o) -> None:
    """Perform operation ``o``; pages, links and metadata go to a URL added first (same op)."""
    doc_id, _ = collection.add_url(url(o[1]))
    if o[0] == "page":
        collection.store_page(doc_id, CONTENTS[o[2]])
    elif o[0] == "links":
        targets = [collection.add_url(url(t))[0] for t in o[2]]
        collection.links.set_links(doc_id, np.array(targets, dtype=np.uint32))
    elif o[0] == "meta":
        record = np.copy(collection.documents.records[doc_id])
        for name, value in meta_fields(o[2]).items():
            record[name] = value
        collection.documents.records[doc_id] = record
