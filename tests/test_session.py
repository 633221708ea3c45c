"""The harvest's session over a collection: what a person is told when the batch to harvest is damaged."""

from __future__ import annotations

import pytest
from scrapy.settings import BaseSettings

from wirescrapy.collection import Collection
from wirescrapy.config import WireConfig
from wirescrapy.harvester.session import Harvest
from wirescrapy.manager.batch import BatchError


@pytest.fixture
def harvest(tmp_path):
    harvest = Harvest(WireConfig.from_settings(BaseSettings()), Collection(tmp_path / "c"), "wirescrapy/0.1")
    yield harvest
    harvest.close()


def test_a_damaged_batch_of_the_collection_names_the_command_that_sets_it_aside(harvest):
    damaged = harvest.batches_dir / "000007"
    damaged.mkdir(parents=True)
    (damaged / "batch.json").write_text('{"format": ')
    assert harvest.unfinished_batch() is None  # no urls.tsv: a harvester given no batch asks the manager
    (damaged / "urls.tsv").write_text("")
    assert harvest.unfinished_batch() == damaged
    with pytest.raises(BatchError, match=r"batch.json: not JSON .*; to set the batch aside and go on: "
                                         r"scrapy manager --discard-batch 7$"):
        harvest.open_batch(damaged)


def test_a_batch_elsewhere_is_not_the_managers_to_discard(harvest, tmp_path):
    with pytest.raises(BatchError, match=r"no batch.json, not a batch$"):
        harvest.open_batch(tmp_path)
