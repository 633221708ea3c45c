"""Offline companion of ``benchmarks.crawl_order``: the same score, batch crawls simulated on the ground
truth.

    python -m benchmarks.crawl_order_sim                      # 25 sites x 80 pages, in seconds
    python -m benchmarks.crawl_order_sim --sites 30 --pages 100 --seed 2 --samesite 0,4 --weightings ''
    python -m benchmarks.crawl_order_sim --scores '' --weightings '{"pr2+opic": {"pagerank": 2, "opic": 1}}'
    python -m benchmarks.crawl_order_sim --shape uniform,weblike --explore 0.2,0   # both web shapes
    python -m benchmarks.crawl_order_sim --webs six --shape weblike,uniform --explore 0.2,0

No server and no harvester: a crawl is simulated on the sample web's final graph (``crawl_order.final_graph``)
in batches of K pages, as the manager plans them — the seeds are known at the start; a batch is the K known,
unfetched pages of highest score, at most ``--samesite`` of a site (0: no cap), home pages' scores times
WIRE_SCORE_BOOST_FRONTPAGE (2), ties to the page discovered first (the manager's lower doc-id); fetching a
page discovers its links. Only pages of the final graph exist here (no errors, redirects, traps), so it
isolates the ordering from the harvester. It follows the real crawls of ``benchmarks.crawl_order`` closely
(the BFS order is identical), and lets a score be tried before it is written into the manager:

* ``bfs``       — discovery order (what ``{"depth": 1}`` and ``{"hub": 1}`` do in the manager);
* ``pagerank``  — the manager's PageRank on the known graph (``ranking.pagerank``, q = 0.15): fetched
                  pages' links, unfetched pages dangling;
* ``indegree``  — links from fetched pages (Cho, Garcia-Molina & Page 1998, "backlink count");
* ``opic``      — OPIC cash (Abiteboul, Preda & Cobena 2003, ``opic.opic``): the seeds start with the
                  cash, a fetched page hands its cash out evenly over its links and the virtual page; an
                  unfetched page's score is the cash it holds;
* ``pagerank/site`` — PageRank divided by the best PageRank among the unfetched pages of the same site
                  (each site's best candidate scores 1);
* ``absorbing`` — PageRank's walk started at the seeds with unfetched pages absorbing: cash moves on from a
                  fetched page over its links (times 1 − q, the rest is dropped) until all of it rests on
                  unfetched pages, whose score is what reached them — OPIC's Greedy crawl with every fetched
                  page revisited until it holds nothing (Abiteboul et al. 2003), or the partial PageRank of
                  Cho, Garcia-Molina & Page 1998 without its uniform jump. The jump is what biases
                  ``pagerank``: the rank of unfetched pages, spread evenly, reaches a site in proportion to
                  its known pages; started uniformly instead of at the seeds, this score orders as
                  ``pagerank`` does.

Then the manager itself (``--weightings``, names of ``crawl_order.WEIGHTINGS`` or a JSON object name ->
weights): each batch is what ``wirescrapy.manager.plan`` chooses — the same filters, scores, front-page
boost, profit and per-site cap as a real crawl — over document records and link counts kept as the
gatherer would (doc-ids in order of discovery, depth, SEED and FRONT_PAGE flags, first and last visit);
a batch is "harvested" site-interleaved, one page per site in turn, as the harvester does with waits 0,
and that sets ``first_visit``.

On the web of real documents (``--web real``) two options bring the simulation closer to a real crawl:
``--robots-docs`` files each site's robots.txt as a document fetched with its first page (it counts for
WIRE_BATCH_SITE_GROWTH, so the second batch takes 8 pages a site, not 4), and ``--content-seen``
makes a page whose file has an earlier fetched page's bytes a duplicate, whose links are not followed — or,
with ``-s WIRE_FOLLOW_DUPLICATE_LINKS=true``, those its original's do not reach, as the gatherer then does
(the Apache manual's language trees are mostly symbolic links to the English pages). The manager runs with
waits 0, as ``benchmarks.crawl_order`` crawls (the sites' capacity then sets no limit). With waits set
(``-s WIRE_WAIT_NORMAL=0.2 -s WIRE_WAIT_LARGE_SITE=0.05``) each site's share of a batch is cut to what it
fetches in the batch's time, its wait set by its known documents as the harvester sets it; the batches are
still harvested whole (no softmin), so this is the manager's side only. Each document's section
(``wirescrapy.manager.sections``, for the score ``crosslinks``) comes from its page's URL.
A single K is one draw of a chaotic process (``benchmarks.crawl_order``'s docstring): screen an idea over
several (``--batch-share`` 0.035 to 0.065), and crawl it for real before believing it.

Printed: share / oracle of each score's order at budgets of 5, 10, 20 and 40 % of N, per samesite cap
(``--samesite`` caps the scores' batches), then the manager's rows per ``--explore``; for each web shape of
``--shape`` in turn. ``--webs`` prints instead the share / oracle at 20 % of BFS and of the manager's
weightings on several webs, with their mean and least.

The ``weblike`` shape (``wirescrapy.testing.sampleweb.shape``: Zipf site sizes, cross-site links in
proportion to site size, popular pages at any depth) is harder for every order.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
from scipy.sparse import csr_matrix
from scrapy.settings import Settings

from benchmarks import crawl_order
from wirescrapy.collection.metadata import DOCUMENT_DTYPE, SITE_DTYPE, DocFlag
from wirescrapy.config import (
    WireConfig,
    WireSettingsError,
    default_settings,
)
from wirescrapy.gatherer.pipelines.linkgraph import follows_duplicate
from wirescrapy.manager import plan, ranking
from wirescrapy.manager.opic import opic as replay_opic
from wirescrapy.manager.run import path_groups
from wirescrapy.testing.realweb import sites as realweb_sites
from wirescrapy.testing.realweb import truth as realweb_truth
from wirescrapy.testing.realweb import webs as realweb_webs
from wirescrapy.testing.sampleweb import SampleWeb, SampleWebConfig
from wirescrapy.testing.sampleweb.shape import SHAPES

FRONT_PAGE_BOOST = 2.0
NOW = 1_700_000_000.0
BATCH_SECONDS = 3600.0  # between manager runs: far less than the revisit periods, so nothing is refetched
EXTRA_SETTINGS: dict[str, object] = {}  # --setting: for every manager run
ROBOTS_DOCS = {
    "on": False
}  # --robots-docs: each site's robots.txt a fetched document, as the gatherer files it
CONTENT_SEEN = {"on": False}  # --content-seen: duplicates modelled as the gatherer treats them


class Simulation:
    def __init__(self, graph: crawl_order.FinalGraph, seeds: list[int]):
        self.graph = graph
        self.n = graph.n
        self.out = np.split(graph.links.indices, graph.links.indptr[1:-1])  # row i: links of page i
        self.site = np.zeros(self.n + 1, dtype=np.int64)
        self.home = np.zeros(self.n + 1, dtype=bool)
        numbers: dict[str, int] = {}
        for i, url in enumerate(graph.urls, start=1):
            split = urlsplit(url)
            self.site[i] = numbers.setdefault(split.hostname, len(numbers))
            self.home[i] = split.path == "/"
        self.seeds = seeds
        self.content = np.zeros(
            self.n + 1, dtype=np.int64
        )  # content key per page (equal: duplicates), 0: unique

    def place(self, page: int) -> tuple[int, bytes]:
        """The page's site number and path, as ``linkgraph.follows_duplicate`` takes them."""
        return int(self.site[page]), urlsplit(self.graph.urls[page - 1]).path.encode()

    def crawl(self, score, batch_size: int, samesite: int) -> list[int]:
        known = list(self.seeds)  # discovery order
        discovered = np.zeros(self.n + 1, dtype=bool)
        discovered[known] = True
        fetched = np.zeros(self.n + 1, dtype=bool)
        order: list[int] = []
        while True:
            candidates = np.array([p for p in known if not fetched[p]], dtype=np.int64)
            if len(candidates) == 0:
                return order
            values = score(self, known, fetched, order, candidates) * np.where(
                self.home[candidates], FRONT_PAGE_BOOST, 1.0
            )
            ranked = candidates[np.lexsort((np.arange(len(candidates)), -values))]
            taken, per_site = [], {}
            for page in ranked.tolist():
                site = self.site[page]
                if samesite and per_site.get(site, 0) >= samesite:
                    continue
                per_site[site] = per_site.get(site, 0) + 1
                taken.append(page)
                if len(taken) == batch_size:
                    break
            for page in taken:
                fetched[page] = True
                order.append(page)
                for target in self.out[page].tolist():
                    if not discovered[target]:
                        discovered[target] = True
                        known.append(target)


