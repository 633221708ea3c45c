"""``scrapy seed FILE``: add start URLs to the collection."""

from __future__ import annotations

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from wirescrapy.commands.base import InputError, WireCommand
from wirescrapy.seeder.rules import SeederRules
from wirescrapy.seeder.seedfile import seed


class Command(WireCommand, ScrapyCommand):
    def syntax(self):
        return "FILE"

    def short_desc(self):
        return "Add the URLs in FILE (one a line, # comments) to the collection"

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError("give one seeds file")
        config = self.wire_config()
        try:
            with open(args[0], encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
        except OSError as exc:
            raise InputError(f"cannot read seeds file: {exc}") from None
        with self.writing(config), self.open_collection(config) as collection:
            report = seed(collection, lines, add_root=config.add_root, rules=SeederRules(config))
            for number, message in report.bad:
                print(f"{args[0]}:{number}: skipped: {message}")
            print(
                f"seeded {report.added} new URLs ({report.known} already known, "
                f"{report.roots_added} home pages added, {len(report.bad)} bad lines) "
                f"into {collection.dir.resolve()}: {collection.sites.count} sites, "
                f"{collection.documents.count} documents"
            )
