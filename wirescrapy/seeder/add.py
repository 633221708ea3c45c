"""Applying the seeder's decisions to a collection: new documents, their depth and flags, the site limits.

``add_links`` (a page's links), ``add_listed`` (a sitemap's or robots.rdf's entries) and ``add_decision``
(one URL, e.g. a seed) write what ``SeederRules`` decided (``rules.py``) into a ``Collection``: new
documents with their depth and flags (a known one keeps its smallest depth and gains the flags:
``Collection.reach``), ``WIRE_MAX_URLS_PER_SITE`` (beyond it a new URL only counts in the site's
``docs_over_limit``), the site's ``multimedia`` counter, and with ``WIRE_ADD_ROOT`` the home page of every
new site.

A redirect's target is a link one deeper than its page that carries the redirect hops that led to it (the
document record's ``redirects``, kept at its smallest like the depth): a new URL past ``WIRE_MAX_REDIRECTS``
hops is not added, so that a chain of redirects to ever-new host names ends there however many batches it
spans (in one batch the harvester stops following it at the same hop, ``harvester/redirects.py``).

New sites are bounded (a page linking to 50,000 hosts never seen is a trap, each host a robots.txt fetch and
a queue): the collection holds at most ``WIRE_MAX_SITES`` sites, whoever adds them, and the links of one page
(its fetch, its redirect, or one sitemap of its site) add at most ``WIRE_NEW_SITES_PER_PAGE`` new sites,
within what its site may still add (``WIRE_NEW_SITES_PER_SITE``, over the crawl): a :class:`NewSites` budget
per page. A link to a new site past the bounds is not added; the linking site's record counts what its pages
added (``new_sites``) and refused (``new_sites_refused``: the distinct sites its pages linked that the bounds
refused, each counted once however many of its pages link it and however often they are fetched again; the
collection remembers which, up to a bound per site: ``collection/refused.py``).
"""

from __future__ import annotations

import enum
import urllib.parse
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wirescrapy.url import host_of

from .rules import MAX_STORED_DEPTH, Decision, Reason, SeederRules, Verdict, extension

if TYPE_CHECKING:
    from wirescrapy.collection import Collection


class Outcome(enum.Enum):
    NEW = "new"  # added to the collection
    KNOWN = "known"  # already there (its depth may have decreased)
    OVER_LIMIT = "over limit"  # new, but its site has WIRE_MAX_URLS_PER_SITE documents: only counted
    TOO_MANY_REDIRECTS = "too many redirects"  # new, but more than WIRE_MAX_REDIRECTS redirect hops led to it
    SITE_REFUSED = "new site refused"  # new, on a site new to the collection past the bounds on new sites
    SKIPPED = "skipped"  # ignored or rejected by the rules


@dataclass
class AddReport:
    """What adding a batch of URLs did; ``targets`` are the doc-ids of the pages (fetchable URLs) among
    them, in order and without repeats: the page's out-links for the link graph."""

    added: int = 0
    known: int = 0
    over_limit: int = 0
    multimedia: int = 0  # new multimedia documents (also in ``added``)
    roots_added: int = 0
    sites_refused: int = 0  # URLs of new sites refused by the bounds on new sites
    to_new_sites: int = 0  # new URLs that were the first of their site: links that found a new site
    skipped: Counter = field(default_factory=Counter)  # Reason -> URLs
    targets: list[int] = field(default_factory=list)

    def count(self, decision: Decision, outcome: Outcome) -> None:
        if outcome is Outcome.NEW:
            self.added += 1
            self.multimedia += decision.verdict is Verdict.LOG
        elif outcome is Outcome.KNOWN:
            self.known += 1
        elif outcome is Outcome.OVER_LIMIT:
            self.over_limit += 1
        elif outcome is Outcome.SITE_REFUSED:
            self.sites_refused += 1
        else:
            self.skipped[decision.reason] += 1


