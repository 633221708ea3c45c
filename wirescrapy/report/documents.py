"""The Documents section: WIRE's document histograms for all / gathered / static / dynamic pages.

Status (OK and each error kind), HTTP codes, MIME types, depth, raw and stored length, in- and out-degree,
duplicates and age (visit time minus Last-Modified). "Gathered" is WIRE's word for the pages whose last
fetch was a 200 without error; static and dynamic split them by the seeder's verdict (a script extension
or a query string makes a page dynamic).
"""

from __future__ import annotations

import numpy as np

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.items import FetchError

from .data import CrawlData
from .tables import (
    Plot,
    Section,
    Series,
    Table,
    ccdf,
    histogram_table,
    label_table,
    power_of_two_table,
)

HOUR = 3600.0
DAY = 24 * HOUR
MONTH = 30.4375 * DAY
YEAR = 365.25 * DAY

# Status of a document's last fetch, one code each.
_STATUS = [
    "OK",
    "not fetched",
    "multimedia (logged, never fetched)",
    "redirect (3xx)",
    "client error (4xx)",
    "server error (5xx)",
    "other HTTP status",
    "a site's robots.txt",
]
_ERROR_BASE = len(_STATUS)


def status_codes(data: CrawlData) -> tuple[np.ndarray, list[str]]:
    """A status code per document (index into the labels) and the labels: OK, each error kind, HTTP class."""
    status, error = data.doc("status").astype(np.int64), data.doc("error").astype(np.int64)
    code = np.full(len(status), 6, dtype=np.int64)
    code[(status >= 300) & (status < 400)] = 3
    code[(status >= 400) & (status < 500)] = 4
    code[status >= 500] = 5
    code[data.ok] = 0
    not_fetched = ~data.fetched & (error == 0)
    code[not_fetched] = 1
    code[not_fetched & data.flag(DocFlag.MULTIMEDIA)] = 2
    code[error > 0] = _ERROR_BASE + error[error > 0]
    code[data.robots & (code != 1)] = 7
    labels = list(_STATUS)
    for value in range(1, int(error.max(initial=0)) + 1):
        try:
            labels.append(f"error: {FetchError(value).label}")
        except ValueError:
            labels.append(f"error {value}")
    return code, labels


