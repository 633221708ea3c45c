"""The Scrapy settings that follow from WIRE ones, derived when a crawler starts.

``settings/default.py`` enables this add-on (``ADDONS``). It sets, at add-on priority:

* ``CONCURRENT_REQUESTS`` = ``WIRE_CONNECTIONS`` (WIRE's ``harvester/nthreads/start``: sites fetched at once);
* ``DOWNLOAD_TIMEOUT`` = ``WIRE_CONNECTION_TIMEOUT``;
* ``RETRY_TIMES`` = ``WIRE_MAX_ERRORS_SAME_BATCH`` − 1 (WIRE counts the first failure among the errors);
* with ``COOKIES_ENABLED`` off (the default), Scrapy's ``CookiesMiddleware`` out of
  ``DOWNLOADER_MIDDLEWARES``: it would only say it is not configured, after a slow import (tldextract,
  requests) at every start.

Computed here rather than in the settings module so that ``-s WIRE_CONNECTIONS=50`` on the command line, or
a Scrapyd job's settings, change them too; a Scrapy setting given explicitly (``-s DOWNLOAD_TIMEOUT=…``, a
settings module) still wins, as its priority is higher. A value that is not a number is left for
``WireSettingsCheck`` to report, naming the setting.
"""

from __future__ import annotations

COOKIES_MIDDLEWARE = "scrapy.downloadermiddlewares.cookies.CookiesMiddleware"
DERIVED = {
    "CONCURRENT_REQUESTS": ("WIRE_CONNECTIONS", int, 0),
    "DOWNLOAD_TIMEOUT": ("WIRE_CONNECTION_TIMEOUT", float, 0),
    "RETRY_TIMES": ("WIRE_MAX_ERRORS_SAME_BATCH", int, -1),
}


class WireAddon:
    def update_settings(self, settings) -> None:
        for name, (source, kind, offset) in DERIVED.items():
            try:
                value = kind(settings[source]) + offset
            except (TypeError, ValueError):
                continue
            settings.set(name, max(value, 0), priority="addon")
        if not settings.getbool("COOKIES_ENABLED"):
            settings["DOWNLOADER_MIDDLEWARES"].set(COOKIES_MIDDLEWARE, None, priority="addon")