def bfs(sim, known, fetched, order, candidates):
    position = np.zeros(sim.n + 1)
    position[known] = np.arange(len(known), 0, -1)
    return position[candidates]


def pagerank(sim, known, fetched, order, candidates):
    local = np.zeros(sim.n + 1, dtype=np.int64)
    local[known] = np.arange(1, len(known) + 1)
    rows, cols = [], []
    for page in order:
        targets = sim.out[page]
        rows.append(np.full(len(targets), local[page]))
        cols.append(local[targets])
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    size = len(known) + 1
    links = csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(size, size))
    scores = ranking.pagerank(ranking.link_matrix(links), crawl_order.Q, 1e-6).scores
    return np.asarray(scores, dtype=np.float64)[local[candidates]]


def indegree(sim, known, fetched, order, candidates):
    counts = np.zeros(sim.n + 1)
    for page in order:
        counts[sim.out[page]] += 1
    return counts[candidates]


def opic(sim, known, fetched, order, candidates):
    start = np.zeros(sim.n + 1)
    start[sim.seeds] = 1.0
    return replay_opic(sim.graph.links, order, start, dtype=np.float64).cash[candidates]


def pagerank_per_site(sim, known, fetched, order, candidates):
    values = pagerank(sim, known, fetched, order, candidates)
    best = np.zeros(sim.n + 1)
    np.maximum.at(best, sim.site[candidates], values)
    return values / np.maximum(best[sim.site[candidates]], 1e-300)


