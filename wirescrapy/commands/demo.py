"""``scrapy demo``: the offline demonstration on the sample web, with nothing but this machine.

It starts the sample web (``wirescrapy.sampleweb``: several generated sites on 127.0.0.1 whose host names
``*.wire.test`` reach loopback through ``WIRE_DNS_HOSTS``), seeds a collection with its home pages and runs
as much of the WIRE cycle as exists (seeder, then the manager writing the first batch; the harvester comes
next), then says where the collection is and what it holds.
"""

from __future__ import annotations

import tempfile
from pathlib import Path


from wirescrapy.collection import Collection
from wirescrapy.commands.base import WireCommand
from wirescrapy.manager import manage
from wirescrapy.manager.batch import read_batch
from wirescrapy.sampleweb import SampleWebProcess
from wirescrapy.seeder.rules import SeederRules
from wirescrapy.seeder.seedfile import seed


class Command(WireCommand):
    def syntax(self):
        return "[options]"

    def short_desc(self):
        return "Crawl the built-in sample web on loopback into ./demo/collection and report on it"

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("--dir", default="demo/collection", help="collection directory (default: %(default)s)")
        parser.add_argument("--sites", type=int, default=6, help="sites in the sample web")
        parser.add_argument("--pages", type=int, default=40, help="pages per site")

    def run(self, args, opts):
        # The demo talks to its own server on loopback only: allow loopback (WIRE refuses it by default).
        self.settings.setmodule("settings.test", priority="project")
        self.settings.set("WIRE_COLLECTION_DIR", opts.dir, priority="cmdline")
        config = self.wire_config()
        workdir = Path(tempfile.mkdtemp(prefix="wirescrapy-demo-"))
        with SampleWebProcess(workdir=workdir, sites=opts.sites, pages_per_site=opts.pages) as web:
            print(f"sample web: {len(web.hosts)} sites on http://127.0.0.1:{web.port}/ "
                  f"({len(web.truth.unique_pages)} distinct pages reachable from the seeds)")
            with Collection.from_config(config) as collection:
                report = seed(collection, web.seeds, add_root=config.add_root, rules=SeederRules(config))
                print(f"seeded {report.added} start URLs ({report.known} already known)")
                managed = manage(collection, config)
                for path in managed.paths:
                    batch = read_batch(path)
                    print(f"manager: batch {batch.number} of {len(batch.urls)} URLs from "
                          f"{len(batch.sites)} sites written to {path}")
                print_summary(collection)


def print_summary(collection: Collection) -> None:
    summary = collection.summary()
    print(f"\ncollection: {summary.pop('directory')}")
    width = max(map(len, summary))
    for key, value in summary.items():
        print(f"  {key.replace('_', ' '):<{width}}  {value:,}")
