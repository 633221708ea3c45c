import os

import pytest

from wirescrapy.collection import extents, pages
from wirescrapy.collection.extents import ExtentError
from wirescrapy.collection.pages import CODEC_ZSTD, PageStore

PAGE = b"<html><body>" + b"a fairly compressible page " * 100 + b"</body></html>"


def test_store_and_load(tmp_path):
    with PageStore(tmp_path) as p:
        assert p.store(1, PAGE) == 1
        assert p.store(2, b"other") == 2
        assert p.load(1) == PAGE and p.load(2) == b"other" and p.load(3) is None
        assert 1 in p and 3 not in p and len(p) == 2


def test_duplicate_returns_the_original_and_writes_nothing(tmp_path):
    with PageStore(tmp_path) as p:
        p.store(1, PAGE)
        end, live = p.extents.end, p.extents.live_bytes
        assert p.store(5, PAGE) == 1
        assert p.store(1, PAGE) == 1  # unchanged page under its own doc-id
        assert 5 not in p
        assert (p.extents.end, p.extents.live_bytes) == (end, live)
        assert p.seen(PAGE) == 1 and p.seen(b"never stored") == 0


def test_replacement_frees_space_for_reuse(tmp_path):
    with PageStore(tmp_path) as p:
        p.store(1, b"x" * 5000)
        p.store(2, b"y" * 100)
        old = p.extents.record(1).offset
        p.store(1, b"z" * 50)
        end = p.extents.end
        assert p.store(3, b"w" * 4000) == 3
        assert p.extents.record(3).offset == old  # first fit: the freed extent
        assert p.extents.end == end


def test_stale_candidate_is_not_a_duplicate(tmp_path):
    with PageStore(tmp_path) as p:
        p.store(1, PAGE)
        p.store(1, b"page 1 changed")  # the index still names doc 1 for PAGE's hash
        assert p.seen(PAGE) == 0
        assert p.store(2, PAGE) == 2
        assert p.seen(PAGE) == 2
        p.delete(2)
        assert p.seen(PAGE) == 0
        assert p.store(3, PAGE) == 3
    with PageStore(tmp_path) as p:
        assert p.seen(PAGE) == 3 and p.store(4, PAGE) == 3


def test_content_seen_survives_reopen(tmp_path):
    with PageStore(tmp_path) as p:
        for i in range(1, 101):
            p.store(i, b"page %d" % i)
    with PageStore(tmp_path) as p:
        assert p.store(500, b"page 42") == 42
        assert p.store(501, b"page 101") == 501
        assert p.store(502, b"page 101") == 501


def test_hash_collision_is_caught_by_the_byte_comparison(tmp_path, monkeypatch):
    weak = lambda data: len(data)  # noqa: E731: every page of a length collides
    monkeypatch.setattr(pages, "xxh3_64_intdigest", weak)
    monkeypatch.setattr(extents, "xxh3_64_intdigest", weak)
    with PageStore(tmp_path) as p:
        assert p.store(1, b"aaaa") == 1
        assert p.store(2, b"bbbb") == 2  # same hash and length, other bytes
        assert p.store(3, b"bbbb") == 2
        assert p.load(1) == b"aaaa"


def test_compression(tmp_path):
    with PageStore(tmp_path, compression=3) as p:
        p.store(1, PAGE)
        noise = os.urandom(3000)
        p.store(2, noise)
        rec1, rec2 = p.extents.record(1), p.extents.record(2)
        assert rec1.flags & CODEC_ZSTD and rec1.size < len(PAGE) // 5 and rec1.length == len(PAGE)
        assert not rec2.flags & CODEC_ZSTD and rec2.size == len(noise)  # did not help: stored raw
        assert p.load(1) == PAGE and p.load(2) == noise
        assert p.store(3, PAGE) == 1  # content-seen compares the decompressed bytes
    with PageStore(tmp_path) as p:  # reading needs no level
        assert p.load(1) == PAGE
        assert p.store(4, PAGE) == 1


def test_load_detects_damage(tmp_path):
    with PageStore(tmp_path, compression=1) as p:
        p.store(1, PAGE)
        p.store(2, b"raw page")
        for doc_id in (1, 2):
            rec = p.extents.record(doc_id)
            with open(p.extents.data_path, "r+b") as f:
                f.seek(rec.offset + rec.size // 2)
                f.write(b"\xff\x00")
            with pytest.raises(ExtentError):
                p.load(doc_id)


def test_count_and_check(tmp_path):
    with PageStore(tmp_path, compression=1) as p:
        p.store(1, PAGE)
        p.store(2, b"raw page")
        p.store(3, PAGE)
        assert p.count() == 2
        p.check()
        rec = p.extents.record(1)
        with open(p.extents.data_path, "r+b") as f:
            f.seek(rec.offset + rec.size - 4)
            f.write(b"\xff\xff\xff\xff")
        with pytest.raises(ExtentError, match="doc-id 1"):
            p.check()


def test_seen_many_agrees_with_seen(tmp_path):
    with PageStore(tmp_path, compression=1) as p:
        for i in range(1, 50):
            p.store(i, b"page %d" % i * 10)
        p.store(7, b"seven changed")
        batch = [b"page %d" % i * 10 for i in range(1, 60)] + [b"seven changed", b""]
        assert p.seen_many(batch).tolist() == [p.seen(c) for c in batch]
        assert p.seen_many(batch)[6] == 0 and p.seen_many(batch)[59] == 7
    with PageStore(tmp_path) as p:  # after reopen, from the sorted arrays
        assert p.seen_many(batch).tolist() == [p.seen(c) for c in batch]


def test_readonly(tmp_path):
    with PageStore(tmp_path) as p:
        p.store(1, PAGE)
    with PageStore(tmp_path, readonly=True) as p:
        assert p.load(1) == PAGE and p.seen(PAGE) == 1
        with pytest.raises(PermissionError):
            p.store(2, b"new")


def test_a_collection_s_page_store_refuses_ids_past_its_documents(tmp_path):
    from wirescrapy.collection import Collection

    with Collection(tmp_path / "c") as collection:
        doc_id = collection.add_url("http://a.example/")[0]
        collection.pages.store(doc_id, b"one")
        with pytest.raises(ValueError, match=r"pages.idx: doc-id 2 is past the last document \(1\)"):
            collection.pages.store(doc_id + 1, b"two")
        with pytest.raises(ValueError, match="pages.idx: doc-id 0: doc-ids start at 1"):
            collection.pages.store(0, b"two")
        with pytest.raises(ValueError, match="past the last document"):
            collection.pages.store(doc_id + 1, b"one")  # a duplicate, which writes nothing, too
        assert collection.pages.count() == 1