def absorbing(sim, known, fetched, order, candidates):
    held = np.zeros(sim.n + 1)
    cash = np.zeros(sim.n + 1)
    cash[sim.seeds] = 1.0 / len(sim.seeds)
    links = sim.graph.links
    degree = np.diff(links.indptr).astype(np.float64)
    moving = fetched & (degree > 0)
    hand_out = (1.0 - crawl_order.Q) / np.maximum(degree, 1.0)
    back = links.T.tocsr()  # row i: pages linking to i (links of unfetched pages carry nothing)
    while cash.sum() > 1e-9:
        held[~fetched] += cash[~fetched]
        cash = back @ np.where(moving, cash * hand_out, 0.0)
    return held[candidates]


SCORES = {
    "bfs": bfs,
    "pagerank": pagerank,
    "indegree": indegree,
    "opic": opic,
    "pagerank/site": pagerank_per_site,
    "absorbing": absorbing,
}


# -- the manager in the loop -----------------------------------------------------------------------------


class Records:
    """Document records and link counts of a simulated crawl, as the collection would hold them."""

    def __init__(self, sim: Simulation):
        self.sim = sim
        sites = len(np.unique(sim.site[1:]))
        self.docs = np.zeros(sim.n + 1 + sites, dtype=DOCUMENT_DTYPE)  # by doc-id; record 0 unused
        self.robots: dict[int, int] = {}  # site-id -> its robots.txt's doc-id (ROBOTS_DOCS)
        self.doc_of = np.zeros(sim.n + 1, dtype=np.int64)  # final-graph page -> doc-id, 0 if unknown
        self.page_of = [0]  # doc-id -> page
        self.site_ids: dict[int, int] = {}
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.first_with: dict[int, int] = {}  # content key -> doc-id of its first fetch (content-seen)
        self.follow_duplicates = bool(EXTRA_SETTINGS.get("WIRE_FOLLOW_DUPLICATE_LINKS", False))
        for seed in sim.seeds:
            self.discover(seed, 0, DocFlag.SEED)

    @property
    def count(self) -> int:
        return len(self.page_of) - 1

    def discover(self, page: int, depth: int, flags: int = 0) -> int:
        doc_id = int(self.doc_of[page])
        if doc_id:
            self.docs["depth"][doc_id] = min(int(self.docs["depth"][doc_id]), depth)
            return doc_id
        doc_id = len(self.page_of)
        self.page_of.append(page)
        self.doc_of[page] = doc_id
        record = self.docs[doc_id : doc_id + 1]
        record["docid"], record["depth"] = doc_id, depth
        record["siteid"] = site_id = self.site_ids.setdefault(
            int(self.sim.site[page]), len(self.site_ids) + 1
        )
        record["flags"] = flags | (DocFlag.FRONT_PAGE if self.sim.home[page] else 0)
        if ROBOTS_DOCS["on"] and site_id not in self.robots:
            # The gatherer files a site's robots.txt as a document at depth 0, fetched with its first page,
            # never in a batch; it counts among the site's fetched documents (WIRE_BATCH_SITE_GROWTH).
            robots = self.robots[site_id] = len(self.page_of)
            self.page_of.append(0)
            self.docs[robots : robots + 1]["docid"], self.docs[robots : robots + 1]["siteid"] = (
                robots,
                site_id,
            )
        return doc_id

    def sites(self) -> np.ndarray:
        """Site records as the gatherer keeps them: ``docs``, the site's known documents."""
        records = np.zeros(len(self.site_ids) + 1, dtype=SITE_DTYPE)
        records["siteid"] = np.arange(len(records))
        counts = np.bincount(self.docs["siteid"][1 : self.count + 1], minlength=len(records))
        records["docs"] = counts[: len(records)]
        return records

    def path_groups(self, config: WireConfig) -> dict[str, np.ndarray]:
        """The path groups a manager run with ``config`` reads (``manager.run.path_groups``), from each
        document's page's URL."""
        return path_groups(
            config,
            (
                (
                    int(self.docs["siteid"][doc_id]),
                    urlsplit(self.sim.graph.urls[page - 1]).path.encode() if page else b"/robots.txt",
                )
                for doc_id, page in enumerate(self.page_of[1:], start=1)
            ),
        )

    def links(self) -> csr_matrix:
        size = self.count + 1
        return csr_matrix((np.ones(len(self.rows), np.float32), (self.rows, self.cols)), shape=(size, size))

    def fetch(self, doc_id: int, when: float) -> None:
        record = self.docs[doc_id : doc_id + 1]
        record["visits"], record["status"] = 1, 200
        record["first_visit"] = record["last_visit"] = when
        depth = int(record["depth"][0])
        page = self.page_of[doc_id]
        targets = self.sim.out[page]
        key = int(self.sim.content[page]) if CONTENT_SEEN["on"] else 0
        if key and (original := self.first_with.setdefault(key, doc_id)) != doc_id:
            # The gatherer's content-seen: its links are not followed, or only those its original's do
            # not reach.
            record["flags"] = record["flags"] | np.uint16(DocFlag.DUPLICATE)
            record["duplicate_of"] = original
            if not self.follow_duplicates or not follows_duplicate(
                *self.sim.place(self.page_of[original]), *self.sim.place(page)
            ):
                return
            targets = np.setdiff1d(targets, self.sim.out[self.page_of[original]])
        for target in targets.tolist():
            self.rows.append(doc_id)
            self.cols.append(self.discover(target, depth + 1))


