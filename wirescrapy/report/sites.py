"""The Sites and site-graph sections: WIRE's per-site figures, summary averages, top sites and the bow-tie.

Per site: pages known and gathered, bytes, maximum depth, internal links (between two pages of the site),
in- and out-degree in the graph of sites (distinct sites), the sums of its pages' link scores, site rank,
and the age of its pages (oldest, newest, average; from Last-Modified). ``site_table`` computes them all
with numpy over the documents at once (``np.bincount`` by site-id).
"""

from __future__ import annotations

import numpy as np

from .data import CrawlData
from .documents import DAY
from .scores import SCORES
from .structure import COMPONENTS, MAIN_PARTS, bowtie
from .tables import (
    Plot,
    Section,
    Series,
    Table,
    ccdf,
    histogram_table,
    power_of_two_table,
)

TOP = 20


def site_table(data: CrawlData) -> dict[str, np.ndarray]:
    """Every per-site figure, one array each, index = site-id."""
    size = data.n_sites + 1
    site_of = data.site_of
    real = data.real

    def per_site(weights=None, mask=None) -> np.ndarray:
        chosen = real if mask is None else (real & mask)
        w = None if weights is None else np.asarray(weights, dtype=np.float64)[chosen]
        return np.bincount(site_of[chosen], weights=w, minlength=size)[:size]

    ok = data.ok
    n = max(data.n_docs, 1)
    columns = {
        "pages": per_site().astype(np.int64),
        "gathered": per_site(mask=ok).astype(np.int64),
        "bytes": per_site(data.doc("raw_length"), ok).astype(np.int64),
    }
    depth = np.zeros(size, dtype=np.int64)
    np.maximum.at(depth, site_of[real], data.doc("depth")[real].astype(np.int64))
    columns["max_depth"] = depth
    links = data.links
    sources = np.repeat(site_of, np.diff(links.indptr))
    internal = sources == site_of[links.indices]
    columns["internal_links"] = np.bincount(sources[internal], minlength=size)[:size]
    columns["external_links"] = np.bincount(sources[~internal], minlength=size)[:size]
    graph = data.site_graph
    columns["in_degree"] = np.bincount(graph.indices, minlength=size)[:size]
    columns["out_degree"] = np.diff(graph.indptr)
    for key in SCORES:
        columns[f"{key}_sum_x_n"] = per_site(data.scores[key] * n)
    columns["siterank_x_n"] = data.scores["siterank"].astype(np.float64) * max(data.n_sites, 1)
    modified = data.doc("last_modified")
    known = ok & (modified > 0)
    age = np.zeros(data.n_docs + 1)
    age[known] = np.maximum(data.doc("last_visit")[known] - modified[known], 0.0) / DAY
    with_age = per_site(mask=known)
    oldest = np.zeros(size)
    newest = np.full(size, np.inf)
    np.maximum.at(oldest, site_of[known], age[known])
    np.minimum.at(newest, site_of[known], age[known])
    newest[with_age == 0] = 0
    columns["age_oldest_days"] = oldest
    columns["age_newest_days"] = newest
    columns["age_average_days"] = np.divide(
        per_site(age, known), with_age, out=np.zeros(size), where=with_age > 0
    )
    return columns


