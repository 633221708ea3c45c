"""The gatherer inside the crawl: item pipelines that put each fetch into the collection (thesis §7.2.3).

Each :class:`~wirescrapy.harvester.items.Fetch` goes through, in order (``ITEM_PIPELINES`` in
``settings/default.py``):

=====  ======================  ===================================================================
order  pipeline                does
=====  ======================  ===================================================================
100    DocumentPipeline        finds the fetch's doc-id, adding a redirect target or a robots.txt
                               to the URL store (through the seeder rules) when it is new
200    ParsePipeline           parses an HTML or text page with status 200: links, cleaned
                               document, text (``Parser``)
300    PageStorePipeline       content-seen and page store: an exact duplicate becomes a reference to
                               its original's doc-id; notes whether the content changed
400    LinkGraphPipeline       the page's links through the seeder rules into the URL store, their
                               doc-ids into the link graph (a duplicate's links are ignored; a
                               redirect's only link is its target); a sitemap's URLs to the seeder
500    MetadataPipeline        the document and site records: status, MIME type, lengths, latency,
                               speed, visits, first/last visit, changes, errors, robots.txt state
=====  ======================  ===================================================================

The metadata record is written last, and it is what marks a page fetched in its batch (``last_visit``,
see ``harvester/session.py``): a kill before it means the page is fetched again on restart, and its
content, already stored, is found unchanged by content-seen.

They run in the crawl's process, on the reactor thread, one item at a time; each is small and synchronous.
A pipeline's failure on one item is logged with the URL and the item dropped — the page is fetched again
in a later batch — never a stopped crawl. Stats are under ``gatherer/``.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import TYPE_CHECKING

import numpy as np
from scrapy.exceptions import DropItem
from xxhash import xxh3_64_intdigest

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.config import WireConfig
from wirescrapy.gatherer.parser import Parser
from wirescrapy.harvester.items import Fetch, FetchError, Kind
from wirescrapy.seeder.robots import limit_body, robots_txt_url
from wirescrapy.seeder.rules import add_decision, add_links, add_listed

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

    from wirescrapy.harvester.session import Harvest

logger = logging.getLogger(__name__)

_ERROR_STATUS = 400  # HTTP statuses from here on count as failed visits


class _Step:
    """A gatherer pipeline: acts on ``Fetch`` items of a spider with a ``harvest``; passes others."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = WireConfig.from_settings(crawler.settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item, spider: Spider):
        harvest = getattr(spider, "harvest", None)
        if harvest is None or not isinstance(item, Fetch):
            return item
        try:
            self.process(item, harvest)
        except DropItem:
            raise
        except Exception as exc:
            logger.exception("%(step)s failed on %(url)s", {"step": type(self).__name__, "url": item.url})
            self.stats.inc_value(f"gatherer/failed/{type(self).__name__}")
            raise DropItem(f"{type(self).__name__} failed on {item.url}: {exc!r}") from exc
        return item

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        raise NotImplementedError


class DocumentPipeline(_Step):
    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is Kind.SITEMAP:
            return
        collection = harvest.collection
        if fetch.kind is Kind.ROBOTS:
            fetch.doc_id, _ = collection.add_url(robots_txt_url(fetch.origin), depth=0)
        elif not fetch.doc_id:
            fetch.doc_id = collection.lookup(fetch.url)
            if not fetch.doc_id:
                decision = harvest.rules.classify_at(fetch.url, fetch.depth)
                fetch.doc_id, _ = add_decision(collection, harvest.rules, decision)
            if not fetch.doc_id:
                raise DropItem(f"{fetch.url}: not accepted by the seeder rules")
        record = collection.documents.records[fetch.doc_id]
        fetch.site_id = int(record["siteid"])


