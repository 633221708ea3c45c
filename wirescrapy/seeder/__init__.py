"""The seeder: which URLs enter the collection, in what canonical form (thesis §7.2.4).

* ``canonical`` — one canonical form per URL;
* ``rules`` — accept / reject / transform, depth, max URLs per site, and adding links to a collection;
* ``robots`` — a site's robots.txt state and rules (RFC 9309, Protego);
* ``sitemaps`` — sitemaps and WIRE's robots.rdf as (URL, last-modified) entries;
* ``seedfile`` — ``scrapy seed FILE``.
"""

from .canonical import BadURL, canonicalize
from .robots import RobotsPolicy
from .rules import AddReport, Decision, Reason, SeederRules, Verdict, add_links, add_listed
from .sitemaps import parse_robots_rdf, parse_sitemap

__all__ = [
    "AddReport", "BadURL", "Decision", "Reason", "RobotsPolicy", "SeederRules", "Verdict", "add_links",
    "add_listed", "canonicalize", "parse_robots_rdf", "parse_sitemap",
]
