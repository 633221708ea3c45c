import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from xxhash import xxh3_64_intdigest

from wirescrapy.collection.fingerprints import FingerprintIndex


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 2**64 - 1), st.integers(1, 2**32 - 1)), max_size=300),
    st.integers(1, 50),
)
def test_behaves_like_a_dict(pairs, merge_at):
    index, reference = FingerprintIndex(merge_at=merge_at), {}
    for key, value in pairs:
        index.put(key, value)
        reference[key] = value
    probe = [k for k, _ in pairs] + [12345, 2**63]
    assert [index.get(k) for k in probe] == [reference.get(k, 0) for k in probe]
    got = index.get_many(np.array(probe, dtype=np.uint64))
    assert got.tolist() == [reference.get(k, 0) for k in probe]
    index.merge()
    assert index.get_many(np.array(probe, dtype=np.uint64)).tolist() == [reference.get(k, 0) for k in probe]
    assert len(index) == len(reference)


def test_save_and_load(tmp_path):
    index = FingerprintIndex(merge_at=10)
    keys = np.arange(1, 1000, dtype=np.uint64) * 7919
    index.put_many(keys, np.arange(1, 1000))
    index.save(tmp_path / "x.fpi", covered=999)
    loaded, covered = FingerprintIndex.load(tmp_path / "x.fpi")
    assert covered == 999 and loaded.get_many(keys).tolist() == list(range(1, 1000))
    (tmp_path / "bad.fpi").write_bytes(b"WIREFPI1" + b"\xff" * 30)
    assert FingerprintIndex.load(tmp_path / "bad.fpi")[1] == 0
    assert FingerprintIndex.load(tmp_path / "missing.fpi")[1] == 0


def test_built_from_arrays():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2**64 - 1, 1000, dtype=np.uint64)
    values = np.arange(1, 1001, dtype=np.uint32)
    index = FingerprintIndex(keys, values)
    assert all(index.get(int(k)) == v for k, v in zip(keys[:100], values[:100]))
    assert index.get(12345) == 0
    index.put(int(keys[0]), 5000)  # a new value for a key
    index.put(2**64 - 1, 6000)
    assert index.get(int(keys[0])) == 5000
    queries = np.concatenate((keys[:3], np.array([2**64 - 1, 7], dtype=np.uint64)))
    assert index.get_many(queries).tolist() == [5000, 2, 3, 6000, 0]
    index.merge()
    assert index.get(int(keys[0])) == 5000 and index.get(2**64 - 1) == 6000 and len(index) == 1001
    assert index.get_many(queries).tolist() == [5000, 2, 3, 6000, 0]
    assert FingerprintIndex().get(xxh3_64_intdigest(b"x")) == 0
    assert FingerprintIndex().get_many([1, 2]).tolist() == [0, 0]
