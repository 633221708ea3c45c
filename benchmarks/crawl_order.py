"""Crawl-order benchmark: does the manager fetch the most valuable pages first?

    python -m benchmarks.crawl_order                 # 25 sites x 80 pages, 18 crawls (a few minutes)
    python -m benchmarks.crawl_order --smoke         # 6 sites x 30 pages, 3 crawls (CI)
    python -m benchmarks.crawl_order --shape uniform,weblike    # both web shapes, one after the other
    python -m benchmarks.crawl_order --weightings pagerank,default --sites 30 --pages 100
    python -m benchmarks.crawl_order --weightings '{"pr3+wl": {"pagerank": 3, "wlrank": 1}}' --explore ''
    python -m benchmarks.crawl_order --web real --weightings default,depth --explore ''   # real documents
    python -m benchmarks.crawl_order --web real --weightings default --explore 0,0.1,0.4  # exploring's worth
    python -m benchmarks.crawl_order --web real --smoke --weightings default     # 3 small real sites (CI)
    python -m benchmarks.crawl_order --web real --real-web bench --weightings default --explore ''  # 7 webs

What it does, in one run:

1. Starts the sample web (``SampleWebProcess``, 127.0.0.1 only) and takes its ground truth: the HTML
   pages a polite crawl from the seeds reaches (``truth.pages``, N of them) and their links. The *final
   graph* is those pages and the links between them (redirects followed to their page, nofollow links
   and links to anything else dropped, self-links dropped); its PageRank (q = 0.15,
   ``wirescrapy.manager.ranking.pagerank`` in float64, checked against networkx) is the value of each
   page.
2. For every weighting of ``WIRE_SCORE_WEIGHTS`` it crawls the sample web for real, from its seeds, into
   a fresh collection: one ``scrapy crawl harvester`` process running WIRE cycles (manager → batch of K
   URLs → harvest → gatherer) until the manager has nothing left to fetch (or ``--cycles``), with
   K = ``--batch-share`` x N (5 %), waits 0 and ``settings.test``.
3. Recovers the order the crawl fetched the pages in from the collection, read-only, and keeps the pages
   of the final graph (errors, redirects, robots.txt, traps and the like are not in it, so they neither
   count nor use the budget). Batches come in batch order; a batch's pages come in **the manager's
   order**, the batch's ``urls.tsv`` (decreasing profit), i.e. what the manager decided. With waits 0 the
   harvester fetches a batch site-interleaved, one connection per site, so the order of ``first_visit``
   inside a batch reflects the politeness queue and not the manager; it is printed too ("harvest
   order"), and differs only inside the batch that straddles the budget. A page fetched during batch B's
   harvest but not listed in it (a redirect target) comes after B's listed pages, by ``first_visit``.
4. Score of an order: the share of the final graph's total PageRank held by the first ``--budget``
   (20 %) x N pages of the order — the same N and budget for every order.

References, computed in the same run:

* **BFS** — offline breadth-first order from the seeds over the ground truth (a FIFO crawler: seeds in
  site order, each page's links in page order, robots.txt obeyed, redirects followed, nofollow not
  followed). This is the classic reference order (Najork & Wiener); the manager's own breadth-first
  approximation, ``{"depth": 1}``, is crawled for real as one of the weightings.
* **oracle** — the pages of the final graph by decreasing final PageRank: the best any order can do.

Weightings (``WEIGHTINGS``): each score alone, the default of WIRE_SCORE_WEIGHTS (4 pagerank + 1 depth),
WIRE's own default (pagerank + queuesize) and a few combinations, all with the manager's other defaults: the
batch planner (``wirescrapy.manager.planner``) shares a batch among the sites with pages to fetch by their
estimated share of the PageRank (``wirescrapy.manager.sites``), a part of it (WIRE_BATCH_EXPLORE) by their
known pages not fetched yet, and the scores choose the pages inside each site's share. Each value of
``--explore`` crawls the default weighting again with WIRE_BATCH_EXPLORE set to it (``EXPLORE`` in a full
run: 0, the planner without exploration), beside the same BFS and oracle.
``hub`` and ``depth`` order unfetched pages by discovery (an unfetched page has no links, so its hub score
is 0; ties go to the lower doc-id): they are breadth-first crawls inside each site's share, which the
manager's link analysis sets, and are printed beside the verdict.

Printed: one row per order — share, share / oracle, share / BFS, cycles (batches written), pages of the
final graph fetched (and all documents fetched), wall-clock seconds of the crawl — then the share / oracle
at other budgets (5, 10, 40 %) and what the first batches of each crawl held.

Goal, judged on the default weighting: >= 90 % of the oracle's share, clearly ahead of
breadth-first order — taken here as at least 5 % more than BFS (``CLEARLY``). Printed with it: the part of
the gap between BFS and the oracle the crawl closes, and its ratio to the manager's breadth-first crawls.

Web shapes (``--shape``, ``wirescrapy.testing.sampleweb.shape``). On the default ``uniform`` web every site
has the same size and the most linked pages are the shallow ones, so breadth-first is close to the oracle by
construction. ``weblike`` has Zipf site sizes, cross-site links in proportion to site size and popular pages
at any depth.

The web of real documents (``--web real``, ``wirescrapy.testing.realweb``): thirteen Debian documentation
packages (apt-get installs the missing ones), each a host ``<name>.realweb.test`` on its own loopback
address, one nginx serving them, the ground truth read from the files (``realweb.truth``: what a polite crawl
from the home pages reaches, with the crawler's default URL rules, without importing the crawler). Crawled
with ``WIRE_DNS_HOSTS`` mapping the hosts and ``WIRE_ACCEPT_DOMAIN_SUFFIXES=realweb.test`` (their pages link
to the documented projects' real sites). The per-site table shows, for the oracle, BFS and each crawl, the
pages each site got among the first 20 % and their PageRank; sites marked * are held out of any tuning and
summed apart. The lines after it say the same of each crawl: /oracle = split × choice, split the PageRank of
each site's best pages in the counts the crawl took from it over the oracle's, choice the crawl's over that.

``--real-web`` names the web (``realweb.webs``): ``docs13``, the thirteen sites above and the default, or the
bench's ``web1`` to ``web6``; several, comma-separated, or ``bench`` for all seven, are crawled one after
the other with the same settings. After the report of each, one table gives every web's line (the default
weighting's crawl, or the best one): its share, the oracle's and BFS's, the crawl's over the oracle's and
its coverage (the final graph's pages it fetched). Then the worst web, and the worst of the held-out webs
and of those tuned on apart: a policy is judged by its worst web, not by the mean.

One crawl at one K is a single draw of a chaotic process: a tie broken otherwise in an early batch moves the
figure, while a change that tilts no tie moves nothing. So an idea is judged over several K
(``--batch-share 0.04``, ``0.05``, ``0.06``, ``--cycles 14``), against the default at the same K.

``benchmarks.crawl_order_sim`` simulates the same measure offline in seconds, to try scores before they are
written into the manager.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
from scipy.sparse import csr_matrix

from wirescrapy.collection import Collection
from wirescrapy.config import SCORE_FUNCTIONS, default_settings
from wirescrapy.manager import ranking
from wirescrapy.manager.batch import batch_numbers, read_batch
from wirescrapy.testing.process import ROOT, run_scrapy
from wirescrapy.testing.realweb import RealWeb, webs
from wirescrapy.testing.realweb import sites as realweb_sites
from wirescrapy.testing.sampleweb import SampleWebProcess
from wirescrapy.testing.sampleweb.shape import SHAPES

PAGE = re.compile(r"/page/(\d+)\.html")
Q = 0.15  # WIRE's PageRank dampening (random-jump probability), the manager's default

DEFAULT = {name: weight for name, weight in default_settings()["WIRE_SCORE_WEIGHTS"].items() if weight}

# name -> WIRE_SCORE_WEIGHTS (scores not named get weight 0).
WEIGHTINGS: dict[str, dict[str, float]] = {
    "pagerank": {"pagerank": 1},
    "opic": {"opic": 1},  # on-line page importance (Abiteboul et al. 2003)
    "queuesize": {"queuesize": 1},  # larger sites first (Castillo et al. 2004)
    "authority": {"authority": 1},  # HITS
    "hub": {"hub": 1},  # HITS
    "wlrank": {"wlrank": 1},
    "siterank": {"siterank": 1},
    "default": DEFAULT,  # WIRE_SCORE_WEIGHTS' default
    "pagerank+opic": {"pagerank": 1, "opic": 1},  # the default before depth
    "wire": {"pagerank": 1, "queuesize": 1},  # WIRE's default
    "pagerank+authority": {"pagerank": 1, "authority": 1},
    "pagerank+siterank": {"pagerank": 1, "siterank": 1},
    "opic+wlrank": {"opic": 1, "wlrank": 1},
    "opic+queuesize": {"opic": 1, "queuesize": 1},
    "depth": {"depth": 1},  # the manager's breadth-first
}
DESCRIPTIONS = {
    "opic": "opic (OPIC cash)",
    "queuesize": "queuesize (larger sites first)",
    "authority": "authority (HITS)",
    "hub": "hub (HITS)",
    "default": f"default ({' + '.join(f'{weight:g} {name}' for name, weight in DEFAULT.items())})",
    "wire": "WIRE's default (pagerank+queuesize)",
    "depth": "depth (manager's BFS)",
}
FULL = list(WEIGHTINGS)
CLEARLY = 1.05  # "clearly ahead": at least 5 % more PageRank than breadth-first order
BREADTH_FIRST = {"depth", "hub"}  # weightings that order unfetched pages by discovery
SMOKE = ["pagerank", "opic", "default"]
REAL_SMOKE = "scrapy,git,libxml2"  # --web real --smoke: three small sites of docs13 (about 440 pages)
# WIRE_BATCH_EXPLORE values the default weighting is crawled again with in a full run.
EXPLORE = [0.0]


# -- the final graph ---------------------------------------------------------------------------------------


@dataclass
class FinalGraph:
    urls: list[str]  # index i + 1 is urls[i]
    index: dict[str, int]  # URL -> index (1-based)
    links: csr_matrix  # (N + 1) x (N + 1), row/column 0 unused
    pagerank: np.ndarray  # float64, entry 0 = 0, sum 1

    @property
    def n(self) -> int:
        return len(self.urls)


def _resolve_redirects(url: str, truth) -> str | None:
    seen = set()
    while url in truth.redirects:
        if url in seen or len(seen) > 20:
            return None
        seen.add(url)
        url = truth.redirects[url][1]
    return url


def final_graph(truth) -> FinalGraph:
    urls = sorted(truth.pages)
    index = {url: i + 1 for i, url in enumerate(urls)}
    rows, cols = [], []
    for url in urls:
        source = index[url]
        nofollow = truth.nofollow.get(url, frozenset())
        targets = set()
        for link in truth.links.get(url, ()):
            if link in nofollow:
                continue
            target = index.get(_resolve_redirects(link, truth))
            if target is not None and target != source:
                targets.add(target)
        rows += [source] * len(targets)
        cols += sorted(targets)
    size = len(urls) + 1
    links = csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(size, size))
    graph = ranking.link_matrix(links)
    result = ranking.pagerank(graph, Q, 1e-12, dtype=np.float64)
    return FinalGraph(urls, index, graph, np.asarray(result.scores, dtype=np.float64))


def networkx_check(graph: FinalGraph) -> float:
    """Largest |ours - networkx| over the pages (networkx's alpha = 1 - q)."""
    try:
        import networkx as nx
    except ImportError:
        return float("nan")
    digraph = nx.DiGraph()
    digraph.add_nodes_from(range(1, graph.n + 1))
    coo = graph.links.tocoo()
    digraph.add_edges_from(zip(coo.row.tolist(), coo.col.tolist()))
    reference = nx.pagerank(digraph, alpha=1 - Q, tol=1e-13, max_iter=10_000)
    return max(abs(reference[i] - graph.pagerank[i]) for i in range(1, graph.n + 1))


# -- reference orders ----------------------------------------------------------------------------------------


def bfs_order(truth, graph: FinalGraph) -> list[int]:
    """Pages of the final graph in the order a FIFO crawler from the seeds fetches them."""
    order, seen = [], set(truth.seeds)
    queue = deque(truth.seeds)
    while queue:
        url = queue.popleft()
        if url in truth.disallowed:
            continue
        if url in truth.redirects:
            nexts = [truth.redirects[url][1]]
        elif url in graph.index:
            order.append(graph.index[url])
            nofollow = truth.nofollow.get(url, frozenset())
            nexts = [link for link in truth.links.get(url, ()) if link not in nofollow]
        else:
            continue  # an error, a file, a trap: fetched, not a page, not followed
        for link in nexts:
            if link not in seen:
                seen.add(link)
                queue.append(link)
    return order


def oracle_order(graph: FinalGraph) -> list[int]:
    return (np.argsort(-graph.pagerank[1:], kind="stable") + 1).tolist()


def share(order: list[int], graph: FinalGraph, budget: int) -> float:
    return float(graph.pagerank[np.asarray(order[:budget], dtype=np.int64)].sum()) if order else 0.0


# -- a real crawl --------------------------------------------------------------------------------------------


@dataclass
class Crawl:
    name: str
    weights: dict[str, float]
    seconds: float = 0.0
    cycles: int = 0
    documents_fetched: int = 0
    order: list[int] = field(default_factory=list)  # manager's order (batch, then urls.tsv rank)
    harvest_order: list[int] = field(default_factory=list)  # by first_visit
    batches: list[list[int]] = field(default_factory=list)  # final-graph pages first fetched in each batch
    batch_sizes: list[int] = field(default_factory=list)  # URLs listed in each batch
    returncode: int = 0
    problem: str = ""


def run_crawl(
    name: str,
    weights: dict[str, float],
    seeds_file: Path,
    collection_dir: Path,
    log_file: Path,
    batch_size: int,
    cycles: int,
    timeout: float,
    extra_settings: list[str],
) -> Crawl:
    crawl = Crawl(name, weights)
    args = [
        "crawl", "harvester",
        "-a", f"seeds={seeds_file}", "-a", f"cycles={cycles}",
        "-s", f"WIRE_COLLECTION_DIR={collection_dir}",
        "-s", f"WIRE_BATCH_SIZE={batch_size}",
        "-s", "WIRE_WAIT_NORMAL=0", "-s", "WIRE_WAIT_LARGE_SITE=0",
        "-s", f"WIRE_SCORE_WEIGHTS={json.dumps(weights)}",
        "-s", "LOG_LEVEL=INFO",
        *[arg for setting in extra_settings for arg in ("-s", setting)],
    ]  # fmt: skip
    env = dict(os.environ, SCRAPY_SETTINGS_MODULE="settings.test")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    started = time.perf_counter()
    with open(log_file, "wb") as log:
        try:
            result = run_scrapy(*args, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
            crawl.returncode = result.returncode
        except subprocess.TimeoutExpired:
            crawl.returncode = -1
            crawl.problem = f"timed out after {timeout:.0f} s"
    crawl.seconds = time.perf_counter() - started
    if crawl.returncode and not crawl.problem:
        crawl.problem = f"scrapy exited with {crawl.returncode}, see {log_file}"
    return crawl


def read_order(crawl: Crawl, collection_dir: Path, graph: FinalGraph) -> None:
    """Fill in the crawl's fetch orders from its collection (opened read-only)."""
    collection = Collection(collection_dir, readonly=True)
    try:
        batches_dir = collection_dir / "batches"
        numbers = batch_numbers(batches_dir)
        listed, created = [], []
        for number in numbers:
            batch = read_batch(batches_dir / f"{number:06d}")
            listed.append({url.doc_id: rank for rank, url in enumerate(batch.urls)})
            created.append(float(batch.info["created"]))
            crawl.batch_sizes.append(len(batch.urls))
            asked = batch.info.get("settings", {}).get("WIRE_SCORE_WEIGHTS")
            expected = {name: crawl.weights.get(name, 0) for name in SCORE_FUNCTIONS}
            if asked is not None and asked != expected and not crawl.problem:
                crawl.problem = f"batch {number} was planned with {asked}, not {expected}"
        crawl.cycles = len(numbers)
        count = collection.documents.count
        docs = collection.documents.records[1 : count + 1]
        fetched = np.flatnonzero((docs["visits"] > 0) & (docs["first_visit"] > 0)) + 1
        crawl.documents_fetched = len(fetched)
        rows = []  # (batch position, rank in batch, first_visit, final-graph index)
        for doc_id in fetched.tolist():
            page = graph.index.get(collection.url(doc_id))
            if page is None:
                continue
            first = float(docs["first_visit"][doc_id - 1])
            position = max(int(np.searchsorted(created, first, side="right")) - 1, 0)
            rank = listed[position].get(doc_id, len(listed[position])) if listed else 0
            rows.append((position, rank, first, page))
    finally:
        collection.close()
    rows.sort()
    crawl.order = [page for *_, page in rows]
    crawl.harvest_order = [page for *_, page in sorted(rows, key=lambda row: row[2])]
    crawl.batches = [[] for _ in range(max(len(listed), 1))]
    for position, _, _, page in rows:
        crawl.batches[position].append(page)


# -- the web crawled ----------------------------------------------------------------------------------------


def open_web(args: argparse.Namespace, shape: str, sites, pages_per_site: int, workdir: Path, real_web: str):
    """The sample web of ``shape`` or, for shape "real", the real-document web ``real_web`` (``sites`` its
    sites)."""
    if shape == "real":
        return RealWeb(workdir / "web", sites, web=real_web)
    # Crawl-delay 0 and a short slow page: politeness is not what is measured here.
    return SampleWebProcess(
        workdir=workdir / "web",
        sites=sites,
        pages_per_site=pages_per_site,
        seed=args.seed,
        broken_robots="malformed",
        crawl_delay=0.0,
        slow_delay=0.05,
        shape=shape,
    )


def web_settings(web) -> list[str]:
    """Settings a crawl of ``web`` needs beyond settings.test: the real web's host names, and its domain
    only (its pages link to the documented projects' real sites, which are not crawled here)."""
    if not isinstance(web, RealWeb):
        return []
    return [
        f"WIRE_DNS_HOSTS={json.dumps(web.dns_hosts)}",
        f"WIRE_ACCEPT_DOMAIN_SUFFIXES={realweb_sites.DOMAIN}",
    ]


def describe_waits(settings: list[str]) -> str:
    """The waits the crawls run at: 0 (``run_crawl``), or what ``-s`` sets."""
    values = dict(setting.split("=", 1) for setting in settings if "=" in setting)
    normal, large = values.get("WIRE_WAIT_NORMAL", "0"), values.get("WIRE_WAIT_LARGE_SITE", "0")
    if normal.strip() in ("0", "0.0") and large.strip() in ("0", "0.0"):
        return "waits 0"
    return f"waits {normal} / {large} s"


def describe_web(web, shape: str, sites, pages_per_site: int, seed: int) -> str:
    if isinstance(web, RealWeb):
        held = [site.name for site in web.sites if site.held_out]
        return (
            f"real web {web.name}{' (held out of tuning)' if web.held_out else ''}: {len(web.sites)} sites "
            f"({', '.join(site.name for site in web.sites)}; sites held out: {', '.join(held) or 'none'}), "
            f"nginx on 127.0.0.x:{web.port}"
        )
    sizes = sorted((web.web.site_pages(site) for site in range(sites)), reverse=True)
    return (
        f"sample web: {sites} sites x {pages_per_site} pages, {shape} (seed {seed}; pages per site "
        f"{sizes[0]}..{sizes[-1]}) on 127.0.0.1:{web.port}"
    )


def held_out_hosts(web) -> set[str]:
    return {site.host for site in web.sites if site.held_out} if isinstance(web, RealWeb) else set()


def site_table(
    orders: list[tuple[str, list[int]]], graph: FinalGraph, budget: int, held_out: set[str]
) -> str:
    """Per site: its pages and PageRank in the final graph, then for each order the pages it took from the
    site among its first ``budget`` and their PageRank; held-out sites marked, and subtotals; then each
    order's shortfall split in two (``split_and_choice``). ``orders[0]`` is the oracle's."""
    hosts = [urlsplit(url).hostname for url in graph.urls]
    names = sorted(
        set(hosts), key=lambda h: -sum(graph.pagerank[i + 1] for i, x in enumerate(hosts) if x == h)
    )
    column = {host: number for number, host in enumerate(names)}
    site_of = np.asarray([column[h] for h in hosts], dtype=np.int64)
    total_pages = np.bincount(site_of, minlength=len(names))
    total_rank = np.bincount(site_of, weights=graph.pagerank[1:], minlength=len(names))
    taken = []
    for _, order in orders:
        chosen = np.asarray(order[:budget], dtype=np.int64)
        taken.append(
            (
                np.bincount(site_of[chosen - 1], minlength=len(names)),
                np.bincount(site_of[chosen - 1], weights=graph.pagerank[chosen], minlength=len(names)),
            )
        )
    width = max(len(h) for h in names) + 2
    header = f"{'site':<{width}} {'pages':>6} {'PR':>6} " + " ".join(
        f"{label[:17]:>17}" for label, _ in orders
    )
    lines = [
        header,
        f"{'':<{width}} {'':>6} {'':>6} " + " ".join(f"{'pages     PR':>17}" for _ in orders),
        "-" * len(header),
    ]
    groups = (
        [
            ("tuned", [c for h, c in column.items() if h not in held_out]),
            ("held out", [c for h, c in column.items() if h in held_out]),
        ]
        if held_out
        else []
    )
    for host in names:
        c = column[host]
        mark = "*" if host in held_out else " "
        lines.append(
            f"{host.split('.')[0] + mark:<{width}} {total_pages[c]:6d} {total_rank[c]:6.3f} "
            + " ".join(f"{pages[c]:7d} {rank[c]:9.4f}" for pages, rank in taken)
        )
    for label, members in groups:
        if not members:
            continue
        oracle_rank = taken[0][1][members].sum()
        lines.append(
            f"{label:<{width}} {total_pages[members].sum():6d} {total_rank[members].sum():6.3f} "
            + " ".join(f"{pages[members].sum():7d} {rank[members].sum():9.4f}" for pages, rank in taken)
            + "   /oracle: "
            + " ".join(f"{rank[members].sum() / oracle_rank:.1%}" for _, rank in taken[1:])
        )
    lines += split_and_choice(orders[1:], taken[1:], site_of, graph.pagerank[1:], taken[0][1].sum())
    return "\n".join(lines)


def split_and_choice(
    orders: list[tuple[str, list[int]]],
    taken: list[tuple[np.ndarray, np.ndarray]],
    site_of: np.ndarray,
    rank: np.ndarray,
    oracle_rank: float,
) -> list[str]:
    """Where each order's shortfall from the oracle lies: ``split``, the PageRank of each site's best pages
    in the numbers the order took from it, over the oracle's (how well the budget was shared among the
    sites; 100 % when each site got the oracle's count or any other count that holds as much), and
    ``choice``, the order's PageRank over that (how well it chose inside the sites). /oracle = split ×
    choice. ``taken``: per order, the pages and PageRank it took from each site (``site_table``); ``rank``:
    the PageRank of each final-graph page (index page − 1), ``site_of`` its site's column."""
    best = []  # per site: cumulative PageRank of its pages, best first (0 for none)
    for column in range(int(site_of.max(initial=-1)) + 1):
        ranks = np.sort(rank[site_of == column])[::-1]
        best.append(np.concatenate([[0.0], np.cumsum(ranks)]))
    lines = [
        "",
        (
            "Where the shortfall lies (/oracle = split x choice): split, each site's best pages in the "
            "counts the order"
        ),
        "took from it / the oracle's PageRank; choice, the order's pages / those best pages:",
    ]
    for (label, _), (pages, got) in zip(orders, taken):
        ceiling = sum(best[c][min(int(k), len(best[c]) - 1)] for c, k in enumerate(pages))
        lines.append(
            f"  {label[:34]:<34} split {ceiling / oracle_rank:6.1%}   choice {got.sum() / ceiling:6.1%}"
        )
    return lines


# -- the bench of webs ---------------------------------------------------------------------------------------


@dataclass
class WebFigures:
    """One web's line in the bench's table: the first-budget shares of one crawl, the oracle and BFS."""

    web: str
    held_out: bool
    hosts: int
    pages: int  # N, the final graph's pages
    crawl: float
    oracle: float
    bfs: float
    coverage: float  # the final graph's pages the crawl fetched, over N

    @property
    def of_oracle(self) -> float:
        return self.crawl / self.oracle if self.oracle else float("nan")


def bench_table(rows: list[WebFigures], budget: float, crawl: str) -> str:
    """Every web's line, then the worst web's, and the worst of the held-out webs and of the tuned ones."""
    header = (
        f"{'web':<8} {'held out':<8} {'hosts':>5} {'pages':>6} {'crawl':>7} {'oracle':>7} {'BFS':>7} "
        f"{'/oracle':>8} {'coverage':>8}"
    )
    title = f"The bench of webs: the PageRank share of the first {budget:.0%} of N pages (crawl: {crawl}):"
    lines = [title, header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row.web:<8} {'yes' if row.held_out else 'no':<8} {row.hosts:5d} {row.pages:6d} "
            f"{row.crawl:7.4f} {row.oracle:7.4f} {row.bfs:7.4f} {row.of_oracle:8.1%} {row.coverage:8.1%}"
        )
    for label, group in (
        ("Worst web", rows),
        ("Worst held-out web", [row for row in rows if row.held_out]),
        ("Worst web tuned on", [row for row in rows if not row.held_out]),
    ):
        if group:
            worst = min(group, key=lambda row: row.of_oracle)
            lines.append(
                f"{label}: {worst.web}, {worst.of_oracle:.1%} of the oracle ({worst.crawl:.4f} / "
                f"{worst.oracle:.4f}; BFS {worst.bfs:.4f}), coverage {worst.coverage:.1%}, of {len(group)} "
                f"web{'s' if len(group) > 1 else ''}."
            )
        else:
            lines.append(f"{label}: none crawled.")
    return "\n".join(lines)


# -- the report ----------------------------------------------------------------------------------------------


def describe_batches(crawl: Crawl, graph: FinalGraph, budget: int, oracle_top: set[int], shown: int) -> str:
    """One line per early batch: URLs listed, final-graph pages got, their PageRank share, how many of
    them are in the oracle's top ``budget``, home pages, distinct sites, median page number."""
    lines = []
    fetched = 0
    for number, pages in enumerate(crawl.batches[:shown], start=1):
        value = graph.pagerank[pages].sum() if pages else 0.0
        split = [urlsplit(graph.urls[p - 1]) for p in pages]
        homes = sum(1 for url in split if url.path == "/")
        top = sum(1 for p in pages if p in oracle_top)
        sites = {url.hostname for url in split}
        numbers = [int(m.group(1)) for url in split if (m := PAGE.fullmatch(url.path))]
        fetched += len(pages)
        listed = crawl.batch_sizes[number - 1] if number <= len(crawl.batch_sizes) else 0
        median = f"{np.median(numbers):5.1f}" if numbers else "    -"
        lines.append(
            f"    batch {number:2d}: {listed:4d} URLs, {len(pages):4d} pages, PR {value:6.2%}, "
            f"oracle top {top:4d}, home pages {homes:3d}, sites {len(sites):3d}, median page number "
            f"{median}, cumulative pages {fetched:5d}"
        )
    return "\n".join(lines)


@dataclass
class Run:
    label: str
    name: str
    weights: dict[str, float]
    settings: list[str]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"tiny web (6 sites x 30 pages) and {len(SMOKE)} weightings, for CI",
    )
    parser.add_argument("--sites", type=int, help="sites of the sample web (default 25; smoke 6)")
    parser.add_argument("--pages", type=int, help="pages per site (default 80; smoke 30)")
    parser.add_argument("--seed", type=int, default=1, help="sample web seed")
    parser.add_argument(
        "--shape",
        default="uniform",
        help=f"sample web shape(s), comma-separated, each benchmarked in turn: {', '.join(SHAPES)} "
        "(default uniform; weblike: Zipf site sizes, see wirescrapy.testing.sampleweb.shape)",
    )
    parser.add_argument(
        "--web",
        choices=("sample", "real"),
        default="sample",
        help="sample: the generated sample web (--shape, --sites, --pages); real: the web of real "
        "documents (wirescrapy.testing.realweb: Debian documentation packages, nginx; "
        "apt-get installs what is missing)",
    )
    parser.add_argument(
        "--real-web",
        help=f"real web: the web(s) crawled, comma-separated, one after the other: {', '.join(webs.WEBS)}, "
        f"or bench for all of them, the held-out ones ({', '.join(webs.held_out())}) last "
        f"(default {webs.DEFAULT}, the web tuned on)",
    )
    parser.add_argument(
        "--real-sites",
        help=f"real web: comma-separated sites of the one web crawled (default: all; smoke {REAL_SMOKE}; "
        f"{webs.DEFAULT}'s: {', '.join(realweb_sites.BY_NAME)})",
    )
    parser.add_argument(
        "--weightings",
        help=f"comma-separated names from: {', '.join(WEIGHTINGS)}; "
        f"or a JSON object name -> weights (default: all; smoke: {','.join(SMOKE)})",
    )
    parser.add_argument(
        "--explore",
        help="comma-separated values of WIRE_BATCH_EXPLORE (0 to 1) the default weighting is crawled "
        f"again with (default: {','.join(map(str, EXPLORE))}; smoke: none; '' for none)",
    )
    parser.add_argument("--batch-share", type=float, default=0.05, help="K as a share of N (default 0.05)")
    parser.add_argument("--budget", type=float, default=0.20, help="share of N scored (default 0.20)")
    parser.add_argument(
        "--cycles",
        type=int,
        default=0,
        help="cycles per crawl (default: until the manager has nothing left to fetch)",
    )
    parser.add_argument(
        "--timeout", type=float, help="seconds allowed for one crawl (default 600; real web 1800)"
    )
    parser.add_argument(
        "--setting",
        "-s",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra Scrapy setting for every crawl (repeatable)",
    )
    parser.add_argument("--batches-shown", type=int, default=6, help="early batches described per crawl")
    parser.add_argument(
        "--workdir",
        help="keep the collections and crawl logs here (default: a temporary directory, removed at the end)",
    )
    args = parser.parse_args()

    sites = args.sites or (6 if args.smoke else 25)
    pages_per_site = args.pages or (30 if args.smoke else 80)
    known = dict(WEIGHTINGS)
    if args.weightings and args.weightings.lstrip().startswith("{"):
        given = {name: dict(weights) for name, weights in json.loads(args.weightings).items()}
        known.update(given)
        names = list(given)
    else:
        names = args.weightings.split(",") if args.weightings else (SMOKE if args.smoke else FULL)
    try:
        explore = explore_values(args.explore, args.smoke)
    except ValueError as error:
        parser.error(str(error))
    unknown = [name for name in names if name not in known]
    if unknown:
        parser.error(f"unknown weightings {unknown}; known: {', '.join(known)}")
    for name in names:
        bad = [score for score in known[name] if score not in SCORE_FUNCTIONS]
        if bad:
            parser.error(f"weighting {name}: unknown scores {bad}; known: {', '.join(SCORE_FUNCTIONS)}")
    if args.timeout is None:
        args.timeout = 1800 if args.web == "real" else 600
    if args.web == "real":
        return real_webs(parser, args, names, explore, known)
    shapes = args.shape.split(",")
    if unknown := [shape for shape in shapes if shape not in SHAPES]:
        parser.error(f"unknown shapes {unknown}; known: {', '.join(SHAPES)}")

    status = 0
    for number, shape in enumerate(shapes):
        if number:
            print("\n" + "=" * 100 + "\n")
        workdir = Path(args.workdir) / shape if args.workdir and len(shapes) > 1 else args.workdir
        status |= benchmark(args, shape, sites, pages_per_site, names, explore, known, workdir)[0]
    return status


