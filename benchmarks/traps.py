"""Traps that add sites, measured: how many sites a real harvest adds from them.

    python -m benchmarks.traps [--cycles 12] [--fan 50000] [--fan-cycles 2]

* **redirect chain**: ``h0.wire.test/`` redirects to ``h1.wire.test/``, which redirects to ``h2…``, forever.
  The harvester runs ``--cycles`` cycles from the seed ``h0``; printed: the hosts the server was asked for and
  the sites in the collection. Bounded, they stop at ``WIRE_MAX_REDIRECTS`` hops from the seed.
* **fan page**: ``fan.wire.test/`` links to ``--fan`` new hosts (and to a second page linking to as many
  more). ``--fan-cycles`` cycles fetch it (and its second page); printed: the sites and documents its links
  added, the refusals counted on its site (``new_sites_refused``), and the time the cycle took.

Both run ``python -m scrapy crawl harvester`` with ``settings.test`` against the trap web of the tests
(``wirescrapy.testing.trapweb``) on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

from wirescrapy.collection import Collection
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.trapweb import TrapWeb

FAST = {"WIRE_WAIT_NORMAL": 0, "WIRE_WAIT_LARGE_SITE": 0, "LOG_LEVEL": "WARNING"}


def harvest(collection: Path, seeds: Path, cycles: int, settings: dict) -> float:
    started = time.perf_counter()
    run = run_scrapy(
        "crawl",
        "harvester",
        "-a",
        f"seeds={seeds}",
        "-a",
        f"cycles={cycles}",
        env=scrapy_env(),
        settings={"WIRE_COLLECTION_DIR": collection, **FAST, **settings},
        timeout=None,
    )
    if run.returncode != 0:
        sys.exit(f"harvest failed:\n{run.stderr[-3000:]}")
    return time.perf_counter() - started


def served(fan: int) -> TrapWeb:
    web = TrapWeb(fan)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    return web


def redirect_chain(workdir: Path, cycles: int) -> None:
    web = served(0)
    seeds = workdir / "chain-seeds.txt"
    seeds.write_text(web.url("h0") + "\n")
    collection = workdir / "chain"
    elapsed = harvest(collection, seeds, cycles, {})
    web.shutdown()
    with Collection(collection, readonly=True) as stored:
        sites = stored.sites.count
    chain = sorted((h for h in web.hosts if h.startswith("h")), key=lambda h: int(h[1:]))
    print(
        f"redirect chain: {cycles} cycles in {elapsed:.1f} s: {len(chain)} hosts requested "
        f"(h0..{chain[-1]}), {sites} sites in the collection"
    )


def fan_page(workdir: Path, fan: int, cycles: int) -> None:
    web = served(fan)
    seeds = workdir / "fan-seeds.txt"
    seeds.write_text(web.url("fan") + "\n")
    collection = workdir / "fan"
    # The whole page is read, its links all seen: the trap is the links, not the page's size.
    elapsed = harvest(collection, seeds, cycles, {"WIRE_MAX_FILE_SIZE": 100 * fan + 100_000})
    web.shutdown()
    with Collection(collection, readonly=True) as stored:
        source = stored.sites.records[int(stored.documents.records[stored.lookup(web.url("fan"))]["siteid"])]
        sites, documents = stored.sites.count, stored.documents.count
        added, refused = int(source["new_sites"]), int(source["new_sites_refused"])
    errors = {}
    for done in sorted((collection / "batches").glob("*/harvest.json")):
        for kind, count in json.loads(done.read_text())["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    print(
        f"fan page: pages linking to {fan:,} new hosts each, {cycles} cycles in {elapsed:.1f} s: "
        f"{sites:,} sites and {documents:,} documents in the collection; the fan site: new_sites {added:,}, "
        f"new_sites_refused {refused:,}; {len(web.hosts):,} hosts requested; errors {errors or 'none'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=12, help="harvest cycles of the redirect chain")
    parser.add_argument("--fan", type=int, default=50_000, help="new hosts linked from each fan page")
    parser.add_argument(
        "--fan-cycles",
        type=int,
        default=2,
        help="harvest cycles from the fan page (the first fetches it, the second its second page)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wire-traps-") as workdir:
        redirect_chain(Path(workdir), args.cycles)
        fan_page(Path(workdir), args.fan, args.fan_cycles)


if __name__ == "__main__":
    main()
