"""Near-duplicates in the collection (``collection/nearduplicates.py``): the side file of fingerprints, the
banded index, clusters; and the gatherer step that fills them (``gatherer/pipelines/nearduplicates.py``)."""

from __future__ import annotations

import queue
import random
import time

import numpy as np
import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from tests.components import T0, Bench
from wirescrapy.collection.nearduplicates import (
    BANDS,
    EXACT_DISTANCE,
    FILE_NAME,
    FINGERPRINTED,
    MAX_DISTANCE,
    NO_EARLIER,
    NO_FINGERPRINT,
    NearDuplicateFile,
    NearDuplicateFileError,
    NearDuplicateIndex,
    assign,
    load_index,
    lookup,
)
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.gatherer.parser import Parser
from wirescrapy.gatherer.pipelines.nearduplicates import NearDuplicatePipeline
from wirescrapy.gatherer.simhash import WARMUP_PAGES, shingles
from wirescrapy.gatherer.workers import ParseWorkers, parse_page

MASK = (1 << 64) - 1


def flip(value: int, *bits: int) -> int:
    for bit in bits:
        value ^= 1 << bit
    return value


def random_fingerprints(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False)


# -- the index ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("merged", [False, True])
@pytest.mark.parametrize("distance", [0, 2, EXACT_DISTANCE, 5, MAX_DISTANCE])
@pytest.mark.parametrize("bands", [BANDS, 3, 8])
def test_the_index_finds_every_fingerprint_within_its_distance_whatever_bands_they_touch(
    merged, distance, bands
):
    rng = random.Random(distance)
    base = rng.getrandbits(64)
    index = NearDuplicateIndex(distance, bands=bands)
    index.build(random_fingerprints(5000, 2), np.arange(1, 5001))
    near, far = {}, {}
    for doc_id in range(6000, 6400):
        bits = rng.sample(range(64), rng.randint(0, distance))
        near[doc_id] = flip(base, *bits)
        index.add(near[doc_id], doc_id)
    for doc_id in range(7000, 7050):
        far[doc_id] = flip(base, *rng.sample(range(64), rng.randint(distance + 1, 12)))
        index.add(far[doc_id], doc_id)
    if merged:
        index.merge()
    found = {doc_id: distance for distance, doc_id in index.query(base)}
    assert {doc_id: (near[doc_id] ^ base).bit_count() for doc_id in near} == found


def test_merging_what_was_added_one_at_a_time_gives_the_index_a_build_gives():
    stored, added = random_fingerprints(3000, 3), random_fingerprints(2000, 4)
    merged = NearDuplicateIndex(merge_at=700)  # merges twice on the way, then once more
    merged.build(stored, np.arange(1, 3001))
    for doc_id, value in enumerate(added.tolist(), 3001):
        merged.add(value, doc_id)
    merged.merge()
    built = NearDuplicateIndex()
    built.build(np.concatenate((stored, added)), np.arange(1, 5001))
    assert len(merged) == len(built) == 5000
    for value in [*stored[:200].tolist(), *added[:200].tolist()]:
        assert merged.query(value) == built.query(value)
        assert merged.query(value ^ 0b1011_0000_0001) == built.query(value ^ 0b1011_0000_0001)


def test_a_smaller_distance_leaves_out_what_is_further():
    index = NearDuplicateIndex(distance=1)
    index.add(flip(0, 1), 1)
    index.add(flip(0, 1, 2), 2)
    assert index.query(0) == [(1, 1)]
    with pytest.raises(ValueError, match="distance"):
        NearDuplicateIndex(distance=MAX_DISTANCE + 1)
    with pytest.raises(ValueError, match="bands"):
        NearDuplicateIndex(bands=2)


