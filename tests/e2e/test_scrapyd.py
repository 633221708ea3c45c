"""End to end on Scrapyd: the project deployed and its harvester scheduled the way users do it.

A real Scrapyd (``python -m scrapyd``, 127.0.0.1, its own scrapyd.conf and directories) runs for the module.
The project is deployed with scrapyd-client's ``scrapyd-deploy`` from a copy of the project (the build writes
``build/`` and ``*.egg-info`` next to ``setup.py``; the copy keeps them out of the working tree), to a target
named in a user-level ``~/.scrapy.cfg`` (HOME is a temporary directory), so the repo's ``scrapy.cfg`` is used
as is. Then:

* a first job, scheduled with ``scrapyd-client schedule``, seeds the collection and harvests up to 20 cycles
  of the sample web, with the test settings (loopback allowed, ``*.wire.test`` mapped to 127.0.0.1, short
  waits) passed as per-job ``setting=NAME=VALUE``;
* a second job, scheduled with a bare POST to ``schedule.json`` as a cron line would, has no spider
  arguments: the recrawl path, which finds nothing due;
* a third job passes ``FEEDS`` as Scrapyd does when its ``items_dir`` is set: the feed is a log of the
  fetches, one JSON object a line.

Scrapyd's environment has no PYTHONPATH and no SCRAPY_SETTINGS_MODULE, so the jobs import the deployed egg and
read its ``settings.default`` (a check below proves the egg, not the working tree, supplies the packages).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("scrapyd", reason="scrapyd is pinned in requirements.txt")
pytest.importorskip("scrapyd_client", reason="scrapyd-client is pinned in requirements.txt")

from settings import test as test_settings
from wirescrapy.collection import Collection
from wirescrapy.seeder.seedfile import seed
from wirescrapy.testing.sampleweb import SampleWebProcess
from wirescrapy.testing.sampleweb.accesslog import by_host, too_close
from wirescrapy.testing.scrapyd import (
    JOB_SETTINGS,
    JOB_TIMEOUT,
    PROJECT,
    Scrapyd,
    clean_env,
    copy_project,
    project_url,
    script,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

TARGET = "wirescrapy-pytest"  # the deploy target the test adds in ~/.scrapy.cfg
PACKAGES = ("wirescrapy", "spiders", "settings")  # setup.py's packages: what the egg must hold
WAIT = test_settings.WIRE_WAIT_NORMAL
CRAWL_DELAY = 0.3  # site1's robots.txt
WEB = {"sites": 3, "pages_per_site": 10, "broken_robots": "malformed", "crawl_delay": CRAWL_DELAY}


def job_data(
    collection: Path, args: dict | None = None, settings: dict | None = None
) -> list[tuple[str, str]]:
    """schedule.json's form for the harvester: settings as repeated ``setting=NAME=VALUE``, spider arguments
    as fields."""
    data = [("project", PROJECT), ("spider", "harvester"), ("setting", f"WIRE_COLLECTION_DIR={collection}")]
    data += [("setting", f"{name}={value}") for name, value in {**JOB_SETTINGS, **(settings or {})}.items()]
    data += list((args or {}).items())
    return data


def log_problems(text: str) -> list[str]:
    return [
        line for line in text.splitlines() if "Traceback" in line or "] ERROR:" in line or "CRITICAL" in line
    ]


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """A running Scrapyd with the project deployed by ``scrapyd-deploy``."""
    base = tmp_path_factory.mktemp("scrapyd")
    home, daemon_dir = base / "home", base / "scrapyd"
    home.mkdir()
    daemon_dir.mkdir()
    env = clean_env(home)
    server = Scrapyd(daemon_dir, env).start()
    try:
        # A user-level deploy target: the project's scrapy.cfg gives the project name, this file the URL -
        # the project's own [deploy] url with the test server's port, so that its form is what is tested.
        (home / ".scrapy.cfg").write_text(f"[deploy:{TARGET}]\nurl = {project_url(server.port)}\n")
        project = copy_project(base / "project")
        deploy = subprocess.run(
            [script("scrapyd-deploy"), TARGET],
            check=False,
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert deploy.returncode == 0, deploy.stdout + deploy.stderr
        answer = json.loads(deploy.stdout)
        assert answer["status"] == "ok" and answer["project"] == PROJECT and answer["spiders"] == 1, answer
        yield SimpleNamespace(server=server, env=env, project=project, version=answer["version"], base=base)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def harvested(deployed):
    """The sample web harvested by a Scrapyd job scheduled with ``scrapyd-client schedule`` (seeds,
    cycles=20), then by a second job with no arguments (a scheduled recrawl)."""
    server, base = deployed.server, deployed.base
    with SampleWebProcess(workdir=base / "web", **WEB) as web:
        seeds = base / "seeds.txt"
        seeds.write_text("\n".join(web.seeds) + "\n")
        collection = base / "collection"
        # -p: scrapyd-client 2.0.3 declares it required=True, so scrapy.cfg's [deploy] project never applies.
        command = [script("scrapyd-client"), "schedule", "-t", TARGET, "-p", PROJECT, "harvester"]
        for name, value in job_data(collection, {"seeds": str(seeds), "cycles": "20"}):
            if name not in ("project", "spider"):
                command += ["--arg", f"{name}={value}"]
        started = time.monotonic()
        schedule = subprocess.run(
            command,
            check=False,
            cwd=deployed.project,
            env=deployed.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        match = re.search(rf"{PROJECT} / harvester => (\w+)", schedule.stdout)
        assert schedule.returncode == 0 and match, schedule.stdout + schedule.stderr
        first = match.group(1)
        first_log = server.wait(first)
        first_seconds = time.monotonic() - started

        recrawl_at = time.time()
        answer = server.post("schedule", job_data(collection))  # what `curl .../schedule.json -d ...` sends
        assert answer["status"] == "ok", answer
        second = answer["jobid"]
        second_log = server.wait(second)
        yield SimpleNamespace(
            web=web,
            collection=collection,
            server=server,
            seeds=seeds,
            first=first,
            first_log=first_log.read_text(errors="replace"),
            first_seconds=first_seconds,
            second=second,
            second_log=second_log.read_text(errors="replace"),
            recrawl_at=recrawl_at,
            access_log=web.access_log(),
        )


def test_the_deployed_egg_holds_the_project(deployed):
    server = deployed.server
    assert server.get("listprojects")["projects"] == [PROJECT]
    assert server.get("listversions", project=PROJECT)["versions"] == [deployed.version]
    assert server.get("listspiders", project=PROJECT)["spiders"] == ["harvester"]
    egg = server.dir / "eggs" / PROJECT / f"{deployed.version}.egg"
    with zipfile.ZipFile(egg) as archive:
        names = set(archive.namelist())
        entry_points = archive.read("EGG-INFO/entry_points.txt").decode()
    sources = {
        path.relative_to(deployed.project).as_posix()
        for package in PACKAGES
        for path in (deployed.project / package).rglob("*.py")
    }
    assert sources and not sources - names, f"missing from the egg: {sorted(sources - names)}"
    assert re.search(r"^settings\s*=\s*settings\.default\s*$", entry_points, re.MULTILINE), entry_points
    # Activated as Scrapyd's runner activates it, in Scrapyd's directory and environment: every package and
    # the settings module come from the egg, not from the working tree (the editable install).
    probe = (
        "import json, os, sys\n"
        "from scrapyd.runner import activate_egg\n"
        "activate_egg(sys.argv[1])\n"
        "import settings.default, spiders.harvester, wirescrapy.harvester.scheduler\n"
        "print(json.dumps({'files': [m.__file__ for m in (settings.default, spiders.harvester,"
        " wirescrapy.harvester.scheduler)], 'settings': os.environ['SCRAPY_SETTINGS_MODULE']}))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, str(egg)],
        check=False,
        cwd=server.dir,
        env=deployed.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    loaded = json.loads(run.stdout.strip().splitlines()[-1])
    assert loaded["settings"] == "settings.default"
    for path in loaded["files"]:
        assert path.startswith(str(egg) + os.sep), path


def test_a_scheduled_harvest_fetches_the_sample_web(harvested):
    log, web = harvested.first_log, harvested.web
    assert harvested.server.exited_cleanly(harvested.first), harvested.server.output_tail()
    assert not log_problems(log), "\n".join(log_problems(log)[:20])
    assert "Seeded 3 new URLs" in log
    assert "nothing more to fetch" in log  # the harvest ended by running out of pages, not of cycles
    # The per-job settings reached the crawl: the collection where WIRE_COLLECTION_DIR says, pages fetched
    # from 127.0.0.1 (blocked and unresolvable without WIRE_BLOCKED_IPS and WIRE_DNS_HOSTS), and the short
    # waits (with the default 15 s between a site's pages this would take many minutes).
    summary = re.search(
        r"Harvest summary \(finished\): (\d+) cycle\(s\), (\d+) page fetches.*"
        r"Collection (\S+): (\d+) documents",
        log,
    )
    assert summary, log[-3000:]
    assert Path(summary.group(3)) == harvested.collection and int(summary.group(2)) > 50
    assert harvested.first_seconds < 90
    # Every page the ground truth says a polite crawl reaches, except the one linked only past the 400 KB cut
    # of /odd/big.html (links past WIRE_MAX_FILE_SIZE are not seen; see tests/e2e/test_harvester.py).
    truth = web.truth
    past_the_cut = {url for url in truth.pages if url.endswith("/odd/after-big.html")}
    assert truth.big and len(past_the_cut) == 1
    with Collection(harvested.collection, readonly=True) as collection:
        for url in sorted(truth.pages - past_the_cut):
            doc = collection.lookup(url)
            assert doc, f"{url} not in the collection"
            record = collection.documents.records[doc]
            assert record["status"] == 200 and record["visits"] == 1, (
                url,
                record["status"],
                record["visits"],
            )
            assert collection.load_page(doc), url
    first_job = [r for r in harvested.access_log if r["start"] < harvested.recrawl_at]
    requests: dict = {}
    for record in first_job:
        requests[(record["host"], record["path"])] = requests.get((record["host"], record["path"]), 0) + 1
    # Failed fetches (the 500 page, the cut page) are tried WIRE_MAX_ERRORS_SAME_BATCH (3) times in their
    # batch.
    failing = {"/error.html", "/drop.html"}
    assert not {key: n for key, n in requests.items() if n > 1 and key[1] not in failing}, (
        "requested more than once"
    )
    assert all(n == 3 for (_, path), n in requests.items() if path in failing)
    hosts = by_host(first_job)
    assert len(hosts) == WEB["sites"]
    for host, records in hosts.items():
        wait = CRAWL_DELAY if truth.robots[host] == "crawl-delay" else WAIT
        assert not too_close(records, wait), (host, too_close(records, wait)[:5])


def test_a_scheduled_job_without_arguments_is_a_recrawl(harvested):
    log = harvested.second_log
    assert harvested.server.exited_cleanly(harvested.second), harvested.server.output_tail()
    assert not log_problems(log), "\n".join(log_problems(log)[:20])
    assert "Seeded" not in log and "Resuming" not in log
    assert "manager: no page to fetch" in log  # everything was fetched moments ago: nothing is due
    assert re.search(
        rf"Harvest summary \(finished\): 0 cycle\(s\), 0 page fetches.*"
        rf"Collection {re.escape(str(harvested.collection))}:",
        log,
    ), log[-3000:]
    assert not [r for r in harvested.access_log if r["start"] >= harvested.recrawl_at]


def test_a_job_with_an_item_feed(deployed, harvested):
    """Scrapyd with ``items_dir`` set passes ``-s FEEDS={"file:///…/JOB.jl": {"format": "jsonlines"}}`` to
    every job; the same setting, passed per job, must not make the harvest fail or log errors."""
    server, base = deployed.server, deployed.base
    seeds = base / "feed-seeds.txt"
    seeds.write_text(harvested.web.url(2, "/") + "\n")
    feed = (base / "items.jl").as_uri()
    answer = server.post(
        "schedule",
        job_data(
            base / "feed-collection",
            {"seeds": str(seeds)},
            {"FEEDS": json.dumps({feed: {"format": "jsonlines"}})},
        ),
    )
    log = server.wait(answer["jobid"]).read_text(errors="replace")
    assert server.exited_cleanly(answer["jobid"]), server.output_tail()
    assert "Harvest summary (finished): 1 cycle(s)" in log
    problems = log_problems(log)
    assert not problems, "\n".join(problems[:5])
    records = [json.loads(line) for line in (base / "items.jl").read_text().splitlines()]
    assert {r["kind"] for r in records} == {"page", "robots"}  # a log of the fetches, one a line
    home = next(r for r in records if r["url"] == harvested.web.url(2, "/"))
    assert home["status"] == 200 and home["doc_id"] and home["links"] > 0 and home["error"] is None


def test_jobs_scheduled_while_the_collection_is_open_wait_for_it(deployed, harvested):
    """Recrawls scheduled while another process has the collection open (a harvest, the manager: here the
    test itself, which seeds it): Scrapyd (max_proc 2) starts them at once. With WIRE_COLLECTION_WAIT each
    starts up and waits for the collection, then harvests the next batch, one after the other; without it, a
    job fails in one line."""
    server, base = deployed.server, deployed.base
    collection = base / "queued-collection"
    waiting = {"WIRE_COLLECTION_WAIT": "60"}
    holder = Collection(collection)
    try:
        with open(harvested.seeds, encoding="utf-8") as lines:
            seed(holder, lines)
        refused = server.post("schedule", job_data(collection))["jobid"]
        queued = [server.post("schedule", job_data(collection, settings=waiting))["jobid"] for _ in range(2)]
        server.wait(refused)
        deadline = time.monotonic() + JOB_TIMEOUT
        while not all(
            server.log(job).exists() and "waiting up to 60 s" in server.log(job).read_text(errors="replace")
            for job in queued
        ):
            assert time.monotonic() < deadline, server.output_tail()
            time.sleep(0.05)
    finally:
        holder.close()
    logs = {job: server.wait(job).read_text(errors="replace") for job in [refused, *queued]}
    assert not server.exited_cleanly(refused)
    assert f"collection {collection} is open for writing by pid {os.getpid()} " in logs[refused], logs[
        refused
    ][-2000:]
    for job in queued:
        assert server.exited_cleanly(job), server.output_tail()
        assert not log_problems(logs[job]), "\n".join(log_problems(logs[job])[:20])
    # One after the other, each on the batch the one before left.
    assert sorted(re.search(r"Batch (\d+)", logs[job]).group(1) for job in queued) == ["000001", "000002"]
    harvests = [
        json.loads((collection / "batches" / f"{n:06d}" / "harvest.json").read_text()) for n in (1, 2)
    ]
    assert harvests[0]["finished"] <= harvests[1]["started"]
    assert (
        harvests[0]["fetched"] == 3 and harvests[1]["fetched"] > 3
    )  # the home pages, then what they link to
