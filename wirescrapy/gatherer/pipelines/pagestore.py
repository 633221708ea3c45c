"""Content-seen and the page store: an exact duplicate becomes a reference to its original."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xxhash import xxh3_64_intdigest

from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.harvester.items import Kind
from wirescrapy.seeder.robots import limit_body

if TYPE_CHECKING:
    from wirescrapy.harvester.items import Fetch
    from wirescrapy.harvester.session import Harvest


class PageStorePipeline(GathererStep):
    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is Kind.PAGE and fetch.page is not None:
            content = fetch.page.document
        elif fetch.kind is Kind.ROBOTS and fetch.status == 200 and not fetch.error:
            content = limit_body(fetch.body)
        else:
            return
        collection = harvest.collection
        record = collection.documents.records[fetch.doc_id]
        seen_before = record["visits"] > 0 and record["content_hash"] != 0
        previous = int(record["content_hash"])
        fetch.original = collection.store_page(fetch.doc_id, content)
        fetch.changed = not seen_before or xxh3_64_intdigest(content) != previous
        if fetch.original != fetch.doc_id:
            self.stats.inc_value("gatherer/duplicates")
        else:
            self.stats.inc_value("gatherer/stored_bytes", len(content))
