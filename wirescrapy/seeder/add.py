"""Applying the seeder's decisions to a collection: new documents, their depth and flags, the site limits.

``add_links`` (a page's links), ``add_listed`` (a sitemap's or robots.rdf's entries) and ``add_decision``
(one URL, e.g. a seed) write what ``SeederRules`` decided (``rules.py``) into a ``Collection``: new
documents with their depth and flags (a known one keeps its smallest depth and gains the flags:
``Collection.reach``), ``WIRE_MAX_URLS_PER_SITE`` (beyond it a new URL only counts in the site's
``docs_over_limit``), the site's ``multimedia`` counter, and with ``WIRE_ADD_ROOT`` the home page of every
new site.
"""

from __future__ import annotations

import enum
import urllib.parse
from collections import Counter
from collections.abc import Iterable
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
        else:
            self.skipped[decision.reason] += 1


def add_decision(collection: Collection, rules: SeederRules, decision: Decision, flags: int = 0,
                 last_modified: float | None = None, report: AddReport | None = None,
                 add_root: bool | None = None) -> tuple[int, Outcome]:
    """Apply one decision: the doc-id (0 if not added) and what happened.

    A known URL keeps its smallest depth and gains ``flags``; a new one is added unless its site is full;
    the first URL of a new site brings the site's home page at the same depth (``add_root``, by default
    ``WIRE_ADD_ROOT``). ``last_modified`` (from a sitemap) is kept when later than what the document has.
    """
    if not decision.kept:
        return 0, Outcome.SKIPPED
    flags = int(decision.flags | flags)
    depth = min(decision.depth, MAX_STORED_DEPTH)
    site_id, doc_id = collection.find(decision.site, decision.target)
    if doc_id:
        collection.reach(doc_id, depth, flags)
        outcome = Outcome.KNOWN
    else:
        if site_id and not rules.within_site_limit(int(collection.sites.records[site_id]["docs"])):
            collection.sites.records[site_id]["docs_over_limit"] += 1
            return 0, Outcome.OVER_LIMIT
        doc_id = collection.add_document(decision.site, decision.target, depth, flags, site_id)
        outcome = Outcome.NEW
        if decision.verdict is Verdict.LOG:
            site = collection.documents.records[doc_id]["siteid"]
            collection.sites.records[site]["multimedia"] += 1
        if not site_id and (rules.add_root if add_root is None else add_root) and decision.target != "/":
            root = rules.classify_at(decision.site + "/", decision.depth)
            _, root_outcome = add_decision(collection, rules, root)
            if report is not None:
                report.roots_added += root_outcome is Outcome.NEW
    if last_modified and last_modified > collection.documents.records[doc_id]["last_modified"]:
        collection.documents.records[doc_id]["last_modified"] = last_modified
    return doc_id, outcome


def add_links(collection: Collection, rules: SeederRules, links: Iterable[str], parent_depth: int | None,
              base_url: str | None = None) -> AddReport:
    """Add the links of a page at ``parent_depth`` (relative ones resolved against ``base_url``)."""
    return add_listed(collection, rules, ((link, None) for link in links), parent_depth, base_url)


def add_listed(collection: Collection, rules: SeederRules, entries: Iterable[tuple[str, float | None]],
               parent_depth: int | None, base_url: str | None = None) -> AddReport:
    """Add (URL, last-modified or None) entries, from a sitemap or a robots.rdf, as links of a page at
    ``parent_depth``."""
    report = AddReport()
    seen: set[int] = set()
    for link, last_modified in entries:
        if base_url:
            try:
                link = urllib.parse.urljoin(base_url, link.strip())
            except ValueError:  # e.g. an unclosed "[": classify reports the bad URL
                pass
        decision = rules.classify(link, parent_depth)
        count_out_of_crawl(collection, decision)
        doc_id, outcome = add_decision(collection, rules, decision, last_modified=last_modified,
                                       report=report)
        report.count(decision, outcome)
        if doc_id and decision.fetch and doc_id not in seen:
            seen.add(doc_id)
            report.targets.append(doc_id)
    return report


def count_out_of_crawl(collection: Collection, decision: Decision) -> None:
    """Count a link that leads out of the crawl (``collection/outlinks.py``): to a file of an extension
    that is not crawled (logged or ignored), or to a host outside the accepted domains, by top-level domain."""
    if decision.verdict is Verdict.LOG or decision.reason in (Reason.IGNORED_EXTENSION, Reason.UNKNOWN_EXTENSION):
        collection.outlinks.count("extension", extension(decision.target.partition("?")[0]))
    elif decision.reason is Reason.DOMAIN:
        host = host_of(decision.site)
        label = host.rpartition(".")[2]
        collection.outlinks.count("tld", "(ip)" if label.isdigit() or host.startswith("[") else label)
