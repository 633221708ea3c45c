"""The manager over a real collection: ``run_manager`` and the ``scrapy manager`` command."""

from __future__ import annotations

import importlib
import ipaddress
import pkgutil
import time

import numpy as np
import pytest
from scrapy.settings import Settings

import wirescrapy.manager
from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag, RobotsState
from wirescrapy.config import DAY, WireConfig, default_settings
from wirescrapy.manager import manage, read_batch
from wirescrapy.manager.sites import LEFT_GUARD
from wirescrapy.settingnames import REMOVED
from wirescrapy.testing.process import run_scrapy

NOW = 1_700_000_000.0
SITES = ("http://a.example", "http://b.example", "https://c.example:8443")
ROBOTS = b"User-agent: *\nDisallow: /private\n"


def run_manager(collection, config, now):
    """One manager run; the directories it wrote."""
    return manage(collection, config, now).paths


def config(directory, **settings):
    return WireConfig.from_settings(
        Settings({**default_settings(), "WIRE_COLLECTION_DIR": str(directory), **settings})
    )


@pytest.fixture
def collection_dir(tmp_path):
    """Three sites of eight pages; every page links to a.example's home page and to the next page of its
    site. a.example's first pages were visited ten days ago, one of them an hour ago; one page is a
    duplicate; a.example has an IP, a robots.txt (a document of its own) and a Crawl-delay."""
    directory = tmp_path / "collection"
    with Collection(directory) as collection:
        pages = {}
        for site in SITES:
            pages[site] = [collection.add_url(site + "/", 0, DocFlag.FRONT_PAGE)[0]]
            pages[site] += [collection.add_url(f"{site}/page{i}.html", 1 + i // 4)[0] for i in range(7)]
        home = pages[SITES[0]][0]
        for site, ids in pages.items():
            for k, doc_id in enumerate(ids):
                collection.links.set_links(doc_id, np.array([home, ids[(k + 1) % len(ids)]], dtype=np.uint32))
        docs = collection.documents.records
        for doc_id in pages[SITES[0]][:4]:
            docs[doc_id]["visits"], docs[doc_id]["visits_changed"] = 4, 1
            docs[doc_id]["first_visit"], docs[doc_id]["last_visit"] = NOW - 40 * DAY, NOW - 10 * DAY
            docs[doc_id]["status"] = 200
        docs[pages[SITES[0]][3]]["last_visit"] = time.time() - 3600  # too recent, for the command's clock too
        docs[pages[SITES[1]][7]]["flags"] |= DocFlag.DUPLICATE
        robots = collection.add_url(SITES[0] + "/robots.txt", 0)[0]
        collection.store_page(robots, ROBOTS)
        site = collection.sites.records[1]
        site["robots_docid"], site["robots_state"], site["robots_fetched"] = (
            robots,
            RobotsState.VALID,
            NOW - DAY,
        )
        site["crawl_delay"] = 2.0
        site["ip"] = ipaddress.IPv6Address("::ffff:192.0.2.7").packed
    return directory


def scrapy_manager(directory, *args):
    return run_scrapy("manager", "-s", f"WIRE_COLLECTION_DIR={directory}", *args)


def test_command_writes_batches(collection_dir):
    run = scrapy_manager(
        collection_dir,
        "-s",
        "WIRE_BATCH_SIZE=10",
        "-s",
        "WIRE_BATCH_SAMESITE=2",
        "--batches",
        "2",
        "-s",
        "WIRE_BATCH_SITE_GROWTH=0",
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert (
        "25 documents, 22 eligible now (4 downloaded before)" in out
    )  # less robots.txt, duplicate, too recent
    # The three sites wait 15 s (a.example's Crawl-delay is shorter), so in the time of a batch of 10 each
    # fetches 3 pages (timeshare.py); WIRE_BATCH_SAMESITE=2 holds each to 2.
    assert "batch 000001: 6 URLs" in out and "batch 000002: 6 URLs" in out
    assert "top URLs by profit:" in out and f"written: {collection_dir / 'batches' / '000001'}" in out

    first, second = (read_batch(collection_dir / "batches" / name) for name in ("000001", "000002"))
    assert (len(first.urls), len(second.urls)) == (6, 6)
    assert not {u.doc_id for u in first.urls} & {u.doc_id for u in second.urls}
    with Collection(collection_dir, readonly=True) as collection:
        known = {
            int(r["siteid"]): int(r["docs"]) for r in collection.sites.records[1 : collection.sites.count + 1]
        }
    assert {site_id: (site.urls, known[site_id]) for site_id, site in first.sites.items()} == {
        1: (2, 9),
        2: (2, 8),
        3: (2, 8),
    }
    for batch in (first, second):
        assert all(site.urls <= 2 for site in batch.sites.values())
        assert [u.profit for u in batch.urls] == sorted((u.profit for u in batch.urls), reverse=True)
    urls = {u.url for b in (first, second) for u in b.urls}
    assert SITES[0] + "/robots.txt" not in urls
    assert SITES[1] + "/page6.html" not in urls  # the duplicate
    assert SITES[0] + "/page2.html" not in urls  # visited an hour ago
    assert first.urls[0].url == SITES[0] + "/"  # most linked-to, a front page
    site = first.sites[1]
    assert (site.origin, site.ip, site.robots_txt, site.crawl_delay) == (SITES[0], "192.0.2.7", ROBOTS, 2.0)
    # Each site's pages left for later batches, batch by batch: at least its eligible pages not in the batch
    # (7, 7 and 8 eligible), more where the manager expects to find more (sites.pages_left). The eight pages
    # of b.example and of c.example each link one other page of their site, once: the estimate stops at the
    # guard.
    eligible = {1: 7, 2: 7, 3: 8}
    assert all(first.sites[s].left >= eligible[s] - first.sites[s].urls for s in eligible)
    assert [first.sites[s].left for s in (2, 3)] == [LEFT_GUARD * 8 - 2] * 2
    assert all(second.sites[s].left == first.sites[s].left - second.sites[s].urls for s in second.sites)

    with Collection(collection_dir, readonly=True) as collection:
        docs = collection.documents.records[1 : collection.documents.count + 1]
        assert docs["pagerank"].sum() == pytest.approx(1, abs=1e-5)
        assert sorted(np.flatnonzero(docs["batch"] == 1) + 1) == sorted(u.doc_id for u in first.urls)
        assert (docs["profit"] >= 0).all() and docs["quality"].max() > 0
        sites = collection.sites.records[1 : collection.sites.count + 1]
        assert sites["pagerank_sum"].sum() == pytest.approx(1, abs=1e-5)


def test_command_dry_run_writes_nothing(collection_dir):
    before = (collection_dir / "documents.rec").read_bytes()
    run = scrapy_manager(collection_dir, "--dry-run", "--parts", "2", "-s", "WIRE_BATCH_SITE_GROWTH=0")
    assert run.returncode == 0, run.stderr
    assert "dry run: nothing written" in run.stdout and "batch 000001: 22 URLs" in run.stdout
    assert not (collection_dir / "batches").exists()
    assert (collection_dir / "documents.rec").read_bytes() == before


def test_command_usage_errors(tmp_path):
    run = scrapy_manager(tmp_path / "missing", "--dry-run")
    assert run.returncode != 0 and "no collection" in run.stderr


def test_command_names_a_removed_batch_setting_in_one_line(collection_dir):
    run = scrapy_manager(collection_dir, "-s", "WIRE_BATCH_SITE_SPLIT=even")
    assert run.returncode == 2, run.stderr[-3000:]
    instead = REMOVED["WIRE_BATCH_SITE_SPLIT"]
    message = f"invalid setting: WIRE_BATCH_SITE_SPLIT: removed, {instead} (docs/planner.md)"
    (line,) = run.stderr.rstrip().splitlines()  # one line, no traceback
    assert line.endswith(f": error: {message}")
    assert not (collection_dir / "batches").exists()


def test_parts_and_all_scores(collection_dir):
    weights = dict.fromkeys(
        (
            "pagerank",
            "wlrank",
            "hub",
            "authority",
            "siterank",
            "opic",
            "static",
            "depth",
            "queuesize",
            "random",
            "crosslinks",
            "mirrors",
        ),
        1,
    )
    cfg = config(
        collection_dir, WIRE_SCORE_WEIGHTS=weights, WIRE_SCORE_AGE_EXPONENT=0.5, WIRE_BATCH_SITE_GROWTH=0
    )
    with Collection(collection_dir) as collection:
        report = manage(collection, cfg, NOW, parts=3, rng=np.random.default_rng(1))
        docs = collection.documents.records[1 : collection.documents.count + 1]
        for name in ("pagerank", "wlrank", "hub", "authority"):
            assert docs[name].sum() == pytest.approx(1, abs=1e-5), name
        assert collection.sites.records["siterank"][1:4].sum() == pytest.approx(1, abs=1e-5)
    assert set(report.plan.iterations) == {"pagerank", "hits", "siterank", "wlrank", "opic"}
    assert "crosslinks" in report.plan.timings  # the sections read from the URL store
    assert "mirrors" in report.plan.timings  # the mirror groups too
    assert report.paths == [collection_dir / "batches" / "000001" / f"part-{k}" for k in range(3)]
    parts = [read_batch(path) for path in report.paths]
    owners = {}
    for part in parts:
        for site_id in part.sites:
            assert owners.setdefault(site_id, part.part) == part.part
    assert sum(len(part.urls) for part in parts) == report.eligible == 22


def test_run_manager_numbers_batches_and_respects_revisit_periods(collection_dir):
    cfg = config(collection_dir, WIRE_BATCH_SIZE=5)
    with Collection(collection_dir) as collection:
        first = run_manager(collection, cfg, NOW)
        second = run_manager(collection, cfg, NOW)
        assert [p.name for p in first + second] == ["000001", "000002"]
        # Nothing was harvested in between, so the same pages are still the best.
        assert [u.doc_id for u in read_batch(first[0]).urls] == [u.doc_id for u in read_batch(second[0]).urls]
        # Once every page has just been fetched, none is due.
        docs = collection.documents.records[1 : collection.documents.count + 1]
        docs["visits"], docs["status"], docs["last_visit"] = 1, 200, NOW - DAY
        assert run_manager(collection, cfg, NOW) == []
        assert run_manager(collection, cfg, NOW + 8 * DAY)[0].name == "000003"


def test_every_manager_module_is_reachable_as_a_module():
    # A name that ``wirescrapy.manager`` hands on must not hide a module: ``import wirescrapy.manager.profit``
    # once gave the function ``profit``.
    names = [module.name for module in pkgutil.iter_modules(wirescrapy.manager.__path__)]
    assert {
        "batch",
        "freshness",
        "planner",
        "planning",
        "profit",
        "ranking",
        "run",
        "shares",
        "sites",
    } <= set(names)
    for name in names:
        module = importlib.import_module(f"wirescrapy.manager.{name}")  # one the package does not import too
        assert getattr(wirescrapy.manager, name) is module, name


def test_command_discards_a_damaged_batch(collection_dir):
    (collection_dir / "batches" / "000003").mkdir(parents=True)
    run = scrapy_manager(collection_dir, "--discard-batch", "3")
    assert run.returncode == 0, run.stderr
    assert f"batch 000003 set aside as {collection_dir / 'batches' / '000003.discarded'}" in run.stdout
    assert not (collection_dir / "batches" / "000003").exists()