def harvest_order(batch: np.ndarray, site_of: np.ndarray) -> np.ndarray:
    """The batch's doc-ids as the harvester fetches them with waits 0: the sites in turn, one page each,
    each site's pages in the batch's order."""
    turn = np.zeros(len(batch), dtype=np.int64)
    seen: dict[int, int] = {}
    for i, site in enumerate(site_of[batch].tolist()):
        turn[i] = seen.get(site, 0)
        seen[site] = turn[i] + 1
    return batch[np.argsort(turn, kind="stable")]


def manager_crawl(
    sim: Simulation,
    weights: dict[str, float],
    batch_size: int,
    explore: float | None = None,
) -> list[int]:
    """Final-graph pages in the manager's order (batch by batch, each in decreasing profit)."""
    config = WireConfig.from_settings(
        Settings(
            {
                **default_settings(),
                "WIRE_BATCH_SIZE": batch_size,
                "WIRE_SCORE_WEIGHTS": weights,
                # crawl_order.py's crawls: waits 0 (no capacity limit)
                "WIRE_WAIT_NORMAL": 0,
                "WIRE_WAIT_LARGE_SITE": 0,
                **EXTRA_SETTINGS,
                **({} if explore is None else {"WIRE_BATCH_EXPLORE": explore}),
            }
        )
    )
    records = Records(sim)
    order: list[int] = []
    now = NOW
    while True:
        docs = records.docs[1 : records.count + 1]
        groups = records.path_groups(config)
        site_records = np.zeros(len(records.site_ids) + 1, dtype=SITE_DTYPE)  # each site's known documents
        site_records["docs"] = np.bincount(docs["siteid"], minlength=len(site_records))[: len(site_records)]
        result = plan(
            docs,
            records.links(),
            config,
            now,
            count=1,
            sites=len(records.site_ids),
            site_records=site_records,
            sections=groups.get("sections"),
            mirrors=groups.get("mirrors"),
            rng=np.random.default_rng(0),
            exclude=np.asarray(list(records.robots.values()), dtype=np.int64),
        )
        if not result.batches:
            return order
        batch = result.batches[0]
        order += [records.page_of[d] for d in batch.tolist()]
        for tick, doc_id in enumerate(harvest_order(batch, records.docs["siteid"]).tolist()):
            records.fetch(doc_id, now + 1 + tick * 1e-3)
            robots = records.robots.get(int(records.docs["siteid"][doc_id]), 0)
            if robots and not records.docs["visits"][robots]:
                records.docs[robots : robots + 1]["visits"], records.docs[robots : robots + 1]["status"] = (
                    1,
                    200,
                )
                records.docs[robots : robots + 1]["first_visit"] = now + tick * 1e-3
                records.docs[robots : robots + 1]["last_visit"] = now + tick * 1e-3
        now += BATCH_SECONDS


