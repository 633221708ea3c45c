"""The Link scores section: PageRank, HITS hub and authority, weighted link rank — distributions and by depth.

The scores are over the whole link graph, whatever weights the manager gives them: those the manager stored
over this very graph are read from the records, the others are computed for the report
(``CrawlData.scores``, the manager's ranking code). Each sums to 1 over the documents; the figures show
them multiplied by the number of documents, so that 1 is the average page and the axes read the same at
any size of collection.
"""

from __future__ import annotations

import numpy as np

from .data import CrawlData
from .replay import Replay
from .tables import Plot, Section, Series, Table, ccdf, log_bin_table

FLOOR = 1e-6  # a score × N below this counts as no score: a millionth of the average page's
TOP = 20  # the pages with the highest PageRank listed
SCORES = {
    "pagerank": "PageRank",
    "hub": "HITS hub",
    "authority": "HITS authority",
    "wlrank": "weighted link rank",
}


def _origin(stored: tuple[str, ...]) -> str:
    """Which scores the manager stored over this graph, and which the report computed."""
    names = {**SCORES, "siterank": "site rank"}
    computed = [title for key, title in names.items() if key not in stored]
    if not stored:
        return "computed for this report."
    read = ", ".join(names[key] for key in names if key in stored)
    if not computed:
        return f"{read} as the manager stored them over this very graph."
    return (
        f"{read} as the manager stored them over this very graph; {', '.join(computed)} computed for this "
        "report."
    )


def scores_section(data: CrawlData, replay: Replay | None = None) -> Section:
    section = Section(
        "scores",
        "Link scores",
        "Link analysis over the pages the crawl knows and the links between them: "
        + _origin(data.stored_scores)
        + " Scores are shown × N (the number of documents): 1 is the score every page would have "
        "if all were equal.",
    )
    scores = data.scores
    n = max(data.n_docs, 1)
    series = []
    for key, title in SCORES.items():
        values = scores[key][1:].astype(np.float64) * n
        values[values < FLOOR] = 0  # HITS leaves float residues far below it on pages outside its community
        table = log_bin_table(f"scores-{key}", f"{title} × N, logarithmic bins", values)
        section.tables.append(table)
        if len(table):
            series.append(ccdf(table, title))
        positive = values[values > 0]
        section.figures[key] = {
            "max_x_n": float(values.max(initial=0)),
            "median_x_n": float(np.median(positive)) if positive.size else 0.0,
            "documents_with_score": int(positive.size),
        }
    section.plots.append(
        Plot(
            "scores",
            "Distribution of the link scores",
            "ccdf",
            "score × N",
            "fraction of documents ≥ x",
            series,
            table="scores-pagerank",
            logx=True,
            logy=True,
            note="Complementary cumulative distribution: the share of documents scoring at least x "
            "times the average; scores under a millionth of the average are left out.",
        )
    )

    # By depth: the mean score of the documents at each depth.
    depth = data.doc("depth")[1:].astype(np.int64)
    depth = np.minimum(depth, 64)
    counts = np.bincount(depth)
    present = np.flatnonzero(counts)
    columns, series = [], []
    for key, title in SCORES.items():
        sums = np.bincount(depth, weights=scores[key][1:].astype(np.float64) * n, minlength=len(counts))
        mean = sums[present] / counts[present]
        columns.append(mean)
        series.append(Series(title, present, mean))
    section.tables.append(
        Table(
            "scores-by-depth",
            "Mean score × N by depth",
            ["depth", "documents", *(f"{k}_x_n" for k in SCORES)],
            [present, counts[present], *columns],
        )
    )
    section.plots.append(
        Plot(
            "scores-depth",
            "Mean link score by depth",
            "line",
            "depth",
            "mean score × N",
            series,
            table="scores-by-depth",
            logy=True,
            note="The mean over the documents at each depth; 1 is the average document.",
        )
    )

    # Pages only: a robots.txt has a score too (links may reach it), but it is no page of its site.
    pagerank = np.where(data.pages, scores["pagerank"], 0)
    top = np.argsort(-pagerank, kind="stable")[:TOP]
    top = top[pagerank[top] > 0]
    urls = [data.collection.url(int(i)) for i in top]
    table = Table(
        "scores-top-pagerank",
        "Pages with the highest PageRank",
        ["url", "depth", "in_degree", *(f"{k}_x_n" for k in SCORES)],
        [
            urls,
            data.doc("depth")[top],
            data.in_degree[top],
            *(scores[k][top].astype(np.float64) * n for k in SCORES),
        ],
        links={"url": "url"},
    )
    if replay is not None:
        table.columns.insert(1, "replay")
        table.rows.insert(1, [replay.url(url) for url in urls])
        table.links["replay"] = "replay"
    section.tables.append(table)
    return section