def test_the_lookup_kernel_refuses_arrays_that_disagree():
    index = NearDuplicateIndex()
    index.build(random_fingerprints(100, 5), np.arange(1, 101))
    arrays = [index._hashes, index._ids, index._start_flat, index._probe_offset, index._probe_mask]
    probes = [index._probe_shift, index._probe_flip, index._probe_row]
    with pytest.raises(ValueError, match="lengths"):
        lookup(*arrays[:-1], index._probe_mask[:-1], *probes, 0, 3)
    with pytest.raises(ValueError, match="bucket table"):
        lookup(*arrays, *probes[:2], index._probe_row + len(index._start_flat), 0, 3)
    with pytest.raises(ValueError, match="past the fingerprints"):
        lookup(index._hashes[:10], index._ids[:10], *arrays[2:], *probes, 0, 3)


def test_results_come_nearest_first():
    index = NearDuplicateIndex()
    for doc_id, bits in ((5, (1, 2)), (3, (7,)), (9, ()), (4, (9,))):
        index.add(flip(123, *bits), doc_id)
    assert index.query(123) == [(0, 9), (1, 3), (1, 4), (2, 5)]


# -- the side file -----------------------------------------------------------------------------------------


def test_the_file_grows_by_doc_id_and_reads_back_after_reopening(tmp_path):
    file = NearDuplicateFile(tmp_path)
    assert file.capacity == 0  # a new file is its header: room for records is taken as they come
    assert file.get(1) is None and file.get(10**6) is None
    file.put(50_000, 0xFFFF_0000_FFFF_0000, 7, NO_EARLIER)
    file.put(3, None, 0, NO_EARLIER)
    file.close()
    file = NearDuplicateFile(tmp_path, readonly=True)
    record = file.get(50_000)
    assert (int(record["simhash"]), record["cluster"], record["state"]) == (0xFFFF_0000_FFFF_0000, 7, 1)
    assert file.get(3)["state"] == NO_FINGERPRINT
    with pytest.raises(ValueError, match="read-only|not writeable|assignment"):
        file.put(4, 1, 4, 0)
    file.close()


def test_a_collection_without_the_file_has_nothing_fingerprinted(tmp_path):
    file = NearDuplicateFile(tmp_path, readonly=True)
    assert file.get(1) is None and len(load_index(file)) == 0
    assert not (tmp_path / FILE_NAME).exists()


def test_a_file_of_another_kind_is_refused_in_one_line(tmp_path):
    (tmp_path / FILE_NAME).write_bytes(b"WIRERECS" + bytes(100))
    with pytest.raises(NearDuplicateFileError, match="not a near-duplicate file"):
        NearDuplicateFile(tmp_path)


def test_a_kill_leaves_what_was_written(tmp_path):
    import multiprocessing
    import os
    import signal

    def write_and_die():
        file = NearDuplicateFile(tmp_path)
        for doc_id in range(1, 20_000):
            file.put(doc_id, doc_id * 3, doc_id, NO_EARLIER)
        os.kill(os.getpid(), signal.SIGKILL)

    process = multiprocessing.get_context("fork").Process(target=write_and_die)
    process.start()
    process.join()
    assert process.exitcode == -signal.SIGKILL
    file = NearDuplicateFile(tmp_path, readonly=True)
    assert [int(file.get(doc_id)["simhash"]) for doc_id in (1, 9_999, 19_999)] == [3, 29_997, 59_997]
    file.close()


# -- clusters ----------------------------------------------------------------------------------------------


def test_the_first_page_is_the_representative_and_a_copy_joins_its_cluster(tmp_path):
    file = NearDuplicateFile(tmp_path)
    index = load_index(file)
    assert assign(index, file, 4, 0xABCDEF) == (4, NO_EARLIER)
    assert assign(index, file, 2, flip(0xABCDEF, 3, 40)) == (4, NO_EARLIER)
    assert assign(index, file, 9, flip(0xABCDEF, 3, 40, 41)) == (4, NO_EARLIER)
    assert assign(index, file, 5, flip(0xABCDEF, *range(1, 10)))[0] == 5
    assert assign(index, file, 6, None) == (0, NO_EARLIER) and file.get(6)["state"] == NO_FINGERPRINT
    # reopened: the index is built from the file
    assert assign(load_index(file), file, 11, 0xABCDEF)[0] == 4


