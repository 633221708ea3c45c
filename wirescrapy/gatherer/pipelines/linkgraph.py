"""The link graph: a page's links through the seeder rules into the URL store and the graph, within the page's
budget of new sites (``seeder/add.py``; what it refused is counted on its site and logged).

A duplicate's links (content-seen: the page's content is its original's) are ignored in WIRE; with
``WIRE_FOLLOW_DUPLICATE_LINKS`` (off by default) those that lead elsewhere than its original's links are kept,
when the duplicate and its original are on the same site and the duplicate's path does not continue the
original's (``follows_duplicate``): relative links in a copy stored at another path (a manual's untranslated
pages linked into each language's tree, a version directory linked to another) reach pages no other page links
to, and give the pages they reach their in-links; a mirror on another site, and a path that repeats one page
under ever longer URLs (``/index.php/a/``, a directory linked to itself), stay stopped at the copy. Off by
default because content-seen is also a trap defence: a tree of copies under ever new paths (a session id in
the path) is stopped at its first copy, where following would crawl it to the depth and per-site limits.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from wirescrapy.gatherer.pipelines.base import GathererStep
from wirescrapy.items import Kind
from wirescrapy.seeder.add import NewSites, Outcome, add_decision, add_links, add_listed

if TYPE_CHECKING:
    from wirescrapy.harvester.session import Harvest
    from wirescrapy.items import Fetch

logger = logging.getLogger(__name__)


class LinkGraphPipeline(GathererStep):
    def process(self, fetch: Fetch, harvest: Harvest) -> None:
        collection, rules = harvest.collection, harvest.rules
        if fetch.kind is Kind.SITEMAP:
            if fetch.listed:
                new_sites = NewSites.of_page(collection, rules, collection.urls.site_id(fetch.origin or ""))
                report = add_listed(collection, rules, fetch.listed, parent_depth=0, new_sites=new_sites)
                self._new_sites(fetch, collection, new_sites)
                self.stats.inc_value("gatherer/sitemap_urls", len(fetch.listed))
                self.stats.inc_value("gatherer/links/new", report.added)
            return
        if fetch.kind is not Kind.PAGE or fetch.not_modified:
            return  # a 304: the page, and so its links, did not change
        if fetch.render_follow_up and fetch.page is None:
            return  # a render after the raw fetch that failed: the raw fetch's links stay
        if fetch.redirect:
            # A redirect hop is a link one deeper, and one more hop (seeder/add.py).
            decision = rules.classify_at(fetch.redirect, fetch.depth + 1)
            new_sites = NewSites.of_page(collection, rules, fetch.site_id)
            target, outcome = add_decision(
                collection, rules, decision, redirects=fetch.hops + 1, new_sites=new_sites
            )
            self._new_sites(fetch, collection, new_sites)
            fetch.links = [target] if target and decision.fetch else []
            if outcome is Outcome.TOO_MANY_REDIRECTS:
                self.stats.inc_value("gatherer/redirects/over_limit")
        elif fetch.page is not None and fetch.original == fetch.doc_id:
            page = fetch.page  # the parser left out what WIRE_OBEY_NOFOLLOW says not to follow
            new_sites = NewSites.of_page(collection, rules, fetch.site_id)
            report = add_links(
                collection,
                rules,
                [link.url for link in page.links],
                parent_depth=fetch.depth,
                new_sites=new_sites,
                classified=fetch.link_decisions or (),
            )
            self._new_sites(fetch, collection, new_sites)
            fetch.links = report.targets
            self.stats.inc_value("gatherer/links/found", len(page.links))
            self.stats.inc_value("gatherer/links/rendered", fetch.render_links)
            self.stats.inc_value("gatherer/links/new", report.added)
            self.stats.inc_value("gatherer/links/known", report.known)
            self.stats.inc_value("gatherer/links/new_sites", report.to_new_sites)
            if report.over_limit:
                self.stats.inc_value("gatherer/links/over_site_limit", report.over_limit)
        elif fetch.page is not None and self.config.follow_duplicate_links and fetch.original:
            self._duplicate_links(fetch, harvest)
        elif fetch.page is None and fetch.ok and fetch.status < 300 and not fetch.mime_refused:
            return  # an empty page: its links, if it had any, stay as they were
        if fetch.links:
            collection.links.set_links(fetch.doc_id, fetch.links)
        elif fetch.doc_id in collection.links:
            collection.links.delete(fetch.doc_id)

    def _duplicate_links(self, fetch: Fetch, harvest: Harvest) -> None:
        """``fetch.links``: the duplicate's links its original's do not reach, if it ``follows_duplicate``."""
        collection = harvest.collection
        fetch.links = []
        original_site, original_path = collection.urls.url(fetch.original)
        site, path = collection.urls.url(fetch.doc_id)
        if not follows_duplicate(original_site, original_path, site, path):
            return
        new_sites = NewSites.of_page(collection, harvest.rules, fetch.site_id)
        report = add_links(
            collection,
            harvest.rules,
            [link.url for link in fetch.page.links],
            parent_depth=fetch.depth,
            new_sites=new_sites,
            classified=fetch.link_decisions or (),
        )
        self._new_sites(fetch, collection, new_sites)
        fetch.links = elsewhere(report.targets, collection.links.links(fetch.original))
        self.stats.inc_value("gatherer/links/new", report.added)
        self.stats.inc_value("gatherer/links/duplicates", len(fetch.links))

    def _new_sites(self, fetch: Fetch, collection, new_sites: NewSites) -> None:
        """Count on the linking site what the page's links added and refused; say what was refused."""
        new_sites.record(collection)
        self.stats.inc_value("gatherer/new_sites/added", new_sites.added)
        if new_sites.refused:
            self.stats.inc_value(
                "gatherer/new_sites/refused", new_sites.counted
            )  # as new_sites_refused counts
            logger.info(
                "%(url)s links %(refused)d new sites past the bounds on new sites (%(added)d added; "
                "WIRE_NEW_SITES_PER_PAGE, WIRE_NEW_SITES_PER_SITE, WIRE_MAX_SITES): counted on its site, "
                "not added",
                {"url": fetch.url, "refused": len(new_sites.refused), "added": new_sites.added},
            )


def follows_duplicate(original_site: int, original_path: bytes, site: int, path: bytes) -> bool:
    """Whether a duplicate at (``site``, ``path``) of the page at (``original_site``, ``original_path``) has
    its links followed (``WIRE_FOLLOW_DUPLICATE_LINKS``): on the same site, and not at a path that continues
    its original's (``/a/`` then ``/a/a/``, ``/index.php`` then ``/index.php/x/``: a trap repeating one
    page)."""
    return site == original_site and not path.startswith(original_path)


def elsewhere(targets: list[int], original_targets: np.ndarray) -> list[int]:
    """The doc-ids of ``targets`` (in order) that are not among ``original_targets``."""
    reached = set(np.asarray(original_targets).tolist())
    return [target for target in targets if target not in reached]