def explore_values(given: str | None, smoke: bool) -> list[float]:
    """The WIRE_BATCH_EXPLORE values of ``--explore`` (comma-separated; None: ``EXPLORE``, none in a smoke
    run). A value outside 0 to 1 is a ValueError."""
    if given is None:
        return [] if smoke else list(EXPLORE)
    values = []
    for text in filter(None, (part.strip() for part in given.split(","))):
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"--explore: {text!r} is not a number") from None
        if not 0 <= value <= 1:
            raise ValueError(f"--explore: {text} is not between 0 and 1")
        values.append(value)
    return values


def real_webs(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    names: list[str],
    explore: list[float],
    known: dict[str, dict[str, float]],
) -> int:
    """Crawl each web of ``--real-web`` in turn, then print the bench's table; 1 if a crawl failed."""
    try:
        chosen_webs = webs.names(args.real_web)
        if args.real_sites and len(chosen_webs) > 1:
            raise ValueError("--real-sites chooses the sites of one web: name one with --real-web")
        smoke = REAL_SMOKE if args.smoke and chosen_webs == [webs.DEFAULT] else None
        chosen = {web: webs.select(web, args.real_sites or smoke) for web in chosen_webs}
    except ValueError as error:
        parser.error(str(error))
    status, rows, crawl = 0, [], ""
    for number, web in enumerate(chosen_webs):
        if number:
            print("\n" + "=" * 100 + "\n")
        workdir = Path(args.workdir) / web if args.workdir and len(chosen_webs) > 1 else args.workdir
        failed, row = benchmark(args, "real", chosen[web], 0, names, explore, known, workdir, web)
        status |= failed
        if row is not None:
            crawl, figures = row
            rows.append(figures)
    print("\n" + "=" * 100 + "\n")
    print(bench_table(rows, args.budget, crawl))
    return status


