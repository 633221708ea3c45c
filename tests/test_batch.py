"""The batch directory: format, parts, atomic writing, checked reading."""

from __future__ import annotations

import json

import pytest
from xxhash import xxh3_64_hexdigest

from wirescrapy.collection.metadata import RobotsState
from wirescrapy.manager import batch as batch_module
from wirescrapy.manager.batch import (
    BatchError,
    BatchSite,
    BatchURL,
    batch_numbers,
    discard_batch,
    next_batch_number,
    pages_out,
    read_batch,
    site_part,
    write_batch,
)

SITES = [
    BatchSite(
        1,
        "http://a.example",
        "192.0.2.1",
        RobotsState.VALID,
        1000.0,
        False,
        b"User-agent: *\nDisallow: /private\n",
        2.5,
        120,
    ),
    BatchSite(2, "https://b.example:8443", "", RobotsState.UNKNOWN, 0.0, True, None, 0.0, 3),
    BatchSite(
        3,
        "http://c.example",
        "2001:db8::1",
        RobotsState.MISSING,
        500.0,
        False,
        None,
        0.0,
        7,
        left=40,
        critical=True,
    ),
]
URLS = [
    BatchURL(10, 2, 0, False, 0.9, 0.0, "https://b.example:8443/"),
    BatchURL(11, 1, 2, True, 0.5, 1234.0, "http://a.example/search?q=x\ty"),
    BatchURL(12, 3, 1, False, 0.25, 0.0, "http://c.example/é"),
    BatchURL(13, 1, 1, False, 0.125, 0.0, "http://a.example/b"),
]


def test_round_trip(tmp_path):
    paths = write_batch(tmp_path, 7, URLS, SITES, info={"size": 100})
    assert paths == [tmp_path / "000007"]
    batch = read_batch(paths[0])
    assert (batch.number, batch.part, batch.parts) == (7, 0, 1)
    assert [u.doc_id for u in batch.urls] == [10, 11, 12, 13]
    assert batch.urls[1].url == "http://a.example/search?q=x%09y"  # one URL a line
    assert batch.urls[2] == URLS[2]
    assert batch.urls[1].dynamic and batch.urls[1].last_visit == 1234.0
    assert batch.sites[1].robots_txt == SITES[0].robots_txt
    assert batch.sites[1].urls == 2 and batch.sites[1].docs == 120 and batch.sites[1].crawl_delay == 2.5
    assert batch.sites[2].robots_txt is None and batch.sites[2].robots_due
    assert batch.sites[3].ip == "2001:db8::1" and batch.sites[3].robots_state is RobotsState.MISSING
    assert (batch.sites[1].left, batch.sites[3].left) == (0, 40)
    assert [site.critical for site in batch.sites.values()] == [False, False, True]
    assert ['"critical": true' in line for line in (paths[0] / "sites.jsonl").read_text().splitlines()] == [
        False,
        False,
        True,
    ]  # said only of the sites a led batch plans to end together
    info = json.loads((paths[0] / "batch.json").read_text())
    assert info["format"] == "wirescrapy-batch" and info["version"] == 2
    assert (info["urls"], info["sites"], info["new_pages"], info["revisits"], info["size"]) == (
        4,
        3,
        3,
        1,
        100,
    )
    lines = (paths[0] / "urls.tsv").read_text().splitlines()
    assert (
        lines[0] == "#docid\tsiteid\tdepth\tdynamic\tprofit\tlast_visit\tredirects\tetag\tlast_modified\turl"
    )
    assert lines[2].split("\t")[:6] == ["11", "1", "2", "1", "0.5", "1234"]


def test_a_batch_written_before_left_was_recorded_reads_it_as_not_known(tmp_path):
    """``left`` came after version 2 (no version of its own): such a batch's sites.jsonl lacks it, and its
    batch.json has that file's checksum. Unknown is not 0, "nothing left for later batches"."""
    (path,) = write_batch(tmp_path, 7, URLS, SITES, info={"size": 100})
    lines = [json.loads(line) for line in (path / "sites.jsonl").read_text().splitlines()]
    old = "".join(
        json.dumps({k: v for k, v in line.items() if k != "left"}, ensure_ascii=False) + "\n"
        for line in lines
    ).encode()
    (path / "sites.jsonl").write_bytes(old)
    info = json.loads((path / "batch.json").read_text())
    info["files"]["sites.jsonl"] = {"bytes": len(old), "xxh3_64": xxh3_64_hexdigest(old)}
    (path / "batch.json").write_text(json.dumps(info))
    batch = read_batch(path)
    assert [site.left for site in batch.sites.values()] == [None, None, None]
    assert batch.sites[1].urls == 2 and batch.sites[3].docs == 7  # the rest as written
    write_batch(tmp_path / "again", 7, batch.urls, list(batch.sites.values()))  # and written on as not known
    assert [site.left for site in read_batch(tmp_path / "again" / "000007").sites.values()] == [None] * 3


