"""The harvest's session over a collection: what a person is told when the batch to harvest is damaged, the
sites a part's harvest owns, and the figures of a batch's harvest."""

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
    with pytest.raises(
        BatchError,
        match=r"batch.json: not JSON .*; to set the batch aside and go on: "
        r"scrapy manager --discard-batch 7$",
    ):
        harvest.open_batch(damaged)


def test_a_batch_elsewhere_is_not_the_managers_to_discard(harvest, tmp_path):
    with pytest.raises(BatchError, match=r"no batch.json, not a batch$"):
        harvest.open_batch(tmp_path)


def _collection_with_batch(directory, parts=1):
    """A collection of two sites, and the manager's batch of it (its parts' directories)."""
    from wirescrapy.manager import manage

    config = WireConfig.from_settings(BaseSettings())
    with Collection(directory) as collection:
        for url in ("http://a.example/", "http://b.example/", "http://c.example/x"):
            collection.add_url(url)
        return collection.id, manage(collection, config, now=1e9, batches=1, parts=parts).paths


def test_a_batch_names_its_collection_and_is_refused_by_another(harvest, tmp_path):
    owner_id, paths = _collection_with_batch(tmp_path / "owner", parts=2)
    assert len(paths) == 2 and owner_id and harvest.collection.id and owner_id != harvest.collection.id
    for path in paths:
        with pytest.raises(
            BatchError,
            match=rf"belongs to the collection {tmp_path / 'owner'} \(id {owner_id}\), "
            rf"not to {tmp_path / 'c'} \(id {harvest.collection.id}\)$",
        ):
            harvest.open_batch(path)
    assert harvest.collection.documents.count == 0 and harvest.batch is None
    with Collection(tmp_path / "owner") as owner:  # its own collection takes it
        own = Harvest(harvest.config, owner, "wirescrapy/0.1")
        batch, done = own.open_batch(paths[0])
        assert batch.info["collection_id"] == owner_id and not done


def test_a_copied_collection_keeps_its_id_and_its_batches(tmp_path):
    import shutil

    owner_id, (path,) = _collection_with_batch(tmp_path / "owner")
    shutil.copytree(tmp_path / "owner", tmp_path / "moved")
    with Collection(tmp_path / "moved") as moved:
        assert moved.id == owner_id
        Harvest(WireConfig.from_settings(BaseSettings()), moved, "ua").open_batch(
            tmp_path / "moved" / path.relative_to(tmp_path / "owner")
        )


def test_a_batch_from_before_collection_ids_is_taken_only_by_the_collection_it_names(harvest, tmp_path):
    import json

    _, (path,) = _collection_with_batch(tmp_path / "owner")
    info = json.loads((path / "batch.json").read_text())
    del info["collection_id"]
    (path / "batch.json").write_text(json.dumps(info))
    with pytest.raises(BatchError, match=rf"was written for the collection {tmp_path / 'owner'}, not "):
        harvest.open_batch(path)
    with Collection(tmp_path / "owner") as owner:
        Harvest(harvest.config, owner, "ua").open_batch(path)


def test_an_existing_collection_gets_an_id_when_a_writer_first_opens_it(tmp_path):
    from wirescrapy.collection.identity import ID_FILE

    with Collection(tmp_path / "c") as collection:
        collection.add_url("http://a.example/")
        first = collection.id
    (tmp_path / "c" / ID_FILE).unlink()  # as a collection written before ids
    with Collection(tmp_path / "c", readonly=True) as reader:
        assert reader.id == ""  # a reader writes nothing
    with Collection(tmp_path / "c") as writer:
        assert len(writer.id) == 32 and writer.id != first
    with Collection(tmp_path / "c") as again:
        assert again.id == writer.id


def test_a_redirect_target_visited_within_its_revisit_period_is_not_fetched_again(harvest):
    """A redirect found in a later batch than its target's fetch would fetch the target a second time:
    the target counts as done while the manager would not put it in a batch either."""
    import time

    collection = harvest.collection
    fetched, _ = collection.add_url("http://a.test/page.html")
    failed, _ = collection.add_url("http://a.test/failed.html")
    records = collection.documents.records
    now = time.time()
    records[fetched]["visits"], records[fetched]["status"], records[fetched]["last_visit"] = 1, 200, now - 60
    records[failed]["visits"], records[failed]["last_visit"] = (
        1,
        now - 2 * 86400,
    )  # no status: failed, a day ago
    assert harvest.redirect_target_done("http://a.test/page.html")  # 200 a minute ago: not due for 7 days
    assert not harvest.redirect_target_done("http://a.test/failed.html")  # due again after a day
    assert not harvest.redirect_target_done("http://a.test/never-seen.html")
    records[fetched]["last_visit"] = now - 8 * 86400
    assert not harvest.redirect_target_done("http://a.test/page.html")


def test_a_batch_in_parts_by_address_gives_each_server_to_one_harvest(tmp_path):
    """Split by address, a part's harvest owns the sites of its servers, the batch's and the others a redirect
    may lead to: virtual hosts of one address are all one part's, as the manager wrote them."""
    import ipaddress

    from wirescrapy.manager import manage
    from wirescrapy.manager.batch import site_part

    config = WireConfig.from_settings(BaseSettings({"WIRE_POLITENESS_GROUP": "ip"}))
    shared = [f"http://v{n}.example" for n in range(8)]  # all on 127.0.0.2
    own = [f"http://own{n}.example" for n in range(4)]  # each on an address of its own
    assert len({site_part(site, 2) for site in shared}) == 2  # by host they would be split
    with Collection(tmp_path / "c") as collection:
        for n, site in enumerate(shared + own):
            collection.add_url(site + "/")
            address = "127.0.0.2" if site in shared else f"127.0.1.{n}"
            site_id = collection.urls.site_id(site)
            collection.sites.records[site_id]["ip"] = ipaddress.IPv6Address(f"::ffff:{address}").packed
        paths = manage(collection, config, now=1e9, batches=1, parts=2).paths
        harvest = Harvest(config, collection, "wirescrapy/0.1")
        owned = []
        for path in paths:
            batch, _ = harvest.open_batch(path)
            owned.append({site for site in shared + own if harvest.owns_site(site + "/page.html")})
            assert owned[-1] == {site.origin for site in batch.sites.values()}
        assert owned[0].isdisjoint(owned[1]) and owned[0] | owned[1] == set(shared + own)
        assert set(shared) <= owned[0] or set(shared) <= owned[1]


def test_the_batchs_harvest_figures_count_what_servers_asked_for():
    from pathlib import Path

    from wirescrapy.harvester.session import batch_figures
    from wirescrapy.manager.batch import Batch

    before = {"harvester/holds/groups": 1, "harvester/holds/requeued": 2}
    after = {"harvester/holds/groups": 3, "harvester/holds/requeued": 7, "harvester/backoff/strikes": 4}
    figures = batch_figures(Batch(Path("b"), 1, 0, 1, {}), before, after)
    assert (figures["holds"], figures["held_pages"], figures["backoffs"]) == (2, 5, 4)