def explore_values(args: argparse.Namespace) -> list[float | None]:
    """``--explore``'s values (None: the setting's default, or -s's)."""
    return [float(value) for value in args.explore.split(",") if value] or [None]


def weightings(text: str) -> dict[str, dict[str, float]]:
    if text.lstrip().startswith("{"):
        return {name: dict(weights) for name, weights in json.loads(text).items()}
    return {name: crawl_order.WEIGHTINGS[name] for name in text.split(",") if name}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=25)
    parser.add_argument("--pages", type=int, default=80)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--shape",
        default="uniform",
        help=f"sample web shape(s), comma-separated: {', '.join(SHAPES)} (default uniform)",
    )
    parser.add_argument("--batch-share", type=float, default=0.05)
    parser.add_argument(
        "--samesite",
        default="0,auto",
        help="comma-separated caps per site and batch; 0 none, auto K // sites (default 0,auto)",
    )
    parser.add_argument("--scores", default=",".join(SCORES), help=f"from {', '.join(SCORES)} ('' for none)")
    parser.add_argument(
        "--weightings",
        default=",".join(crawl_order.WEIGHTINGS),
        help="the manager's weightings: names from crawl_order.WEIGHTINGS, or a JSON object "
        "name -> WIRE_SCORE_WEIGHTS ('' for none; default: all of WEIGHTINGS)",
    )
    parser.add_argument(
        "--explore",
        default="",
        help="WIRE_BATCH_EXPLORE values the manager's weightings run with, comma-separated (default: the "
        "setting's, or -s's)",
    )
    parser.add_argument(
        "--web",
        choices=("sample", "real"),
        default="sample",
        help="real: the web of real documents (wirescrapy.testing.realweb), its truth read "
        "from the files (no server); prints the manager's rows and a per-site table",
    )
    parser.add_argument(
        "--real-web",
        default=realweb_webs.DEFAULT,
        help=f"real web: which web of the bench ({', '.join(realweb_webs.WEBS)}; default "
        f"{realweb_webs.DEFAULT})",
    )
    parser.add_argument("--real-sites", help="real web: comma-separated sites (default: all)")
    parser.add_argument(
        "--robots-docs",
        action="store_true",
        help="file each site's robots.txt as a document fetched with its first page, as the gatherer "
        "does (it counts for WIRE_BATCH_SITE_GROWTH: a real crawl's second batch takes 8 a site)",
    )
    parser.add_argument(
        "--content-seen",
        action="store_true",
        help="real web: model the gatherer's content-seen (a page whose file's bytes an earlier "
        "fetch had is a duplicate: its links are not followed; with -s "
        "WIRE_FOLLOW_DUPLICATE_LINKS=true those its original's do not reach are)",
    )
    parser.add_argument(
        "--truth-cache", help="real web: keep its ground truth in this file (pickle) between runs"
    )
    parser.add_argument(
        "--webs",
        help="summary over several webs instead, comma-separated SITESxPAGES:SEED "
        f"('six' for {SIX_WEBS}): the manager's share / oracle at 20 %% per web, mean and least",
    )
    parser.add_argument(
        "--setting",
        "-s",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra setting for the manager's runs, the value as JSON or as scrapy -s takes it (repeatable)",
    )
    args = parser.parse_args()
    ROBOTS_DOCS["on"] = args.robots_docs
    for setting in args.setting:
        name, _, value = setting.partition("=")
        try:
            EXTRA_SETTINGS[name] = json.loads(value)
        except json.JSONDecodeError:  # a plain value, as scrapy -s takes it: the settings check reads it
            EXTRA_SETTINGS[name] = value
    try:
        WireConfig.from_settings(Settings({**default_settings(), **EXTRA_SETTINGS}))
    except WireSettingsError as error:
        parser.error(f"invalid setting: {error}")
    shapes = args.shape.split(",")
    if unknown := [shape for shape in shapes if shape not in SHAPES]:
        parser.error(f"unknown shapes {unknown}; known: {', '.join(SHAPES)}")
    if args.web == "real":
        try:
            chosen = realweb_webs.select(args.real_web, args.real_sites)
        except ValueError as error:
            parser.error(str(error))
        simulate_real(args, chosen)
        return 0
    if args.webs:
        summarize(args, shapes, SIX_WEBS if args.webs == "six" else args.webs)
        return 0
    for number, shape in enumerate(shapes):
        if number:
            print()
        simulate(args, shape)
    return 0


