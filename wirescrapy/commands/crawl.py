"""``scrapy crawl``: Scrapy's own command, but a failure at start that the input causes (a bad setting or
``-a`` argument, a collection another process writes, a missing or damaged batch) ends in one line,
``scrapy: error: …``, and exit status 2 (``WireCommand.crawl``) instead of a page of
``Unhandled error in Deferred``. A project's ``COMMANDS_MODULE`` overrides Scrapy's command of the same name.
"""

from __future__ import annotations

from scrapy.commands import crawl
from scrapy.exceptions import UsageError

from wirescrapy.commands.base import WireCommand


class Command(WireCommand, crawl.Command):
    quiet = False  # a crawl's INFO log is its progress report

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError("give one spider" if args else "", print_help=not args)
        self.crawl(args[0], **opts.spargs)
