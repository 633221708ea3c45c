import random

import numpy as np
import pytest
from scipy.sparse import lil_matrix

from wirescrapy.collection import Collection
from wirescrapy.collection.extents import ExtentError
from wirescrapy.collection.links import LinkGraph


def reference_csr(adjacency: dict[int, list[int]], n: int):
    m = lil_matrix((n + 1, n + 1), dtype=np.float32)
    for source, targets in adjacency.items():
        for target in targets:
            m[source, target] += 1
    return m.tocsr()


def test_set_replace_delete(tmp_path):
    with LinkGraph(tmp_path) as g:
        g.set_links(1, [2, 3, 4])
        g.set_links(2, np.array([1], dtype=np.uint32))
        g.set_links(3, [])
        assert g.links(1).tolist() == [2, 3, 4] and g.links(2).tolist() == [1]
        assert g.links(3).tolist() == [] and 3 in g
        assert g.links(9).tolist() == [] and 9 not in g
        g.set_links(1, [7, 7, 5])
        assert g.links(1).tolist() == [7, 7, 5] and len(g) == 3
        assert g.delete(2) and 2 not in g


@pytest.mark.parametrize("bad", [[0], [-1], [1.5], [2**31]])
def test_rejects_bad_targets(tmp_path, bad):
    with LinkGraph(tmp_path) as g, pytest.raises(ValueError):
        g.set_links(1, bad)


def test_csr_equals_reference(tmp_path):
    rng = random.Random(3)
    adjacency = {}
    with LinkGraph(tmp_path) as g:
        for _ in range(3000):
            source = rng.randrange(1, 400)
            if rng.random() < 0.1:
                g.delete(source)
                adjacency.pop(source, None)
            else:
                targets = [rng.randrange(1, 500) for _ in range(rng.choice((0, 1, 5, 20, 200)))]
                g.set_links(source, targets)
                adjacency[source] = targets
        n = max(max(adjacency), max(t for ts in adjacency.values() for t in ts))
        m = g.to_csr()
        ref = reference_csr(adjacency, n)
        assert m.shape == (n + 1, n + 1) and m.dtype == np.float32
        assert (m != ref).nnz == 0
        assert m.has_canonical_format
        assert g.to_csr(n_docs=1000).shape == (1001, 1001)
        with pytest.raises(ValueError):
            g.to_csr(n_docs=n - 1)
    with LinkGraph(tmp_path) as g:
        assert (g.to_csr() != ref).nnz == 0


def test_set_links_many_equals_set_links(tmp_path):
    rng = np.random.default_rng(5)
    counts = rng.poisson(7, 300)
    indptr = np.concatenate(([0], np.cumsum(counts)))
    targets = rng.integers(1, 1000, indptr[-1])
    ids = rng.permutation(np.arange(1, 1001))[:300]
    with LinkGraph(tmp_path / "many") as bulk, LinkGraph(tmp_path / "one") as single:
        bulk.set_links(int(ids[0]), [1, 2, 3])  # replaced by the bulk load
        bulk.set_links_many(ids, indptr, targets)
        for k, doc_id in enumerate(ids.tolist()):
            single.set_links(doc_id, targets[indptr[k] : indptr[k + 1]])
        assert (bulk.to_csr(1000) != single.to_csr(1000)).nnz == 0
        assert bulk.links(int(ids[0])).tolist() == targets[: indptr[1]].tolist()
        with pytest.raises(ValueError):
            bulk.set_links_many([1, 2], [0, 1], [5])


def test_count_links_and_check(tmp_path):
    with LinkGraph(tmp_path) as g:
        g.set_links(1, [2, 3, 4])
        g.set_links(2, [1])
        g.set_links(1, [5, 6])
        assert g.count_links() == 3
        g.check()
        g.extents.put(3, b"odd")  # not a list of uint32
        with pytest.raises(ExtentError):
            g.check()


def test_empty_graph(tmp_path):
    with LinkGraph(tmp_path) as g:
        assert g.to_csr().shape == (1, 1)
        g.set_links(4, [])
        m = g.to_csr()
        assert m.shape == (5, 5) and m.nnz == 0


def test_ordered_csr_rows_are_the_stored_lists(tmp_path):
    rng = np.random.default_rng(4)
    with Collection(tmp_path / "collection") as collection:
        for i in range(60):
            collection.add_url(f"http://s{i % 4}.example/{i}", 1)
        lists = {
            doc_id: rng.integers(1, 61, size=rng.integers(0, 9)).astype(np.uint32)
            for doc_id in range(1, 61)
            if doc_id % 7
        }
        for doc_id, targets in lists.items():
            collection.links.set_links(doc_id, targets)
        collection.links.set_links(3, np.array([5, 5, 1], dtype=np.uint32))  # replaced: a new extent
        lists[3] = np.array([5, 5, 1])
        ordered = collection.links.to_csr(n_docs=62, ordered=True)
    assert ordered.shape == (63, 63)
    for doc_id in range(63):
        row = ordered.indices[ordered.indptr[doc_id] : ordered.indptr[doc_id + 1]]
        assert row.tolist() == lists.get(doc_id, np.zeros(0)).tolist()


def test_a_collection_s_link_graph_refuses_ids_past_its_documents(tmp_path):
    with Collection(tmp_path) as collection:
        a = collection.add_url("http://a.example/")[0]
        b = collection.add_url("http://a.example/b")[0]
        collection.links.set_links(a, [b, a])
        with pytest.raises(ValueError, match=r"links.idx: doc-id 3 is past the last document \(2\)"):
            collection.links.set_links(b + 1, [a])
        with pytest.raises(ValueError, match=r"link target 3 is past the last document \(2\)"):
            collection.links.set_links(b, [a, b + 1])
        with pytest.raises(ValueError, match="past the last document"):
            collection.links.set_links_many([a, b + 1], [0, 1, 2], [b, a])
        with pytest.raises(ValueError, match="doc-id must be a positive integer"):
            collection.links.set_links(0, [a])
        assert collection.links.links(a).tolist() == [b, a] and b not in collection.links
    graph = LinkGraph(tmp_path / "alone")  # a graph alone has no document count to bound it
    graph.set_links(10, [20])
    graph.close()