def documents_section(data: CrawlData) -> Section:
    section = Section(
        "documents",
        "Documents",
        "Every document the crawl knows, and the pages it gathered (last fetch: HTTP 200, no error), "
        "split into static and dynamic pages (a query string or a script extension).",
    )
    subsets = data.subsets()
    figures = {name: int(mask.sum()) for name, mask in subsets.items()}
    figures["fetched"] = int((data.fetched & data.real).sum())
    duplicates = data.flag(DocFlag.DUPLICATE)
    figures["duplicates"] = int((duplicates & data.real).sum())
    figures["raw_bytes"] = int(data.doc("raw_length")[data.ok].sum(dtype=np.int64))
    figures["stored_bytes"] = int(data.doc("stored_length")[data.ok].sum(dtype=np.int64))
    section.figures = figures

    # Status and HTTP codes.
    code, labels = status_codes(data)
    columns = []
    for mask in subsets.values():
        columns.append(np.bincount(code[mask], minlength=len(labels)))
    present = np.flatnonzero(columns[0])
    order = present[np.argsort(-columns[0][present], kind="stable")]
    section.tables.append(
        Table(
            "documents-status",
            "Status of the last fetch, by document set",
            ["value", *subsets],
            [[labels[i] for i in order], *(c[order] for c in columns)],
        )
    )
    table = label_table(
        "documents-status-all",
        "Status (all documents)",
        [labels[i] for i in present],
        columns[0][present],
        show=0,
    )
    section.tables.append(table)
    section.plots.append(
        Plot(
            "status",
            "Status of the last fetch (all documents)",
            "barh",
            "documents",
            "",
            [Series("all", np.array(table.rows[0], dtype=object), np.asarray(table.rows[1]))],
            table=table.name,
            logx=True,
        )
    )
    status = data.doc("status")
    responded = data.real & (status > 0)
    http = label_table(
        "documents-http",
        "HTTP status codes (documents whose last fetch had a response)",
        [f"HTTP {v}" for v in np.unique(status[responded])],
        np.unique(status[responded], return_counts=True)[1],
    )
    section.tables.append(http)
    mime = data.doc("mime")
    mimes, counts = np.unique(mime[data.fetched & data.real & (mime != b"")], return_counts=True)
    mime_table = label_table(
        "documents-mime",
        "MIME types (fetched documents)",
        [m.decode("ascii", "replace") for m in mimes],
        counts,
    )
    section.tables.append(mime_table)
    section.plots.append(
        Plot(
            "mime",
            "MIME types of the fetched documents",
            "barh",
            "documents",
            "",
            [
                Series(
                    "fetched",
                    np.array(mime_table.rows[0][:15], dtype=object),
                    np.asarray(mime_table.rows[1][:15]),
                )
            ],
            table=mime_table.name,
            logx=True,
        )
    )

    # Depth.
    depth = data.doc("depth")
    series = []
    for name, mask in subsets.items():
        table = histogram_table(f"documents-depth-{name}", f"Depth ({name})", depth[mask])
        section.tables.append(table)
        series.append(Series(name, np.asarray(table.rows[0]), np.asarray(table.rows[1])))
    section.plots.append(
        Plot(
            "depth",
            "Documents by depth (links from the nearest seed)",
            "line",
            "depth",
            "documents",
            series,
            table="documents-depth-all",
            logy=True,
        )
    )

    # Lengths (gathered pages).
    series = []
    for field, what in (("raw_length", "raw (as received)"), ("stored_length", "stored (cleaned)")):
        for name, mask in subsets.items():
            if name == "all":
                continue
            table = power_of_two_table(
                f"documents-{field.replace('_', '-')}-{name}",
                f"Length {what}, bytes ({name})",
                data.doc(field)[mask],
            )
            section.tables.append(table)
        exact = histogram_table(
            f"documents-{field}-exact", "", data.doc(field)[data.ok & (data.doc(field) > 0)]
        )
        series.append(ccdf(exact, what))
    section.plots.append(
        Plot(
            "lengths",
            "Page length (gathered pages)",
            "ccdf",
            "bytes",
            "fraction of pages ≥ x",
            series,
            table="documents-raw-length-gathered",
            logx=True,
            logy=True,
            note="Complementary cumulative distribution: the share of pages at least x bytes long.",
        )
    )

    # Degrees.
    series = []
    for field, values, mask, what in (
        ("in-degree", data.in_degree, data.real, "in-degree (all documents)"),
        ("out-degree", data.out_degree, data.ok, "out-degree (gathered pages)"),
    ):
        for name, subset in subsets.items():
            section.tables.append(
                histogram_table(f"documents-{field}-{name}", f"{field} ({name})", values[subset])
            )
        series.append(ccdf(histogram_table("", "", values[mask]), what))
    section.plots.append(
        Plot(
            "degrees",
            "Links per page: in-degree and out-degree",
            "ccdf",
            "links (distinct pages)",
            "fraction of pages ≥ x",
            series,
            table="documents-in-degree-all",
            logx=True,
            logy=True,
            note="Links from other pages of the collection, each linking page once; "
            "a straight line on log-log axes is a power law.",
        )
    )

    # Duplicates.
    section.tables.append(
        Table(
            "documents-duplicates",
            "Exact duplicates (content seen before)",
            ["value", "documents", "duplicates", "fraction"],
            [
                list(subsets),
                [figures[n] for n in subsets],
                [int((duplicates & m).sum()) for m in subsets.values()],
                [float((duplicates & m).sum() / max(m.sum(), 1)) for m in subsets.values()],
            ],
        )
    )

    # Age.
    modified = data.doc("last_modified")
    known = data.ok & (modified > 0)
    age = np.maximum(data.doc("last_visit")[known] - modified[known], 0.0)
    figures["age_known"] = int(known.sum())
    if age.size:
        figures["age_median_hours"] = float(np.median(age) / HOUR)
        figures["age_median_months"] = float(np.median(age) / MONTH)
        figures["age_mean_years"] = float(age.mean() / YEAR)
    months = np.floor(age / MONTH).astype(np.int64)
    section.tables.append(
        histogram_table("documents-age-months", "Age in months (gathered pages with Last-Modified)", months)
    )
    section.tables.append(
        histogram_table(
            "documents-age-hours",
            "Age in hours (gathered pages with Last-Modified)",
            np.floor(age / HOUR).astype(np.int64),
        )
    )
    if age.size:
        days = histogram_table("", "", np.ceil(age / DAY).astype(np.int64))
        section.plots.append(
            Plot(
                "age",
                "Age of the gathered pages (visit time − Last-Modified)",
                "ccdf",
                "days",
                "fraction of pages at least x days old",
                [ccdf(days, "pages with Last-Modified")],
                table="documents-age-months",
                logx=True,
                logy=True,
                note=f"{age.size:,} of {figures['gathered']:,} gathered pages sent a Last-Modified.",
            )
        )
    return section
