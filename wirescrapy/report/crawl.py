"""The sections about the crawl itself: Languages, Links out of the crawl, Harvests and Politeness.

Languages come from the document records (the gatherer identifies each OK page's language,
``gatherer/language.py``); links out of the crawl from the counts the seeder kept (``outlinks.json``) and the
multimedia documents; harvests from each batch's ``batch.json`` and ``harvest.json``; politeness from the
visit times in the records: for each site, the shortest gap between the last visits of two of its documents,
against the wait the site was due (``WIRE_WAIT_NORMAL``, ``WIRE_WAIT_LARGE_SITE`` past
``WIRE_LARGE_SITE_PAGES``, or its Crawl-delay if longer). Only each document's last visit is recorded, so
the gaps are those between the last visits: a lower bound on the politeness a site saw is not implied.
"""

from __future__ import annotations

import time

import numpy as np

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.seeder.rules import extension

from .data import CrawlData
from .tables import Plot, Section, Series, Table, label_table

TOP_LANGUAGES = 8
FIGURE = {"extension": "links_to_files_not_crawled", "tld": "links_to_other_domains"}


def languages_section(data: CrawlData, columns: dict[str, np.ndarray]) -> Section:
    section = Section(
        "languages",
        "Languages",
        "The language of every gathered page, identified by the gatherer from the page's text "
        '(py3langid); "unknown": too little text to tell, or gathered before languages were recorded.',
    )
    ok = data.ok
    raw = data.doc("language")[ok]
    codes, inverse, counts = np.unique(raw, return_inverse=True, return_counts=True)
    labels = [c.decode("ascii", "replace") or "unknown" for c in codes]
    table = label_table("languages", "Gathered pages by language", labels, counts)
    section.tables.append(table)
    section.figures = dict(zip(table.rows[0][:20], (int(c) for c in table.rows[1][:20])))
    section.plots.append(
        Plot(
            "languages",
            "Languages of the gathered pages",
            "barh",
            "pages",
            "",
            [
                Series(
                    "pages",
                    np.array(table.rows[0][: TOP_LANGUAGES * 2], dtype=object),
                    np.asarray(table.rows[1][: TOP_LANGUAGES * 2]),
                )
            ],
            table="languages",
        )
    )
    top = [labels.index(name) for name in table.rows[0][:TOP_LANGUAGES]]
    depth = np.minimum(data.doc("depth")[ok].astype(np.int64), 64)
    depths = np.unique(depth)
    by_depth = np.zeros((len(depths), len(labels)), dtype=np.int64)
    np.add.at(by_depth, (np.searchsorted(depths, depth), inverse), 1)
    section.tables.append(
        Table(
            "languages-by-depth",
            "Gathered pages by depth and language",
            ["depth", *(labels[i] for i in top)],
            [depths, *(by_depth[:, i] for i in top)],
        )
    )
    shares = 100 * by_depth[:, top] / np.maximum(by_depth.sum(axis=1, keepdims=True), 1)
    section.plots.append(
        Plot(
            "languages-depth",
            "Languages by depth",
            "line",
            "depth",
            "% of the gathered pages at that depth",
            [Series(labels[i], depths, shares[:, k]) for k, i in enumerate(top)],
            table="languages-by-depth",
        )
    )
    site_of = data.site_of[ok]
    size = data.n_sites + 1
    by_site = np.zeros((size, len(labels)), dtype=np.int64) if size * len(labels) < 50_000_000 else None
    if by_site is not None and labels:  # no gathered page, no language yet
        np.add.at(by_site, (site_of, inverse), 1)
        main = by_site.argmax(axis=1)
        pages = by_site.sum(axis=1)
        order = np.argsort(-pages[1:], kind="stable") + 1
        order = order[pages[order] > 0]
        section.tables.append(
            Table(
                "languages-by-site",
                "Main language of each site (gathered pages)",
                ["site", "pages", "language", "share"],
                [
                    [data.site_names[i] for i in order],
                    pages[order],
                    [labels[main[i]] for i in order],
                    by_site[order, main[order]] / pages[order],
                ],
                links={"site": "site"},
            )
        )
    return section


