"""What near-duplicates are used for: the manager's choices (``manager/nearduplicates.py``), the report's
section and ``scrapy export documents --near-duplicates`` (``report/nearduplicates.py``)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from scrapy.settings import Settings

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.collection.nearduplicates import NO_EARLIER, NearDuplicateFile, assign, load_index
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.manager.nearduplicates import (
    changed_within_cluster,
    clusters_of,
    counts_as_changed,
    represented,
    without_represented,
)
from wirescrapy.report.data import CrawlData
from wirescrapy.report.nearduplicates import near_duplicates_section
from wirescrapy.report.render import render_section
from wirescrapy.testing.process import run_scrapy

CONFIG = WireConfig.from_settings(Settings(default_settings()))

# -- the manager -------------------------------------------------------------------------------------------


def test_a_near_duplicate_of_a_stored_representative_earns_no_profit():
    clusters = np.array([1, 1, 3, 1, 0, 3])  # doc-ids 1..6: 2 and 4 copies of 1, 6 of 3, 5 none
    stored = np.array([True, True, False, True, True, True])
    assert represented(clusters, stored).tolist() == [False, True, False, True, False, False]
    profit = np.arange(1.0, 7.0)
    assert without_represented(profit, clusters, stored).tolist() == [1.0, 0.0, 3.0, 0.0, 5.0, 6.0]


def test_clusters_are_read_from_the_side_file_up_to_the_documents_read(tmp_path):
    file = NearDuplicateFile(tmp_path)
    index = load_index(file)
    assign(index, file, 1, 0xF0F0)
    assign(index, file, 3, 0xF0F1)
    assign(index, file, 4, None)
    assert clusters_of(file.records, 5).tolist() == [1, 0, 1, 0, 0]
    assert clusters_of(file.records, 2).tolist() == [1, 0]  # 3 came after the documents were read
    assert clusters_of(np.zeros(1, file.records.dtype), 3).tolist() == [0, 0, 0]  # no file yet


def test_a_change_within_the_cluster_is_no_change_for_freshness():
    assert changed_within_cluster(np.array([0, 1, 3, 4, NO_EARLIER]), 3).tolist() == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert counts_as_changed(True, 2, 3) is False
    assert counts_as_changed(True, 0, 3) is False  # the text did not move: the markup changed
    assert counts_as_changed(True, 9, 3) is True and counts_as_changed(False, 2, 3) is False
    assert counts_as_changed(True, NO_EARLIER, 3) is True


# -- the report and the export -----------------------------------------------------------------------------


@pytest.fixture
def clustered(tmp_path):
    """Site a: p0 the representative of p1 and p2; site b: q0 a copy of p0, q1 alone; p3 no fingerprint;
    q2 an exact duplicate."""
    directory = tmp_path / "c"
    with Collection(directory) as collection:
        ids = {}
        for site, pages in (("a", ("p0", "p1", "p2", "p3")), ("b", ("q0", "q1", "q2"))):
            for page in pages:
                ids[page] = collection.add_url(f"http://{site}.example/{page}", depth=1)[0]
        for doc_id in ids.values():
            collection.documents.records[doc_id]["visits"] = 1
            collection.documents.records[doc_id]["status"] = 200
        collection.documents.records[ids["q2"]]["flags"] |= DocFlag.DUPLICATE
        file = NearDuplicateFile(directory)
        index = load_index(file)
        for page, fingerprint in (
            ("p0", 0),
            ("p1", 1),
            ("p2", 3),
            ("q0", 1 << 40),
            ("q1", (1 << 64) - 1),
            ("p3", None),
        ):
            assign(index, file, ids[page], fingerprint)
        file.close()
    return directory, ids


def test_the_report_section_counts_clusters_by_size_and_site(clustered):
    directory, _ = clustered
    with Collection(directory, readonly=True) as collection:
        section = near_duplicates_section(CrawlData(collection, CONFIG))
    assert section.figures == {
        "fingerprinted": 5,
        "no_fingerprint": 1,
        "clusters": 1,
        "near_duplicates": 3,
        "near_duplicate_rate": 0.6,
        "exact_duplicates": 1,
        "exact_duplicate_rate": round(1 / 7, 4),
    }
    sizes, largest, sites = section.tables
    assert sizes.rows[0].tolist() == [4] and sizes.rows[1].tolist() == [1]
    assert largest.rows[0] == ["http://a.example/p0"] and largest.rows[1].tolist() == [4]
    assert largest.rows[2] == ["http://a.example/p1 http://a.example/p2 http://b.example/q0"]
    assert sites.rows[0] == ["http://a.example", "http://b.example"]
    assert sites.rows[1].tolist() == [2, 1] and sites.rows[2].tolist() == [3, 2]
    page = render_section(section)
    assert "Near-duplicates per site" in page and "http://b.example/q0" in page
    assert [table.csv().splitlines()[0] for table in section.tables] == [
        "value,clusters,fraction",
        "representative,pages,examples",
        "site,near_duplicates,fingerprinted,fraction",
    ]


def test_the_report_of_a_collection_without_fingerprints(tmp_path):
    with Collection(tmp_path / "c") as collection:
        collection.add_url("http://a.example/", depth=0)
    with Collection(tmp_path / "c", readonly=True) as collection:
        section = near_duplicates_section(CrawlData(collection, CONFIG))
    assert section.figures["fingerprinted"] == 0 and section.figures["near_duplicate_rate"] == 0
    assert [len(table) for table in section.tables] == [0, 0, 0]


def test_export_lists_the_near_duplicates_as_json_lines_and_csv(clustered):
    directory, ids = clustered
    settings = ("-s", f"WIRE_COLLECTION_DIR={directory}")
    run = run_scrapy("export", "documents", "--near-duplicates", *settings)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(row["url"], row["cluster"], row["representative"], row["distance"]) for row in rows] == [
        ("http://a.example/p1", ids["p0"], "http://a.example/p0", 1),
        ("http://a.example/p2", ids["p0"], "http://a.example/p0", 2),
        ("http://b.example/q0", ids["p0"], "http://a.example/p0", 1),
    ]
    run = run_scrapy(
        "export", "documents", "--near-duplicates", "--format", "csv", "--site", "http://b.example", *settings
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert list(csv.DictReader(io.StringIO(run.stdout))) == [
        {
            "docid": str(ids["q0"]),
            "url": "http://b.example/q0",
            "cluster": str(ids["p0"]),
            "representative": "http://a.example/p0",
            "distance": "1",
        }
    ]
    run = run_scrapy("export", "documents", "--near-duplicates", "--content", "text", *settings)
    assert run.returncode == 2 and "give no --content with it" in run.stderr.splitlines()[-1]