def test_parts_hold_each_site_once(tmp_path):
    many_sites = [BatchSite(i, f"http://site{i}.example") for i in range(1, 41)]
    urls = [
        BatchURL(100 + i, 1 + i % 40, 0, False, 1.0 / (i + 1), 0.0, f"http://site{1 + i % 40}.example/{i}")
        for i in range(200)
    ]
    paths = write_batch(tmp_path, 1, urls, many_sites, parts=3)
    assert paths == [tmp_path / "000001" / f"part-{k}" for k in range(3)]
    parts = [read_batch(p) for p in paths]
    assert [p.part for p in parts] == [0, 1, 2] and {p.parts for p in parts} == {3}
    seen = {}
    for part in parts:
        assert {u.site_id for u in part.urls} == set(part.sites)
        for site_id, site in part.sites.items():
            assert site_id not in seen
            seen[site_id] = part.part
            assert site_part(site.origin, 3) == part.part
    assert sorted(u.doc_id for p in parts for u in p.urls) == [u.doc_id for u in urls]
    # Within a part the order of the batch (decreasing profit) is kept.
    for part in parts:
        assert [u.profit for u in part.urls] == sorted((u.profit for u in part.urls), reverse=True)
    with pytest.raises(BatchError, match="split into 3 parts"):
        read_batch(tmp_path / "000001")


def test_the_pages_of_parts_out_are_held_back_until_they_are_in_or_too_old(tmp_path):
    many_sites = [BatchSite(i, f"http://site{i}.example") for i in range(1, 11)]
    urls = [
        BatchURL(100 + i, 1 + i % 10, 0, False, 1.0, 0.0, f"http://site{1 + i % 10}.example/{i}")
        for i in range(30)
    ]
    write_batch(tmp_path, 1, urls[:10], many_sites, created=1000.0)  # one part: resumed, never out
    paths = write_batch(tmp_path, 2, urls[10:], many_sites, parts=2, created=2000.0)
    assert sorted(pages_out(tmp_path, now=2100.0, timeout=3600)) == [u.doc_id for u in urls[10:]]
    (paths[0] / "harvest.json").write_text("{}")  # part 0 harvested here, or ingested
    assert sorted(pages_out(tmp_path, now=2100.0, timeout=3600)) == [
        u.doc_id for u in read_batch(paths[1]).urls
    ]
    assert pages_out(tmp_path, now=2000.0 + 3600, timeout=3600) == []  # out too long: selected again


def test_site_part_is_stable():
    assert site_part("http://www.example.cl", 7) == site_part("http://www.example.cl", 7)
    assert {site_part(f"http://s{i}.cl", 4) for i in range(100)} == {0, 1, 2, 3}
    assert site_part("http://anything", 1) == 0


def test_numbers_and_existing_batch(tmp_path):
    assert next_batch_number(tmp_path / "none") == 1
    write_batch(tmp_path, 3, URLS[:1], SITES)
    assert batch_numbers(tmp_path) == [3]
    assert next_batch_number(tmp_path) == 4
    assert next_batch_number(tmp_path, at_least=9) == 9
    with pytest.raises(BatchError, match="already exists"):
        write_batch(tmp_path, 3, URLS[:1], SITES)


def test_a_kill_before_the_rename_leaves_no_batch(tmp_path, monkeypatch):
    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(batch_module.os, "rename", killed)
    with pytest.raises(KeyboardInterrupt):
        write_batch(tmp_path, 1, URLS, SITES)
    assert batch_numbers(tmp_path) == []
    assert (tmp_path / ".000001.tmp" / "urls.tsv").exists()
    monkeypatch.undo()
    write_batch(tmp_path, 1, URLS, SITES)
    assert [p.name for p in tmp_path.iterdir()] == ["000001"]
    assert len(read_batch(tmp_path / "000001").urls) == 4


def test_damaged_batches_are_refused(tmp_path):
    (path,) = write_batch(tmp_path, 1, URLS, SITES)
    urls = path / "urls.tsv"
    urls.write_bytes(urls.read_bytes()[:-5])
    with pytest.raises(BatchError, match="checksum"):
        read_batch(path)
    info = json.loads((path / "batch.json").read_text())
    info["version"] = 99
    (path / "batch.json").write_text(json.dumps(info))
    with pytest.raises(BatchError, match="version 99"):
        read_batch(path)
    with pytest.raises(BatchError, match="not a batch"):
        read_batch(tmp_path)


def test_urls_need_their_sites(tmp_path):
    with pytest.raises(ValueError, match="without a BatchSite"):
        write_batch(tmp_path, 1, URLS, SITES[:1])


def test_a_discarded_batch_is_set_aside_not_deleted(tmp_path):
    write_batch(tmp_path, 1, URLS, SITES)
    write_batch(tmp_path, 2, URLS, SITES)
    assert discard_batch(tmp_path, 2) == tmp_path / "000002.discarded"
    assert batch_numbers(tmp_path) == [1] and (tmp_path / "000002.discarded" / "batch.json").exists()
    write_batch(tmp_path, 2, URLS, SITES)  # a number given again (its records did not name it)
    assert discard_batch(tmp_path, 2) == tmp_path / "000002.discarded-2"
    with pytest.raises(BatchError, match="000003: no such batch"):
        discard_batch(tmp_path, 3)
