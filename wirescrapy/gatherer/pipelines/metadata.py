"""The document and site records of each fetch; the fetch handed on as a plain dict."""

from __future__ import annotations

import ipaddress
import logging
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from scrapy.exceptions import DropItem

from wirescrapy.collection.metadata import DOCUMENT_DTYPE, DocFlag, RenderState
from wirescrapy.gatherer.language import identify
from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.harvester.render import RenderMode, site_after
from wirescrapy.items import Fetch, FetchError, Kind
from wirescrapy.signals import render_wanted

if TYPE_CHECKING:
    from scrapy import Spider

    from wirescrapy.harvester.session import Harvest

logger = logging.getLogger(__name__)

_ERROR_STATUS = 400  # HTTP statuses from here on count as failed visits
# The flags a response decides again, cleared before it sets them. Plain ints: an operator between an int
# and an IntFlag goes through the enum's own methods, for every fetch.
_RESPONSE_FLAGS = int(
    DocFlag.TRUNCATED | DocFlag.CHANGED | DocFlag.REDIRECT | DocFlag.NOFOLLOW | DocFlag.NOINDEX
)
_CHANGED = int(DocFlag.CHANGED)
_DYNAMIC = int(DocFlag.DYNAMIC)


class MetadataPipeline(GathererStep):
    """Writes the records, and hands on a plain dict of the fetch (:func:`fetch_record`) in place of the
    ``Fetch``, so that a feed (``FEEDS``, Scrapyd's ``items_dir``) is a log of what was fetched.

    It records a fetch an earlier step failed on, and when it fails itself, records the failure plainly:
    the statuses, one more error, and the visit time that marks the page done in its batch."""

    records_failures = True

    def __init__(self, crawler):
        super().__init__(crawler)
        self.render_on = RenderMode.parse(self.config.render_js).on

    def process_item(self, item, spider: Spider):
        item = super().process_item(item, spider)
        if not isinstance(item, Fetch):
            return item
        if item.render_wanted and item.error is None:  # now that the raw fetch is recorded
            self.crawler.signals.send_catch_log(render_wanted, fetch=item)
        return fetch_record(item)

    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        if fetch.kind is Kind.SITEMAP:
            return
        collection = harvest.collection
        record = collection.documents.record(fetch.doc_id)
        site = collection.sites.record(fetch.site_id)
        now = fetch.ended
        stats = self.stats
        if self.render_on and fetch.kind is Kind.PAGE:
            self._render(fetch, record, site)
            if fetch.render_follow_up:
                self._follow_up(fetch, record, site)
                return
        if fetch.error is FetchError.ROBOTS_DISALLOWED:
            record["flags"] |= DocFlag.ROBOTS_DISALLOWED
            record["last_visit"] = now  # tried: done in this batch, no access made
            stats.inc_value("harvester/pages/robots_disallowed")
            return
        flags = int(record["flags"]) & ~_RESPONSE_FLAGS
        # A blocked address is refused by our WIRE_BLOCKED_IPS before any access: no failure of the site, so
        # it neither counts toward the page's errors nor bars it for WIRE_MINPERIOD_UNSUCCESSFUL (the manager
        # selects it again at once), and a changed setting fetches it in the next cycle.
        blocked = fetch.error is FetchError.BLOCKED_IP
        failed = not blocked and (fetch.error is not None or fetch.status >= _ERROR_STATUS)
        record["status"] = fetch.status
        record["error"] = fetch.error or 0
        if fetch.not_modified:
            # A 304 to a conditional revisit: a visit that found no change. The stored page, its links, its
            # content hash and what was learnt from its body (flags, MIME type, lengths) stay as they were.
            flags = int(record["flags"]) & ~_CHANGED
            record["latency"] = fetch.latency
            _visit(record, fetch.ended, changed=False)
        elif fetch.responded:
            self._response(fetch, record)
            flags |= self._flags(fetch)
            if fetch.changed:
                flags |= _CHANGED
        if fetch.responded:
            _validators(fetch, record)
        record["flags"] = flags
        if failed:
            record["errors"] = min(int(record["errors"]) + 1, 0xFFFF)
        elif not blocked:
            record["errors"] = 0
        record["last_visit"] = now
        if fetch.ip:
            site["ip"] = _ip_bytes(fetch.ip)
            site["ip_resolved"] = now
        site["last_visit"] = now
        site["fetched"] += 1
        if failed:
            site["errors"] += 1
        elif blocked and fetch.kind is Kind.PAGE:
            stats.inc_value("harvester/pages/blocked_ip")
        elif fetch.status == 200 or fetch.not_modified:
            site["ok"] += 1
            site["dynamic" if flags & _DYNAMIC else "static"] += 1
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

    def failed(self, fetch: Fetch, harvest: Harvest, exc: Exception) -> None:
        super().failed(fetch, harvest, exc)
        if fetch.kind is Kind.SITEMAP:
            return
        try:
            record = harvest.collection.documents.record(fetch.doc_id)
            record["status"], record["error"] = fetch.status, fetch.error
            record["errors"] = min(int(record["errors"]) + 1, 0xFFFF)
            record["last_visit"] = fetch.ended
        except (
            IndexError,
            OverflowError,
            TypeError,
            ValueError,
        ) as again:  # the record itself is out of reach
            raise DropItem(f"{fetch.url} could not be recorded: {again!r}") from exc
        self.stats.inc_value(f"harvester/errors/{fetch.error.label}")

    def _render(self, fetch: Fetch, record, site) -> None:
        """The page's and its site's rendering records (``harvester/render.py``): a render that came back or
        froze Splash is one try of the site; one that found links is a gain."""
        state = fetch.render
        if not state:  # a raw fetch: a page that froze Splash stays marked, never rendered again
            if record["render"] != RenderState.TIMED_OUT:
                record["render"] = RenderState.NOT_RENDERED
            record["render_links"] = 0
            return
        record["render"] = state
        record["render_links"] = min(fetch.render_links, 0xFFFF)
        self.stats.inc_value(f"harvester/render/state/{RenderState(state).name.lower()}")
        if state in (RenderState.RENDERED, RenderState.TIMED_OUT):
            site["render"], site["render_tries"], site["render_gains"] = site_after(
                int(site["render"]),
                int(site["render_tries"]),
                int(site["render_gains"]),
                fetch.render_links > 0,
                self.config.render_tries,
            )

    def _follow_up(self, fetch: Fetch, record, site) -> None:
        """A render after this batch's raw fetch of the page, which recorded the visit: the outcome only."""
        record["error"] = fetch.error or 0
        if fetch.error is not None:  # the page is visited again (and rendered, unless it froze Splash) later
            record["errors"] = min(int(record["errors"]) + 1, 0xFFFF)
            self.stats.inc_value(f"harvester/errors/{fetch.error.label}")
        elif fetch.page is None:
            record["stored_length"] = 0
        record["last_visit"] = fetch.ended
        site["last_visit"] = fetch.ended

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
        _visit(record, now, fetch.changed)
        record["last_modified"] = max(record["last_modified"], fetch.last_modified)
        if fetch.page is not None and fetch.status == 200 and fetch.kind is Kind.PAGE:
            language = fetch.page.language if fetch.page.language is not None else identify(fetch.page.text)
            record["language"] = language.encode("ascii", "replace")[:4]

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
        robots = harvest.robots.record(fetch)
        if robots.changes_rules(site, fetch.changed):
            _forget_disallowed(harvest.collection, fetch.site_id)
        for field, value in robots.site_fields(fetch.doc_id).items():
            site[field] = value


