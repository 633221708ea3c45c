"""Parsing: links, cleaned document and text of an HTML or text page (``gatherer.parser``).

A render (``WIRE_RENDER_JS``) is parsed twice: the rendered DOM, which is what is kept, with the links of a
hash-routed page's other views added, and the raw HTML the site sent, for content-seen and to count the links
only the rendering showed (``render_links``). In ``auto`` mode a raw HTML page that looks script-built, on a
site still being tried, is marked to be rendered (``render_wanted``; the metadata step asks the spider once the
raw fetch is recorded)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirescrapy.collection.metadata import RenderState
from wirescrapy.gatherer.parser import Parser
from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.harvester.render import RenderMode, looks_script_built, may_probe
from wirescrapy.items import Kind, Link

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from wirescrapy.harvester.session import Harvest
    from wirescrapy.items import Fetch, ParsedPage


class ParsePipeline(GathererStep):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self.parser = Parser.from_config(self.config)
        self.render_mode = RenderMode.parse(self.config.render_js)

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is not Kind.PAGE or fetch.status != 200 or fetch.mime_refused or not fetch.body:
            return
        fetch.page = self.parser.parse(fetch.body, fetch.url, fetch.content_type or None)
        self.stats.inc_value("gatherer/parsed")
        self.stats.inc_value("gatherer/parsed_bytes", len(fetch.body))
        if fetch.render == RenderState.RENDERED:
            self._rendered(fetch, fetch.page)
        elif self.render_mode.auto and fetch.page.is_html and not fetch.render:
            collection = harvest.collection
            site = collection.sites.records[fetch.site_id]["render"]
            page = collection.documents.records[fetch.doc_id]["render"]
            if may_probe(self.render_mode, site, page) and looks_script_built(
                    fetch.body, len(fetch.page.links), len(fetch.page.text)):
                fetch.render_wanted = True
                self.stats.inc_value("gatherer/render/wanted")

    def _rendered(self, fetch: Fetch, page: ParsedPage) -> None:
        known = {link.url for link in page.links}
        itself = {fetch.url, page.url}  # a view's links to the other views: the page itself
        for href in fetch.script_links:
            url = href.partition("#")[0]
            if url.startswith(("http://", "https://")) and url not in known and url not in itself:
                known.add(url)
                page.links.append(Link(url, "", "a", len(page.links)))
        if fetch.raw_body:
            fetch.raw_page = self.parser.parse(fetch.raw_body, fetch.url, "text/html; charset=utf-8")
            raw = {link.url for link in fetch.raw_page.links}
            fetch.render_links = len(known - raw)
        else:
            fetch.render_links = len(known)
