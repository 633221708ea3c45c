"""The fetch's document: its doc-id, a redirect target or robots.txt added when new (a robots.txt fetch
is recorded under the document its owner names, the site's /robots.txt, whatever URL answered)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import DropItem

from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.items import Kind
from wirescrapy.seeder.add import add_decision

if TYPE_CHECKING:
    from wirescrapy.harvester.session import Harvest
    from wirescrapy.items import Fetch


class DocumentPipeline(GathererStep):
    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is Kind.SITEMAP:
            return
        collection = harvest.collection
        if fetch.kind is Kind.ROBOTS:
            fetch.doc_id, _ = collection.add_url(harvest.robots.record(fetch).url, depth=0)
        elif not fetch.doc_id:
            fetch.doc_id = collection.lookup(fetch.url)
            if not fetch.doc_id:
                decision = harvest.rules.classify_at(fetch.url, fetch.depth)
                fetch.doc_id, _ = add_decision(collection, harvest.rules, decision, redirects=fetch.hops)
            if not fetch.doc_id:
                raise DropItem(f"{fetch.url}: not accepted by the seeder rules")
        record = collection.documents.record(fetch.doc_id)
        fetch.site_id = int(record["siteid"])
