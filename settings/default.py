"""wirescrapy's Scrapy settings: WIRE's defaults (Table 7.1) and the Scrapy settings they imply.

Every ``WIRE_*`` setting is declared, documented and validated in ``wirescrapy/config.py``; override any of
them here, in another settings module, with ``-s NAME=VALUE`` or per Scrapyd job.
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
CONCURRENT_REQUESTS = WIRE_CONNECTIONS  # noqa: F821 (defined by default_settings)
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_TIMEOUT = WIRE_CONNECTION_TIMEOUT  # noqa: F821
DOWNLOAD_MAXSIZE = 0
DOWNLOAD_WARNSIZE = 0
ROBOTSTXT_OBEY = False  # robots.txt is the seeder's: per-site rules in the collection
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"

EXTENSIONS = {"wirescrapy.extensions.WireSettingsCheck": 0}
DNS_RESOLVER = "wirescrapy.resolver.MappedResolver"
