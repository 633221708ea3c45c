"""A collection of an earlier wirescrapy (document/1 records) upgraded when a writer opens it."""

import numpy as np
import pytest

from wirescrapy.collection import Collection
from wirescrapy.collection.records import RecordFile, RecordFileError
from wirescrapy.collection.upgrade import (
    DOCUMENT_V1_DTYPE,
    DOCUMENT_V1_KIND,
    record_kind,
)
from wirescrapy.items import FetchError


def make_v1(tmp_path):
    """A collection of three documents whose documents.rec is rewritten as document/1 had it."""
    with Collection(tmp_path) as collection:
        for path in ("/", "/a", "/b"):
            collection.add_url("http://a.cl" + path, depth=len(path) - 1)
    (tmp_path / "documents.rec").unlink()
    with RecordFile(tmp_path / "documents.rec", DOCUMENT_V1_DTYPE, DOCUMENT_V1_KIND) as old:
        old.ensure(3)
        for doc_id, (status, visits) in enumerate([(200, 2), (-FetchError.TIMEOUT, 1), (0, 0)], 1):
            record = old.records[doc_id]
            record["docid"], record["siteid"], record["depth"] = doc_id, 1, doc_id - 1
            record["status"], record["visits"], record["last_visit"] = status, visits, 1000.0 + doc_id
            record["mime"], record["content_hash"], record["profit"] = b"text/html", 2**63 + doc_id, 0.5
        old.count = 3


def test_a_writer_upgrades_document_records_keeping_every_field(tmp_path):
    make_v1(tmp_path)
    assert record_kind(tmp_path / "documents.rec") == "document/1"
    with Collection(tmp_path) as collection:
        docs = collection.documents.records[1:4]
        assert docs["status"].tolist() == [200, 0, 0]
        assert docs["error"].tolist() == [0, FetchError.TIMEOUT, 0]  # the negative status is our error now
        assert docs["visits"].tolist() == [2, 1, 0] and docs["depth"].tolist() == [0, 1, 2]
        assert docs["last_visit"].tolist() == [1001.0, 1002.0, 1003.0]
        assert (docs["mime"] == b"text/html").all() and docs["content_hash"].tolist() == [2**63 + i for i in (1, 2, 3)]
        assert np.allclose(docs["profit"], 0.5) and collection.lookup("http://a.cl/b") == 3
        assert collection.add_url("http://a.cl/c")[0] == 4  # and it goes on growing
    assert record_kind(tmp_path / "documents.rec") == "document/2"
    assert not (tmp_path / "documents.rec.upgrade").exists()


def test_a_reader_of_an_old_collection_is_told_how_to_upgrade_it(tmp_path):
    make_v1(tmp_path)
    with pytest.raises(RecordFileError, match="open it for writing once"):
        Collection(tmp_path, readonly=True)
    assert record_kind(tmp_path / "documents.rec") == "document/1"  # a reader changes nothing


def test_a_leftover_of_a_killed_upgrade_is_written_again(tmp_path):
    make_v1(tmp_path)
    (tmp_path / "documents.rec.upgrade").write_bytes(b"half a file")
    with Collection(tmp_path) as collection:
        assert collection.documents.records[2]["error"] == FetchError.TIMEOUT
