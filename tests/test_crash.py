"""kill -9 at random moments: every store consistent after each kill, nothing acknowledged lost.

A writer process (tests/crash/writer.py, forked: tests/crash/process.py) applies a deterministic stream of
operations to one collection — new URLs, pages (with duplicates and replacements), link lists, metadata
updates — and prints "ok k" after operation k returns. It is killed with SIGKILL at a random moment, many
times over; after each kill the collection is reopened and checked against what the acknowledged operations
wrote. The operation in flight at the kill may or may not have happened (and its metadata record may be torn):
that is the one record the crash may lose.
"""

import random
import time

import numpy as np
import pytest
import xxhash

from tests.crash.ops import CONTENTS, apply, meta_fields, op, url
from tests.crash.process import fork_writer, kill, wait_for
from tests.crash.writer import main as writer_main
from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag

KILLS = 30


class Expected:
    """What the collection must hold: the effect of every acknowledged operation."""

    def __init__(self):
        self.urls: set[int] = set()
        self.pages: dict[int, int] = {}  # url index -> content index
        self.links: dict[int, list[int]] = {}
        self.meta: dict[int, int | None] = {}  # None: lost at a kill, unknown until written again

    def acknowledge(self, o):
        self.urls.add(o[1])
        if o[0] == "page":
            self.pages[o[1]] = o[2]
        elif o[0] == "links":
            self.urls.update(o[2])
            self.links[o[1]] = list(o[2])
        elif o[0] == "meta":
            self.meta[o[1]] = o[2]


def page_hash(collection, doc_id):
    return int(collection.documents.records[doc_id]["content_hash"])


def check_stores(collection):
    """Consistency of each store on its own and of the stores with one another."""
    urls, docs = collection.urls, collection.documents
    assert docs.count == urls.count and collection.sites.count == urls.site_count
    records = docs.records[1 : docs.count + 1]
    assert (records["docid"] == np.arange(1, docs.count + 1)).all()
    for doc_id, site_id, path in urls.iter_urls():
        assert urls.lookup(site_id, path) == doc_id
        assert records[doc_id - 1]["siteid"] == site_id
    sites = collection.sites.records[1 : collection.sites.count + 1]
    assert (sites["siteid"] == np.arange(1, len(sites) + 1)).all()
    assert sites["docs"].sum() == docs.count
    collection.pages.check()
    collection.links.check()


def content_matches(collection, doc_id, content_index):
    content = CONTENTS[content_index]
    record = collection.documents.records[doc_id]
    if record["flags"] & DocFlag.DUPLICATE:
        return (
            record["content_hash"] == xxhash.xxh3_64_intdigest(content) and record["duplicate_of"] != doc_id
        )
    return collection.pages.load(doc_id) == content


def meta_value(record):
    """The value a metadata record was written with, or None if its fields disagree (torn)."""
    value = int(record["visits"])
    if value == 0:
        return 0
    fields = meta_fields(value)
    same = all(np.isclose(record[name], v, rtol=1e-6) for name, v in fields.items())
    return value if same else None


def check_and_learn(collection, expected: Expected, in_flight):
    """Check the acknowledged state; learn whether the in-flight operation happened."""
    doc = {i: collection.lookup(url(i)) for i in range(400)}
    pending = in_flight or ("none", -1)
    for i in expected.urls:
        assert doc[i], f"acknowledged URL {url(i)} lost"
    mentioned = set(expected.urls) | {pending[1]} | set(pending[2] if pending[0] == "links" else [])
    assert {i for i, d in doc.items() if d} <= mentioned
    for i, c in expected.pages.items():
        if pending[0] == "page" and pending[1] == i:
            assert content_matches(collection, doc[i], c) or content_matches(collection, doc[i], pending[2])
        else:
            assert content_matches(collection, doc[i], c), f"page of {url(i)} lost"
    if pending[0] == "page" and doc[pending[1]] and pending[1] not in expected.pages:
        assert collection.pages.load(doc[pending[1]]) is None or content_matches(
            collection, doc[pending[1]], pending[2]
        )
    for i, targets in expected.links.items():
        got = collection.links.links(doc[i]).tolist()
        want = [doc[t] for t in targets]
        if pending[0] == "links" and pending[1] == i and got != want:
            assert got == [doc[t] for t in pending[2]]
        else:
            assert got == want, f"links of {url(i)} lost"
    for i, value in expected.meta.items():
        got = meta_value(collection.documents.records[doc[i]])
        if pending[0] == "meta" and pending[1] == i:
            assert got in (value, pending[2], None)
            expected.meta[i] = got
        elif value is not None:
            assert got == value, f"metadata of {url(i)} lost"
    if pending[0] == "meta" and pending[1] not in expected.meta and doc[pending[1]]:
        got = meta_value(collection.documents.records[doc[pending[1]]])
        assert got in (0, pending[2], None)
        expected.meta[pending[1]] = got if got else None
    # Learn the in-flight operation's outcome, so later checks start from the true state.
    for i, d in doc.items():
        if d:
            expected.urls.add(i)
    if pending[0] == "page" and doc[pending[1]] and content_matches(collection, doc[pending[1]], pending[2]):
        expected.pages[pending[1]] = pending[2]
    if pending[0] == "links" and doc[pending[1]]:
        got = collection.links.links(doc[pending[1]]).tolist()
        if all(doc[t] for t in pending[2]) and got == [doc[t] for t in pending[2]]:
            expected.links[pending[1]] = list(pending[2])


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_kill_minus_9_at_random_moments(tmp_path):
    rng = random.Random(2026)
    expected = Expected()
    directory = tmp_path / "collection"
    completed = 0
    for run in range(KILLS):
        out = tmp_path / f"out{run}"
        writer = fork_writer(writer_main, str(directory), run, out=out)
        wait_for(out, b"open\n", writer)
        time.sleep(rng.uniform(0.01, 0.25))
        kill(writer)
        lines = out.read_bytes().decode().split("\n")[:-1]  # the last piece may be cut short
        acked = [int(line.split()[1]) for line in lines if line.startswith("ok ")]
        assert acked == list(range(len(acked))) and "error" not in lines, lines[-5:]
        for k in acked:
            expected.acknowledge(op(run, k))
        completed += len(acked)
        with Collection(directory) as collection:  # the dead writer's lock is gone
            check_stores(collection)
            check_and_learn(collection, expected, op(run, len(acked)))
    assert completed > 1000, "the writer did too little between kills to test anything"


def test_second_writer_is_refused_readers_are_not(tmp_path):
    from wirescrapy.collection import CollectionLockedError

    with Collection(tmp_path) as writer:
        apply(writer, ("url", 1))
        with pytest.raises(CollectionLockedError, match="open for writing by pid"):
            Collection(tmp_path)
        reader = Collection(tmp_path, readonly=True)
        assert reader.lookup(url(1)) == 1
        reader.close()
    Collection(tmp_path).close()  # released on close