class ParsePipeline(_Step):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self.parser = Parser.from_config(self.config)

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is not Kind.PAGE or fetch.status != 200 or fetch.mime_refused or not fetch.body:
            return
        fetch.page = self.parser.parse(fetch.body, fetch.url, fetch.content_type or None)
        self.stats.inc_value("gatherer/parsed")
        self.stats.inc_value("gatherer/parsed_bytes", len(fetch.body))


class PageStorePipeline(_Step):
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


class LinkGraphPipeline(_Step):
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
        elif fetch.page is not None and fetch.original == fetch.doc_id and not fetch.page.nofollow:
            page = fetch.page
            report = add_links(collection, rules, [link.url for link in page.links if not link.nofollow],
                               parent_depth=fetch.depth)
            fetch.links = report.targets
            self.stats.inc_value("gatherer/links/found", len(page.links))
            self.stats.inc_value("gatherer/links/new", report.added)
            if report.over_limit:
                self.stats.inc_value("gatherer/links/over_site_limit", report.over_limit)
        elif fetch.page is None and fetch.ok and fetch.status < 300 and not fetch.mime_refused:
            return  # an empty page: its links, if it had any, stay as they were
        if fetch.links:
            collection.links.set_links(fetch.doc_id, fetch.links)
        elif fetch.doc_id in collection.links:
            collection.links.delete(fetch.doc_id)


class MetadataPipeline(_Step):
    """Writes the records, and hands on a plain dict of the fetch (:func:`fetch_record`) in place of the
    ``Fetch``, so that a feed (``FEEDS``, Scrapyd's ``items_dir``) is a log of what was fetched."""

    def process_item(self, item, spider: Spider):
        item = super().process_item(item, spider)
        return fetch_record(item) if isinstance(item, Fetch) else item

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is Kind.SITEMAP:
            return
        collection = harvest.collection
        record = collection.documents.records[fetch.doc_id]
        site = collection.sites.records[fetch.site_id]
        now = fetch.ended
        stats = self.stats
        if fetch.error is FetchError.ROBOTS_DISALLOWED:
            record["flags"] |= DocFlag.ROBOTS_DISALLOWED
            record["last_visit"] = now  # tried: done in this batch, no access made
            stats.inc_value("harvester/pages/robots_disallowed")
            return
        flags = int(record["flags"]) & ~(DocFlag.TRUNCATED | DocFlag.CHANGED | DocFlag.REDIRECT
                                         | DocFlag.NOFOLLOW | DocFlag.NOINDEX)
        failed = fetch.error is not None or fetch.status >= _ERROR_STATUS
        record["status"] = fetch.status
        if fetch.responded:
            self._response(fetch, record)
            flags |= self._flags(fetch)
            if fetch.changed:
                flags |= DocFlag.CHANGED
        record["flags"] = flags
        record["errors"] = min(int(record["errors"]) + 1, 0xFFFF) if failed else 0
        record["last_visit"] = now
        if fetch.ip:
            site["ip"] = _ip_bytes(fetch.ip)
            site["ip_resolved"] = now
        site["last_visit"] = now
        site["fetched"] += 1
        if failed:
            site["errors"] += 1
        elif fetch.status == 200:
            site["ok"] += 1
            site["dynamic" if flags & DocFlag.DYNAMIC else "static"] += 1
        if fetch.kind is Kind.ROBOTS:
            self._robots(fetch, harvest, site)
        stats.inc_value(f"harvester/fetched/{fetch.kind.value}")
        if fetch.error is not None:
            stats.inc_value(f"harvester/errors/{fetch.error.label}")
        else:
            if fetch.kind is Kind.PAGE:
                stats.inc_value(f"harvester/status/{fetch.status}")
            stats.inc_value("harvester/bytes", fetch.raw_length)
            if fetch.truncated:
                stats.inc_value("harvester/truncated")
            if fetch.mime_refused:
                stats.inc_value("harvester/mime_refused")

    @staticmethod
    def _response(fetch: Fetch, record) -> None:
        now = fetch.ended
        record["mime"] = fetch.mime.encode("ascii", "replace")[:32]
        record["latency"] = fetch.latency
        transfer = fetch.duration - fetch.latency
        record["speed"] = fetch.raw_length / transfer if transfer > 0 else 0.0
        record["raw_length"] = min(fetch.raw_length, 0xFFFFFFFF)
        if fetch.page is None and fetch.kind is Kind.PAGE:
            record["stored_length"] = 0
        visits = int(record["visits"])
        if visits == 0:
            record["first_visit"] = now
            record["last_change"] = now
        elif fetch.changed:
            record["visits_changed"] += 1
            record["last_change"] = now
        elif record["last_visit"] > 0:
            record["time_unchanged"] += max(now - float(record["last_visit"]), 0.0)
        record["visits"] = visits + 1
        record["last_modified"] = max(record["last_modified"], fetch.last_modified)

    @staticmethod
    def _flags(fetch: Fetch) -> int:
        flags = 0
        if fetch.truncated or (fetch.page is not None and fetch.page.truncated):
            flags |= DocFlag.TRUNCATED
        if fetch.redirect or 300 <= fetch.status < 400:
            flags |= DocFlag.REDIRECT
        if fetch.mime_refused:
            flags |= DocFlag.MULTIMEDIA  # not a page: never fetched again
        page = fetch.page
        if page is not None:
            if page.nofollow:
                flags |= DocFlag.NOFOLLOW
            if page.noindex:
                flags |= DocFlag.NOINDEX
        return flags

    @staticmethod
    def _robots(fetch: Fetch, harvest: Harvest, site) -> None:
        policy = harvest.policy(fetch.origin)
        refetched = site["robots_fetched"] > 0
        if refetched and (fetch.changed or int(site["robots_state"]) != int(policy.state)):
            _forget_disallowed(harvest.collection, fetch.site_id)
        site["robots_state"] = int(policy.state)
        site["robots_fetched"] = policy.fetched_at
        site["robots_docid"] = fetch.doc_id  # also when missing: the manager never puts it in a batch
        site["crawl_delay"] = policy.crawl_delay or 0.0


