"""``scrapy crawl``: Scrapy's own command, but a failure at start that the input causes (a bad setting or
``-a`` argument, a collection another process writes, a missing or damaged batch) ends in one line,
``scrapy: error: …``, and exit status 2 (``WireCommand.crawl``) instead of a page of
``Unhandled error in Deferred``. A project's ``COMMANDS_MODULE`` overrides Scrapy's command of the same name.

A bad or misspelled WIRE setting is found before Scrapy's start-up lines (its version, the platform, the
settings overridden), so that the one line is all a person at the keyboard reads. A Scrapyd job (``LOG_FILE``
set) is checked when the crawl starts, as before: its log, not stderr, is what a person reads, and the line is
logged there.
"""

from __future__ import annotations

from scrapy.commands import crawl
from scrapy.exceptions import UsageError

from wirescrapy.commands.base import WireCommand


class Command(WireCommand, crawl.Command):
    quiet = False  # a crawl's INFO log is its progress report

    def process_options(self, args, opts):
        super().process_options(args, opts)
        if not self.settings.get("LOG_FILE"):
            self.check_settings_now()

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError("give one spider" if args else "", print_help=not args)
        self.crawl(args[0], **opts.spargs)
