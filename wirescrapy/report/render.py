"""The report as files: ``index.html`` (self-contained: styles inline, plots inline as SVG drawn by matplotlib
with its Agg backend, no script, no network), ``data/*.csv`` and ``report.json``.

Each plot says what its axes are, in which units, with log scales where a distribution is heavy-tailed, and
names the CSV it was drawn from; each table shows its first rows and links to the CSV with them all. A plot
with too few points to show a shape (``Plot.worth_drawing``) is left out, and its table shown in its place.
The page fits the window's width: a table wider than the text scrolls in its own box.
"""

from __future__ import annotations

import ctypes
import errno
import html
import io
import itertools
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from .tables import SHOWN, Plot, Section, Table

FIGURES_IN_ONE_COLUMN = 6  # a section's headline figures up to this many: one column of pairs, else two

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1100px;margin:0 auto;\
padding:1em 2em;
color:#222;line-height:1.45}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2.2em}
h3{margin:1.4em 0 .3em}
.asof{color:#555;overflow-wrap:anywhere}table{border-collapse:collapse;margin:.3em 0;font-size:.9em}
.scroll{overflow-x:auto}.figures td{overflow-wrap:anywhere}.figures td:nth-child(3){border-left-width:3px}
th,td{border:1px solid #ddd;padding:.2em .6em;text-align:right}th{background:#f4f4f4}
.text,.url{text-align:left}td.text{white-space:nowrap}td.url{min-width:16em;overflow-wrap:anywhere}
figure{margin:1em 0 1.6em}figure svg{width:100%;height:auto}figcaption{color:#444;font-size:.9em}
nav ol{columns:2}.figures td:nth-child(odd){text-align:left}.cost{color:#888;font-size:.8em;margin:.3em 0 1em}
"""


def write_report(report, out: str | os.PathLike) -> Path:
    """Write ``report`` (``build_report``) into ``out``; the path of ``index.html``.

    The files go into a temporary directory beside ``out`` that then takes ``out``'s place (an atomic exchange
    where the system has one), so a report killed or failing half way never leaves a partial report where a
    complete one was: ``out`` holds the previous report, whole, or the new one, whole. A directory ``out``
    that holds anything but a report's files is refused (it would be replaced)."""
    out = Path(out)
    _check_replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(out)
    temporary = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(temporary, ignore_errors=True)
    try:
        _write_files(report, temporary)
        _replace(temporary, out)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return out / "index.html"


REPORT_FILES = frozenset({"index.html", "report.json", "data", "index.html.tmp"})


def _check_replaceable(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OSError(f"{out} is not a directory")
    if out.is_dir():
        other = sorted(p.name for p in out.iterdir() if p.name not in REPORT_FILES)
        if other:
            raise OSError(
                f"{out} holds files that are not a report's ({', '.join(other[:3])}): "
                "the report replaces its directory whole; choose another --out"
            )


def _remove_leftovers(out: Path) -> None:
    """Temporary directories of reports killed before they replaced ``out`` (their process is gone)."""
    for path in [*out.parent.glob(f".{out.name}.tmp-*"), *out.parent.glob(f".{out.name}.old-*")]:
        pid = path.name.rpartition("-")[2]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _replace(temporary: Path, out: Path) -> None:
    """``temporary`` becomes ``out``; the previous ``out`` (if any) ends in ``temporary``, for removal."""
    if not out.exists():
        os.rename(temporary, out)
    elif not _exchange(temporary, out):
        # No atomic exchange: for a moment there is no ``out`` (never a partial one); a kill then leaves the
        # previous report whole in ``.old-PID`` and the new one whole in ``.tmp-PID``.
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.rename(out, old)
        os.rename(temporary, out)
        os.rename(old, temporary)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(error, os.strerror(error), str(b))


def _write_files(report, out: Path) -> None:
    (out / "data").mkdir(parents=True)
    start, start_cpu = time.perf_counter(), time.process_time()
    for section in report.sections:
        for table in section.tables:
            if table.name:
                (out / "data" / f"{table.name}.csv").write_text(table.csv(), encoding="utf-8")
    report.costs["write CSV"] = time.perf_counter() - start
    report.cpu["write CSV"] = time.process_time() - start_cpu
    data = {
        "format": "wirescrapy-report",
        "version": 1,
        "collection": report.directory,
        "as_of": report.as_of,
        "as_of_utc": _utc(report.as_of),
        "summary": report.summary,
        "sections": {s.key: s.figures for s in report.sections},
    }
    (out / "report.json").write_text(json.dumps(data, indent=1, default=_json) + "\n", encoding="utf-8")
    start, start_cpu = time.perf_counter(), time.process_time()
    page = render_html(report)
    report.costs["plots and HTML"] = time.perf_counter() - start
    report.cpu["plots and HTML"] = time.process_time() - start_cpu
    (out / "index.html").write_text(page, encoding="utf-8")


def render_html(report) -> str:
    summary = report.summary
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f"<title>Crawl report: {_e(report.directory)}</title><style>{STYLE}</style></head><body>",
        "<h1>What the crawl found</h1>",
        (
            f'<p class="asof">Collection <code>{_e(report.directory)}</code>, as of {_e(_utc(report.as_of))} '
            "UTC (read without a lock: a crawl may have been writing).</p>"
        ),
        '<h2 id="summary">Summary</h2>',
        _figures_table(_summary_rows(summary)),
        *([_replay_note(report.replay)] if report.replay is not None else []),
        "<nav><h2>Contents</h2><ol>",
        *(f'<li><a href="#{s.key}">{_e(s.title)}</a></li>' for s in report.sections),
        "</ol></nav>",
    ]
    for section in report.sections:
        parts.append(render_section(section))
    parts.append(
        '<p class="cost">Every table is in <code>data/</code> as CSV (histograms as '
        "<code>value,documents,fraction</code>), the headline figures in <code>report.json</code>.</p>"
    )
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _replay_note(replay) -> str:
    return (
        '<h2 id="replay">Replay</h2>'
        f"<p>The crawl's archive (<code>{_e(replay.archive)}</code>) has an index: pywb replays its pages at "
        f'<a href="{_e(replay.base)}">{_e(replay.base)}</a> once started with</p>'
        f'<pre class="scroll">{_e(replay.command)}</pre>'
        "<p>The pages with the highest PageRank link to their latest capture there.</p>"
    )


def _summary_rows(summary: dict) -> list[tuple[str, str]]:
    rows = [
        ("documents known", summary["documents"]),
        ("fetched", summary["fetched"]),
        ("gathered (HTTP 200, no error)", summary["gathered"]),
        ("fetched, not OK", summary["fetched_not_ok"]),
        ("exact duplicates", summary["duplicates"]),
        ("sites", summary["sites"]),
        ("links between documents", summary["links"]),
        ("bytes received (gathered)", _bytes(summary["raw_bytes"])),
        ("bytes stored (cleaned)", _bytes(summary["stored_bytes"])),
        ("batches", summary["batches"]),
        ("crawl period (UTC)", f"{summary['crawl_first_start_utc']} – {summary['crawl_last_end_utc']}"),
        ("languages", ", ".join(f"{k} {v:,}" for k, v in summary["languages"].items()) or "none recorded"),
    ]
    return [(k, f"{v:,}" if isinstance(v, int) else str(v)) for k, v in rows]


def render_section(section: Section) -> str:
    parts = [f'<section id="{section.key}"><h2>{_e(section.title)}</h2>']
    if section.intro:
        parts.append(f"<p>{_e(section.intro)}</p>")
    rows = _flatten(section.figures)
    if rows:
        parts.append(_figures_table(rows))
    tables = {table.name: table for table in section.tables}
    for plot in section.plots:
        if plot.worth_drawing:
            parts.append(render_plot(plot))
        elif plot.table in tables and not tables[plot.table].show:
            parts.append(render_table(tables[plot.table], SHOWN))
    for table in section.tables:
        if table.show:
            parts.append(render_table(table))
    listed = ", ".join(f'<a href="data/{t.name}.csv">{t.name}.csv</a>' for t in section.tables if t.name)
    parts.append(f'<p class="cost">Data: {listed}. Computed in {section.seconds:.2f} s.</p></section>')
    return "\n".join(parts)


def _figures_table(rows) -> str:
    """Names and values; a long list in two halves side by side (read down the left one first), as the
    pairs are short and the page is wide."""
    half = (len(rows) + 1) // 2 if len(rows) > FIGURES_IN_ONE_COLUMN else len(rows)
    pairs = itertools.zip_longest(rows[:half], rows[half:])
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(k)}</td><td>{_e(v)}</td>" for k, v in filter(None, pair)) + "</tr>"
        for pair in pairs
    )
    return f'<table class="figures">{body}</table>'


def _flatten(figures: dict, prefix: str = "") -> list[tuple[str, str]]:
    rows = []
    for key, value in figures.items():
        name = f"{prefix}{key}".replace("_", " ")
        if isinstance(value, dict):
            rows += _flatten(value, f"{prefix}{key} / ")
        else:
            rows.append((name, _cell(value)))
    return rows


def render_table(table: Table, rows: int | None = None) -> str:
    """The table's first ``rows`` rows (``table.show`` by default) and a link to its CSV."""
    shown = min(len(table), table.show if rows is None else rows)
    # A link's text is a URL, which may break anywhere; other text stays on one line.
    classes = ["url" if c in table.links else _cls(table.rows[i]) for i, c in enumerate(table.columns)]
    head = "".join(f'<th class="{k}">{_header(c)}</th>' for k, c in zip(classes, table.columns))
    index = {c: i for i, c in enumerate(table.columns)}
    body = []
    for r in range(shown):
        cells = []
        for i, column in enumerate(table.columns):
            value = table.rows[i][r]
            text = _e(_cell(value))
            if column in table.links:
                href = table.rows[index[table.links[column]]][r]
                text = f'<a href="{_e(str(href))}">{text}</a>'
            cells.append(f'<td class="{classes[i]}">{text}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f" (first {shown} of {len(table):,})" if len(table) > shown else ""
    return (
        f"<h3>{_e(table.title)}</h3>"
        f'<div class="scroll"><table><tr>{head}</tr>{"".join(body)}</table></div>'
        f'<p class="cost"><a href="data/{table.name}.csv">data/{table.name}.csv</a>{more}</p>'
    )


def _header(name: str) -> str:
    """A column name that may break after its underscores, so that a table of many columns stays narrow."""
    return "_<wbr>".join(_e(part) for part in name.split("_"))


def _cls(column) -> str:
    if isinstance(column, np.ndarray) and column.dtype.kind in "iuf":
        return "num"
    return "text" if len(column) and isinstance(column[0], str) else "num"


def _cell(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not np.isfinite(value):
            return "–"
        return f"{value:,.0f}" if abs(value) >= 1e5 else f"{value:.4g}"
    if value is None:
        return "–"
    return str(value)


def render_plot(plot: Plot) -> str:
    svg = draw(plot)
    caption = f'{_e(plot.title)}. {_e(plot.note)} Data: <a href="data/{plot.table}.csv">{plot.table}.csv</a>.'
    return f'<figure id="plot-{plot.name}" class="plot">{svg}<figcaption>{caption}</figcaption></figure>'


def draw(plot: Plot) -> str:
    """The plot as an inline SVG element."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": plot.name, "font.size": 10}):
        categories = plot.kind in ("bar", "barh")
        height = 0.6 + 0.28 * len(plot.series[0].x) if plot.kind == "barh" and plot.series else 3.8
        figure, axes = pyplot.subplots(figsize=(7.5, max(2.4, min(height, 6.5))))
        try:
            axes.set_title(plot.title)
            axes.set_xlabel(plot.xlabel)
            axes.set_ylabel(plot.ylabel)
            _draw(axes, plot)
            # A log scale needs a positive value to draw (a young crawl may have none yet)
            if plot.logx and not categories and _positive(s.x for s in plot.series):  # bars: _draw decides
                axes.set_xscale("log")
            if plot.logy and plot.kind != "barh" and _positive(s.y for s in plot.series):
                axes.set_yscale("log")
            _plain_ticks(axes, counts={"bar": "y", "barh": "x"}.get(plot.kind, ""))
            axes.grid(True, which="major", alpha=0.3)
            if len(plot.series) > 1:
                axes.legend(fontsize=9)
            figure.tight_layout()
            buffer = io.StringIO()
            figure.savefig(buffer, format="svg")
        finally:
            pyplot.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _positive(arrays) -> bool:
    return any(np.any(np.asarray(values, dtype=float) > 0) for values in arrays)


def _draw(axes, plot: Plot) -> None:
    # Series that coincide (gathered and static pages, often) stay visible: each has its own line and marker.
    styles = itertools.cycle(["-", "--", ":", "-."])
    markers = itertools.cycle(["o", "s", "^", "D", "v", "x", "+", "*"])
    for series in plot.series:
        x, y = series.x, series.y
        if plot.kind == "barh":
            labels = [str(v) for v in x][::-1]
            axes.barh(labels, np.asarray(y, dtype=float)[::-1], color="#4878a8")
            for i, value in enumerate(np.asarray(y)[::-1]):
                axes.annotate(f" {int(value):,}", (value, i), va="center", fontsize=8)
            if plot.logx and len(y) and max(y) > 50 * max(min(y), 1):
                axes.set_xscale("log")
                axes.set_xlabel(f"{plot.xlabel} (logarithmic scale)")
        elif plot.kind == "bar":
            axes.bar([str(v) for v in x], np.asarray(y, dtype=float), color="#4878a8")
            for i, value in enumerate(y):
                axes.annotate(f"{int(value):,}", (i, value), ha="center", va="bottom", fontsize=8)
        elif plot.kind == "ccdf":
            # Markers only where the points are few: each is an element of the SVG.
            axes.plot(
                x,
                y,
                marker="." if len(x) <= 60 else None,
                markersize=4,
                linewidth=1.4,
                label=series.label,
                linestyle=next(styles),
            )
        elif plot.kind == "step":
            axes.step(x, y, where="post", marker=".", label=series.label)
        elif plot.kind == "scatter":
            axes.scatter(x, y, s=12, alpha=0.6, label=series.label)
            if len(x):
                low, high = float(min(np.min(x), np.min(y))), float(max(np.max(x), np.max(y)))
                axes.plot([low, high], [low, high], color="#c44", linewidth=1, label="gap = wait")
                axes.legend(fontsize=9)
        else:
            axes.plot(
                x,
                y,
                marker=next(markers),
                markersize=4,
                linewidth=1.2,
                label=series.label,
                linestyle=next(styles),
            )
    if plot.kind == "barh":
        axes.margins(x=0.15)


def _plain_ticks(axes, counts: str = "") -> None:
    """Log axes labelled 1, 10, 0.01 rather than 10⁰, 10¹, 10⁻² — with 2 and 5 between when the axis spans
    less than three decades, so that a short axis has labels; the ``counts`` axis ("x", "y") of a bar chart,
    when linear, has whole numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    def label(value, _):
        return f"{value:,.0f}" if value >= 1 else f"{value:g}"

    for name, axis, scale, limits in (
        ("x", axes.xaxis, axes.get_xscale(), axes.get_xlim()),
        ("y", axes.yaxis, axes.get_yscale(), axes.get_ylim()),
    ):
        if scale == "log":
            low, high = (max(v, 1e-300) for v in limits)
            decades = abs(np.log10(high / low))
            if decades < 3:
                subs = (1, 2, 5) if decades >= 1.2 else tuple(range(1, 10))
                axis.set_major_locator(LogLocator(base=10, subs=subs))
            axis.set_major_formatter(FuncFormatter(label))
            axis.set_minor_formatter(NullFormatter())
        elif name == counts:
            axis.set_major_locator(MaxNLocator(integer=True))


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _bytes(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def _json(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")
