"""``scrapy crawl``: Scrapy's own command, but a failure at start that the input causes (a bad setting or
``-a`` argument, a collection another process writes, a missing or damaged batch) ends in one line,
``scrapy: error: …``, and exit status 2 (``WireCommand.crawl``) instead of a page of
``Unhandled error in Deferred``. A project's ``COMMANDS_MODULE`` overrides Scrapy's command of the same name.

A bad or misspelled WIRE setting, and a spider argument its class's ``check_arguments`` refuses (a bad value,
or a name it does not take: ``harvester/arguments.py``), are found before Scrapy's start-up lines (its
version, the platform, the settings overridden), so that the one line is all a person at the keyboard reads.
A Scrapyd job (``LOG_FILE`` set) is checked when the crawl starts: its log, not stderr, is what a person
reads, and the line is logged there.
"""

from __future__ import annotations

import difflib

from scrapy.commands import crawl
from scrapy.exceptions import UsageError
from scrapy.utils.misc import load_object

from wirescrapy.commands.base import InputError, WireCommand, input_error_message


class Command(WireCommand, crawl.Command):
    quiet = False  # a crawl's INFO log is its progress report

    def process_options(self, args, opts):
        super().process_options(args, opts)
        if not self.settings.get("LOG_FILE"):
            self.wire_config()
            if len(args) == 1:
                self.check_arguments(args[0], opts.spargs)

    def check_arguments(self, name: str, arguments: dict) -> None:
        """The spider named, and its ``-a`` arguments by its class's ``check_arguments`` if it has one: a
        spider the project has not, or a ValueError, is an ``InputError``."""
        loader = load_object(self.settings["SPIDER_LOADER_CLASS"]).from_settings(self.settings.frozencopy())
        try:
            spider = loader.load(name)
        except KeyError:
            names = sorted(loader.list())
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]}?" if close else f"its spiders: {', '.join(names) or 'none'}"
            raise InputError(f"no spider named {name!r} in this project ({hint})") from None
        check = getattr(spider, "check_arguments", None)
        if check is None:
            return
        try:
            check(**arguments)
        except ValueError as exc:
            raise InputError(input_error_message(exc, name)) from None

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError("give one spider" if args else "", print_help=not args)
        self.crawl(args[0], **opts.spargs)
