import re
import subprocess
import sys
from pathlib import Path

import pytest

from wirescrapy.collection import Collection

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(120)
def test_the_readme_demo_seeds_the_sample_web_and_writes_a_batch(tmp_path):
    run = subprocess.run([sys.executable, "-m", "scrapy", "demo", "--dir", str(tmp_path / "c"), "--sites", "3"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert re.search(r"sample web: 3 sites on http://127\.0\.0\.1:\d+/", run.stdout)
    assert "manager: batch 1 of 3 URLs from 3 sites" in run.stdout
    assert re.search(r"documents\s+3\n", run.stdout)
    with Collection(tmp_path / "c", readonly=True) as collection:
        assert collection.documents.count == 3
        assert all(collection.url(i).startswith("http://site") for i in (1, 2, 3))
    assert (tmp_path / "c" / "batches" / "000001" / "batch.json").exists()


@pytest.mark.timeout(60)
def test_the_manager_refuses_a_missing_collection(tmp_path):
    run = subprocess.run([sys.executable, "-m", "scrapy", "manager", "-s", f"WIRE_COLLECTION_DIR={tmp_path / 'no'}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "no collection in" in run.stderr
    assert not (tmp_path / "no").exists()