@dataclass
class NewSites:
    """The new sites the links of one page may still add (``left``), and what they did: ``added`` sites,
    ``refused`` the names of new sites past the bounds. :meth:`record` counts both on the linking site: the
    refused ones its site had not counted yet, ``counted``."""

    site_id: int  # the linking site
    left: int
    added: int = 0
    refused: set[str] = field(default_factory=set)
    counted: int = 0  # of ``refused``, those counted on the linking site by ``record``

    @classmethod
    def of_page(cls, collection: Collection, rules: SeederRules, site_id: int) -> NewSites:
        """The budget of a page of site ``site_id`` (0: no site, e.g. a seeds file: only WIRE_MAX_SITES)."""
        if not site_id:
            return cls(0, max(rules.max_sites - collection.sites.count, 0))
        added = int(collection.sites.record(site_id)["new_sites"])
        return cls(site_id, rules.new_sites_allowed(added, collection.sites.count))

    def take(self, site: str) -> bool:
        """Whether the new site ``site`` may be added (and it is counted); else it is counted as refused."""
        if self.left > 0:
            self.left -= 1
            self.added += 1
            return True
        self.refused.add(site)
        return False

    def record(self, collection: Collection) -> None:
        if self.site_id and (self.added or self.refused):
            site = collection.sites.record(self.site_id)
            site["new_sites"] = min(int(site["new_sites"]) + self.added, 0xFFFFFFFF)
            # A site linked again, by this page revisited or another page of the site, was counted already.
            for name in sorted(self.refused):
                if collection.refused.first(self.site_id, name, int(site["new_sites_refused"])):
                    site["new_sites_refused"] += 1
                    self.counted += 1


def new_site_allowed(collection: Collection, rules: SeederRules, source: str, target: str) -> bool:
    """Whether a page of the site ``source`` may add the site ``target`` now (a known site always; sites as
    the collection names them, ``wirescrapy.url.site_of``): what the harvester asks before following a
    redirect, so that it fetches nothing of a site the gatherer will refuse."""
    urls = collection.urls
    return bool(urls.site_id(target)) or NewSites.of_page(collection, rules, urls.site_id(source)).left > 0


def add_decision(
    collection: Collection,
    rules: SeederRules,
    decision: Decision,
    flags: int = 0,
    last_modified: float | None = None,
    report: AddReport | None = None,
    add_root: bool | None = None,
    redirects: int = 0,
    new_sites: NewSites | None = None,
    reached: list | None = None,
) -> tuple[int, Outcome]:
    """Apply one decision: the doc-id (0 if not added) and what happened.

    A known URL keeps its smallest depth and redirect hops and gains ``flags``; a new one is added unless its
    site is full or ``redirects`` (the redirect hops that led to it) is past the limit, or it is on a new site
    past the bounds on new sites (``new_sites``: the linking page's budget; without one, ``WIRE_MAX_SITES``
    only); the first URL of a new site brings the site's home page at the same depth and hops (``add_root``,
    by default ``WIRE_ADD_ROOT``).
    ``last_modified`` (from a sitemap) is kept when later than what the document has. ``reached``: where a
    known URL's (doc-id, depth, flags, hops) go for ``Collection.reach_many``, instead of reaching it now.
    """
    if not decision.kept:
        return 0, Outcome.SKIPPED
    flags = decision.flag_bits | int(flags)
    depth = min(decision.depth, MAX_STORED_DEPTH)
    site_id, doc_id = collection.find(decision.site, decision.target)
    redirects = min(redirects, 0xFF)
    if doc_id:
        if reached is None:
            collection.reach(doc_id, depth, flags, redirects)
        else:
            reached.append((doc_id, depth, flags, redirects))
        outcome = Outcome.KNOWN
    else:
        if not rules.within_redirect_limit(redirects):
            return 0, Outcome.TOO_MANY_REDIRECTS
        if not site_id and not (
            new_sites.take(decision.site)
            if new_sites is not None
            else collection.sites.count < rules.max_sites
        ):
            return 0, Outcome.SITE_REFUSED
        if site_id and not rules.within_site_limit(int(collection.sites.record(site_id)["docs"])):
            collection.sites.record(site_id)["docs_over_limit"] += 1
            return 0, Outcome.OVER_LIMIT
        doc_id = collection.add_document(decision.site, decision.target, depth, flags, site_id, redirects)
        outcome = Outcome.NEW
        if not site_id and report is not None:
            report.to_new_sites += 1
        if decision.verdict is Verdict.LOG:
            site = collection.documents.record(doc_id)["siteid"]
            collection.sites.record(int(site))["multimedia"] += 1
        if not site_id and (rules.add_root if add_root is None else add_root) and decision.target != "/":
            root = rules.classify_at(decision.site + "/", decision.depth)
            _, root_outcome = add_decision(collection, rules, root, redirects=redirects)
            if report is not None:
                report.roots_added += root_outcome is Outcome.NEW
    if last_modified and last_modified > collection.documents.record(doc_id)["last_modified"]:
        collection.documents.record(doc_id)["last_modified"] = last_modified
    return doc_id, outcome


