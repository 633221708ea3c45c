"""One harvester run over a collection: the open collection, the batch, and the harvest's robots.txt.

The spider, its downloader middlewares and the gatherer's pipelines share one ``Harvest``: the spider holds
it and announces it to the others with the ``harvest_opened`` signal (``wirescrapy/signals.py``). It owns
the collection, opened for writing (the flock in ``collection/lock.py`` keeps a second harvester, or a
manager run, out), and knows:

* **the cycle**: seed a file (``seed``), find a batch to resume (``unfinished_batch``) or ask the
  manager for the next one (``plan_next``), open it (``open_batch``) and mark it done (``finish_batch``);
* **what is done**: a page of batch B was fetched in B when its record has ``batch == B`` and a
  ``last_visit`` not before the batch was written. The pipelines write each record as its fetch ends, so
  after a ``kill -9`` the restarted harvester skips exactly the pages already recorded (see
  ``WireScheduler.enqueue_batch``);
* **robots.txt**: through its owner, ``harvest.robots`` (:class:`~wirescrapy.harvester.robots.RobotsTxt`):
  every site's policy, what is due, and what a robots.txt fetch writes;
* **where its fetches are archived** as WARC (``warc_dir``: ``-a warc=OUTDIR`` or ``WIRE_WARC_DIR``; ``""``
  when it does not archive).

A write to the collection that fails for want of room (or a failing disk) stops the harvest: ``stopped``
says why, and from then on nothing more is written, so that the collection stays as the failed write left
it, consistent (``collection/writes.py``), for a harvest started again once there is room to resume.

Each finished batch gets ``harvest.json`` beside its files: when it was harvested and what it gave.
A batch directory without it is unfinished, and is what a harvester started without arguments resumes.

**Detached** (:meth:`Harvest.without_collection`, ``scrapy crawl harvester -a batch=DIR -a warc=OUTDIR``): a
batch part fetched on a machine with no collection, every fetch into WARC files (``wirescrapy.warc``) for
``scrapy ingest`` to bring back. Everything the harvester asks comes from the batch then: the sites' page
counts and robots.txt (``sites.jsonl``), and what is fetched in it, kept in memory and seeded from the WARC
files of an earlier, killed run; ``harvest.json`` goes into the WARC directory.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wirescrapy.collection import Collection
from wirescrapy.collection.groups import group_key, ip_text
from wirescrapy.collection.writes import failure_message, is_write_failure
from wirescrapy.harvester.robots import RobotsTxt, origin_of
from wirescrapy.manager.batch import (
    HARVEST_FILE,
    BatchError,
    batch_numbers,
    check_owner,
    discard_hint,
    manager_settings,
    read_batch,
    site_part,
)
from wirescrapy.manager.profit import too_recent
from wirescrapy.seeder.rules import SeederRules
from wirescrapy.seeder.seedfile import seed
from wirescrapy.url import split

if TYPE_CHECKING:
    from collections.abc import Iterable

    from wirescrapy.config import WireConfig
    from wirescrapy.manager.batch import Batch, BatchSite
    from wirescrapy.seeder.seedfile import SeedReport

logger = logging.getLogger(__name__)

__all__ = ["HARVEST_FILE", "Harvest", "batch_figures"]


# Logged when a harvest or an ingest closes without its collection's checkpoints (``close_after_failure``).
CLOSED_WITHOUT_CHECKPOINTS = (
    "%(message)s: the collection closed without its checkpoints (the next open rebuilds them)"
)


class Harvest:
    def __init__(
        self,
        config: WireConfig,
        collection: Collection | None,
        user_agent: str,
        output: Path | None = None,
        warc_dir: str | os.PathLike = "",
    ):
        self.config = config
        self.collection = collection
        self.output = output  # detached: the WARC directory, where harvest.json goes
        self.warc_dir = warc_dir  # where every fetch is archived as WARC; "" when it is not
        self.rules = SeederRules(config)
        self.robots = RobotsTxt(config, user_agent, collection)
        self.batch: Batch | None = None
        self.started = 0.0
        self.sites_at_start = 0
        self.created = 0.0  # when the batch was written: a record visited since was fetched in it
        self.stopped = (
            ""  # why nothing more may be written (a full disk: ``collection/writes.py``), "" if not
        )
        self._batch_docs: dict[str, int] = {}  # detached: the batch's URLs and their doc-ids
        self._fetched: set[int] = set()  # detached: the batch's doc-ids fetched
        self._site_ips: dict[str, str] = {}  # the batch's sites -> the address it names ("" none)

    @classmethod
    def open(cls, config: WireConfig, user_agent: str, warc_dir: str | os.PathLike = "") -> Harvest:
        return cls(config, Collection.from_config(config), user_agent, warc_dir=warc_dir)

    @classmethod
    def without_collection(cls, config: WireConfig, user_agent: str, output: str | os.PathLike) -> Harvest:
        """A detached harvest: a batch fetched into the WARC directory ``output``, no collection."""
        Path(output).mkdir(parents=True, exist_ok=True)
        return cls(config, None, user_agent, Path(output), warc_dir=output)

    @property
    def detached(self) -> bool:
        return self.collection is None

    def close(self) -> None:
        if self.collection is not None:
            self.collection.close()

    def stop_writing(self, exc: OSError) -> str | None:
        """Stop the harvest after a write to the collection failed (``collection/writes.py``), once. Returns
        the one-line reason, or None when it was stopped already."""
        if self.stopped:
            return None
        self.stopped = failure_message(self.collection.dir, exc)
        return self.stopped

    def close_after_failure(self) -> str | None:
        """``close``; when writing the checkpoints fails for want of room, the one-line reason instead of an
        error: the next open replays the logs."""
        try:
            self.close()
        except OSError as exc:
            if not is_write_failure(exc):
                raise
            return failure_message(self.collection.dir, exc)
        return None

    # -- the cycle -----------------------------------------------------------------------------------

    def seed(self, lines: Iterable[str]) -> SeedReport:
        report = seed(self.collection, lines, rules=self.rules)
        self.collection.checkpoint()
        return report

    @property
    def batches_dir(self) -> Path:
        return self.collection.dir / "batches"

    def unfinished_batch(self) -> Path | None:
        """The last batch, if a harvest of it has not finished (``None`` if there is none, or it is split
        into parts: a part is given explicitly)."""
        numbers = batch_numbers(self.batches_dir)
        if not numbers:
            return None
        path = self.batches_dir / f"{numbers[-1]:06d}"
        if (path / HARVEST_FILE).exists() or not (path / "urls.tsv").exists():
            return None
        return path

    def plan_next(self, now: float | None = None) -> Path | None:
        """Run the manager for one batch; its directory, or None when no page is due."""
        from wirescrapy.manager.run import manage  # the link analysis loads only in a job that plans

        report = manage(self.collection, self.config, now, batches=1)
        if not report.paths:
            logger.info("manager: no page to fetch (%(docs)d documents)", {"docs": report.documents})
            return None
        return report.paths[0]

    def plan_snapshot(self, exclude: Iterable[int]):
        """What the manager needs for the next batch, read now (``WIRE_PLAN_AHEAD``): a function of no
        arguments, safe to run in another thread, that computes it (``manager.run.compute``), leaving
        out the doc-ids ``exclude`` (the batch's pages not done: ``not_done``); ``write_planned`` writes
        its result."""
        from wirescrapy.manager.run import compute

        return compute(
            self.collection,
            self.config,
            batches=1,
            snapshot=True,
            exclude=np.fromiter(exclude, dtype=np.int64, count=-1),
        )

    def planned_with_other_settings(self, path: Path) -> bool:
        """Whether the unfinished batch at ``path`` was planned ahead by an earlier harvester
        (``WIRE_PLAN_AHEAD``) with other manager settings than this one's, and nothing of it is fetched
        yet: then it is set aside and planned again (a job started with new settings gets a batch chosen
        by them)."""
        try:
            batch = read_batch(path)
        except BatchError:
            return False  # open_batch says what is wrong with it
        if not batch.info.get("planned_ahead") or batch.info.get("settings") == json.loads(
            json.dumps(manager_settings(self.config))
        ):
            return False
        docs, count = self.collection.documents.records, self.collection.documents.count
        return not any(
            0 < u.doc_id <= count
            and docs[u.doc_id]["batch"] == batch.number
            and docs[u.doc_id]["last_visit"] >= float(batch.info.get("created", 0))
            for u in batch.urls
        )

    def not_done(self) -> np.ndarray:
        """Doc-ids of the batch's pages not (yet) recorded as fetched in it: queued, in flight, or fetched and
        on their way through the pipelines (what a batch planned now must leave out)."""
        batch, collection = self.batch, self.collection
        if batch is None or collection is None:
            return np.zeros(0, dtype=np.int64)
        ids = np.fromiter((u.doc_id for u in batch.urls), dtype=np.int64, count=len(batch.urls))
        known = ids[(ids > 0) & (ids <= collection.documents.count)]
        rows = collection.documents.records[known]
        done = (rows["batch"] == batch.number) & (rows["last_visit"] >= self.created)
        return np.union1d(known[~done], ids[ids > collection.documents.count])

    def write_planned(self, computed) -> Path | None:
        """Write a batch computed ahead (``plan_snapshot``); its directory, or None when it has no page.
        The batch counts as created now: a page is done in it when visited from now on."""
        from wirescrapy.manager.run import write

        report = write(self.collection, self.config, computed, created=time.time(), ahead=True)
        if not report.paths:
            logger.info("manager: no page to fetch (%(docs)d documents)", {"docs": report.documents})
            return None
        return report.paths[0]

    def open_batch(
        self, path: str | os.PathLike, archived: Iterable[tuple[str, int]] = ()
    ) -> tuple[Batch, set[int]]:
        """Read a batch; returns it and the doc-ids already fetched in it (by an earlier, killed run;
        detached: those of ``archived``, the (URL, doc-id) of the fetches its WARC files hold)."""
        try:
            batch = read_batch(path)
        except BatchError as exc:
            number = self._batch_number(path)
            if number is None:
                raise
            # A damaged last batch would be resumed, and refused, by every later cycle: say how to get
            # past it.
            raise BatchError(f"{exc}; {discard_hint(number)}") from None
        if self.collection is None:
            return self._open_detached(batch, archived)
        check_owner(batch, self.collection.dir, self.collection.id)
        self.batch = batch
        self._site_ips = {site.origin: site.ip for site in batch.sites.values()}
        self.started = time.time()
        self.sites_at_start = self.collection.urls.site_count
        self.robots.new_batch()
        docs = self.collection.documents.records
        created = self.created = float(batch.info.get("created", 0))
        done = set()
        count = self.collection.documents.count
        for url in batch.urls:
            if 0 < url.doc_id <= count:
                record = docs[url.doc_id]
                if record["batch"] == batch.number and record["last_visit"] >= created:
                    done.add(url.doc_id)
        return batch, done

    def _open_detached(self, batch: Batch, archived: Iterable[tuple[str, int]]) -> tuple[Batch, set[int]]:
        self.batch, self.started, self.created = batch, time.time(), float(batch.info.get("created", 0))
        self._site_ips = {site.origin: site.ip for site in batch.sites.values()}
        self.robots.new_batch()
        self._batch_docs = {url.url: url.doc_id for url in batch.urls}
        self._fetched = set()
        for url, doc_id in archived:
            self.archived(url, doc_id)
        return batch, set(self._fetched)

    def archived(self, url: str, doc_id: int = 0) -> None:
        """Detached: a fetch of ``url`` (``doc_id``, if known) went into the WARC files."""
        doc_id = doc_id or self._batch_docs.get(url, 0)
        if doc_id:
            self._fetched.add(doc_id)

    def owns_site(self, url: str) -> bool:
        """Whether this harvest may access ``url``'s site: a batch split into parts gives each server group
        to one part (``site_part``), and another part's server may be being fetched at the same time on
        another machine. The group is the one the manager split by: from the address the batch names for
        the site, else the one its site record holds, else (by address) its host's."""
        batch = self.batch
        if batch is None or batch.parts <= 1:
            return True
        origin = origin_of(url)
        if not origin:
            return False
        group = group_key(self.config.politeness_group, origin, self._site_ip(origin))
        return site_part(origin, batch.parts, group) == batch.part

    def _site_ip(self, origin: str) -> str:
        """The address of site ``origin`` as the manager knew it when it wrote the batch: the batch's, when
        the site is one of this part's, else its site record's; ``""`` when neither names one."""
        if origin in self._site_ips:
            return self._site_ips[origin]
        record = self._site_record(origin)
        return ip_text(record["ip"]) if record is not None else ""

    def _batch_number(self, path: str | os.PathLike) -> int | None:
        """The number of the collection's batch at ``path`` (the batch itself or one of its parts)."""
        try:
            name = Path(path).resolve().relative_to(self.batches_dir.resolve()).parts[0]
        except (ValueError, IndexError):
            return None
        return int(name) if name.isdigit() else None

    def _stored_doc(self, url: str) -> int:
        """The doc-id of ``url`` when the collection holds its record, else 0."""
        try:
            doc_id = self.collection.lookup(url)
        except ValueError:
            return 0
        return doc_id if 0 < doc_id <= self.collection.documents.count else 0

    def fetched_in_batch(self, url: str = "", doc_id: int = 0) -> bool:
        """Whether the page (by URL or doc-id) was fetched in the batch being harvested."""
        batch = self.batch
        if batch is None:
            return False
        collection = self.collection
        if collection is None:
            return (doc_id or self._batch_docs.get(url, 0)) in self._fetched
        if not doc_id:
            doc_id = self._stored_doc(url)
        if not 0 < doc_id <= collection.documents.count:
            return False
        record = collection.documents.records[doc_id]
        return bool(record["batch"] == batch.number and record["last_visit"] >= self.created)

    def redirect_target_done(self, url: str) -> bool:
        """Whether a redirect's target ``url`` is not to be fetched now: fetched in this batch, or visited
        more recently than its minimum revisit period allows (``manager.profit.too_recent``: the manager would
        not put it in a batch either; a redirect found in a later batch than its target's fetch would
        otherwise fetch the target again)."""
        if self.collection is None:
            return self.fetched_in_batch(url)
        doc_id = self._stored_doc(url)
        if not doc_id:
            return False
        if self.fetched_in_batch(doc_id=doc_id):
            return True
        record = self.collection.documents.records[doc_id : doc_id + 1]
        return bool(too_recent(record, self.config, time.time())[0])

    def render_states(self, url: str) -> tuple[int, int]:
        """``(SiteRender, RenderState)`` of a page by URL, from its site and document records (0, 0: unknown);
        what the rendering policy (``harvester/render.py``) decides on."""
        collection = self.collection
        try:
            site, path = split(url)
        except ValueError:
            return 0, 0
        site_id, doc_id = collection.find(site, path)
        site_render = int(collection.sites.records[site_id]["render"]) if site_id else 0
        page_render = int(collection.documents.records[doc_id]["render"]) if doc_id else 0
        return site_render, page_render

    def finish_batch(self, figures: dict) -> None:
        """Write ``harvest.json`` into the batch directory: it is done. ``figures``: what the harvest of
        this batch did (:func:`batch_figures`)."""
        if self.batch is None:
            return
        path = (self.output if self.collection is None else self.batch.path) / HARVEST_FILE
        record = {
            "batch": self.batch.number,
            "part": self.batch.part,
            "started": self.started,
            "finished": time.time(),
            **figures,
            **(self._batch_pages() if self.collection is not None else {}),
        }
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, path)
        if self.collection is not None:
            self.collection.checkpoint()
        self.batch = None

    def _batch_pages(self) -> dict:
        """WIRE's harvest figures from the records: the batch's sites, the sites new since it began, and
        the sums of the link scores (as the manager ranked them) of the pages it fetched."""
        docs, batch = self.collection.documents.records, self.batch
        ids = np.fromiter((u.doc_id for u in batch.urls), dtype=np.int64, count=len(batch.urls))
        ids = ids[(ids > 0) & (ids <= self.collection.documents.count)]
        rows = docs[ids]
        fetched = rows[(rows["batch"] == batch.number) & (rows["last_visit"] >= self.created)]
        scores = {
            name: float(fetched[name].sum(dtype=np.float64))
            for name in ("pagerank", "wlrank", "hub", "authority")
        }
        config = self.config  # the waits politeness held the sites to, for the report's politeness check
        waits = {
            "normal": config.wait_normal,
            "large_site": config.wait_large_site,
            "large_site_pages": config.large_site_pages,
        }
        return {
            "sites": len(batch.sites),
            "new_sites": self.collection.urls.site_count - self.sites_at_start,
            "scores": scores,
            "waits": waits,
        }

    def site_for_queue(self, site: BatchSite) -> BatchSite:
        """The batch's site with what the collection knows now: page count and Crawl-delay."""
        record = self._site_record(site.origin)
        docs = int(record["docs"]) if record is not None else site.docs
        policy = self.robots.policy(site.origin, site)
        delay = policy.crawl_delay or 0.0
        return dataclasses.replace(site, docs=docs, crawl_delay=delay)

    def last_visit(self, origin: str) -> float:
        """Unix time of the last access to a site recorded in the collection (0: never, or detached)."""
        record = self._site_record(origin)
        return float(record["last_visit"]) if record is not None else 0.0

    def _site_record(self, origin: str):
        if self.collection is None:
            return None
        site_id = self.collection.urls.site_id(origin)
        return self.collection.sites.records[site_id] if site_id else None


