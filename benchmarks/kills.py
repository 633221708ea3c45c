"""kill -9 at scale: a campaign of SIGKILLs at random moments of a multi-cycle crawl of the sample web.

    python -m benchmarks.kills                 # 100 kills
    python -m benchmarks.kills --kills 10      # CI

What it does, all on this machine (the sample web in a subprocess on 127.0.0.1, every command a real
``python -m scrapy`` subprocess with ``settings.test``):

1. **Reference**: an uninterrupted crawl from the seeds until the manager has nothing left to fetch
   (``scrapy crawl harvester -a seeds=FILE -a cycles=N``, run again until a run fetches nothing).
2. **Campaign**: on a fresh collection the same commands, each killed with SIGKILL (its whole process group)
   at a random moment: 80 % of the runs are harvesters (``-a seeds=FILE -a cycles=N``, seeding known URLs
   again changes nothing), killed either at a random time from their start (start-up, seeding, the manager
   inside the harvest) or a random time after their first ``Batch`` line (fetching and gathering); 20 % are
   ``scrapy manager``, killed at a random time from its start. The phase a kill landed in is read from what
   the killed process had logged. After every kill the collection is opened by a writer (its recovery) and
   checked (``wirescrapy.testing.invariants``: counts, ids, URL store round trip, page store and link graph
   checks, link targets, duplicates, batches readable); a check that fails is an inconsistency.
   The next harvester run resumes the unfinished batch: counted as a recovery.
   **Ingest** (``INGEST_SHARE`` of the choices): a cycle harvested as detached parts into WARC
   (``scrapy manager --parts 2``, then both parts at once by ``scrapy crawl harvester -a batch=PART
   -a warc=OUT`` with no collection), then ``scrapy ingest OUT OUT`` killed at a random moment, checked as
   above, and run again (killed again or not) until a run ends by itself: it must exit 0, every part must have
   its ``harvest.json``; a re-run that passed over fetches a killed one had brought in counts as a recovery.
   **Report** (``REPORT_SHARE``): ``scrapy report --out DIR`` killed at a random moment; the collection must
   be byte for byte as before (the report is read-only), ``DIR`` must hold either nothing or a complete report
   (``report.json`` parses, ``index.html`` whole and of the same run, every CSV it links present), and a
   re-run must write a complete report and leave no temporary directory beside it.
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

Printed: kills, kills by phase (harvester, manager, ingest, report), runs by command, recoveries,
inconsistencies (with what was found), rounds and how many ended equal to the reference, and the differences
of any that did not.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.items import FetchError
from wirescrapy.testing.invariants import problems
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess

WEB = {"sites": 4, "pages_per_site": 14, "seed": 7, "slow_delay": 0.3, "crawl_delay": 0.25}
CYCLES = 40
MANAGER_SHARE = 0.2
EARLY_SHARE = 0.3  # of harvester kills: at a random time from start rather than after the first batch line
INGEST_SHARE = 0.15  # of the choices: a cycle harvested detached into WARC, its ingest killed
REPORT_SHARE = 0.1  # of the choices: scrapy report killed
INGEST_KILL_SHARE = 0.6  # of ingest runs after the first kill: killed again
NO_COLLECTION = "/nonexistent/wire-kills-collection"  # what a detached harvester is given
KINDS = ("harvester", "manager", "ingest", "report")


def command(collection: Path, *args: str) -> list[str]:
    """The arguments of ``scrapy ARGS`` on ``collection``."""
    return [*args, "-s", f"WIRE_COLLECTION_DIR={collection}", "-s", "LOGSTATS_INTERVAL=0"]


def harvester(collection: Path, seeds: Path) -> list[str]:
    return command(collection, "crawl", "harvester", "-a", f"seeds={seeds}", "-a", f"cycles={CYCLES}")


def run(args: list[str], log: Path) -> subprocess.Popen:
    """``scrapy ARGS`` started in a process group of its own (a kill ends its children too), output to
    ``log``."""
    with open(log, "wb") as out:
        return run_scrapy(
            *args, env=scrapy_env(), stdout=out, stderr=subprocess.STDOUT, wait=False, start_new_session=True
        )


def crawl_to_the_end(collection: Path, seeds: Path, log: Path) -> None:
    """Harvest uninterrupted until a run fetches nothing."""
    for _ in range(10):
        done = run_scrapy(*harvester(collection, seeds), env=scrapy_env(), timeout=900)
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


def kill_after_line(process: subprocess.Popen, log: Path, line: str, seconds: float) -> bool:
    """Kill ``seconds`` after ``line`` is in the log; False if it ended first."""
    deadline = time.monotonic() + 60
    while line.encode() not in log.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            return kill_after(process, 0)
        time.sleep(0.02)
    return kill_after(process, seconds)


def kill_after(process: subprocess.Popen, seconds: float) -> bool:
    try:
        process.wait(timeout=seconds)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return True


def phase_of(kind: str, log: str, report: Path | None = None) -> str:
    if kind == "manager":
        return "scrapy manager"
    if kind == "ingest":
        if "Spider opened" not in log:
            return "scrapy ingest: start-up"
        return "scrapy ingest: closing" if "Ingested " in log else "scrapy ingest: ingesting"
    if kind == "report":
        writing = report is not None and any(report.parent.glob(f".{report.name}.tmp-*"))
        return "scrapy report: writing files" if writing else "scrapy report: start-up and reading"
    if "Spider opened" not in log and "Seeded" not in log:
        return "harvester: start-up"
    if "] INFO: Batch " not in log:
        return "harvester: seeding and the manager"
    if "Harvest summary" in log or "Closing spider" in log:
        return "harvester: closing"
    cycles = log.count("] INFO: Batch ")
    return "harvester: fetching, cycle 1" if cycles == 1 else "harvester: fetching, a later cycle"


# -- ingest and report ------------------------------------------------------------------------------------


def batch_numbers(directory: Path) -> list[str]:
    return (
        sorted(p.name for p in (directory / "batches").glob("[0-9]*"))
        if (directory / "batches").is_dir()
        else []
    )


def harvest_detached(directory: Path, work: Path, number: int) -> list[tuple[Path, Path]]:
    """A cycle as detached parts into WARC (uninterrupted); (part, WARC directory) pairs, [] if nothing is
    due."""
    before = batch_numbers(directory)
    done = run_scrapy(*command(directory, "manager", "--parts", "2"), env=scrapy_env(), timeout=300)
    if done.returncode:
        raise SystemExit(f"scrapy manager --parts 2 failed ({done.returncode}):\n{done.stderr[-3000:]}")
    new = [name for name in batch_numbers(directory) if name not in before]
    if not new:
        return []
    parts = sorted((directory / "batches" / new[-1]).glob("part-*"))
    outdirs = [work / f"warc-{number}-{k}" for k in range(len(parts))]
    jobs = [
        run_scrapy(
            *command(Path(NO_COLLECTION), "crawl", "harvester", "-a", f"batch={part}", "-a", f"warc={out}"),
            env=scrapy_env(),
            wait=False,
        )
        for part, out in zip(parts, outdirs, strict=True)
    ]
    for job in jobs:
        _, stderr = job.communicate(timeout=600)
        if job.returncode:
            raise SystemExit(f"a detached harvester failed ({job.returncode}):\n{stderr[-3000:]}")
    return list(zip(parts, outdirs, strict=True))


def ingest_problems(parts: list[tuple[Path, Path]], log: str, returncode: int) -> list[str]:
    """What is wrong after an ingest that ended by itself."""
    if returncode or "Traceback" in log:
        return [f"scrapy ingest exited {returncode}: {log[-1500:]}"]
    return [
        f"{out.name} ingested, but {part} has no harvest.json"
        for part, out in parts
        if not (part / "harvest.json").exists()
    ]


def fingerprint(directory: Path) -> dict[str, str]:
    """Every file of the collection and its content's hash."""
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def report_problems(out: Path) -> list[str]:
    """What is wrong with ``out``: it must hold nothing or a whole report, all of one run."""
    if not out.exists():
        return []
    try:
        data = json.loads((out / "report.json").read_text())
        page = (out / "index.html").read_text()
    except (OSError, ValueError) as exc:
        return [f"{out}: {exc}"]
    found = []
    if data.get("format") != "wirescrapy-report":
        found.append("report.json: not a report")
    if not page.rstrip().endswith("</html>"):
        found.append("index.html: cut short")
    if f"as of {data.get('as_of_utc')} UTC" not in page:
        found.append("index.html and report.json are of different runs")
    missing = sorted(
        {name for name in re.findall(r'href="(data/[^"]+\.csv)"', page) if not (out / name).is_file()}
    )
    if missing:
        found.append(f"CSV files linked but missing: {missing[:3]}")
    return found


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.glob(f".{out.name}.*"))