def sites_section(data: CrawlData, columns: dict[str, np.ndarray]) -> Section:
    section = Section(
        "sites",
        "Sites",
        "Each site is an origin (scheme, host and port). In- and out-degree count distinct sites linked "
        "from or to; scores are the sums over the site's pages (× N documents), site rank is PageRank on "
        "the graph of sites (× number of sites).",
    )
    ids = np.arange(1, data.n_sites + 1)
    names = data.site_names[1:]
    known = columns["pages"][1:] > 0
    section.figures = {
        "sites": int(data.n_sites),
        "sites_with_gathered_pages": int((columns["gathered"][1:] > 0).sum()),
    }
    averages = {key: float(values[1:].mean()) if data.n_sites else 0.0 for key, values in columns.items()}
    section.figures["average"] = averages
    section.tables.append(
        Table(
            "sites-summary",
            "Averages over all sites (WIRE's site summary)",
            ["figure", "average", "maximum"],
            [
                list(columns),
                [averages[k] for k in columns],
                [float(columns[k][1:].max(initial=0)) for k in columns],
            ],
            show=40,
        )
    )
    section.tables.append(
        Table(
            "sites",
            "Every site",
            ["siteid", "site", *columns],
            [ids, names, *(columns[k][1:] for k in columns)],
            show=0,
        )
    )
    for key, title in (
        ("pages", "pages"),
        ("gathered", "gathered pages"),
        ("in_degree", "in-degree (sites)"),
        ("siterank_x_n", "site rank"),
        ("pagerank_sum_x_n", "PageRank sum"),
    ):
        top = np.argsort(-columns[key][1:], kind="stable")[:TOP]
        top = top[columns[key][1:][top] > 0]
        section.tables.append(
            Table(
                f"sites-top-{key.replace('_', '-')}",
                f"Top sites by {title}",
                [
                    "site",
                    "pages",
                    "gathered",
                    "bytes",
                    "in_degree",
                    "out_degree",
                    "siterank_x_n",
                    "pagerank_sum_x_n",
                ],
                [
                    [names[i] for i in top],
                    *(
                        columns[k][1:][top]
                        for k in (
                            "pages",
                            "gathered",
                            "bytes",
                            "in_degree",
                            "out_degree",
                            "siterank_x_n",
                            "pagerank_sum_x_n",
                        )
                    ),
                ],
                links={"site": "site"},
                show=TOP,
            )
        )
    pages = histogram_table(
        "sites-pages", "Pages per site (documents known)", columns["pages"][1:][known], "sites"
    )
    gathered = histogram_table("sites-gathered", "Gathered pages per site", columns["gathered"][1:], "sites")
    bytes_ = power_of_two_table(
        "sites-bytes", "Bytes per site (gathered pages, raw)", columns["bytes"][1:], "sites"
    )
    indeg = histogram_table(
        "sites-in-degree", "In-degree of sites (distinct sites linking)", columns["in_degree"][1:], "sites"
    )
    outdeg = histogram_table(
        "sites-out-degree", "Out-degree of sites (distinct sites linked)", columns["out_degree"][1:], "sites"
    )
    section.tables += [
        pages,
        gathered,
        bytes_,
        indeg,
        outdeg,
        histogram_table("sites-max-depth", "Maximum depth per site", columns["max_depth"][1:], "sites"),
    ]
    section.plots.append(
        Plot(
            "sites-size",
            "Pages per site",
            "ccdf",
            "pages",
            "fraction of sites ≥ x",
            [ccdf(pages, "pages known"), ccdf(gathered, "pages gathered")],
            table="sites-pages",
            logx=True,
            logy=True,
            note="Complementary cumulative distribution: the share of sites with at least x pages; "
            "a straight line on log-log axes is a power law.",
        )
    )
    section.plots.append(
        Plot(
            "sites-degree",
            "Links between sites",
            "ccdf",
            "distinct sites",
            "fraction of sites ≥ x",
            [ccdf(indeg, "in-degree"), ccdf(outdeg, "out-degree")],
            table="sites-in-degree",
            logx=True,
            logy=True,
        )
    )
    ages = columns["age_average_days"][1:]
    with_age = ages > 0
    if with_age.any():
        section.plots.append(
            Plot(
                "sites-age",
                "Age of the sites' pages (sites with Last-Modified)",
                "ccdf",
                "days",
                "fraction of sites ≥ x",
                [
                    ccdf(histogram_table("", "", np.ceil(columns[k][1:][with_age]).astype(np.int64)), label)
                    for k, label in (
                        ("age_newest_days", "newest page"),
                        ("age_average_days", "average page"),
                        ("age_oldest_days", "oldest page"),
                    )
                ],
                table="sites",
                logx=True,
                logy=True,
            )
        )
    return section


def structure_section(data: CrawlData, columns: dict[str, np.ndarray]) -> Section:
    section = Section(
        "structure",
        "The site graph's structure",
        "Broder's bow-tie over the graph of sites: MAIN is the largest set of sites that all reach one "
        "another; IN reaches MAIN, OUT is reached from it; tendrils hang off IN or OUT, tunnels join IN "
        "to OUT around MAIN, islands are connected to none of them. MAIN is split as Baeza-Yates and "
        "Castillo did for national webs: MAIN-IN is linked from IN, MAIN-OUT links to OUT, MAIN-MAIN "
        "both, MAIN-NORM neither.",
    )
    result = bowtie(data.site_graph)
    component = result.component[1:]
    counts = np.bincount(component[component >= 0], minlength=len(COMPONENTS))
    total = max(data.n_sites, 1)
    pages = [int(columns["pages"][1:][component == i].sum()) for i in range(len(COMPONENTS))]
    section.tables.append(
        Table(
            "structure-components",
            "Sites and pages in each component",
            ["value", "sites", "fraction", "pages"],
            [list(COMPONENTS), counts, counts / total, pages],
        )
    )
    section.figures = {name: int(c) for name, c in zip(COMPONENTS, counts)}
    section.figures.update(
        {
            "strongly_connected_components": len(result.scc_sizes),
            "singleton_components": int((result.scc_sizes == 1).sum()),
            "largest_component": int(result.scc_sizes[0]) if len(result.scc_sizes) else 0,
            "sites_without_in_links": result.no_in,
            "sites_without_out_links": result.no_out,
        }
    )
    parts = np.bincount(result.main_part[result.main_part >= 0], minlength=len(MAIN_PARTS))
    section.tables.append(
        Table(
            "structure-main",
            "MAIN split by its links with IN and OUT (Baeza-Yates & Castillo)",
            ["value", "sites", "fraction_of_main"],
            [list(MAIN_PARTS), parts, parts / max(int(parts.sum()), 1)],
        )
    )
    section.figures.update({name: int(c) for name, c in zip(MAIN_PARTS, parts)})
    scc = histogram_table(
        "structure-scc-sizes", "Strongly connected components by size (sites)", result.scc_sizes, "components"
    )
    section.tables.append(scc)
    section.tables.append(
        Table(
            "structure-sites",
            "The component of every site",
            ["site", "component"],
            [data.site_names[1:], [COMPONENTS[c] if c >= 0 else "" for c in component.tolist()]],
            show=0,
        )
    )
    section.plots.append(
        Plot(
            "bowtie",
            "Sites in each component of the bow-tie",
            "bar",
            "",
            "sites",
            [Series("sites", np.array(COMPONENTS, dtype=object), counts)],
            table="structure-components",
        )
    )
    return section