def outlinks_section(data: CrawlData) -> Section:
    section = Section(
        "outlinks",
        "Links out of the crawl",
        "Links the seeder did not follow, counted as the crawl found them (every occurrence): to files "
        "of an extension that is not crawled (multimedia and documents, by extension), and to hosts "
        "outside the accepted domains, by top-level domain.",
    )
    groups = data.outlinks
    for group, title, unit in (
        ("extension", "Links to files that are not crawled, by extension", "links"),
        ("tld", "Links to hosts outside the crawl, by top-level domain", "links"),
    ):
        counts = groups.get(group, {})
        labels = [k or "(none)" for k in counts]
        table = label_table(f"outlinks-{group}", title, labels, list(counts.values()), unit)
        section.tables.append(table)
        section.figures[FIGURE[group]] = int(sum(counts.values()))
        if counts:
            section.plots.append(
                Plot(
                    f"outlinks-{group}",
                    title,
                    "barh",
                    "links",
                    "",
                    [
                        Series(
                            unit, np.array(table.rows[0][:15], dtype=object), np.asarray(table.rows[1][:15])
                        )
                    ],
                    table=table.name,
                )
            )
    multimedia = np.flatnonzero(data.flag(DocFlag.MULTIMEDIA) & ~data.fetched & data.real)
    if multimedia.size <= 2_000_000:  # one URL read each: past that the counts above say it
        found: dict[str, int] = {}
        urls = data.collection.urls
        for doc_id in multimedia.tolist():
            path = urls.url(doc_id)[1].decode("utf-8", "surrogateescape").partition("?")[0]
            ext = extension(path) or "(none)"
            found[ext] = found.get(ext, 0) + 1
        section.tables.append(
            label_table(
                "outlinks-multimedia-documents",
                "Multimedia documents in the collection (logged, never fetched), by extension",
                list(found),
                list(found.values()),
            )
        )
    return section


def harvests_section(data: CrawlData) -> Section:
    section = Section(
        "harvests",
        "Harvests",
        "One row per batch the manager wrote: what its harvest asked for and got. Scores are the sums of "
        "the fetched pages' scores as the manager ranked them (× N documents).",
    )
    rows = []
    for number, info, harvest in data.batch_files():
        h = harvest or {}
        started, finished = float(h.get("started", 0)), float(h.get("finished", 0))
        seconds = finished - started if harvest else 0.0
        scores = h.get("scores", {})
        rows.append(
            [
                number,
                int(info.get("urls", 0)),
                int(h.get("fetched", 0)),
                int(h.get("ok", 0)),
                int(h.get("sites", info.get("sites", 0))),
                int(h.get("bytes", 0)),
                int(h.get("links_found", 0)),
                int(h.get("links_known", 0)),
                int(h.get("new_urls", 0)),
                int(h.get("links_new_sites", 0)),
                int(h.get("new_sites", 0)),
                _utc(started),
                _utc(finished),
                round(h.get("fetched", 0) / seconds, 2) if seconds > 0 else 0.0,
                *(float(scores.get(k, 0.0)) * max(data.n_docs, 1) for k in ("pagerank", "wlrank")),
                "harvested" if harvest else "not harvested",
            ]
        )
    columns = [
        "batch",
        "pages_asked",
        "fetched",
        "ok",
        "sites",
        "bytes",
        "links_found",
        "links_to_known",
        "links_to_new_pages",
        "links_to_new_sites",
        "new_sites",
        "start_utc",
        "end_utc",
        "pages_per_second",
        "pagerank_sum_x_n",
        "wlrank_sum_x_n",
        "state",
    ]
    table = Table(
        "harvests",
        "Harvest of each batch",
        columns,
        [list(col) for col in zip(*rows)] if rows else [[] for _ in columns],
        show=50,
    )
    section.tables.append(table)
    done = [(b, i, h) for b, i, h in data.batch_files() if h]
    section.figures = {"batches": len(rows), "harvested": len(done)}
    if done:
        first = min(float(h.get("started", 0)) for _, _, h in done)
        ends = np.array([float(h.get("finished", 0)) for _, _, h in done])
        order = np.argsort(ends)
        fetched = np.cumsum(np.array([h.get("fetched", 0) for _, _, h in done])[order])
        ok = np.cumsum(np.array([h.get("ok", 0) for _, _, h in done])[order])
        span = float(ends.max()) - first
        unit, seconds = next(
            (u, s)
            for u, s in (("days", 86400), ("hours", 3600), ("minutes", 60), ("seconds", 1))
            if span >= 2 * s or s == 1
        )
        minutes = (ends[order] - first) / seconds
        section.figures.update({"first_start_utc": _utc(first), "last_end_utc": _utc(float(ends.max()))})
        section.plots.append(
            Plot(
                "harvests",
                "The crawl over time",
                "step",
                f"{unit} since the first harvest began",
                "pages (cumulative)",
                [Series("fetched", minutes, fetched), Series("gathered (OK)", minutes, ok)],
                table="harvests",
                note="Each step is the end of one batch's harvest.",
            )
        )
    return section


