"""The link graph: a page's links through the seeder rules into the URL store and the graph."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.items import Kind
from wirescrapy.seeder.add import add_decision, add_links, add_listed

if TYPE_CHECKING:
    from wirescrapy.harvester.session import Harvest
    from wirescrapy.items import Fetch


class LinkGraphPipeline(GathererStep):
    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        collection, rules = harvest.collection, harvest.rules
        if fetch.kind is Kind.SITEMAP:
            if fetch.listed:
                report = add_listed(collection, rules, fetch.listed, parent_depth=0)
                self.stats.inc_value("gatherer/sitemap_urls", len(fetch.listed))
                self.stats.inc_value("gatherer/links/new", report.added)
            return
        if fetch.kind is not Kind.PAGE:
            return
        if fetch.redirect:
            decision = rules.classify_at(fetch.redirect, fetch.depth)
            target, _ = add_decision(collection, rules, decision)
            fetch.links = [target] if target and decision.fetch else []
        elif fetch.page is not None and fetch.original == fetch.doc_id:
            page = fetch.page  # the parser left out what WIRE_OBEY_NOFOLLOW says not to follow
            report = add_links(collection, rules, [link.url for link in page.links], parent_depth=fetch.depth)
            fetch.links = report.targets
            self.stats.inc_value("gatherer/links/found", len(page.links))
            self.stats.inc_value("gatherer/links/new", report.added)
            self.stats.inc_value("gatherer/links/known", report.known)
            if report.over_limit:
                self.stats.inc_value("gatherer/links/over_site_limit", report.over_limit)
        elif fetch.page is None and fetch.ok and fetch.status < 300 and not fetch.mime_refused:
            return  # an empty page: its links, if it had any, stay as they were
        if fetch.links:
            collection.links.set_links(fetch.doc_id, fetch.links)
        elif fetch.doc_id in collection.links:
            collection.links.delete(fetch.doc_id)