def test_a_page_that_changed_within_its_cluster_stays_and_one_that_left_it_moves(tmp_path):
    file = NearDuplicateFile(tmp_path)
    index = load_index(file)
    assign(index, file, 1, 0)
    assign(index, file, 2, flip(0, 5))
    assert assign(index, file, 2, flip(0, 5, 6)) == (1, 1)  # a token changed: still the copy of 1
    far = flip(0, *range(10, 30))
    assert assign(index, file, 2, far) == (2, 22)  # rewritten: its own cluster
    assert index.query(flip(0, 5, 6)) == [(0, 2), (2, 1)]  # the old entry stays in the index ...
    assert assign(index, file, 3, flip(0, 5, 6)) == (1, NO_EARLIER)  # ... and is skipped: 2 moved away
    assign(index, file, 4, flip(0, *range(40, 50)))
    assert assign(index, file, 1, flip(0, *range(40, 46))) == (1, 6)  # nearer 4 now, but still its own


# -- the gatherer step -------------------------------------------------------------------------------------

SITE = "http://site1.wire.test"
MIRROR = "http://site2.wire.test"


def article(seed: int, words: int = 1500) -> str:
    rng = random.Random(seed)
    return " ".join(
        "".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(3, 9))) for _ in range(words)
    )


def page(body: str, menu: str) -> bytes:
    return f"<html><body><nav>{menu}</nav><p>{body}</p><footer>{menu}</footer></body></html>".encode()


def test_a_harvest_clusters_copies_and_leaves_a_shared_template_alone(tmp_path):
    menu = article(99, 800)
    with Bench(tmp_path) as bench:
        urls = [f"{SITE}/{n}.html" for n in range(WARMUP_PAGES + 2)]
        bench.seed(*urls, MIRROR + "/copy.html", MIRROR + "/empty.html")
        for n, url in enumerate(urls):
            bench.gather(bench.page(url, 200, page(article(n), menu)))
        text = article(3).split()
        text[700] = "mirrored-at-site2"
        bench.gather(bench.page(MIRROR + "/copy.html", 200, page(" ".join(text), "another menu " * 50)))
        markup = b"<html><body>" + b"<div class='x'><span></span></div>" * 12_000 + b"</body></html>"
        assert len(markup) > 400_000
        bench.gather(bench.page(MIRROR + "/empty.html", 200, markup))
        for step in bench.pipelines:
            if type(step).__name__ == "NearDuplicatePipeline":
                step.close_spider(bench.spider)
        file = NearDuplicateFile(bench.collection.dir, readonly=True)
        records = {url: file.get(bench.collection.lookup(url)) for url in urls}
        assert all(record["state"] == FINGERPRINTED for record in records.values())
        clusters = {int(record["cluster"]) for record in records.values()}
        assert len(clusters) == len(urls)  # one template, pages of their own text: no cluster
        copy = file.get(bench.collection.lookup(MIRROR + "/copy.html"))
        assert copy["state"] == FINGERPRINTED and copy["cluster"] == bench.collection.lookup(urls[3])
        assert file.get(bench.collection.lookup(MIRROR + "/empty.html"))["state"] == NO_FINGERPRINT
        assert bench.record(MIRROR + "/empty.html")["error"] == 0  # recorded as any page
        assert bench.stats["gatherer/near_duplicates/clustered"] == 1
        file.close()


