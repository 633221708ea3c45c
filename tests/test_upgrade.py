"""A collection of an earlier wirescrapy (document/1 or /2, site/1 records) upgraded when a writer opens
it."""

import numpy as np
import pytest

from wirescrapy.collection import Collection
from wirescrapy.collection.records import RecordFile, RecordFileError
from wirescrapy.collection.upgrade import (
    DOCUMENT_V1_DTYPE,
    DOCUMENT_V1_KIND,
    DOCUMENT_V2_DTYPE,
    DOCUMENT_V2_KIND,
    SITE_V1_DTYPE,
    SITE_V1_KIND,
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
        assert (docs["mime"] == b"text/html").all() and docs["content_hash"].tolist() == [
            2**63 + i for i in (1, 2, 3)
        ]
        assert np.allclose(docs["profit"], 0.5) and collection.lookup("http://a.cl/b") == 3
        assert collection.add_url("http://a.cl/c")[0] == 4  # and it goes on growing
    assert record_kind(tmp_path / "documents.rec") == "document/3"
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


def make_v2(tmp_path):
    """A collection of two documents and one site whose record files are rewritten as document/2 and site/1
    had them (before language, rendering, validators and new-site counts)."""
    with Collection(tmp_path) as collection:
        collection.add_url("http://a.cl/", depth=0)
        collection.add_url("http://a.cl/x", depth=1)
    for name in ("documents.rec", "sites.rec"):
        (tmp_path / name).unlink()
    with RecordFile(tmp_path / "documents.rec", DOCUMENT_V2_DTYPE, DOCUMENT_V2_KIND) as old:
        old.ensure(2)
        for doc_id in (1, 2):
            record = old.records[doc_id]
            record["docid"], record["siteid"], record["depth"] = doc_id, 1, doc_id - 1
            record["status"], record["error"], record["profit"] = 200, 0, 0.25 * doc_id
            record["pad"] = 7  # padding then: never read as the redirect count
        old.count = 2
    with RecordFile(tmp_path / "sites.rec", SITE_V1_DTYPE, SITE_V1_KIND) as old:
        old.ensure(1)
        old.records[1]["siteid"], old.records[1]["docs"], old.records[1]["crawl_delay"] = 1, 2, 1.5
        old.records[1]["pad"] = 9
        old.count = 1


def test_document_2_and_site_1_records_gain_the_new_fields_as_zero(tmp_path):
    make_v2(tmp_path)
    with Collection(tmp_path) as collection:
        docs = collection.documents.records[1:3]
        assert docs["status"].tolist() == [200, 200] and docs["depth"].tolist() == [0, 1]
        assert np.allclose(docs["profit"], [0.25, 0.5])
        assert docs["redirects"].tolist() == [0, 0] and docs["language"].tolist() == [b"", b""]
        assert docs["etag"].tolist() == [b"", b""] and docs["render"].tolist() == [0, 0]
        site = collection.sites.records[1]
        assert (site["docs"], site["crawl_delay"], site["render"], site["new_sites"]) == (2, 1.5, 0, 0)
        assert collection.add_url("http://a.cl/y")[0] == 3
    assert record_kind(tmp_path / "documents.rec") == "document/3"
    assert record_kind(tmp_path / "sites.rec") == "site/2"


def test_a_reader_is_told_which_files_are_old(tmp_path):
    make_v2(tmp_path)
    with pytest.raises(RecordFileError, match="documents.rec: document/2, sites.rec: site/1"):
        Collection(tmp_path, readonly=True)
