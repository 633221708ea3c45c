"""Content-seen and the page store: an exact duplicate becomes a reference to its original. A page's
cleaned document is stored; a robots.txt's body, when its owner's record has one."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
        seen_before = records[fetch.doc_id]["visits"] > 0 and records[fetch.doc_id]["content_hash"] != 0
        previous = int(records[fetch.doc_id]["content_hash"])
        fetch.original = harvest.collection.store_page(fetch.doc_id, content)  # writes the new content_hash
        fetch.changed = not seen_before or int(records[fetch.doc_id]["content_hash"]) != previous
        if fetch.original != fetch.doc_id:
            self.stats.inc_value("gatherer/duplicates")
        else:
            self.stats.inc_value("gatherer/stored_bytes", len(content))
