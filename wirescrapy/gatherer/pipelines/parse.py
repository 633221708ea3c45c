"""Parsing: links, cleaned document and text of an HTML or text page (``gatherer.parser``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirescrapy.gatherer.parser import Parser
from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.items import Kind

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from wirescrapy.items import Fetch
    from wirescrapy.harvester.session import Harvest


class ParsePipeline(GathererStep):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self.parser = Parser.from_config(self.config)

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is not Kind.PAGE or fetch.status != 200 or fetch.mime_refused or not fetch.body:
            return
        fetch.page = self.parser.parse(fetch.body, fetch.url, fetch.content_type or None)
        self.stats.inc_value("gatherer/parsed")
        self.stats.inc_value("gatherer/parsed_bytes", len(fetch.body))
