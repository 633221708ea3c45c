"""kill -9 at scale: a campaign of SIGKILLs at random moments of a multi-cycle crawl of the sample web.

    python benchmarks/kills.py                 # 100 kills (about 10 minutes on 2 busy cores)
    python benchmarks/kills.py --kills 10      # CI

What it does, all on this machine (the sample web in a subprocess on 127.0.0.1, every command a real
``python -m scrapy`` subprocess with ``settings.test``):

1. **Reference**: an uninterrupted crawl from the seeds until the manager has nothing left to fetch
   (``scrapy crawl harvester -a seeds=FILE -a cycles=N``, run again until a run fetches nothing).
2. **Campaign**: on a fresh collection the same commands, each killed with SIGKILL (its whole process group)
   at a random moment: 80 % of the runs are harvesters (``-a seeds=FILE -a cycles=N``, seeding known URLs again
   changes nothing), killed either at a random time from their start (start-up, seeding, the manager inside the
   harvest) or a random time after their first ``Batch`` line (fetching and gathering); 20 % are
   ``scrapy manager``, killed at a random time from its start. The phase a kill landed in is read from what
   the killed process had logged. After every kill the collection is opened by a writer (its recovery) and
   checked (``tests/crash/consistency.py``: counts, ids, URL store round trip, page store and link graph
   checks, link targets, duplicates, batches readable); a check that fails is an inconsistency.
   The next harvester run resumes the unfinished batch: counted as a recovery.
   When the crawl of a round ends (a run that was not killed fetched nothing), the round's collection is
   compared with the reference, and a new round starts on a fresh collection.
3. After the last kill the round in progress is finished uninterrupted and compared.

**Equality** of two collections of the same (deterministic) sample web, ids aside (a kill changes the order
in which URLs are found, hence their doc-ids): the same set of known URLs; the same set of fetched URLs
(``last_visit > 0``); per fetched URL the same status, error kind and content hash; the same link graph as
(URL → set of target URLs); the same duplicate sets (URLs grouped by content hash among the stored pages:
which one of a group is the original depends on the order and is not compared); the same redirect loops
(which page of a loop records the loop error depends on the order too: ``redirect_loops``); per site the
same robots.txt state. Visit counts and times are not compared: a page in flight at a kill is fetched again.

Printed: kills, kills by phase, recoveries, inconsistencies (with what was found), rounds and how many
ended equal to the reference, and the differences of any that did not.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.crash.consistency import problems
from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.items import FetchError
from wirescrapy.sampleweb import SampleWebProcess

WEB = {"sites": 4, "pages_per_site": 14, "seed": 7, "slow_delay": 0.3, "crawl_delay": 0.25}
CYCLES = 40
MANAGER_SHARE = 0.2
EARLY_SHARE = 0.3  # of harvester kills: at a random time from start rather than after the first batch line


def command(collection: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "scrapy", *args, "-s", f"WIRE_COLLECTION_DIR={collection}",
            "-s", "LOGSTATS_INTERVAL=0"]


def harvester(collection: Path, seeds: Path) -> list[str]:
    return command(collection, "crawl", "harvester", "-a", f"seeds={seeds}", "-a", f"cycles={CYCLES}")


def environment() -> dict:
    return {**os.environ, "SCRAPY_SETTINGS_MODULE": "settings.test", "PYTHONPATH": str(ROOT)}


def run(argv: list[str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(argv, cwd=ROOT, env=environment(), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def crawl_to_the_end(collection: Path, seeds: Path, log: Path) -> None:
    """Harvest uninterrupted until a run fetches nothing."""
    for _ in range(10):
        done = subprocess.run(harvester(collection, seeds), cwd=ROOT, env=environment(), capture_output=True,
                              text=True, timeout=900, check=False)
        log.write_text(done.stdout + done.stderr)
        if done.returncode:
            raise SystemExit(f"an uninterrupted harvest failed ({done.returncode}):\n{done.stderr[-3000:]}")
        if finished(done.stderr):
            return
    raise SystemExit("the crawl did not end in 10 uninterrupted runs")


def finished(log: str) -> bool:
    """A run that fetched nothing: the manager had no page left."""
    return "manager: no page to fetch" in log and "Batch 0" not in log


# -- kills -----------------------------------------------------------------------------------------------

def kill_harvester(process: subprocess.Popen, log: Path, rng: random.Random) -> bool:
    """Kill at a random moment; False if it ended first."""
    if rng.random() < EARLY_SHARE:
        return kill_after(process, rng.uniform(0.0, 4.0))
    deadline = time.monotonic() + 60
    while b"] INFO: Batch " not in log.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            return kill_after(process, 0)
        time.sleep(0.05)
    return kill_after(process, rng.uniform(0.0, 3.0))


def kill_after(process: subprocess.Popen, seconds: float) -> bool:
    try:
        process.wait(timeout=seconds)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return True


def phase_of(kind: str, log: str) -> str:
    if kind == "manager":
        return "scrapy manager"
    if "Spider opened" not in log and "Seeded" not in log:
        return "harvester: start-up"
    if "] INFO: Batch " not in log:
        return "harvester: seeding and the manager"
    if "Harvest summary" in log or "Closing spider" in log:
        return "harvester: closing"
    cycles = log.count("] INFO: Batch ")
    return "harvester: fetching, cycle 1" if cycles == 1 else "harvester: fetching, a later cycle"


# -- comparison ------------------------------------------------------------------------------------------

def snapshot(directory: Path) -> dict:
    """The collection, ids replaced by URLs (see the module docstring)."""
    with Collection(directory, readonly=True) as collection:
        n = collection.documents.count
        records = collection.documents.records[1:n + 1]
        url = [""] + [collection.url(doc_id) for doc_id in range(1, n + 1)]
        fetched = {url[i + 1]: (int(r["status"]), int(r["error"]), int(r["content_hash"]))
                   for i, r in enumerate(records) if r["last_visit"] > 0}
        csr = collection.links.to_csr(n + 1)
        links = {url[d]: frozenset(url[t] for t in csr.indices[csr.indptr[d]:csr.indptr[d + 1]])
                 for d in range(1, n + 1) if csr.indptr[d + 1] > csr.indptr[d]}
        groups = collections.defaultdict(set)
        for i, r in enumerate(records):
            if r["stored_length"] > 0 or r["flags"] & DocFlag.DUPLICATE:
                groups[int(r["content_hash"])].add(url[i + 1])
        duplicates = {frozenset(g) for g in groups.values() if len(g) > 1}
        sites = collection.sites.records[1:collection.sites.count + 1]
        robots = {collection.urls.site_name(i + 1): int(s["robots_state"]) for i, s in enumerate(sites)}
    return {"urls": set(url[1:]), "fetched": fetched, "links": links, "duplicates": duplicates, "robots": robots,
            "loops": redirect_loops(fetched, links)}


def redirect_loops(fetched: dict, links: dict) -> set[frozenset]:
    """The redirect loops found, as sets of URLs; the loop error leaves the per-URL comparison.

    Which page of a loop gets the error depends on which was fetched first (the follow-up that closes the
    chain gets it), and a kill changes the order: a → b → a, a fetched first, records the error on b; b
    fetched first after a restart records it on a. The loop itself is the fact to compare."""
    loops = set()
    for start, (status, error, content) in list(fetched.items()):
        if error != FetchError.REDIRECT_LOOP:
            continue
        fetched[start] = (status, 0, content)
        cycle, here = [start], start
        while len(links.get(here, ())) == 1 and len(cycle) <= 20:
            (here,) = links[here]
            if here == start:
                break
            cycle.append(here)
        loops.add(frozenset(cycle))
    return loops


def differences(got: dict, want: dict) -> list[str]:
    found = []
    for key in ("urls", "duplicates", "loops"):
        if got[key] != want[key]:
            extra, missing = got[key] - want[key], want[key] - got[key]
            found.append(f"{key}: {len(extra)} more ({sorted(map(str, extra))[:3]}), {len(missing)} fewer "
                         f"({sorted(map(str, missing))[:3]})")
    for key in ("fetched", "links", "robots"):
        if got[key] != want[key]:
            keys = {k for k in got[key].keys() | want[key].keys() if got[key].get(k) != want[key].get(k)}
            sample = sorted(keys)[:3]
            found.append(f"{key}: {len(keys)} differ, e.g. "
                         + "; ".join(f"{k}: {got[key].get(k)!r} != {want[key].get(k)!r}" for k in sample))
    return found


# -- the campaign ----------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026, help="random seed of the kill moments")
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="wire-kills-"))
    started = time.monotonic()
    counts = collections.Counter()
    phases = collections.Counter()
    inconsistencies: list[str] = []
    rounds: list[list[str]] = []
    try:
        with SampleWebProcess(workdir=work / "web", **WEB) as web:
            seeds = work / "seeds.txt"
            seeds.write_text("\n".join(web.seeds) + "\n")
            print(f"sample web: {WEB}; {len(web.truth.pages)} pages in its ground truth; {args.kills} kills, "
                  f"random seed {args.seed}", flush=True)
            t0 = time.monotonic()
            crawl_to_the_end(work / "reference", seeds, work / "reference.log")
            reference = snapshot(work / "reference")
            print(f"reference crawl: {len(reference['fetched'])} URLs fetched of {len(reference['urls'])} known, "
                  f"{sum(map(len, reference['links'].values()))} links, {len(reference['duplicates'])} duplicate "
                  f"sets, in {time.monotonic() - t0:.0f} s", flush=True)
            directory, killed_before = work / "round-1", False
            while counts["kills"] < args.kills:
                kind = "manager" if rng.random() < MANAGER_SHARE and (directory / "urls.log").exists() else "harvester"
                log = work / "run.log"
                argv = command(directory, "manager") if kind == "manager" else harvester(directory, seeds)
                process = run(argv, log)
                killed = (kill_after(process, rng.uniform(0.0, 3.0)) if kind == "manager"
                          else kill_harvester(process, log, rng))
                text = log.read_text(errors="replace")
                counts["runs"] += 1
                if kind == "harvester" and killed_before and "Resuming the unfinished batch" in text:
                    counts["recoveries"] += 1
                if not killed:
                    if process.returncode and "no page to fetch" not in text:
                        inconsistencies.append(f"a {kind} run after a kill failed ({process.returncode}): "
                                               f"{text[-1500:]}")
                    if kind == "harvester" and finished(text):
                        rounds.append(differences(snapshot(directory), reference))
                        print(f"round {len(rounds)} ended after {counts['kills']} kills in all: "
                              f"{'equal to the reference' if not rounds[-1] else rounds[-1]}", flush=True)
                        directory = work / f"round-{len(rounds) + 1}"
                    killed_before = False
                    continue
                counts["kills"] += 1
                phases[phase_of(kind, text)] += 1
                killed_before = True
                if not (directory / "urls.log").exists():
                    continue  # killed before the collection existed
                with Collection(directory) as collection:  # a writer's open: its recovery
                    found = problems(collection)
                counts["checks"] += 1
                if found:
                    inconsistencies.append(f"kill {counts['kills']} ({phase_of(kind, text)}): {found[:5]}")
                    shutil.copytree(directory, work / f"inconsistent-{counts['kills']}")
                if counts["kills"] % 10 == 0:
                    print(f"  {counts['kills']} kills, {time.monotonic() - started:.0f} s", flush=True)
            if (directory / "urls.log").exists():
                crawl_to_the_end(directory, seeds, work / "last.log")
                rounds.append(differences(snapshot(directory), reference))
    finally:
        if not args.keep and not inconsistencies:
            shutil.rmtree(work, ignore_errors=True)
    print(f"kills: {counts['kills']} in {counts['runs']} runs, {time.monotonic() - started:.0f} s")
    for phase, count in sorted(phases.items()):
        print(f"  {phase}: {count}")
    print(f"consistency checks after a kill: {counts['checks']}; inconsistencies found: {len(inconsistencies)}")
    for line in inconsistencies:
        print(f"  {line}")
    print(f"recoveries (a harvester after a kill resumed the unfinished batch): {counts['recoveries']}")
    equal = sum(1 for found in rounds if not found)
    print(f"rounds (fresh collection crawled to the end through the kills): {len(rounds)}; "
          f"equal to the uninterrupted crawl: {equal}")
    for number, found in enumerate(rounds, 1):
        for line in found:
            print(f"  round {number}: {line}")
    if inconsistencies or equal != len(rounds):
        print(f"working directory kept: {work}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