SIX_WEBS = "25x80:1,25x80:2,30x100:4,20x60:5,6x30:1,50x40:9"


def summarize(args: argparse.Namespace, shapes: list[str], webs_text: str) -> None:
    """Share / oracle at 20 % of BFS and of the manager's weightings (each ``--explore``) on each web of
    ``webs_text``, with their mean and least."""
    webs = [tuple(map(int, web.replace(":", "x").split("x"))) for web in webs_text.split(",")]
    print(f"share / oracle at 20 % on {len(webs)} webs ({webs_text})")
    print(f"{'shape':<8} {'explore':<9} {'order':<20} {'mean':>6} {'least':>6}   per web")
    for shape in shapes:
        rows: dict[tuple[str, str], list[float]] = {}
        for sites, pages, seed in webs:
            web = SampleWeb(
                SampleWebConfig(
                    sites=sites, pages_per_site=pages, seed=seed, broken_robots="malformed", shape=shape
                ),
                port=8080,
            )
            truth = web.ground_truth()
            graph = crawl_order.final_graph(truth)
            budget = math.ceil(0.2 * graph.n)
            best = crawl_order.share(crawl_order.oracle_order(graph), graph, budget)
            sim = Simulation(graph, [graph.index[seed] for seed in truth.seeds])
            batch_size = max(1, round(args.batch_share * graph.n))
            rows.setdefault(("-", "BFS (FIFO)"), []).append(
                crawl_order.share(crawl_order.bfs_order(truth, graph), graph, budget) / best
            )
            for explore in explore_values(args):
                for name, weights in weightings(args.weightings).items():
                    order = manager_crawl(sim, weights, batch_size, explore)
                    rows.setdefault((f"{explore}", name), []).append(
                        crawl_order.share(order, graph, budget) / best
                    )
        for (split, name), values in rows.items():
            print(
                f"{shape:<8} {split:<9} {name:<20} {np.mean(values):6.1%} {min(values):6.1%}   "
                + " ".join(f"{v:.1%}" for v in values),
                flush=True,
            )


