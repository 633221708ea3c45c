"""End to end on two Scrapyd nodes: a batch split in two, one part harvested on each node into WARC, the WARC
files brought back and ingested into the collection — docs/deploying.md's "Several machines", on loopback.

Two real Scrapyd servers run on 127.0.0.1 with their own ports and directories (``node-0``, ``node-1``: two
machines that share nothing). The project is deployed to both with ``scrapyd-deploy -a`` (every target of the
user's ``~/.scrapy.cfg``), from a copy of the project, as in ``test_scrapyd.py``, with the same machinery
(``wirescrapy.testing.scrapyd``). For a cycle the collection's machine runs ``scrapy manager --parts 2``; each
part directory is copied into its node's ``inbox`` (the batch is a closed unit, a copy is all a node needs);
``scrapyd-client schedule`` starts ``harvester`` with ``batch=inbox/part-K`` and ``warc=outbox/…`` on node K,
which has no collection; the outboxes are copied back and ``scrapy ingest`` reads them. Politeness is checked
across both nodes from the sample web's access log: each site is fetched by one node only, and no two
requests to a site come closer than its wait, whichever node made them.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("scrapyd", reason="scrapyd is pinned in requirements.txt")
pytest.importorskip("scrapyd_client", reason="scrapyd-client is pinned in requirements.txt")

from tests.e2e.test_scrapyd import log_problems
from tests.warcfiles import warcio_check
from wirescrapy.collection import Collection
from wirescrapy.manager.batch import read_batch, site_part
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess
from wirescrapy.testing.sampleweb.accesslog import by_host, too_close
from wirescrapy.testing.scrapyd import (
    JOB_SETTINGS,
    PROJECT,
    Scrapyd,
    clean_env,
    copy_project,
    project_url,
    script,
)
from wirescrapy.url import origin
from wirescrapy.warc.reader import read_fetches, warc_files

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

NODES = 2
CYCLES = 1
WAIT = 0.2
CRAWL_DELAY = 0.3
WEB = {"sites": 4, "pages_per_site": 10, "seed": 2, "crawl_delay": CRAWL_DELAY, "broken_robots": "malformed"}


def local(*args: str, collection: Path) -> subprocess.CompletedProcess:
    """A command on the collection's machine (the working tree's code)."""
    run = run_scrapy(*args, settings={"WIRE_COLLECTION_DIR": collection}, env=scrapy_env())
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-4000:]
    return run


@pytest.fixture(scope="module")
def nodes(tmp_path_factory):
    base = tmp_path_factory.mktemp("nodes")
    home = base / "home"
    home.mkdir()
    env = clean_env(home)
    servers = []
    try:
        for n in range(NODES):
            (base / f"node-{n}").mkdir()
            servers.append(Scrapyd(base / f"node-{n}", env).start())
        (home / ".scrapy.cfg").write_text(
            "".join(
                f"[deploy:node-{n}]\nurl = {project_url(server.port)}\n\n" for n, server in enumerate(servers)
            )
        )
        project = copy_project(base / "project")
        deploy = subprocess.run(
            [script("scrapyd-deploy"), "-a"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert deploy.returncode == 0, deploy.stdout + deploy.stderr
        for server in servers:
            assert server.get("listspiders", project=PROJECT)["spiders"] == ["harvester"]
        yield SimpleNamespace(base=base, env=env, servers=servers, project=project)
    finally:
        for server in servers:
            server.stop()


@pytest.fixture(scope="module")
def distributed(nodes):
    base = nodes.base
    with SampleWebProcess(workdir=base / "web", **WEB) as web:
        seeds = base / "seeds.txt"
        seeds.write_text("\n".join(web.seeds) + "\n")
        collection = base / "collection"
        local("seed", str(seeds), collection=collection)
        cycles = []
        for cycle in range(1, CYCLES + 1):
            local("manager", "--parts", str(NODES), collection=collection)
            batch_dir = max((collection / "batches").iterdir(), key=lambda p: p.name)
            jobs = []
            for n, server in enumerate(nodes.servers):
                inbox = shutil.copytree(
                    batch_dir / f"part-{n}", server.dir / "inbox" / f"{batch_dir.name}-{n}"
                )
                outbox = server.dir / "outbox" / f"{batch_dir.name}-{n}"
                command = [
                    script("scrapyd-client"),
                    "schedule",
                    "-t",
                    f"node-{n}",
                    "-p",
                    PROJECT,
                    "harvester",
                    "--arg",
                    f"batch={inbox}",
                    "--arg",
                    f"warc={outbox}",
                ]
                for name, value in JOB_SETTINGS.items():
                    command += ["--arg", f"setting={name}={value}"]
                run = subprocess.run(
                    command,
                    cwd=nodes.project,
                    env=nodes.env,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                )
                match = re.search(rf"{PROJECT} / harvester => (\w+)", run.stdout)
                assert run.returncode == 0 and match, run.stdout + run.stderr
                jobs.append((server, match.group(1), outbox))
            collected = []
            for n, (server, job, outbox) in enumerate(jobs):
                log = server.wait(job).read_text(errors="replace")
                assert server.exited_cleanly(job), server.output_tail()
                assert not log_problems(log), "\n".join(log_problems(log)[:10])
                collected.append(shutil.copytree(outbox, base / "collected" / f"{batch_dir.name}-{n}"))
            ingest = local("ingest", *map(str, collected), collection=collection)
            cycles.append(SimpleNamespace(batch=batch_dir, collected=collected, ingest=ingest))
        yield SimpleNamespace(web=web, collection=collection, cycles=cycles, access_log=web.access_log())


def test_each_part_is_harvested_on_its_node_and_ingested(distributed):
    with Collection(distributed.collection, readonly=True) as collection:
        records = collection.documents.records
        for cycle in distributed.cycles:
            assert json.loads((cycle.batch / "harvest.json").read_text())["parts"] == NODES
            for n in range(NODES):
                part = read_batch(cycle.batch / f"part-{n}")
                assert (cycle.batch / f"part-{n}" / "harvest.json").exists()
                for url in part.urls:  # every page of every part is in the collection, fetched in its batch
                    assert (
                        records[url.doc_id]["batch"] == part.number and records[url.doc_id]["last_visit"] > 0
                    )
        fetched = sum(1 for d in range(1, collection.documents.count + 1) if records[d]["visits"])
    assert fetched >= WEB["sites"]  # the home pages (and robots.txt, not counted here)
    warcio_check(*(f for cycle in distributed.cycles for d in cycle.collected for f in warc_files(d)))


def test_politeness_holds_across_nodes(distributed):
    web, truth = distributed.web, distributed.web.truth
    hosts = by_host(distributed.access_log)
    assert len(hosts) == WEB["sites"]
    for host, records in hosts.items():  # both nodes' requests together
        wait = CRAWL_DELAY if truth.robots[host] == "crawl-delay" else WAIT
        assert not too_close(records, wait), (host, too_close(records, wait)[:5])
    # A site belongs to one part, the same on every node (site_part hashes its origin, whose port is random
    # here: in a cycle all of a batch's sites may fall in one part, leaving the other node nothing to fetch).
    for cycle in distributed.cycles:
        sites = [
            {origin(a.fields["url"]) for f in warc_files(d) for a in read_fetches(f)} for d in cycle.collected
        ]
        assert not sites[0] & sites[1]
        assert all(site_part(site, NODES) == n for n, fetched in enumerate(sites) for site in fetched)
    requested = {web.url(r["host"], r["path"]) for r in distributed.access_log}
    assert not truth.disallowed & requested
    # each node asked for each of its sites' robots.txt before any page of it
    first = {host: records[0]["path"] for host, records in hosts.items()}
    assert set(first.values()) == {"/robots.txt"}