def add_links(
    collection: Collection,
    rules: SeederRules,
    links: Iterable[str],
    parent_depth: int | None,
    base_url: str | None = None,
    new_sites: NewSites | None = None,
    classified: Sequence[Decision] = (),
) -> AddReport:
    """Add the links of a page at ``parent_depth`` (relative ones resolved against ``base_url``);
    ``new_sites``: the page's budget of new sites; ``classified``: the decisions
    ``rules.classify(link, parent_depth)`` made beforehand for the first links (in a parse worker,
    ``gatherer/workers.py``), not made again."""
    return add_listed(
        collection, rules, ((link, None) for link in links), parent_depth, base_url, new_sites, classified
    )


def add_listed(
    collection: Collection,
    rules: SeederRules,
    entries: Iterable[tuple[str, float | None]],
    parent_depth: int | None,
    base_url: str | None = None,
    new_sites: NewSites | None = None,
    classified: Sequence[Decision] = (),
) -> AddReport:
    """Add (URL, last-modified or None) entries, from a sitemap or a robots.rdf, as links of a page at
    ``parent_depth``; ``new_sites``: the budget of new sites they may add."""
    report = AddReport()
    seen: set[int] = set()
    reached: list[tuple[int, int, int, int]] = []  # the known URLs, reached at the end, all at once
    made = len(classified)
    try:
        for i, (link, last_modified) in enumerate(entries):
            if i < made:
                decision = classified[i]
            else:
                if base_url:
                    try:
                        link = urllib.parse.urljoin(base_url, link.strip())
                    except ValueError:  # e.g. an unclosed "[": classify reports the bad URL
                        pass
                decision = rules.classify(link, parent_depth)
            count_out_of_crawl(collection, decision)
            doc_id, outcome = add_decision(
                collection,
                rules,
                decision,
                last_modified=last_modified,
                report=report,
                new_sites=new_sites,
                reached=reached,
            )
            report.count(decision, outcome)
            if doc_id and decision.fetch and doc_id not in seen:
                seen.add(doc_id)
                report.targets.append(doc_id)
    finally:  # the links met before a failure (a full disk) count, as they did one by one
        collection.reach_many(reached)
    return report


def count_out_of_crawl(collection: Collection, decision: Decision) -> None:
    """Count a link that leads out of the crawl (``collection/outlinks.py``): to a file of an extension that
    is not crawled (logged or ignored), or to a host outside the accepted domains, by top-level domain."""
    if decision.verdict is Verdict.LOG or decision.reason in (
        Reason.IGNORED_EXTENSION,
        Reason.UNKNOWN_EXTENSION,
    ):
        collection.outlinks.count("extension", extension(decision.target.partition("?")[0]))
    elif decision.reason is Reason.DOMAIN:
        host = host_of(decision.site)
        label = host.rpartition(".")[2]
        collection.outlinks.count("tld", "(ip)" if label.isdigit() or host.startswith("[") else label)