def politeness_section(data: CrawlData, columns: dict[str, np.ndarray]) -> Section:
    normal, large, large_pages = waits(data)
    section = Section(
        "politeness",
        "Politeness",
        f"For each site, its accesses and the shortest gap between the last visits of two of its "
        f"documents, against the wait it was due: {normal:g} s ({large:g} s past {large_pages:,} pages) "
        f"or its Crawl-delay if longer — the shortest waits any harvest used (harvest.json), else the "
        f"settings'. The gap runs from one fetch's end to the next one's end. Servers that asked for "
        "slowness: the holds of a server group by a Retry-After, the pages held to be fetched again, and "
        "the 5xx answers or time-outs that backed a group off, as the harvests counted them (harvest.json).",
    )
    visit = data.doc("last_visit")
    visited = data.real & (visit > 0) & data.fetched
    ids = np.flatnonzero(visited)
    site_of = data.site_of[ids]
    order = np.lexsort((visit[ids], site_of))
    sites, times = site_of[order], visit[ids][order]
    size = data.n_sites + 1
    gap = np.full(size, np.inf)
    same = sites[1:] == sites[:-1]
    np.minimum.at(gap, sites[1:][same], np.diff(times)[same])
    accesses = np.bincount(
        data.site_of[data.real], weights=data.doc("visits")[data.real].astype(np.float64), minlength=size
    )[:size].astype(np.int64)
    docs = columns["pages"]
    wait = np.where(docs > large_pages, large, normal)
    due = np.maximum(wait, data.site("crawl_delay").astype(np.float64)[:size])
    measured = np.isfinite(gap)
    measured[0] = False
    below = measured & (gap < due * 0.999)
    names = data.site_names
    section.figures = {
        "sites_with_two_visits": int(measured.sum()),
        "sites_below_wait": int(below.sum()),
        "shortest_gap_seconds": float(gap[measured].min()) if measured.any() else None,
        **server_signals(data),
    }
    ratio = np.zeros(size)
    ratio[measured] = gap[measured] / due[measured]
    order = np.flatnonzero(measured)[np.argsort(ratio[measured], kind="stable")]
    section.tables.append(
        Table(
            "politeness",
            "Sites by shortest gap against the wait due (smallest first)",
            ["site", "accesses", "shortest_gap_s", "wait_s", "crawl_delay_s", "gap_over_wait"],
            [
                [names[i] for i in order],
                accesses[order],
                gap[order],
                wait[order],
                data.site("crawl_delay")[order].astype(np.float64),
                ratio[order],
            ],
            links={"site": "site"},
        )
    )
    if measured.any():
        section.plots.append(
            Plot(
                "politeness",
                "Shortest gap between two visits of a site, against its wait",
                "scatter",
                "wait due (seconds)",
                "shortest gap (seconds)",
                [Series("sites", due[measured], gap[measured])],
                table="politeness",
                logx=True,
                logy=True,
                note="Each dot is a site; dots on or above the diagonal were visited no "
                "sooner than their wait allowed.",
            )
        )
    return section


def server_signals(data: CrawlData) -> dict[str, int]:
    """What servers asked of every harvest, summed over their ``harvest.json``: the holds of a server group
    (``Retry-After``), the pages held, and the answers that backed a group off."""
    keys = {"server_holds": "holds", "pages_held": "held_pages", "backoffs": "backoffs"}
    harvests = [h for _, _, h in data.batch_files() if h]
    return {name: int(sum(h.get(key, 0) for h in harvests)) for name, key in keys.items()}


def waits(data: CrawlData) -> tuple[float, float, int]:
    """(normal wait, large-site wait, large-site pages): the shortest any harvest recorded, else the
    settings'."""
    recorded = [h["waits"] for _, _, h in data.batch_files() if h and isinstance(h.get("waits"), dict)]
    config = data.config
    if not recorded:
        return config.wait_normal, config.wait_large_site, config.large_site_pages
    return (
        min(float(w.get("normal", config.wait_normal)) for w in recorded),
        min(float(w.get("large_site", config.wait_large_site)) for w in recorded),
        min(int(w.get("large_site_pages", config.large_site_pages)) for w in recorded),
    )


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds)) if seconds else ""
