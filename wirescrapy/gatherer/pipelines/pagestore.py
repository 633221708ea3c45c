"""Content-seen and the page store: an exact duplicate becomes a reference to its original."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.items import Kind
from wirescrapy.seeder.robots import limit_body

if TYPE_CHECKING:
    from wirescrapy.items import Fetch
    from wirescrapy.harvester.session import Harvest


class PageStorePipeline(GathererStep):
    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is Kind.PAGE and fetch.page is not None:
            content = fetch.page.document
        elif fetch.kind is Kind.ROBOTS and fetch.status == 200 and not fetch.error:
            content = limit_body(fetch.body)
        else:
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
