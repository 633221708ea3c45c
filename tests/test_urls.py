import os

import numpy as np
import pytest

from wirescrapy.collection.urls import BLOCK, URLStore, URLStoreError


@pytest.fixture
def store(tmp_path):
    s = URLStore(tmp_path)
    yield s
    s.close()


def test_sites_and_documents_get_ids_from_one(store):
    assert store.add_site("http://a.cl") == (1, True)
    assert store.add_site("http://b.cl") == (2, True)
    assert store.add_site("http://a.cl") == (1, False)
    assert store.add(1, "/") == (1, True)
    assert store.add(2, "/") == (2, True)  # same path, other site
    assert store.add(1, "/") == (1, False)
    assert store.lookup(1, "/x") == 0 and store.site_id("http://c.cl") == 0
    assert store.url(2) == (2, b"/") and store.site_name(2) == "http://b.cl"


def test_batch_add_gives_one_id_per_url(store):
    store.add_site("http://a.cl")
    ids, new = store.add_many(1, [b"/a", b"/b", b"/a", b"/c"])
    assert ids.tolist() == [1, 2, 1, 3] and new.tolist() == [True, True, False, True]
    ids, new = store.add_many([1, 1], [b"/c", b"/d"])
    assert ids.tolist() == [3, 4] and new.tolist() == [False, True]
    assert store.lookup_many(1, [b"/d", b"/zz"]).tolist() == [4, 0]


def test_reverse_lookup_across_blocks_and_reopen(tmp_path):
    store = URLStore(tmp_path)
    store.add_site("http://a.cl")
    paths = [f"/page/{i}".encode() * (1 + i % 5) for i in range(5 * BLOCK + 3)]
    for p in paths:
        store.add(1, p)
    assert [store.url(i + 1)[1] for i in range(len(paths))] == paths
    store.close()
    store = URLStore(tmp_path)
    assert store.count == len(paths)
    assert [store.url(i + 1)[1] for i in range(len(paths))] == paths
    assert [p for _, _, p in store.iter_urls()] == paths
    assert store.lookup_many(1, paths).tolist() == list(range(1, len(paths) + 1))
    store.close()


@pytest.mark.parametrize("checkpoint", [True, False])
def test_torn_tail_is_cut_and_index_replayed(tmp_path, checkpoint):
    store = URLStore(tmp_path)
    store.add_site("http://a.cl")
    for i in range(40):
        store.add(1, f"/{i}")
    if checkpoint:
        store.checkpoint()
    for i in range(40, 50):
        store.add(1, f"/{i}")
    os.close(store._log_fd)  # no clean close: as after kill -9
    with open(tmp_path / "urls.log", "ab") as f:
        f.write(b"\x01\x00\x00\x00\x20\x00/half")  # a record cut short
    with open(tmp_path / "sites.log", "ab") as f:
        f.write(b"http://torn")
    store = URLStore(tmp_path)
    assert store.count == 50 and store.site_count == 1
    assert store.lookup(1, "/45") == 46 and store.lookup(1, "/half") == 0
    assert store.add(1, "/new") == (51, True) and store.url(51) == (1, b"/new")
    assert store.add_site("http://b.cl") == (2, True)
    store.close()


def test_refuses_bad_input(store):
    with pytest.raises(ValueError):
        store.add(1, "/")  # unknown site
    store.add_site("http://a.cl")
    with pytest.raises(ValueError):
        store.add(1, b"/" * 70_000)
    with pytest.raises(ValueError):
        store.add_site("bad\nname")


def test_readonly_sees_the_data_and_changes_nothing(tmp_path):
    store = URLStore(tmp_path)
    store.add_site("http://a.cl")
    store.add_many(1, [f"/{i}".encode() for i in range(100)])
    store.close()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    reader = URLStore(tmp_path, readonly=True)
    assert reader.lookup(1, "/99") == 100 and reader.url(7) == (1, b"/6")
    with pytest.raises(URLStoreError, match="read-only"):
        reader.add(1, "/new")
    reader.close()
    assert before == {p.name: p.read_bytes() for p in tmp_path.iterdir()}


def test_many_sites_many_urls_fingerprints_are_distinct(tmp_path):
    store = URLStore(tmp_path, merge_at=1000)
    for s in range(50):
        store.add_site(f"http://s{s}.cl")
    sites = np.repeat(np.arange(1, 51), 200).tolist()
    paths = [f"/p{i % 200}".encode() for i in range(10_000)]
    ids, new = store.add_many(sites, paths)
    assert new.all() and sorted(ids.tolist()) == list(range(1, 10_001))
    assert (store.lookup_many(sites, paths) == ids).all()
    store.close()
