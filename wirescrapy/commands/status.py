"""``scrapy status``: what a collection holds, for a person (or, with ``--json``, a script).

It opens the collection read-only and takes no lock, so it may run while a crawl writes: the figures are
those of the instant it read them (it says when), and a record being written then may count half-written.

``collection_status`` is the pure part: the figures from the record arrays (numpy over all documents at
once; a collection holds millions) and the batch directories. ``print_status`` lays them out.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import RobotsState
from wirescrapy.commands.base import WireCommand
from wirescrapy.harvester.session import HARVEST_FILE
from wirescrapy.items import FetchError
from wirescrapy.manager.batch import (
    INFO_FILE,
    BatchError,
    batch_numbers,
    discard_hint,
    read_batch,
)

RECENT_BATCHES = 5  # shown one a line and checked against their checksums; older ones are summarised
# Disk use by store: a file belongs to the first store whose prefix its name has (sites.log is the URL
# store's).
STORES = (
    ("documents.rec", ("documents.rec",)),
    ("sites.rec", ("sites.rec",)),
    ("urls", ("urls.", "sites.log")),
    ("pages", ("pages.",)),
    ("links", ("links.",)),
    ("batches", ("batches",)),
)


def collection_status(collection: Collection, now: float | None = None, recent: int = RECENT_BATCHES) -> dict:
    """The figures of ``collection`` as a JSON-ready dict; ``now`` is the time it is read (default: now)."""
    docs = collection.documents.records[1 : collection.documents.count + 1]
    sites = collection.sites.records[1 : collection.sites.count + 1]
    fetched = docs["visits"] > 0
    summary = collection.summary()
    return {
        "directory": summary["directory"],
        "as_of": time.time() if now is None else now,
        "documents": {
            "known": summary["documents"],
            "fetched": summary["fetched"],
            "ok": summary["ok"],
            "duplicates": summary["duplicates"],
            "not_fetched": summary["documents"] - summary["fetched"],
        },
        "sites": summary["sites"],
        "pages_stored": summary["pages_stored"],
        "links": summary["links"],
        "status_classes": status_classes(docs["status"][fetched]),
        "errors": errors_by_kind(docs["error"]),
        "robots": {RobotsState(state).name.lower(): count for state, count in _counts(sites["robots_state"])},
        "disk": disk_use(collection.dir),
        "batches": batch_states(collection.dir / "batches", recent),
        "discarded_batches": sorted(p.name for p in (collection.dir / "batches").glob("*.discarded*")),
    }


def _counts(values: np.ndarray) -> list[tuple[int, int]]:
    counts = np.bincount(values.astype(np.int64), minlength=1)
    return [(int(value), int(count)) for value, count in enumerate(counts) if count]


def status_classes(status: np.ndarray) -> dict:
    """HTTP status classes of the last fetches ("2xx": …), and "none" for a fetch without a response."""
    return {(f"{value}xx" if value else "none"): count for value, count in _counts(status // 100)}


def errors_by_kind(error: np.ndarray) -> dict:
    """Documents whose last fetch failed, by ``FetchError`` label (a code this version does not know by
    number)."""
    known = {kind.value: kind.label for kind in FetchError}
    return {known.get(value, f"unknown-{value}"): count for value, count in _counts(error) if value}


def disk_use(directory: Path) -> dict:
    """Bytes on disk (allocated blocks: the record files are sparse) by store, other files, and the total."""
    use = {name: 0 for name, _ in STORES} | {"other": 0}
    for path in directory.iterdir():
        files = path.rglob("*") if path.is_dir() else (path,)
        size = sum(f.stat().st_blocks * 512 for f in files if f.is_file())
        store = next((name for name, prefixes in STORES if path.name.startswith(prefixes)), "other")
        use[store] += size
    use["total"] = sum(use.values())
    return use


def batch_states(batches_dir: Path, recent: int = RECENT_BATCHES) -> list[dict]:
    """Every batch, oldest first. The last ``recent`` are read whole and checked ("checked": true); older
    ones only by their ``batch.json``, as reading every URL of every batch would take long."""
    numbers = batch_numbers(batches_dir)
    return [
        batch_state(batches_dir / f"{number:06d}", number, check=k >= len(numbers) - recent)
        for k, number in enumerate(numbers)
    ]


def batch_state(path: Path, number: int, check: bool = True) -> dict:
    """One batch: when it was written, its URLs, sites and parts, and its state: "harvested" (every part
    has its ``harvest.json``), "unfinished" or "damaged" (with the reason and the way past it)."""
    state = {
        "batch": number,
        "path": str(path),
        "checked": check,
        "created": 0.0,
        "urls": 0,
        "sites": 0,
        "parts": 1,
        "state": "unfinished",
    }
    try:
        info = json.loads((path / INFO_FILE).read_text(encoding="utf-8"))
        state.update(
            created=float(info.get("created", 0.0)),
            urls=int(info.get("urls", 0)),
            sites=int(info.get("sites", 0)),
            parts=int(info.get("parts", 1)),
        )
        parts = (
            [path] if info.get("part") is not None else [path / p["dir"] for p in info.get("part_dirs", [])]
        )
        if check:
            for part in parts:
                read_batch(part)
    except (OSError, ValueError, TypeError, KeyError, BatchError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            reason = f"{path / INFO_FILE}: not JSON ({exc})"
        elif isinstance(exc, (OSError, BatchError)):
            reason = str(exc)
        else:
            reason = f"{path / INFO_FILE}: unexpected content ({exc!r})"
        return {**state, "state": "damaged", "reason": reason, "hint": discard_hint(number)}
    harvests = [_harvest(part) for part in parts]
    done = [harvest for harvest in harvests if harvest is not None]
    state["parts_harvested"] = len(done)
    if done and len(done) == len(parts):
        state["state"] = "harvested"
    if done:
        errors: dict[str, int] = {}
        for harvest in done:
            for kind, count in harvest.get("errors", {}).items():
                errors[kind] = errors.get(kind, 0) + count
        state["harvest"] = {
            "finished": max(h.get("finished", 0.0) for h in done),
            **{
                key: sum(h.get(key, 0) for h in done)
                for key in ("fetched", "ok", "duplicates", "new_urls", "bytes")
            },
            "errors": errors,
        }
    return state


def _harvest(part: Path) -> dict | None:
    try:
        return json.loads((part / HARVEST_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


# -- for a person ----------------------------------------------------------------------------------------


def print_status(status: dict, recent: int = RECENT_BATCHES) -> None:
    docs = status["documents"]
    print(f"collection  {status['directory']}")
    print(f"as of       {_when(status['as_of'], full=True)} (read without a lock: a crawl may be writing)")
    print(
        f"documents   {docs['known']:,} known: {docs['fetched']:,} fetched ({docs['ok']:,} OK, "
        f"{docs['duplicates']:,} duplicates), {docs['not_fetched']:,} not yet fetched"
    )
    print(
        f"sites       {status['sites']:,}; pages stored {status['pages_stored']:,}; links {status['links']:,}"
    )
    print(f"last fetch  {_listing(status['status_classes'])}")
    print(f"errors      {_listing(status['errors'])}")
    print(f"robots.txt  {_listing(status['robots'])}")
    disk = status["disk"]
    parts = ", ".join(f"{name} {_size(size)}" for name, size in disk.items() if name != "total" and size)
    print(f"disk        {_size(disk['total'])}: {parts}")
    print_batches(status["batches"], status["discarded_batches"], recent)


def print_batches(batches: list[dict], discarded: list[str], recent: int = RECENT_BATCHES) -> None:
    states = [batch["state"] for batch in batches]
    counts = ", ".join(
        f"{states.count(s)} {s}" for s in ("harvested", "unfinished", "damaged") if s in states
    )
    aside = f"; {len(discarded)} set aside ({', '.join(discarded)})" if discarded else ""
    print(f"batches     {len(batches)}{': ' + counts if counts else ''}{aside}")
    older, shown = batches[:-recent] if recent else batches, batches[-recent:] if recent else []
    if older:
        fetched = sum(b.get("harvest", {}).get("fetched", 0) for b in older)
        ok = sum(b.get("harvest", {}).get("ok", 0) for b in older)
        print(
            f"  {older[0]['batch']:06d}-{older[-1]['batch']:06d}  {len(older)} older batches, "
            f"{sum(b['urls'] for b in older):,} URLs, {fetched:,} fetched ({ok:,} OK)"
        )
    for batch in shown:
        print(
            f"  {batch['batch']:06d}  {_when(batch['created'])}  {batch['urls']:,} URLs, "
            f"{_count(batch['sites'], 'site')}, {_count(batch['parts'], 'part')}: "
            f"{_batch_state(batch)}"
        )


def _batch_state(batch: dict) -> str:
    if batch["state"] == "damaged":
        return f"damaged: {batch['reason']}; {batch['hint']}"
    harvest = batch.get("harvest")
    if batch["state"] == "harvested":
        return (
            f"harvested {_when(harvest['finished'])}, {harvest['fetched']:,} fetched ({harvest['ok']:,} OK)"
        )
    if harvest:
        return f"unfinished ({batch['parts_harvested']} of {batch['parts']} parts harvested)"
    return "unfinished"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _listing(counts: dict) -> str:
    return ", ".join(f"{name} {count:,}" for name, count in counts.items()) or "none"


def _when(seconds: float, full: bool = False) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC" if full else "%Y-%m-%d %H:%M", time.gmtime(seconds))


def _size(size: float) -> str:
    if size < 1024:
        return f"{size:,.0f} B"
    for unit in ("KiB", "MiB", "GiB"):
        size /= 1024
        if size < 1024 or unit == "GiB":
            break
    return f"{size:,.1f} {unit}"


class Command(WireCommand, ScrapyCommand):
    def syntax(self):
        return "[options]"

    def short_desc(self):
        return "Say what the collection holds: documents, sites, fetch outcomes, batches, disk use"

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")

    def run(self, args, opts):
        if args:
            raise UsageError("no arguments expected")
        config = self.wire_config()
        collection = self.read_collection(config)
        with collection:
            status = collection_status(collection)
        if opts.json:
            print(json.dumps(status, indent=1))
        else:
            print_status(status)
