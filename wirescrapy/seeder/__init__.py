"""The seeder: which URLs enter the collection, in what canonical form (thesis §7.2.4).

* ``rules`` — accept / reject / transform, depth (pure decisions; the canonical form is ``wirescrapy.url``);
* ``add`` — applying decisions to a collection: new documents, max URLs per site, home pages;
* ``robots`` — a site's robots.txt state and rules (RFC 9309, Protego);
* ``sitemaps`` — sitemaps and WIRE's robots.rdf as (URL, last-modified) entries;
* ``seedfile`` — ``scrapy seed FILE``.
"""

from .add import AddReport, add_links, add_listed
from .robots import RobotsPolicy
from .rules import Decision, Reason, SeederRules, Verdict
from .sitemaps import parse_robots_rdf, parse_sitemap

__all__ = [
    "AddReport",
    "Decision",
    "Reason",
    "RobotsPolicy",
    "SeederRules",
    "Verdict",
    "add_links",
    "add_listed",
    "parse_robots_rdf",
    "parse_sitemap",
]
