"""Near-duplicates: each page's SimHash and its cluster, beside content-seen's exact hash.

After the page store (order 350), for every page parsed: its shingles (``gatherer/simhash.py``; the parse
workers compute them, off the crawl's thread) go to the site's template sketch, and once its fingerprint is
decided (a site's first pages wait for the sketch) the near-duplicate index gives it a cluster, written to
``nearduplicates.rec`` (``collection/nearduplicates.py``).
The index is built from that file when the harvest opens, and the pages still held back are decided when it
closes. A kill loses the held pages' fingerprints only: they get theirs at their next visit.

A revisit whose content changed but whose fingerprint stayed within the threshold of its last one (a date, a
counter) is no change for freshness (``manager/nearduplicates.py``): the step clears ``fetch.changed`` before
the metadata step counts it. A page held for its site's sketch is decided too late for that; its change
counts as content-seen found it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from wirescrapy.collection.nearduplicates import (
    NO_EARLIER,
    NearDuplicateFile,
    assign,
    load_index,
)
from wirescrapy.collection.writes import is_write_failure
from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.gatherer.simhash import Fingerprinter, shingles
from wirescrapy.items import Kind
from wirescrapy.manager.nearduplicates import counts_as_changed
from wirescrapy.signals import write_failed

if TYPE_CHECKING:
    from scrapy import Spider

    from wirescrapy.collection.nearduplicates import NearDuplicateIndex
    from wirescrapy.harvester.session import Harvest
    from wirescrapy.items import Fetch


class NearDuplicatePipeline(GathererStep):
    def __init__(self, crawler):
        super().__init__(crawler)
        if not self.config.near_duplicates:
            raise NotConfigured("WIRE_NEAR_DUPLICATES is off")
        self.distance = self.config.near_duplicate_distance
        self.fingerprinter = Fingerprinter()
        self.file: NearDuplicateFile | None = None
        self.index: NearDuplicateIndex | None = None

    def harvest_opened(self, harvest: Harvest) -> None:
        super().harvest_opened(harvest)
        if harvest.collection is None:
            return
        try:
            self.file = NearDuplicateFile(harvest.collection.dir)
        except Exception as exc:
            if not is_write_failure(exc):
                raise
            # A full disk: the harvest stops writing in one line, as for any other store's write.
            self.crawler.signals.send_catch_log(write_failed, exc=exc)
            return
        self.index = load_index(self.file, self.distance)

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is not Kind.PAGE or fetch.page is None or self.file is None:
            return
        # The parse workers compute the shingles (off the reactor thread); a page parsed here has none yet.
        hashes = fetch.page.shingles if fetch.page.shingles is not None else shingles(fetch.page.text)
        moved = self._store(self.fingerprinter.add(fetch.site_id, fetch.doc_id, hashes), fetch.doc_id)
        if fetch.changed and not counts_as_changed(fetch.changed, moved, self.distance):
            # Decided now (not held for its site's sketch): the metadata step counts no change for freshness.
            fetch.changed = False
            self.stats.inc_value("gatherer/near_duplicates/changed_within_cluster")

    def _store(self, decided: list[tuple[int, int | None]], current: int = 0) -> int:
        """Record the decided fingerprints; the bits the ``current`` page's moved (``NO_EARLIER`` if it is
        not among them)."""
        moved_now = NO_EARLIER
        for doc_id, simhash in decided:
            cluster, moved = assign(self.index, self.file, doc_id, simhash)
            if simhash is None:
                self.stats.inc_value("gatherer/near_duplicates/no_fingerprint")
            elif cluster != doc_id:
                self.stats.inc_value("gatherer/near_duplicates/clustered")
            if doc_id == current:
                moved_now = moved
        return moved_now

    def close_spider(self, spider: Spider) -> None:
        if self.file is None:
            return
        harvest = self.harvest
        if harvest is not None and not harvest.stopped:
            self._store(self.fingerprinter.flush())
        self.file.close()
        self.file = None