def batch_figures(batch: Batch, before: dict, after: dict, prefix: str = "harvester") -> dict:
    """What harvesting ``batch`` did: the change in the crawl's stats since it began (``prefix``: ``warc``
    for a detached harvest, whose fetches only the WARC pipeline counts)."""

    def delta(key: str) -> int:
        return after.get(key, 0) - before.get(key, 0)

    errors = {key.rsplit("/", 1)[1]: delta(key) for key in after if key.startswith(f"{prefix}/errors/")}
    return {
        "urls": len(batch.urls),
        "fetched": delta(f"{prefix}/fetched/page"),
        "ok": delta(f"{prefix}/status/200"),
        "not_modified": delta(f"{prefix}/status/304"),
        "new_sites": delta("gatherer/new_sites/added"),
        "new_sites_refused": delta("gatherer/new_sites/refused"),
        "duplicates": delta("gatherer/duplicates"),
        "new_urls": delta("gatherer/links/new"),
        "links_found": delta("gatherer/links/found"),
        "links_known": delta("gatherer/links/known"),
        "links_new_sites": delta("gatherer/links/new_sites"),
        "bytes": delta("harvester/bytes"),
        "holds": delta("harvester/holds/groups"),
        "held_pages": delta("harvester/holds/requeued"),
        "backoffs": delta("harvester/backoff/strikes"),
        "errors": {k: v for k, v in errors.items() if v},
    }
