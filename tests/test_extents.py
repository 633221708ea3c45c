import logging
import os
import random
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from xxhash import xxh3_64_intdigest

from tests.crash.process import fork_writer, kill, wait_for
from wirescrapy.collection.extentindex import INDEX_DTYPE, record_crcs
from wirescrapy.collection.extents import ExtentError, ExtentStore


def record_bytes(path: Path, doc_id: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(doc_id * INDEX_DTYPE.itemsize)
        return f.read(INDEX_DTYPE.itemsize)


def write_record_bytes(path: Path, doc_id: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(doc_id * INDEX_DTYPE.itemsize)
        f.write(data)


def test_put_get_replace_delete(tmp_path):
    with ExtentStore(tmp_path, "t") as s:
        s.put(1, b"first")
        s.put(7, b"x" * 1000)
        s.put(3, b"")
        assert s.get(1) == b"first" and s.get(7) == b"x" * 1000 and s.get(3) == b""
        assert s.get(2) is None and s.get(10**6) is None
        assert 3 in s and 2 not in s and len(s) == 3 and s.max_id == 7
        s.put(1, b"second, longer")
        assert s.get(1) == b"second, longer" and len(s) == 3
        assert s.delete(7) and not s.delete(7) and not s.delete(2)
        assert s.get(7) is None and len(s) == 2
        assert s.live_bytes == len(b"second, longer")


def test_replacement_goes_to_free_space_and_frees_the_old_extent(tmp_path):
    with ExtentStore(tmp_path, "t") as s:
        s.put(1, b"a" * 500)
        s.put(2, b"b" * 100)
        old = s.record(1).offset
        s.put(1, b"c" * 400)  # would fit where the old bytes are, but they are live until the commit
        assert s.record(1).offset != old
        s.put(3, b"d" * 500)  # now the old extent is free: first fit reuses it
        assert s.record(3).offset == old
        assert s.problems() == []


def test_reopen_keeps_records_and_rebuilds_the_free_list(tmp_path):
    rng = random.Random(1)
    contents = {}
    with ExtentStore(tmp_path, "t") as s:
        for _ in range(2000):
            doc_id = rng.randrange(1, 300)
            if rng.random() < 0.2:
                s.delete(doc_id)
                contents.pop(doc_id, None)
            else:
                contents[doc_id] = rng.randbytes(rng.randrange(0, 3000))
                s.put(doc_id, contents[doc_id])
        free, end = s.allocator.extents(), s.end
    with ExtentStore(tmp_path, "t") as s:
        assert s.allocator.extents() == free and s.end == end
        assert {i: s.get(i) for i in range(1, 300) if i in s} == contents
        assert len(s) == len(contents)
        assert s.problems() == []
    assert os.path.getsize(tmp_path / "t.dat") == end  # the freed tail was given back on close


def test_index_arrays_and_records(tmp_path):
    with ExtentStore(tmp_path, "t") as s:
        s.put(5, b"five")
        s.put(2, b"two!!")
        s.put(9, b"nine")
        s.delete(9)
        idx = s.index()
        assert idx.ids.tolist() == [2, 5]
        assert idx.size.tolist() == [5, 4]
        assert idx.hash.tolist() == [xxh3_64_intdigest(b"two!!"), xxh3_64_intdigest(b"five")]
        recs = s.records([5, 9, 0, 100])
        assert recs["size"].tolist() == [4, 0, 0, 0]


def test_put_many(tmp_path):
    with ExtentStore(tmp_path, "t") as s:
        s.put(2, b"old")
        s.put_many([1, 2, 3, 4], b"abcdefghij", [3, 0, 2, 5])
        assert [s.get(i) for i in (1, 2, 3, 4)] == [b"abc", b"", b"de", b"fghij"]
        with pytest.raises(ValueError):
            s.put_many([5, 5], b"ab", [1, 1])
        with pytest.raises(ValueError):
            s.put_many([6], b"ab", [1])
        assert s.problems() == []
    with ExtentStore(tmp_path, "t") as s:
        assert [s.get(i) for i in (1, 2, 3, 4)] == [b"abc", b"", b"de", b"fghij"]


def test_rejects_bad_doc_ids(tmp_path):
    with ExtentStore(tmp_path, "t") as s:
        for bad in (0, -3, 10**12 * -1):
            with pytest.raises(ValueError):
                s.put(bad, b"x")


def test_vectorized_crc_equals_zlib():
    rng = np.random.default_rng(0)
    recs = np.frombuffer(rng.integers(0, 256, 40 * 1000, dtype=np.uint8).tobytes(), dtype=INDEX_DTYPE)
    expected = [zlib.crc32(recs[i : i + 1].tobytes()[:36]) for i in range(len(recs))]
    assert record_crcs(recs).tolist() == expected


def test_torn_record_is_cleared_and_logged(tmp_path, caplog):
    with ExtentStore(tmp_path, "t") as s:
        s.put(1, b"one" * 100)
        s.put(2, b"two" * 100)
        s.put(3, b"three")
    # A kill in the middle of rewriting record 2: half the new record over the old one.
    old = record_bytes(tmp_path / "t.idx", 2)
    new = bytes(reversed(old))
    write_record_bytes(tmp_path / "t.idx", 2, new[:20] + old[20:])
    with (
        caplog.at_level(logging.WARNING, logger="wirescrapy.collection.extents"),
        ExtentStore(tmp_path, "t") as s,
    ):
        assert s.get(2) is None and s.get(1) == b"one" * 100 and s.get(3) == b"three"
        assert s.problems() == []
    assert "torn" in caplog.text and "[2]" in caplog.text
    assert record_bytes(tmp_path / "t.idx", 2) == bytes(40)


def test_record_pointing_past_the_data_is_cleared(tmp_path, caplog):
    with ExtentStore(tmp_path, "t") as s:
        s.put(1, b"one")
        s.put(2, b"two" * 1000)
    os.truncate(tmp_path / "t.dat", 200)
    with caplog.at_level(logging.WARNING), ExtentStore(tmp_path, "t") as s:
        assert s.get(1) == b"one" and s.get(2) is None
    assert "damaged" in caplog.text


def test_overlapping_records_refuse_to_open_and_change_nothing(tmp_path):
    with ExtentStore(tmp_path, "t") as s:
        s.put(1, b"one" * 100)
        s.put(2, b"two" * 100)
    rec = np.frombuffer(bytearray(record_bytes(tmp_path / "t.idx", 2)), dtype=INDEX_DTYPE)
    rec["offset"] = 128  # inside doc 1's extent, [64, 384)
    rec["crc"] = record_crcs(rec)
    write_record_bytes(tmp_path / "t.idx", 2, rec.tobytes())
    size = os.path.getsize(tmp_path / "t.dat")
    with pytest.raises(ExtentError, match="overlap"):
        ExtentStore(tmp_path, "t")
    assert os.path.getsize(tmp_path / "t.dat") == size


def test_get_detects_changed_bytes(tmp_path):
    with ExtentStore(tmp_path, "t") as s:
        s.put(1, b"hello world")
        offset = s.record(1).offset
        with open(tmp_path / "t.dat", "r+b") as f:
            f.seek(offset)
            f.write(b"J")
        with pytest.raises(ExtentError):
            s.get(1)
        assert s.problems()
        with pytest.raises(ExtentError):
            s.check()


def test_readonly_changes_nothing(tmp_path):
    with ExtentStore(tmp_path, "t") as s:
        s.put(1, b"one")
        s.put(2, b"two")
        s.put(3, b"three")
        s.delete(3)
    write_record_bytes(tmp_path / "t.idx", 2, b"\x01" + record_bytes(tmp_path / "t.idx", 2)[1:])  # torn
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    with ExtentStore(tmp_path, "t", readonly=True) as s:
        assert s.get(1) == b"one" and s.get(2) is None and s.get(3) is None
        assert s.index().ids.tolist() == [1]
        assert s.allocator is None
        with pytest.raises(PermissionError):
            s.put(9, b"x")
        with pytest.raises(PermissionError):
            s.delete(1)
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()} == before


def test_offsets_past_4_gib(tmp_path):
    """64-bit offsets: a sparse data file with records beyond 4 GiB."""
    far = 5 << 30
    with ExtentStore(tmp_path, "t") as s:
        s.put(1, b"near")
        s.allocator.rebuild([64], [far])  # as if everything up to 5 GiB were in use
        s.put(2, b"far away")
        assert s.record(2).offset == far + 64
    assert os.path.getsize(tmp_path / "t.dat") > far
    with ExtentStore(tmp_path, "t") as s:
        assert s.get(2) == b"far away" and s.get(1) == b"near"
        assert s.index().offset.tolist() == [64, far + 64]
        s.put(3, b"x" * 100)
        assert s.record(3).offset == 128  # first fit: the huge hole below 5 GiB
        assert s.end == far + 128
        assert s.problems() == []


# -- kill -9 at random moments -------------------------------------------------------------------

N_DOCS = 60


def writer_ops(seed: int):
    """The writer's operations: (doc-id, content or None for delete), deterministic by seed."""
    rng = random.Random(seed)
    while True:
        doc_id = rng.randrange(1, N_DOCS + 1)
        if rng.random() < 0.15:
            yield doc_id, None
        else:
            size = rng.choice(
                (0, rng.randrange(1, 300), rng.randrange(300, 20000), rng.randrange(20000, 300000))
            )
            yield doc_id, rng.randbytes(size)


def run_writer(directory: str, seed: int, out: int) -> None:
    store = ExtentStore(directory, "k")
    os.write(out, b"ready\n")
    for k, (doc_id, content) in enumerate(writer_ops(seed)):
        if content is None:
            store.delete(doc_id)
        else:
            store.put(doc_id, content)
        os.write(out, b"ok %d\n" % k)


def acknowledged(output: bytes) -> int:
    """Number of operations the writer reported done."""
    done = 0
    for line in output.split(b"\n")[:-1]:  # the last piece may be cut short
        if line.startswith(b"ok "):
            done = int(line[3:]) + 1
    return done


@pytest.mark.slow
def test_kill_at_random_moments_loses_at_most_the_record_being_written(tmp_path):
    rng = random.Random(12345)
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    expected: dict[int, int] = {}  # doc-id -> hash of its content
    total_ops = 0
    in_flight_lost = 0
    for round_ in range(25):
        seed = rng.randrange(1 << 30)
        out = tmp_path / f"out{round_}"
        writer = fork_writer(run_writer, str(store_dir), seed, out=out)
        try:
            wait_for(out, b"ready\n", writer)
            time.sleep(rng.uniform(0.02, 0.3))
        finally:
            kill(writer)
        assert b"error" not in out.read_bytes(), out.read_bytes()[-2000:]
        done = acknowledged(out.read_bytes())
        total_ops += done
        ops = writer_ops(seed)
        for _ in range(done):
            doc_id, content = next(ops)
            if content is None:
                expected.pop(doc_id, None)
            else:
                expected[doc_id] = xxh3_64_intdigest(content)
        flight_doc, flight_content = next(ops)
        before = expected.get(flight_doc)
        after = None if flight_content is None else xxh3_64_intdigest(flight_content)
        with ExtentStore(store_dir, "k") as s:
            assert s.problems() == []
            assert s.allocator.free_bytes + s.allocator.rounded(0) <= s.end
            found = {}
            for doc_id in range(1, N_DOCS + 1):
                data = s.get(doc_id)
                if data is not None:
                    found[doc_id] = xxh3_64_intdigest(data)
            got = found.pop(flight_doc, None)
            assert got in (before, after, None), (
                f"round {round_}: in-flight doc {flight_doc} holds foreign bytes"
            )
            if got is None and before is not None and after is not None:
                in_flight_lost += 1
            others = {d: h for d, h in expected.items() if d != flight_doc}
            assert found == others, f"round {round_}: acknowledged operations lost"
            if got is None:
                expected.pop(flight_doc, None)
            else:
                expected[flight_doc] = got
    assert total_ops > 25 * 50, "the writer hardly ran: kills did not land during operations"
