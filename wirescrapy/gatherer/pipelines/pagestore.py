"""Content-seen and the page store: an exact duplicate becomes a reference to its original. A page's
cleaned document is stored (a render's: of the rendered DOM); a robots.txt's body, when its owner's record has
one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xxhash import xxh3_64_intdigest

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.items import Kind

if TYPE_CHECKING:
    from wirescrapy.harvester.session import Harvest
    from wirescrapy.items import Fetch


class PageStorePipeline(GathererStep):
    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is Kind.PAGE:
            content = fetch.page.document if fetch.page is not None else None
        elif fetch.kind is Kind.ROBOTS:
            content = harvest.robots.record(fetch).body
        else:
            return
        if content is None:
            return
        records = harvest.collection.documents.records
        record = records[fetch.doc_id]
        seen_before = record["visits"] > 0 and record["content_hash"] != 0
        previous = int(record["content_hash"])
        fetch.original = harvest.collection.store_page(fetch.doc_id, content)  # writes the new content_hash
        if fetch.raw_page is not None:
            # A render: its DOM is stored (and is what content-seen compares), but the record keeps the hash
            # of the raw HTML's cleaned document, as a raw fetch would, so what scripts change (a clock, a
            # counter) is no change of the page, and a page rendered at one visit and not at the next compares
            # alike.
            record["content_hash"] = xxh3_64_intdigest(fetch.raw_page.document)
        if fetch.render_follow_up:
            fetch.changed = bool(record["flags"] & DocFlag.CHANGED)  # this batch's raw fetch decided
        else:
            fetch.changed = not seen_before or int(record["content_hash"]) != previous
        if fetch.original != fetch.doc_id:
            self.stats.inc_value("gatherer/duplicates")
        else:
            self.stats.inc_value("gatherer/stored_bytes", len(content))
