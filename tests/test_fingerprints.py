import numpy as np
from hypothesis import given, settings, strategies as st

from wirescrapy.collection.fingerprints import FingerprintIndex


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 2 ** 64 - 1), st.integers(1, 2 ** 32 - 1)), max_size=300),
       st.integers(1, 50))
def test_behaves_like_a_dict(pairs, merge_at):
    index, reference = FingerprintIndex(merge_at=merge_at), {}
    for key, value in pairs:
        index.put(key, value)
        reference[key] = value
    probe = [k for k, _ in pairs] + [12345, 2 ** 63]
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
