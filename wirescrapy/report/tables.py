"""What a report section is made of: tables (each a CSV file), plots (each drawn from a table) and headline
figures, with the histogram helpers every section uses.

A section's computation returns a ``Section`` of plain data — numpy columns and numbers — and never draws:
``render.py`` turns it into HTML and SVG, CSV and JSON. The CSV of a histogram is WIRE's format,
``value,documents,fraction`` (``sites`` or ``links`` in place of ``documents`` when those are counted), so a
researcher can plot it again with anything.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

import numpy as np

MIN_POINTS = 5  # a curve through fewer points shows no shape: its table says all there is
MIN_BARS = 2  # a single bar compares nothing
SHOWN = 20  # a table's rows in the page, by default: the first screenful; the CSV has them all


@dataclass
class Table:
    name: str  # file name in data/ without ".csv"
    title: str
    columns: list[str]
    rows: list[np.ndarray | list]  # one sequence per column, all of one length
    links: dict[str, str] = field(default_factory=dict)  # column -> column whose values are the href
    show: int = SHOWN  # rows shown in the HTML page (the CSV has them all); 0: not shown

    def __len__(self) -> int:
        return len(self.rows[0]) if self.rows else 0

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows(zip(*(_plain(column) for column in self.rows)))
        return out.getvalue()


def _plain(column) -> list:
    if isinstance(column, np.ndarray):
        if column.dtype.kind == "f":
            return [float(f"{v:.6g}") for v in column.tolist()]
        return column.tolist()
    return list(column)


@dataclass
class Series:
    label: str
    x: np.ndarray
    y: np.ndarray


@dataclass
class Plot:
    """One figure: ``kind`` is "ccdf" (log-log complementary cumulative), "bar" (categories), "line" or
    "step"; ``table`` names the CSV the figure shows."""

    name: str
    title: str
    kind: str
    xlabel: str
    ylabel: str
    series: list[Series]
    table: str = ""
    logx: bool = False
    logy: bool = False
    note: str = ""  # one line under the figure: how to read it

    @property
    def worth_drawing(self) -> bool:
        """Whether the figure shows more than its table: ``MIN_POINTS`` points on a curve, or ``MIN_BARS``
        bars that are not zero. A small crawl's report leaves the others out and shows their tables."""
        if self.kind in ("bar", "barh"):
            return max((np.count_nonzero(s.y) for s in self.series), default=0) >= MIN_BARS
        return max((len(s.x) for s in self.series), default=0) >= MIN_POINTS


@dataclass
class Section:
    key: str  # anchor and report.json key
    title: str
    intro: str = ""
    figures: dict = field(default_factory=dict)  # headline figures (JSON-ready)
    tables: list[Table] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    seconds: float = 0.0  # what computing it cost


# -- histograms ----------------------------------------------------------------------------------------


def value_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values and how many times each occurs, sorted by value."""
    values = np.asarray(values)
    if values.size == 0:
        return values[:0], np.zeros(0, dtype=np.int64)
    if values.dtype.kind in "iu" and values.min() >= 0 and values.max() < 1 << 24:
        counts = np.bincount(values.astype(np.int64))
        kept = np.flatnonzero(counts)
        return kept, counts[kept]
    return np.unique(values, return_counts=True)


def histogram_table(name: str, title: str, values: np.ndarray, unit: str = "documents") -> Table:
    """WIRE's ``value,documents,fraction`` table of exact values."""
    kept, counts = value_counts(values)
    total = max(int(counts.sum()), 1)
    return Table(name, title, ["value", unit, "fraction"], [kept, counts, counts / total], show=0)


def label_table(
    name: str, title: str, labels: list[str], counts, unit: str = "documents", show: int = 20
) -> Table:
    """A ``value,documents,fraction`` table of labelled counts, largest first."""
    counts = np.asarray(counts, dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    total = max(int(counts.sum()), 1)
    return Table(
        name,
        title,
        ["value", unit, "fraction"],
        [[labels[i] for i in order], counts[order], counts[order] / total],
        show=show,
    )


def power_of_two_table(name: str, title: str, values: np.ndarray, unit: str = "documents") -> Table:
    """Counts by powers of two (0, 1, 2–3, 4–7 …): ``value`` is the bin's lower bound. For sizes, which
    span eight orders of magnitude."""
    values = np.asarray(values, dtype=np.float64)
    bins = np.zeros(len(values), dtype=np.int64)
    positive = values >= 1
    bins[positive] = np.floor(np.log2(values[positive])).astype(np.int64) + 1
    kept, counts = value_counts(bins)
    lower = np.where(kept == 0, 0, 2.0 ** (kept - 1)).astype(np.int64)
    total = max(int(counts.sum()), 1)
    return Table(name, title, ["value", unit, "fraction"], [lower, counts, counts / total], show=0)


def log_bin_table(
    name: str, title: str, values: np.ndarray, unit: str = "documents", per_decade: int = 10
) -> Table:
    """Counts of positive reals by logarithmic bins (``per_decade`` a decade); ``value`` is the bin's lower
    bound. For link scores, whose values are all distinct."""
    values = np.asarray(values, dtype=np.float64)
    values = values[values > 0]
    if values.size == 0:
        return Table(
            name,
            title,
            ["value", unit, "fraction"],
            [np.zeros(0), np.zeros(0, np.int64), np.zeros(0)],
            show=0,
        )
    bins = np.floor(np.log10(values) * per_decade).astype(np.int64)
    low = int(bins.min())
    counts = np.bincount(bins - low)
    kept = np.flatnonzero(counts)
    lower = 10.0 ** ((kept + low) / per_decade)
    return Table(
        name, title, ["value", unit, "fraction"], [lower, counts[kept], counts[kept] / counts.sum()], show=0
    )


def ccdf(table: Table, label: str = "", points: int = 200) -> Series:
    """The complementary cumulative distribution of a ``value,count,…`` table: for each value x, the
    fraction of items with a value ≥ x; at most ``points`` points, spread evenly on a log scale, for a
    small figure."""
    values = np.asarray(table.rows[0], dtype=np.float64)
    counts = np.asarray(table.rows[1], dtype=np.float64)
    if values.size == 0:
        return Series(label, values, values)
    above = counts[::-1].cumsum()[::-1] / counts.sum()
    keep = values > 0
    values, above = values[keep], above[keep]
    if len(values) > points:
        marks = np.geomspace(values[0], values[-1], points)
        index = np.unique(np.searchsorted(values, marks).clip(0, len(values) - 1))
        values, above = values[index], above[index]
    return Series(label, values, above)
