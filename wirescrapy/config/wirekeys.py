"""WIRE's configuration keys that have no ``WIRE_*`` setting, and why (``docs/settings.md`` lists them after
its settings table)."""

NOT_IMPLEMENTED = {
    "collection/maxdoc": "not needed: the record files and the URL store grow as ids grow",
    "harvester/nthreads/hardmin": "Scrapy's engine keeps the connection pool full; WIRE_SOFTMIN ends a batch "
    "with few sites left",
    "harvester/timeout/readwrite, poll": "one timeout, WIRE_CONNECTION_TIMEOUT (Scrapy's "
    "DOWNLOAD_TIMEOUT) covers the whole fetch",
    "harvester/timeout/bytes-per-second": "not implemented: a slow page is bounded by the timeout",
    "harvester/dnsmax, dnstimeout, dnsexpire": "Scrapy's resolver (DNSCACHE_SIZE, DNS_TIMEOUT) does this",
    "harvester/user-agent-comment": "Scrapy's USER_AGENT setting",
    "harvester/loglevel": "Scrapy's LOG_LEVEL setting",
    "gatherer/removesource, save-hash-only": "not implemented: pages are always kept",
    "gatherer/use-sketches": "WIRE_NEAR_DUPLICATES: a SimHash of each page's own text, not WIRE's sketches",
    "gatherer/convert-to-utf8": "always on: stored text is UTF-8",
    "gatherer/changetodynamic": "not implemented",
    "seeder/add-robots-txt": "always on: robots.txt is fetched before a site's pages",
    "seeder/extensions/stat/group": "merged into WIRE_EXTENSIONS_LOG",
    "analysis/*, index/*": "WIRE's indexer and language analysis are out of scope",
}