def _forget_disallowed(collection, site_id: int) -> None:
    """A site's robots.txt changed: its pages refused by the old rules may be fetched again (the manager
    leaves ROBOTS_DISALLOWED pages out). One pass over the document records, on a change only."""
    docs = collection.documents.records[1:collection.documents.count + 1]
    refused = (docs["siteid"] == site_id) & ((docs["flags"] & DocFlag.ROBOTS_DISALLOWED) != 0)
    if refused.any():
        docs["flags"][refused] &= ~np.uint16(DocFlag.ROBOTS_DISALLOWED)
        logger.info("robots.txt of site %(site)d changed: %(n)d pages it refused may be fetched again",
                    {"site": site_id, "n": int(refused.sum())})


def fetch_record(fetch: Fetch) -> dict:
    """What a fetch was, as JSON-ready values (no body)."""
    page = fetch.page
    return {
        "url": fetch.url, "kind": fetch.kind.value, "doc_id": fetch.doc_id, "site_id": fetch.site_id,
        "depth": fetch.depth, "status": fetch.status, "error": fetch.error.label if fetch.error else None,
        "mime": fetch.mime, "raw_length": fetch.raw_length, "truncated": fetch.truncated,
        "stored_length": len(page.document) if page is not None else 0,
        "duplicate_of": fetch.original if fetch.original and fetch.original != fetch.doc_id else 0,
        "changed": fetch.changed, "links": len(fetch.links), "redirect": fetch.redirect or None,
        "latency": round(fetch.latency, 4), "started": fetch.started, "ended": fetch.ended, "ip": fetch.ip or None,
    }


def _ip_bytes(text: str) -> bytes:
    """16 bytes, network order; IPv4 as ``::ffff:a.b.c.d``; zeros if ``text`` is no address."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return bytes(16)
    if address.version == 4:
        address = ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + address.packed)
    return address.packed
