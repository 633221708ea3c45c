import numpy as np
import pytest

from wirescrapy.collection.records import RecordFile, RecordFileError

DTYPE = np.dtype([("id", "<u4"), ("value", "<f8"), ("name", "S32")])


def test_record_zero_is_the_header_and_ids_start_at_one(tmp_path):
    with RecordFile(tmp_path / "r.rec", DTYPE, "test") as f:
        assert f.count == 0
        assert f.append(np.array((7, 1.5, b"a"), DTYPE)) == 1
        assert f.append(np.array((8, 2.5, b"b"), DTYPE)) == 2
        assert f.count == 2
    raw = (tmp_path / "r.rec").read_bytes()
    assert raw[:8] == b"WIRERECS"
    # record i at offset itemsize * i
    rec = np.frombuffer(raw[DTYPE.itemsize * 2 : DTYPE.itemsize * 3], DTYPE)[0]
    assert rec["id"] == 8 and rec["name"] == b"b"


def test_grows_as_ids_grow_and_persists(tmp_path):
    with RecordFile(tmp_path / "r.rec", DTYPE, "test") as f:
        f.ensure(300_000)
        f.records[300_000]["value"] = 3.25
        f.count = 300_000
        assert f.capacity >= 300_000
    with RecordFile(tmp_path / "r.rec", DTYPE, "test", readonly=True) as f:
        assert f.count == 300_000 and f.records[300_000]["value"] == 3.25
        assert f.records[299_999]["value"] == 0
        with pytest.raises(RecordFileError):
            f.ensure(10**7)


def test_refuses_a_file_of_another_kind_or_size(tmp_path):
    RecordFile(tmp_path / "r.rec", DTYPE, "test").close()
    with pytest.raises(RecordFileError, match="expected 'other'"):
        RecordFile(tmp_path / "r.rec", DTYPE, "other")
    with pytest.raises(RecordFileError):
        RecordFile(tmp_path / "r.rec", np.dtype([("id", "<u8")] * 1 + [("x", "S40")]), "test")
    (tmp_path / "junk.rec").write_bytes(b"x" * 1000)
    with pytest.raises(RecordFileError, match="not a wirescrapy record file"):
        RecordFile(tmp_path / "junk.rec", DTYPE, "test")


def test_a_write_to_record_zero_or_past_the_end_is_refused(tmp_path):
    from wirescrapy.collection.records import RecordIdError

    with RecordFile(tmp_path / "r.rec", DTYPE, "test") as f:
        f.append(np.array((7, 1.5, b"a"), DTYPE))
        f.record(1)["value"] = 2.5
        assert f.records[1]["value"] == 2.5
        with pytest.raises(RecordIdError, match=r"r.rec: no record 0 \(id 0 is the header\)"):
            f.record(0)["value"] = 9
        with pytest.raises(RecordIdError, match=r"r.rec: no record 2 \(1 records\)"):
            f.record(2)["value"] = 9
        assert f.count == 1 and f.records[2]["value"] == 0
    with RecordFile(tmp_path / "r.rec", DTYPE, "test") as f:  # the header is intact
        assert f.count == 1


def test_the_collection_refuses_record_writes_outside_its_documents_and_sites(tmp_path):
    from wirescrapy.collection import Collection
    from wirescrapy.collection.records import RecordIdError

    with Collection(tmp_path / "c") as collection:
        doc_id = collection.add_url("http://a.example/")[0]
        for bad in (0, doc_id + 1):
            with pytest.raises(RecordIdError):
                collection.store_page(bad, b"<html>page</html>")
            with pytest.raises(RecordIdError):
                collection.reach(bad, 0)
            with pytest.raises(RecordIdError):
                collection.reach_many([(doc_id, 0, 0, 0), (bad, 0, 0, 0)])
            assert collection.documents.record(doc_id)["depth"] == 0
        with pytest.raises(RecordIdError, match=r"sites.rec: no record 0 \(id 0 is the header\)"):
            collection.sites.record(0)
        with pytest.raises(RecordIdError, match=r"sites.rec: no record 2 \(1 records\)"):
            collection.sites.record(2)
        assert collection.pages.count() == 0


def test_reach_many_is_reach_for_each_entry_a_document_maybe_more_than_once(tmp_path):
    from wirescrapy.collection import Collection
    from wirescrapy.collection.metadata import DocFlag

    entries = [
        (1, 5, 0, 3),
        (2, 9, int(DocFlag.DYNAMIC), 0),
        (1, 4, int(DocFlag.FRONT_PAGE), 7),
        (3, 1, 0, 1),
        (1, 6, int(DocFlag.MULTIMEDIA), 2),
    ]
    fields = ("depth", "flags", "redirects")
    results = []
    for many in (False, True):
        with Collection(tmp_path / f"c{many}") as collection:
            for i, depth in enumerate((7, 3, 2)):
                collection.add_document("http://a.example", f"/{i}", depth=depth, redirects=i + 2)
            if many:
                collection.reach_many(entries)
            else:
                for doc_id, depth, flags, redirects in entries:
                    collection.reach(doc_id, depth, flags, redirects)
            results.append([tuple(int(collection.documents.record(d)[f]) for f in fields) for d in (1, 2, 3)])
    assert results[0] == results[1]
    assert results[1][0] == (4, int(DocFlag.FRONT_PAGE | DocFlag.MULTIMEDIA), 2)