def _visit(record, now: float, changed: bool) -> None:
    """One more visit of a page, for the freshness estimator (``manager/freshness.py``): the first visit
    cannot see a change; a later one found new content, or adds the time since the last visit to the time
    observed without a change."""
    visits = int(record["visits"])
    if visits == 0:
        record["first_visit"] = now
        record["last_change"] = now
    elif changed:
        record["visits_changed"] += 1
        record["last_change"] = now
    elif record["last_visit"] > 0:
        record["time_unchanged"] += max(now - float(record["last_visit"]), 0.0)
    record["visits"] = visits + 1


_VALIDATOR_SIZES = {
    "etag": DOCUMENT_DTYPE["etag"].itemsize,
    "last_modified_header": DOCUMENT_DTYPE["last_modified_header"].itemsize,
}


def _validators(fetch: Fetch, record) -> None:
    """The validators a revisit sends back (If-None-Match, If-Modified-Since), exactly as the server gave
    them: nginx, for one, answers 304 only to the exact Last-Modified string. Those of a page stored whole (a
    200); a 304 may bring new ones; any other response leaves no stored page they describe: none. One too long
    for its field is not kept (a cut one would never match)."""
    ok = fetch.status == 200 and fetch.error is None and not fetch.mime_refused
    if not ok and not fetch.not_modified:
        record["etag"] = record["last_modified_header"] = b""
        return
    for field, size in _VALIDATOR_SIZES.items():
        value = getattr(fetch, field)
        if value or ok:
            record[field] = value if len(value) <= size and not value.endswith(b"\0") else b""


def _forget_disallowed(collection, site_id: int) -> None:
    """A site's robots.txt changed: its pages refused by the old rules may be fetched again (the manager
    leaves ROBOTS_DISALLOWED pages out). One pass over the document records, on a change only."""
    docs = collection.documents.records[1 : collection.documents.count + 1]
    refused = (docs["siteid"] == site_id) & ((docs["flags"] & DocFlag.ROBOTS_DISALLOWED) != 0)
    if refused.any():
        docs["flags"][refused] &= ~np.uint16(DocFlag.ROBOTS_DISALLOWED)
        logger.info(
            "robots.txt of site %(site)d changed: %(n)d pages it refused may be fetched again",
            {"site": site_id, "n": int(refused.sum())},
        )


def fetch_record(fetch: Fetch) -> dict:
    """What a fetch was, as JSON-ready values (no body)."""
    page = fetch.page
    record = {
        "url": fetch.url,
        "kind": fetch.kind.value,
        "doc_id": fetch.doc_id,
        "site_id": fetch.site_id,
        "depth": fetch.depth,
        "status": fetch.status,
        "error": fetch.error.label if fetch.error else None,
        "mime": fetch.mime,
        "raw_length": fetch.raw_length,
        "truncated": fetch.truncated,
        "stored_length": len(page.document) if page is not None else 0,
        "duplicate_of": fetch.original if fetch.original and fetch.original != fetch.doc_id else 0,
        "changed": fetch.changed,
        "links": len(fetch.links),
        "redirect": fetch.redirect or None,
        "latency": round(fetch.latency, 4),
        "started": fetch.started,
        "ended": fetch.ended,
        "ip": fetch.ip or None,
    }
    if fetch.render:  # rendered through Splash, or tried
        record["render"] = RenderState(fetch.render).name.lower()
        record["render_links"] = fetch.render_links
    return record


@lru_cache(maxsize=4096)  # a crawl meets the same few addresses again and again
def _ip_bytes(text: str) -> bytes:
    """16 bytes, network order; IPv4 as ``::ffff:a.b.c.d``; zeros if ``text`` is no address."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return bytes(16)
    if address.version == 4:
        address = ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + address.packed)
    return address.packed
