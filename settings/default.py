"""wirescrapy's Scrapy settings: WIRE's defaults (Table 7.1) and the Scrapy settings they imply.

Every ``WIRE_*`` setting is declared, documented and validated in ``wirescrapy/config/table.py``; override any
of them here, in another settings module, with ``-s NAME=VALUE`` or per Scrapyd job.
"""

from wirescrapy.config import default_settings

globals().update(default_settings())

BOT_NAME = "wirescrapy"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"
COMMANDS_MODULE = "wirescrapy.commands"

# The robots.txt user-agent token is the first word of USER_AGENT: "wirescrapy".
USER_AGENT = "wirescrapy/0.1 (WIRE crawler; +https://pypi.org/project/wirescrapy/)"

# Politeness is WIRE's (one connection per site, WIRE_WAIT_*), kept by the harvester's scheduler; the
# downloader adds no delay of its own.
DOWNLOAD_DELAY = 0
AUTOTHROTTLE_ENABLED = False
# CONCURRENT_REQUESTS and DOWNLOAD_TIMEOUT follow WIRE_CONNECTIONS and WIRE_CONNECTION_TIMEOUT (the add-on).
ADDONS = {"wirescrapy.addon.WireAddon": 0}
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_MAXSIZE = 0
DOWNLOAD_WARNSIZE = 0
ROBOTSTXT_OBEY = False  # robots.txt is the seeder's: per-site rules in the collection
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"

EXTENSIONS = {
    "wirescrapy.extensions.WireSettingsCheck": 0,
    "wirescrapy.extensions.LogFileGuard": 1,
    "wirescrapy.extensions.CallbackTurn": 2,
    "wirescrapy.harvester.largesites.LargeSiteWait": 400,
    "wirescrapy.harvester.progress.HarvestProgress": 500,
    "scrapy.extensions.logstats.LogStats": None,  # the harvest's progress line says more
}

# The harvester (wirescrapy/harvester/): WIRE's politeness queue, and the gatherer as item pipelines.
SCHEDULER = "wirescrapy.harvester.scheduler.WireScheduler"
DOWNLOADER_MIDDLEWARES = {
    "wirescrapy.harvester.middlewares.batchfilter.BatchFilterMiddleware": 100,
    "wirescrapy.harvester.middlewares.blockedip.BlockedIPMiddleware": 110,
    "wirescrapy.harvester.middlewares.robots.RobotsMiddleware": 120,
    "wirescrapy.harvester.middlewares.render.RenderMiddleware": 130,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "wirescrapy.harvester.middlewares.retry.WireRetryMiddleware": 550,
    # A 429 or 503 with Retry-After goes back to its queue, its server held, before the retries see it.
    "wirescrapy.harvester.middlewares.serverhold.ServerHoldMiddleware": 560,
    "wirescrapy.harvester.middlewares.sitemapslots.SitemapSlotsMiddleware": 945,  # at most 8 sitemaps at once
    "wirescrapy.harvester.middlewares.fetchlimits.FetchLimitsMiddleware": 950,
    # scrapy-splash (WIRE_RENDER_JS): a render's request becomes the request to Splash's /execute (SPLASH_URL)
    "scrapy_splash.SplashCookiesMiddleware": 723,
    "scrapy_splash.SplashMiddleware": 725,
    # Scrapy's HttpCompressionMiddleware's place (scrapy-splash wants it after its own): ours, which inflates
    # no further than the fetch's size limit; the bytes as received are kept for WARC before it decodes them.
    "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": None,
    "wirescrapy.harvester.middlewares.decompression.DecompressionMiddleware": 810,
    "wirescrapy.harvester.middlewares.received.ReceivedMiddleware": 815,
}
# Not scrapy-splash's SplashDeduplicateArgsMiddleware: it only serves `cache_args`, which renders do not use
# (the Lua script is small), and 0.11.1 knows no `process_start`, which a Scrapy 2.13 spider without
# `start_requests` needs.
# scrapy-splash's request fingerprints (its SplashAwareDupeFilter is deprecated for this): the scheduler's
# dupefilter tells renders of different pages, and a render from a raw fetch of the same URL, apart.
REQUEST_FINGERPRINTER_CLASS = "scrapy_splash.SplashRequestFingerprinter"
SPLASH_URL = "http://127.0.0.1:8050"
ITEM_PIPELINES = {
    "wirescrapy.warc.pipeline.WarcPipeline": 50,  # -a warc=DIR or WIRE_WARC_DIR: each fetch as it came
    "wirescrapy.gatherer.pipelines.document.DocumentPipeline": 100,
    "wirescrapy.gatherer.pipelines.parse.ParsePipeline": 200,
    "wirescrapy.gatherer.pipelines.pagestore.PageStorePipeline": 300,
    "wirescrapy.gatherer.pipelines.nearduplicates.NearDuplicatePipeline": 350,
    "wirescrapy.gatherer.pipelines.linkgraph.LinkGraphPipeline": 400,
    "wirescrapy.gatherer.pipelines.metadata.MetadataPipeline": 500,
}
# A harvester callback returns one item (and now and then a follow-up request): Scrapy's default of 100
# parallel slots costs 100 Twisted cooperative tasks per response, which shows in the crawl's CPU time.
CONCURRENT_ITEMS = 2
# Every response reaches the spider, which records it: redirects are followed by the spider (through the
# seeder rules and the politeness queue). A failed fetch is tried again in the same batch up to
# WIRE_MAX_ERRORS_SAME_BATCH times in all (RETRY_TIMES, set by the add-on; the retry waits its site's turn at
# the back of its queue), then recorded; the manager tries it again in later batches until
# WIRE_MAX_ERRORS_DIFFERENT_BATCH.
REDIRECT_ENABLED = False
METAREFRESH_ENABLED = False
HTTPERROR_ALLOW_ALL = True
DNS_RESOLVER = "wirescrapy.resolver.MappedResolver"
# Scrapy's HTTP/1.1 handler, with response headers bounded (WIRE_MAX_HEADER_SIZE, WIRE_MAX_HEADERS).
DOWNLOAD_HANDLERS = {
    "http": "wirescrapy.harvester.headerlimits.HeaderLimitsDownloadHandler",
    "https": "wirescrapy.harvester.headerlimits.HeaderLimitsDownloadHandler",
}
