"""``scrapy status``: the figures of a small collection (``collection_status``) and the command."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scrapy.settings import Settings

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag, RobotsState
from wirescrapy.commands.status import collection_status
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.harvester.session import HARVEST_FILE
from wirescrapy.items import FetchError
from wirescrapy.manager import manage
from wirescrapy.testing.process import run_scrapy

NOW = 1_700_000_000.0


@pytest.fixture
def collection_dir(tmp_path):
    """Two sites of five pages, four of a.example fetched (200, 200 duplicate, 404, a timeout), b.example's
    robots.txt unreachable; three batches: 1 harvested, 2 with a damaged batch.json, 3 unfinished."""
    directory = tmp_path / "collection"
    with Collection(directory) as collection:
        ids = [collection.add_url(f"http://{site}.example/p{i}", 1)[0] for site in "ab" for i in range(5)]
        docs = collection.documents.records
        for doc_id, status, error in zip(ids, (200, 200, 404, 0), (0, 0, 0, FetchError.TIMEOUT)):
            docs[doc_id]["visits"], docs[doc_id]["status"], docs[doc_id]["error"] = 1, status, error
        docs[ids[1]]["flags"] |= DocFlag.DUPLICATE
        collection.store_page(ids[0], b"<html>a page</html>")
        collection.links.set_links(ids[0], np.array(ids[1:4], dtype=np.uint32))
        collection.sites.records[1]["robots_state"] = RobotsState.VALID
        collection.sites.records[2]["robots_state"] = RobotsState.UNREACHABLE
        config = WireConfig.from_settings(
            Settings(
                {
                    **default_settings(),
                    "WIRE_COLLECTION_DIR": str(directory),
                    "WIRE_BATCH_SIZE": 3,
                    # Full batches of 3: no limit from the pages fetched or from the sites' waits.
                    "WIRE_BATCH_SITE_GROWTH": 0,
                    "WIRE_WAIT_NORMAL": 0,
                    "WIRE_WAIT_LARGE_SITE": 0,
                }
            )
        )
        paths = manage(collection, config, NOW, batches=3).paths
    harvest = {
        "batch": 1,
        "part": 0,
        "started": NOW,
        "finished": NOW + 60,
        "urls": 3,
        "fetched": 3,
        "ok": 2,
        "errors": {"timeout": 1},
    }
    (paths[0] / HARVEST_FILE).write_text(json.dumps(harvest))
    (paths[1] / "batch.json").write_text('{"format": "wirescrapy-batch", "vers')
    return directory


def test_figures(collection_dir):
    with Collection(collection_dir, readonly=True) as collection:
        status = collection_status(collection, now=NOW + 100)
    assert status["as_of"] == NOW + 100 and status["directory"] == str(collection_dir.resolve())
    assert status["documents"] == {"known": 10, "fetched": 4, "ok": 2, "duplicates": 1, "not_fetched": 6}
    assert (status["sites"], status["pages_stored"], status["links"]) == (2, 1, 3)
    assert status["status_classes"] == {"none": 1, "2xx": 2, "4xx": 1}
    assert status["errors"] == {"timeout": 1}
    assert status["robots"] == {"valid": 1, "unreachable": 1}
    disk = status["disk"]
    assert disk["documents.rec"] > 0 and disk["pages"] > 0 and disk["batches"] > 0
    assert disk["total"] == sum(size for name, size in disk.items() if name != "total")

    first, damaged, unfinished = status["batches"]
    assert (first["batch"], first["state"], first["urls"], first["parts"]) == (1, "harvested", 3, 1)
    assert first["harvest"]["fetched"] == 3 and first["harvest"]["errors"] == {"timeout": 1}
    assert damaged["state"] == "damaged" and "not JSON" in damaged["reason"]
    assert damaged["hint"].endswith("scrapy manager --discard-batch 2")
    assert (unfinished["batch"], unfinished["state"], unfinished["urls"]) == (3, "unfinished", 3)
    assert "harvest" not in unfinished


def test_older_batches_are_not_read_whole(collection_dir):
    (collection_dir / "batches" / "000003" / "urls.tsv").write_text("truncated")
    with Collection(collection_dir, readonly=True) as collection:
        older = collection_status(collection, recent=1)["batches"]
        recent = collection_status(collection, recent=3)["batches"]
    assert [b["checked"] for b in older] == [False, False, True]
    assert older[0]["state"] == "harvested" and older[2]["state"] == "damaged"
    assert "checksum differs" in recent[2]["reason"]


def test_empty_collection(tmp_path):
    with Collection(tmp_path / "c"):
        pass
    with Collection(tmp_path / "c", readonly=True) as collection:
        status = collection_status(collection)
    assert status["documents"]["known"] == 0 and status["batches"] == [] and status["errors"] == {}


def scrapy_status(directory, *args):
    return run_scrapy("status", "-s", f"WIRE_COLLECTION_DIR={directory}", *args)


def test_command(collection_dir, tmp_path):
    run = scrapy_status(collection_dir)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"collection  {collection_dir.resolve()}"
    assert "documents   10 known: 4 fetched (2 OK, 1 duplicates), 6 not yet fetched" in lines
    assert "errors      timeout 1" in lines and "robots.txt  valid 1, unreachable 1" in lines
    assert "batches     3: 1 harvested, 1 unfinished, 1 damaged" in lines
    assert any(line.startswith("  000002") and "scrapy manager --discard-batch 2" in line for line in lines)

    missing = scrapy_status(tmp_path / "none")
    assert missing.returncode == 2
    assert missing.stderr.rstrip().splitlines()[-1].endswith(f": error: no collection in {tmp_path / 'none'}")
    assert "Traceback" not in missing.stderr