def test_a_revisit_that_changed_only_a_date_is_no_change_for_freshness(tmp_path):
    with Bench(tmp_path) as bench:
        urls = [f"{SITE}/{n}.html" for n in range(WARMUP_PAGES + 1)]
        bench.seed(*urls)
        for n, url in enumerate(urls):
            bench.gather(bench.page(url, 200, page(f"{article(n)} updated 2026-11-27", "menu")))
        bench.gather(bench.page(urls[0], 200, page(f"{article(0)} updated 2026-11-28", "menu"), at=T0 + 3600))
        record = bench.record(urls[0])
        assert record["visits"] == 2 and record["visits_changed"] == 0
        assert bench.stats["gatherer/near_duplicates/changed_within_cluster"] == 1
        bench.gather(bench.page(urls[0], 200, page(article(50), "menu"), at=T0 + 7200))
        assert bench.record(urls[0])["visits_changed"] == 1  # rewritten: a change
        file = NearDuplicateFile(bench.collection.dir, readonly=True)
        assert file.get(bench.collection.lookup(urls[0]))["moved"] > MAX_DISTANCE
        file.close()


def near_duplicate_step(bench: Bench):
    return next(step for step in bench.pipelines if type(step).__name__ == "NearDuplicatePipeline")


def test_the_step_is_off_with_its_setting_and_takes_its_threshold(tmp_path):
    """Off, Scrapy leaves it out of the pipelines (``NotConfigured``)."""
    with pytest.raises(NotConfigured, match="WIRE_NEAR_DUPLICATES"):
        NearDuplicatePipeline.from_crawler(get_crawler(settings_dict={"WIRE_NEAR_DUPLICATES": False}))
    with Bench(tmp_path, WIRE_NEAR_DUPLICATE_DISTANCE=2) as bench:
        assert near_duplicate_step(bench).distance == 2 and near_duplicate_step(bench).index.distance == 2


def test_the_step_uses_the_shingles_a_parse_worker_computed(tmp_path):
    with Bench(tmp_path) as bench:
        urls = [f"{SITE}/{n}.html" for n in range(WARMUP_PAGES + 1)]
        bench.seed(*urls)
        fetches = [bench.page(url, 200, page(article(n), "menu")) for n, url in enumerate(urls)]
        for fetch in fetches[:-1]:
            bench.gather(fetch)
        last = fetches[-1]
        steps = {type(step).__name__: step for step in bench.pipelines}
        for name in ("WarcPipeline", "DocumentPipeline", "ParsePipeline", "PageStorePipeline"):
            last = steps[name].process_item(last, bench.spider)
        assert last.page.shingles is None  # parsed in this thread: the step computes them
        last.page.shingles = shingles(article(0))  # as if a worker had: the text of the first page
        steps["NearDuplicatePipeline"].process_item(last, bench.spider)
        file = NearDuplicateFile(bench.collection.dir, readonly=True)
        assert file.get(last.doc_id)["cluster"] == bench.collection.lookup(urls[0])
        file.close()


def test_parse_workers_compute_the_shingles_when_the_step_is_on():
    body = page(article(1), "menu")
    parser = Parser.default()
    own, _, _ = parse_page(parser, body, SITE + "/a.html", "text/html", None, shingled=True)
    assert np.array_equal(own.shingles, shingles(own.text)) and len(own.shingles) > 1000
    for on in (True, False):
        config = WireConfig.from_settings(Settings({**default_settings(), "WIRE_NEAR_DUPLICATES": on}))
        calls: queue.Queue = queue.Queue()
        results = []
        workers = ParseWorkers(1, config, lambda function, *args, calls=calls: calls.put((function, args)))
        try:
            workers.start()
            workers.parse(body, SITE + "/a.html", "text/html", None, 0, results.append)
            deadline = time.monotonic() + 60
            while not results:
                function, args = calls.get(timeout=max(0.01, deadline - time.monotonic()))
                function(*args)
        finally:
            workers.close()
        parsed, _, _ = results[0]
        if on:
            assert np.array_equal(parsed.shingles, own.shingles)
        else:
            assert parsed.shingles is None