def choose(rng: random.Random, directory: Path, killed_kinds: set, kills_left: int) -> str:
    """What to run next; a short campaign kills each kind at least once."""
    if not (directory / "urls.log").exists():
        return "harvester"
    missing = [kind for kind in KINDS if kind not in killed_kinds]
    if missing and kills_left <= len(missing):
        return missing[0]
    r = rng.random()
    for kind, share in (("manager", MANAGER_SHARE), ("ingest", INGEST_SHARE), ("report", REPORT_SHARE)):
        if r < share:
            return kind
        r -= share
    return "harvester"


def window(kind: str, durations: dict) -> float:
    """How long after its start to kill at most: the median time such a run took to its end."""
    times = sorted(durations[kind][-9:])
    return times[len(times) // 2]


def argv_of(kind: str, directory: Path, seeds: Path, parts: list, out: Path | None) -> list[str]:
    if kind == "manager":
        return command(directory, "manager")
    if kind == "ingest":
        return command(directory, "ingest", *(str(warc) for _, warc in parts))
    if kind == "report":
        return command(directory, "report", "--out", str(out))
    return harvester(directory, seeds)


def report_checks(
    directory: Path, before: dict | None, out: Path, returncode: int, log: str, what: str
) -> list[str]:
    """The collection untouched (when ``before`` is given); ``out`` nothing or a whole report; a run that
    ended by itself exited 0 and left no temporary directory."""
    found = []
    if before is not None and fingerprint(directory) != before:
        after = fingerprint(directory)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        found.append(f"scrapy report changed the collection: {changed[:5]}")
    if what and (returncode or "Traceback" in log):
        found.append(f"{what} exited {returncode}: {log[-1500:]}")
    found += report_problems(out)
    if what and leftovers(out):
        found.append(f"{what} left {leftovers(out)} beside {out}")
    return found


# -- comparison ------------------------------------------------------------------------------------------


def snapshot(directory: Path) -> dict:
    """The collection, ids replaced by URLs (see the module docstring)."""
    with Collection(directory, readonly=True) as collection:
        n = collection.documents.count
        records = collection.documents.records[1 : n + 1]
        url = [""] + [collection.url(doc_id) for doc_id in range(1, n + 1)]
        fetched = {
            url[i + 1]: (int(r["status"]), int(r["error"]), int(r["content_hash"]))
            for i, r in enumerate(records)
            if r["last_visit"] > 0
        }
        csr = collection.links.to_csr(n + 1)
        links = {
            url[d]: frozenset(url[t] for t in csr.indices[csr.indptr[d] : csr.indptr[d + 1]])
            for d in range(1, n + 1)
            if csr.indptr[d + 1] > csr.indptr[d]
        }
        groups = collections.defaultdict(set)
        for i, r in enumerate(records):
            if r["stored_length"] > 0 or r["flags"] & DocFlag.DUPLICATE:
                groups[int(r["content_hash"])].add(url[i + 1])
        duplicates = {frozenset(g) for g in groups.values() if len(g) > 1}
        sites = collection.sites.records[1 : collection.sites.count + 1]
        robots = {collection.urls.site_name(i + 1): int(s["robots_state"]) for i, s in enumerate(sites)}
    return {
        "urls": set(url[1:]),
        "fetched": fetched,
        "links": links,
        "duplicates": duplicates,
        "robots": robots,
        "loops": redirect_loops(fetched, links),
    }


def redirect_loops(fetched: dict, links: dict) -> set[frozenset]:
    """The redirect loops found, as sets of URLs; the loop error leaves the per-URL comparison.

    Which page of a loop gets the error depends on which was fetched first (the follow-up that closes the
    chain gets it), and a kill changes the order: a → b → a, a fetched first, records the error on b; b
    fetched first after a restart records it on a; and a chain cut by a kill, its last hop fetched in a later
    harvest, records none (a redirect to a page visited within its revisit period is not followed again). The
    loop itself is the fact to compare: a cycle of redirects (a 3xx or the loop error, one link each)."""
    redirects = set()
    for url, (status, error, content) in list(fetched.items()):
        if error == FetchError.REDIRECT_LOOP:
            fetched[url] = (status, 0, content)
            redirects.add(url)
        elif 300 <= status < 400:
            redirects.add(url)
    loops = set()
    for start in redirects:
        cycle, here = [start], start
        while len(links.get(here, ())) == 1 and len(cycle) <= 20:
            (here,) = links[here]
            if here == start:
                loops.add(frozenset(cycle))
                break
            if here not in redirects or here in cycle:
                break
            cycle.append(here)
    return loops


def differences(got: dict, want: dict) -> list[str]:
    found = []
    for key in ("urls", "duplicates", "loops"):
        if got[key] != want[key]:
            extra, missing = got[key] - want[key], want[key] - got[key]
            found.append(
                f"{key}: {len(extra)} more ({sorted(map(str, extra))[:3]}), {len(missing)} fewer "
                f"({sorted(map(str, missing))[:3]})"
            )
    for key in ("fetched", "links", "robots"):
        if got[key] != want[key]:
            keys = {k for k in got[key].keys() | want[key].keys() if got[key].get(k) != want[key].get(k)}
            sample = sorted(keys)[:3]
            found.append(
                f"{key}: {len(keys)} differ, e.g. "
                + "; ".join(f"{k}: {got[key].get(k)!r} != {want[key].get(k)!r}" for k in sample)
            )
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
            print(
                f"sample web: {WEB}; {len(web.truth.pages)} pages in its ground truth; {args.kills} kills, "
                f"random seed {args.seed}",
                flush=True,
            )
            t0 = time.monotonic()
            crawl_to_the_end(work / "reference", seeds, work / "reference.log")
            reference = snapshot(work / "reference")
            print(
                f"reference crawl: {len(reference['fetched'])} URLs fetched of "
                f"{len(reference['urls'])} known, {sum(map(len, reference['links'].values()))} links, "
                f"{len(reference['duplicates'])} duplicate sets, in {time.monotonic() - t0:.0f} s",
                flush=True,
            )
            directory, killed_before, ingesting, killed_kinds = work / "round-1", False, [], set()
            durations = {"manager": [3.0], "ingest": [5.0], "report": [10.0]}
            while counts["kills"] < args.kills:
                kind = (
                    "ingest"
                    if ingesting
                    else choose(rng, directory, killed_kinds, args.kills - counts["kills"])
                )
                if kind == "ingest" and not ingesting:
                    ingesting = harvest_detached(directory, work, counts["detached cycles"] + 1)
                    if not ingesting:
                        continue  # nothing due: the next harvester ends the round
                    counts["detached cycles"] += 1
                    ingest_killed = False
                log, out = work / "run.log", work / "report"
                before = fingerprint(directory) if kind == "report" else None
                process, began = run(argv_of(kind, directory, seeds, ingesting, out), log), time.monotonic()
                if kind == "harvester":
                    killed = kill_harvester(process, log, rng)
                elif kind == "ingest" and ingest_killed and rng.random() >= INGEST_KILL_SHARE:
                    killed = kill_after(process, 900)  # this one runs to its end
                elif (
                    kind == "ingest" and rng.random() < 0.5
                ):  # while it ingests (start-up is most of its time)
                    killed = kill_after_line(process, log, "Spider opened", rng.uniform(0.0, 1.0))
                else:  # within the time such a run took when it ran to its end (they are short)
                    killed = kill_after(process, rng.uniform(0.0, window(kind, durations)))
                text = log.read_text(errors="replace")
                counts["runs"] += 1
                counts[f"{kind} runs"] += 1
                if kind == "harvester" and killed_before and "Resuming the unfinished batch" in text:
                    counts["recoveries"] += 1
                if not killed and kind in durations:
                    durations[kind].append(time.monotonic() - began)
                if not killed and kind == "ingest":
                    found = ingest_problems(ingesting, text, process.returncode)
                    inconsistencies += [f"ingest after {counts['kills']} kills: {line}" for line in found]
                    skipped = re.search(r"Ingested \d+ fetches \((\d+) already in the collection\)", text)
                    if ingest_killed and skipped and int(skipped[1]) > 0:
                        counts["ingest recoveries"] += 1
                    if ingest_killed and "harvested already, nothing to ingest" in text:
                        counts["ingest found done"] += 1
                    ingesting, killed_before = [], False
                    continue
                if not killed and kind == "report":
                    inconsistencies += report_checks(
                        directory, before, out, process.returncode, text, "a report"
                    )
                    continue
                if not killed:
                    if process.returncode and "no page to fetch" not in text:
                        inconsistencies.append(
                            f"a {kind} run after a kill failed ({process.returncode}): {text[-1500:]}"
                        )
                    if kind == "harvester" and finished(text):
                        rounds.append(differences(snapshot(directory), reference))
                        print(
                            f"round {len(rounds)} ended after {counts['kills']} kills in all: "
                            f"{'equal to the reference' if not rounds[-1] else rounds[-1]}",
                            flush=True,
                        )
                        directory = work / f"round-{len(rounds) + 1}"
                    killed_before = False
                    continue
                counts["kills"] += 1
                phase = phase_of(kind, text, out)
                phases[phase] += 1
                killed_kinds.add(kind)
                if kind == "ingest":
                    ingest_killed = True
                if kind == "report":
                    inconsistencies += [
                        f"kill {counts['kills']} ({phase}): {line}"
                        for line in report_checks(directory, before, out, 0, "", "")
                    ]
                    began = time.monotonic()
                    again = run_scrapy(
                        *argv_of("report", directory, seeds, [], out), env=scrapy_env(), timeout=900
                    )
                    durations["report"].append(time.monotonic() - began)
                    found = report_checks(
                        directory,
                        None,
                        out,
                        again.returncode,
                        again.stdout + again.stderr,
                        "the report re-run",
                    ) or ([] if out.exists() else ["no report written"])
                    inconsistencies += [f"kill {counts['kills']}: {line}" for line in found]
                    counts["reports complete after a kill"] += not found
                elif kind in ("harvester", "manager"):
                    killed_before = True
                if not (directory / "urls.log").exists():
                    continue  # killed before the collection existed
                with Collection(directory) as collection:  # a writer's open: its recovery
                    found = problems(collection)
                counts["checks"] += 1
                if found:
                    inconsistencies.append(f"kill {counts['kills']} ({phase}): {found[:5]}")
                    shutil.copytree(directory, work / f"inconsistent-{counts['kills']}")
                if counts["kills"] % 10 == 0:
                    print(f"  {counts['kills']} kills, {time.monotonic() - started:.0f} s", flush=True)
            if ingesting:  # the last kill was an ingest's: run it to its end
                done = run_scrapy(
                    *argv_of("ingest", directory, seeds, ingesting, None), env=scrapy_env(), timeout=900
                )
                counts["ingest runs"] += 1
                inconsistencies += ingest_problems(ingesting, done.stderr, done.returncode)
            if (directory / "urls.log").exists():
                crawl_to_the_end(directory, seeds, work / "last.log")
                rounds.append(differences(snapshot(directory), reference))
    finally:
        if not args.keep and not inconsistencies:
            shutil.rmtree(work, ignore_errors=True)
    print(f"kills: {counts['kills']} in {counts['runs']} runs, {time.monotonic() - started:.0f} s")
    for phase, count in sorted(phases.items()):
        print(f"  {phase}: {count}")
    print(
        f"consistency checks after a kill: {counts['checks']}; inconsistencies found: {len(inconsistencies)}"
    )
    for line in inconsistencies:
        print(f"  {line}")
    print(f"recoveries (a harvester after a kill resumed the unfinished batch): {counts['recoveries']}")
    print("runs by command: " + ", ".join(f"{k} {counts[f'{k} runs']}" for k in KINDS))
    print(
        f"ingest: cycles harvested detached into WARC {counts['detached cycles']}; re-runs after a kill that "
        f"passed over fetches already in {counts['ingest recoveries']}, that found a part done already "
        f"{counts['ingest found done']}"
    )
    print(
        f"report: re-runs after a kill that wrote a complete report {counts['reports complete after a kill']}"
    )
    equal = sum(1 for found in rounds if not found)
    print(
        f"rounds (fresh collection crawled to the end through the kills): {len(rounds)}; "
        f"equal to the uninterrupted crawl: {equal}"
    )
    for number, found in enumerate(rounds, 1):
        for line in found:
            print(f"  round {number}: {line}")
    if inconsistencies or equal != len(rounds):
        print(f"working directory kept: {work}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