def benchmark(
    args: argparse.Namespace,
    shape: str,
    sites,
    pages_per_site: int,
    names: list[str],
    explore: list[float],
    known: dict[str, dict[str, float]],
    keep: str | Path | None,
    real_web: str = webs.DEFAULT,
) -> tuple[int, tuple[str, WebFigures] | None]:
    """Crawl one web once per weighting and print the report. Returns 1 if a crawl failed (else 0), and the
    web's line in the bench's table with the name of the crawl it is of (None if no crawl succeeded)."""
    workdir = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="wire-crawl-order-"))
    workdir.mkdir(parents=True, exist_ok=True)
    total_started = time.perf_counter()
    crawls: list[Crawl] = []
    try:
        with open_web(args, shape, sites, pages_per_site, workdir, real_web) as web:
            truth = web.truth
            graph = final_graph(truth)
            n = graph.n
            budget = math.ceil(args.budget * n)
            batch_size = max(1, round(args.batch_share * n))
            cycles = args.cycles or 4 * math.ceil(n / batch_size) + 20
            settings = [*args.setting, *web_settings(web)]
            runs = [Run(DESCRIPTIONS.get(name, name), name, known[name], list(settings)) for name in names]
            runs += [
                Run(
                    f"{DESCRIPTIONS['default']}, explore {value:g}",
                    "default",
                    known["default"],
                    [*settings, f"WIRE_BATCH_EXPLORE={value}"],
                )
                for value in explore
            ]
            seeds_file = workdir / "seeds.txt"
            seeds_file.write_text("".join(seed + "\n" for seed in web.seeds), encoding="utf-8")
            difference = networkx_check(graph)
            print(
                f"{describe_web(web, shape, sites, pages_per_site, args.seed)}; "
                f"final graph N = {n} pages (truth.pages), {graph.links.nnz} links; "
                f"PageRank q = {Q} (max |ours - networkx| = {difference:.1e})"
            )
            held_out = held_out_hosts(web)
            real = isinstance(web, RealWeb)
            name, hosts = (web.name, len(web.sites)) if real else (shape, sites)
            web_held_out = real and web.held_out
            print(
                f"K = {batch_size} URLs a batch ({args.batch_share:.0%} of N), budget = first {budget} pages "
                f"({args.budget:.0%} of N), {describe_waits(args.setting)}, {len(runs)} crawls; "
                f"work directory {workdir}",
                flush=True,
            )

            bfs = bfs_order(truth, graph)
            oracle = oracle_order(graph)
            oracle_share = share(oracle, graph, budget)
            bfs_share = share(bfs, graph, budget)
            for number, run in enumerate(runs):
                slug = f"{number:02d}-{re.sub(r'[^a-z0-9]+', '_', run.label.lower()).strip('_')}"
                directory = workdir / f"collection-{slug}"
                shutil.rmtree(directory, ignore_errors=True)
                crawl = run_crawl(
                    run.label,
                    run.weights,
                    seeds_file,
                    directory,
                    workdir / f"{slug}.log",
                    batch_size,
                    cycles,
                    args.timeout,
                    run.settings,
                )
                if (directory / "documents.rec").exists():
                    read_order(crawl, directory, graph)
                elif not crawl.problem:
                    crawl.problem = "no collection written"
                if not crawl.order and not crawl.problem:
                    crawl.problem = f"no page of the final graph fetched, see {workdir / f'{slug}.log'}"
                crawls.append(crawl)
                got = share(crawl.order, graph, budget)
                print(
                    f"  crawled {run.label:<40} {crawl.seconds:6.1f} s, {crawl.cycles:3d} cycles, "
                    f"share {got:.4f} ({got / oracle_share:.1%} of oracle)"
                    f"{'  ' + crawl.problem if crawl.problem else ''}",
                    flush=True,
                )
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.perf_counter() - total_started

    # -- the table
    width = max([30, *(len(c.name) for c in crawls)])
    header = (
        f"{'order':<{width}} {'share':>7} {'/oracle':>8} {'/BFS':>6} {'harvest':>8} {'cycles':>6} "
        f"{'pages':>11} {'docs':>5} {'seconds':>8}"
    )
    print()
    print(
        f"Share of the final graph's PageRank held by the first {budget} of {n} pages fetched "
        f"({args.budget:.0%}), K = {batch_size}:"
    )
    print(header)
    print("-" * len(header))

    def row(label, value, harvest=None, cycles="", pages="", docs="", seconds=""):
        harvest_text = f"{harvest / oracle_share:8.1%}" if harvest is not None else f"{'':>8}"
        print(
            f"{label:<{width}} {value:7.4f} {value / oracle_share:8.1%} {value / bfs_share:6.2f} "
            f"{harvest_text} {cycles:>6} {pages:>11} {docs:>5} {seconds:>8}"
        )

    row("oracle (top PageRank first)", oracle_share, pages=f"{n}/{n}")
    row("BFS (offline, from the seeds)", bfs_share, pages=f"{len(bfs)}/{n}")
    for crawl in crawls:
        row(
            crawl.name,
            share(crawl.order, graph, budget),
            share(crawl.harvest_order, graph, budget),
            crawl.cycles,
            f"{len(crawl.order)}/{n}",
            crawl.documents_fetched,
            f"{crawl.seconds:.1f}",
        )
    print(
        "/oracle, /BFS: share over the oracle's, BFS's share. harvest: /oracle with the pages in "
        "first_visit\n"
        "order instead of the manager's batch order. cycles: batches written. pages: final-graph pages "
        "fetched.\n"
        "docs: all documents fetched (errors, redirects, robots.txt, traps too). seconds: the crawl's wall "
        "clock."
    )

    # -- other budgets
    budgets = sorted({0.05, 0.10, args.budget, 0.40})
    print()
    print("Share / oracle at other budgets (share of N fetched):")
    print(f"{'order':<{width}} " + " ".join(f"{b:>7.0%}" for b in budgets))
    for label, order in [("BFS (offline)", bfs)] + [(c.name, c.order) for c in crawls]:
        cells = []
        for b in budgets:
            size = math.ceil(b * n)
            cells.append(f"{share(order, graph, size) / share(oracle, graph, size):7.1%}")
        print(f"{label:<{width}} " + " ".join(cells))

    # -- per site
    print()
    print(
        f"Per site, the first {budget} pages ({args.budget:.0%} of N) of each order: pages taken from the "
        "site and their PageRank" + (" (* held out of tuning)" if held_out else "") + ":"
    )
    print(
        site_table(
            [("oracle", oracle), ("BFS", bfs)] + [(c.name, c.order) for c in crawls], graph, budget, held_out
        )
    )

    # -- the first batches
    oracle_top = set(oracle[:budget])
    print()
    print(
        f"First batches of each crawl (pages: of the final graph, first fetched in the batch; PR: their "
        f"share of the total;\noracle top: how many are among the oracle's {budget}; median page number: of "
        f"/page/I.html, shallow on a uniform web):"
    )
    for crawl in crawls:
        print(f"  {crawl.name}  WIRE_SCORE_WEIGHTS={json.dumps(crawl.weights)}")
        print(describe_batches(crawl, graph, budget, oracle_top, args.batches_shown))

    print()
    print(f"Total {elapsed:.1f} s.")
    ok = [c for c in crawls if not c.problem]
    if ok:
        # hub and depth are breadth-first orders inside each site's share of a batch: an unfetched page has
        # no links, so its hub score is 0, and depth ties go to the lower doc-id, the page discovered first.
        breadth_first = [c for c in ok if set(c.weights) <= BREADTH_FIRST]
        manager_bfs = max((share(c.order, graph, budget) for c in breadth_first), default=0.0)
        ranked = [c for c in ok if c not in breadth_first] or ok
        best = max(ranked, key=lambda c: share(c.order, graph, budget))
        default = next((c for c in ok if c.name == DESCRIPTIONS["default"]), None)
        for label, crawl in (
            ("Best link-score weighting", best),
            ("The default WIRE_SCORE_WEIGHTS", default),
        ):
            if crawl is None:
                continue
            got = share(crawl.order, graph, budget)
            print(
                f"{label}: {crawl.name} {json.dumps(crawl.weights)}: {got / oracle_share:.1%} of the oracle, "
                f"{got / bfs_share:.2f} x BFS, closing "
                f"{(got - bfs_share) / (oracle_share - bfs_share):.0%} of the gap from BFS to the oracle"
                + (
                    f"; {got / manager_bfs:.2f} x the manager's breadth-first crawls (depth/hub, batches "
                    "shared among sites by PageRank as well)"
                    if manager_bfs
                    else ""
                )
                + "."
            )
        judged = default or best
        value = share(judged.order, graph, budget)
        print(
            f"Goal ({judged.name}): >= 90 % of the oracle: {'yes' if value >= 0.9 * oracle_share else 'NO'}; "
            f"clearly ahead of breadth-first (>= {CLEARLY:.2f} x BFS): "
            f"{'yes' if value >= CLEARLY * bfs_share else 'NO'}."
            + (" (A smoke run on a small web: the goal is judged on the full run.)" if args.smoke else "")
        )
    failed = [c for c in crawls if c.problem]
    for crawl in failed:
        print(f"problem: {crawl.name}: {crawl.problem}", file=sys.stderr)
    if not ok:
        return 1, None
    figures = WebFigures(
        name,
        web_held_out,
        hosts,
        n,
        share(judged.order, graph, budget),
        oracle_share,
        bfs_share,
        len(judged.order) / n,
    )
    return (1 if failed else 0), (judged.name, figures)


if __name__ == "__main__":
    sys.exit(main())