def simulate(args: argparse.Namespace, shape: str) -> None:
    web = SampleWeb(
        SampleWebConfig(
            sites=args.sites,
            pages_per_site=args.pages,
            seed=args.seed,
            broken_robots="malformed",
            shape=shape,
        ),
        port=8080,
    )
    truth = web.ground_truth()
    graph = crawl_order.final_graph(truth)
    n = graph.n
    batch_size = max(1, round(args.batch_share * n))
    sim = Simulation(graph, [graph.index[seed] for seed in truth.seeds])
    oracle = crawl_order.oracle_order(graph)
    budgets = (0.05, 0.10, 0.20, 0.40)
    print(
        f"sample web {args.sites} sites x {args.pages} pages, {shape} (seed {args.seed}): N = {n}, "
        f"K = {batch_size}"
    )
    print(f"{'score':<16} {'samesite':>8} " + " ".join(f"{b:>7.0%}" for b in budgets))
    offline_bfs = crawl_order.bfs_order(truth, graph)
    cells = [
        crawl_order.share(offline_bfs, graph, math.ceil(b * n))
        / crawl_order.share(oracle, graph, math.ceil(b * n))
        for b in budgets
    ]
    print(f"{'BFS (FIFO)':<16} {'-':>8} " + " ".join(f"{c:7.1%}" for c in cells))
    for cap_text in args.samesite.split(","):
        cap = max(1, batch_size // args.sites) if cap_text == "auto" else int(cap_text)
        for name in filter(None, args.scores.split(",")):
            order = sim.crawl(SCORES[name], batch_size, cap)
            cells = [
                crawl_order.share(order, graph, math.ceil(b * n))
                / crawl_order.share(oracle, graph, math.ceil(b * n))
                for b in budgets
            ]
            print(f"{name:<16} {cap or 'none':>8} " + " ".join(f"{c:7.1%}" for c in cells), flush=True)
    for explore in explore_values(args):
        print(f"the manager, WIRE_BATCH_EXPLORE={'default' if explore is None else explore}:")
        for name, weights in weightings(args.weightings).items():
            order = manager_crawl(sim, weights, batch_size, explore)
            cells = [
                crawl_order.share(order, graph, math.ceil(b * n))
                / crawl_order.share(oracle, graph, math.ceil(b * n))
                for b in budgets
            ]
            print(f"{'  ' + name:<25} " + " ".join(f"{c:7.1%}" for c in cells), flush=True)


def real_truth(chosen, cache: str | None):
    """The real web's ground truth on port 8080, read from the files (``realweb.truth.walk``)."""
    if cache and Path(cache).exists():
        with open(cache, "rb") as file:
            names, truth = pickle.load(file)
        if names == [site.name for site in chosen]:
            return truth
    missing = realweb_sites.missing(chosen)
    if missing:
        sys.exit(
            f"error: real web: not installed: {' '.join(sorted({s.package for s in missing}))} "
            "(python -m wirescrapy.testing.realweb installs them)"
        )
    truth = realweb_truth.walk(
        [realweb_truth.Host(f"http://{site.host}:8080", site.root, site.index) for site in chosen]
    )
    if cache:
        with open(cache, "wb") as file:
            pickle.dump(([site.name for site in chosen], truth), file)
    return truth


def content_keys(graph: crawl_order.FinalGraph, chosen) -> np.ndarray:
    """A key per page of the real web's final graph, equal for pages served from files of equal bytes (the
    gatherer's content-seen compares cleaned documents: equal files, equal documents)."""
    from xxhash import xxh3_64_intdigest

    hosts = {
        site.host: realweb_truth.Host(f"http://{site.host}:8080", site.root, site.index) for site in chosen
    }
    keys = np.zeros(graph.n, dtype=np.int64)
    for i, url in enumerate(graph.urls):
        kind, local = realweb_truth._serve(hosts[urlsplit(url).hostname], url)
        if kind == "page":
            keys[i] = xxh3_64_intdigest(Path(local).read_bytes()[: realweb_truth.MAX_FILE_SIZE]) >> 1 or 1
    return keys


def simulate_real(args: argparse.Namespace, chosen) -> None:
    truth = real_truth(chosen, args.truth_cache)
    graph = crawl_order.final_graph(truth)
    n = graph.n
    batch_size = max(1, round(args.batch_share * n))
    budget = math.ceil(0.2 * n)
    sim = Simulation(graph, [graph.index[seed] for seed in truth.seeds])
    if args.content_seen:
        CONTENT_SEEN["on"] = True
        sim.content[1:] = content_keys(graph, chosen)
    oracle = crawl_order.oracle_order(graph)
    bfs = crawl_order.bfs_order(truth, graph)
    held_out = {site.host for site in chosen if site.held_out}
    budgets = (0.05, 0.10, 0.20, 0.40)
    print(
        f"real web, {len(chosen)} sites "
        f"(held out: {', '.join(s.name for s in chosen if s.held_out) or 'none'}): N = {n}, K = {batch_size}"
    )
    print(f"{'order':<40} " + " ".join(f"{b:>7.0%}" for b in budgets))
    orders = [("BFS (FIFO)", bfs)]
    for explore in explore_values(args):
        for name, weights in weightings(args.weightings).items():
            label = name if explore is None else f"{name} explore={explore:g}"
            orders.append((label, manager_crawl(sim, weights, batch_size, explore)))
    for label, order in orders:
        cells = [
            crawl_order.share(order, graph, math.ceil(b * n))
            / crawl_order.share(oracle, graph, math.ceil(b * n))
            for b in budgets
        ]
        print(f"{label:<40} " + " ".join(f"{c:7.1%}" for c in cells), flush=True)
    print()
    print(crawl_order.site_table([("oracle", oracle), *orders], graph, budget, held_out))


if __name__ == "__main__":
    sys.exit(main())
