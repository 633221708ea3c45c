"""The report's computations on small collections whose answers are known, the links-out-of-the-crawl
counts, the language of a page, and the streaming export."""

from __future__ import annotations

import csv
import errno
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scrapy.settings import Settings

from wirescrapy.collection import Collection
from wirescrapy.collection.outlinks import MAX_KEYS, OTHER, OutLinks
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.gatherer.language import identify
from wirescrapy.manager.run import manage
from wirescrapy.report import build_report, export, render
from wirescrapy.report.data import CrawlData
from wirescrapy.report.render import render_html, render_plot, render_section, render_table, write_report
from wirescrapy.report.replay import replay_of
from wirescrapy.report.structure import COMPONENTS, MAIN_PARTS, bowtie
from wirescrapy.report.tables import (
    MIN_BARS,
    MIN_POINTS,
    Plot,
    Section,
    Series,
    Table,
    ccdf,
    histogram_table,
    log_bin_table,
    power_of_two_table,
)
from wirescrapy.seeder.add import add_links
from wirescrapy.seeder.rules import SeederRules

NOW = 1_700_000_000.0


def config(**overrides) -> WireConfig:
    settings = Settings(default_settings())
    for key, value in overrides.items():
        settings.set(key, value)
    return WireConfig.from_settings(settings)


def graph(edges, size) -> csr_matrix:
    rows, cols = zip(*edges)
    return csr_matrix((np.ones(len(edges), np.float32), (rows, cols)), shape=(size + 1, size + 1))


def test_the_bow_tie_of_a_graph_whose_parts_are_known():
    # MAIN 1<->2<->3; IN 4->1; OUT 2->5; tendril from IN 4->6; tendril into OUT 7->5; tunnel 4->8->5;
    # island 9<->10 (a component of two, apart); 11 alone.
    edges = [(1, 2), (2, 3), (3, 1), (4, 1), (2, 5), (4, 6), (7, 5), (4, 8), (8, 5), (9, 10), (10, 9)]
    result = bowtie(graph(edges, 11))
    names = [COMPONENTS[c] for c in result.component[1:]]
    assert names == [
        "MAIN",
        "MAIN",
        "MAIN",
        "IN",
        "OUT",
        "TENDRILS",
        "TENDRILS",
        "TUNNELS",
        "ISLANDS",
        "ISLANDS",
        "ISLANDS",
    ]
    assert list(result.scc_sizes[:2]) == [3, 2] and (result.scc_sizes == 1).sum() == 6
    assert result.no_in == 3 and result.no_out == 3  # 4, 7, 11 / 5, 6, 11
    # 1 is linked from IN (4), 2 links to OUT (5), 3 neither.
    assert [MAIN_PARTS[p] if p >= 0 else "" for p in result.main_part[1:4]] == [
        "MAIN-IN",
        "MAIN-OUT",
        "MAIN-NORM",
    ]
    both = bowtie(graph([*edges, (4, 2)], 11))
    assert MAIN_PARTS[both.main_part[2]] == "MAIN-MAIN" and (both.main_part[4:] == -1).all()


def test_histograms_are_wires_value_documents_fraction():
    table = histogram_table("t", "t", np.array([0, 2, 2, 5]))
    assert table.csv() == "value,documents,fraction\n0,1,0.25\n2,2,0.5\n5,1,0.25\n"
    bins = power_of_two_table("b", "b", np.array([0, 1, 3, 4, 1000]))
    assert list(bins.rows[0]) == [0, 1, 2, 4, 512] and list(bins.rows[1]) == [1, 1, 1, 1, 1]
    logs = log_bin_table("l", "l", np.array([0.0, 1e-3, 1.5e-3, 1.0]), per_decade=1)
    assert list(logs.rows[1]) == [2, 1] and np.allclose(logs.rows[0], [1e-3, 1.0])
    series = ccdf(histogram_table("t", "t", np.array([1, 1, 2, 4])))
    assert list(series.x) == [1, 2, 4] and list(series.y) == [1.0, 0.5, 0.25]


def test_links_out_of_the_crawl_are_counted_and_kept(tmp_path):
    rules = SeederRules(config(WIRE_ACCEPT_DOMAIN_SUFFIXES=[".cl"]))
    with Collection(tmp_path / "c") as collection:
        report = add_links(
            collection,
            rules,
            [
                "http://a.cl/",
                "http://a.cl/x.pdf",
                "http://a.cl/y.PDF",
                "http://a.cl/s.css",
                "http://b.com/",
                "http://c.com/d",
                "http://e.org/",
                "http://10.1.2.3/",
            ],
            parent_depth=0,
        )
        assert report.added == 3  # the page and the two logged PDFs; the rest is counted only
        collection.checkpoint()
        assert OutLinks.read(tmp_path / "c") == {
            "extension": {".pdf": 2, ".css": 1},
            "tld": {"com": 2, "org": 1, "(ip)": 1},
        }
        add_links(collection, rules, ["http://f.com/"], parent_depth=0)
    with Collection(tmp_path / "c") as collection:  # closed, reopened: counts kept and added to
        assert collection.outlinks.groups["tld"]["com"] == 3


def test_the_counts_file_is_bounded_and_a_damaged_one_is_no_reason_to_stop(tmp_path):
    counts = OutLinks(tmp_path)
    for k in range(MAX_KEYS + 5):
        counts.count("extension", f".x{k}")
    counts.flush()
    assert len(OutLinks.read(tmp_path)["extension"]) == MAX_KEYS + 1
    assert OutLinks.read(tmp_path)["extension"][OTHER] == 5
    (tmp_path / "outlinks.json").write_text('{"format": "wirescrapy-outl')
    assert OutLinks.read(tmp_path) == {} and OutLinks(tmp_path).groups == {}


@pytest.mark.parametrize(
    ("text", "language"),
    [
        (
            (
                "El rastreador recorre los sitios de la web chilena y guarda las páginas que encuentra "
                "en su colección."
            ),
            "es",
        ),
        (
            "The crawler walks the sites of the Chilean web and keeps the pages it finds in its collection.",
            "en",
        ),
        (
            "Le robot parcourt les sites du web chilien et garde les pages qu'il trouve dans sa collection.",
            "fr",
        ),
        ("クローラーはチリのウェブのサイトを巡回し、見つけたページをコレクションに保存します。", "ja"),
        ("12 34 56 -- | >>", ""),
    ],
)
def test_the_language_of_a_page(text, language):
    assert identify(text) == language


@pytest.fixture
def small_crawl(tmp_path):
    """Three sites: a.example and b.example link each other (MAIN), c.example is linked from a (OUT)."""
    directory = tmp_path / "c"
    with Collection(directory) as collection:
        ids = {}
        for site, n in (("a", 4), ("b", 3), ("c", 2)):
            for i in range(n):
                ids[site, i] = collection.add_url(f"http://{site}.example/p{i}", depth=i)[0]
        docs = collection.documents.records
        for k, doc_id in enumerate(ids.values()):
            record = docs[doc_id]
            record["visits"], record["status"], record["mime"] = 1, 200, b"text/html"
            record["raw_length"], record["stored_length"] = 1000 * (k + 1), 800 * (k + 1)
            record["last_visit"] = NOW + 20 * k
            record["language"] = b"es" if k % 3 else b"en"
        docs[ids["c", 1]]["status"] = 404
        collection.links.set_links(
            ids["a", 0], [ids["a", 1], ids["a", 2], ids["b", 0], ids["c", 0], ids["a", 1]]
        )
        collection.links.set_links(ids["b", 0], [ids["a", 0], ids["b", 1]])
        collection.links.set_links(ids["a", 1], [ids["a", 0]])
        batch = directory / "batches" / "000001"
        batch.mkdir(parents=True)
        (batch / "batch.json").write_text(json.dumps({"batch": 1, "urls": 9, "sites": 3}))
        (batch / "harvest.json").write_text(
            json.dumps(
                {
                    "batch": 1,
                    "started": NOW,
                    "finished": NOW + 200,
                    "urls": 9,
                    "fetched": 9,
                    "ok": 8,
                    "sites": 3,
                    "waits": {"normal": 15, "large_site": 5, "large_site_pages": 100},
                }
            )
        )
    return directory, ids


def test_the_report_of_a_small_crawl(small_crawl):
    directory, _ = small_crawl
    with Collection(directory, readonly=True) as collection:
        report = build_report(collection, config(), as_of=NOW)
    sections = {s.key: s for s in report.sections}
    assert (
        report.summary["documents"] == 9 and report.summary["gathered"] == 8 and report.summary["sites"] == 3
    )
    assert report.summary["links"] == 7  # distinct pairs: the repeated a/p1 once
    tables = {t.name: t for s in report.sections for t in s.tables}
    status = dict(zip(tables["documents-status"].rows[0], tables["documents-status"].rows[1]))
    assert status == {"OK": 8, "client error (4xx)": 1}
    indeg = tables["documents-in-degree-all"]
    assert dict(zip(indeg.rows[0], indeg.rows[1])) == {0: 3, 1: 5, 2: 1}  # a/p0 from b/p0 and a/p1
    assert sections["structure"].figures["MAIN"] == 2 and sections["structure"].figures["OUT"] == 1
    sites = tables["sites"]
    column = dict(zip(sites.columns, sites.rows))
    assert list(column["pages"]) == [4, 3, 2] and list(column["internal_links"]) == [3, 1, 0]
    assert list(column["in_degree"]) == [1, 1, 1] and list(column["out_degree"]) == [2, 1, 0]
    assert sum(column["pagerank_sum_x_n"]) == pytest.approx(9, rel=1e-4)
    languages = dict(zip(tables["languages"].rows[0], tables["languages"].rows[1]))
    assert languages == {"es": 5, "en": 3}
    politeness = tables["politeness"]
    gaps = dict(zip(politeness.rows[0], politeness.rows[2]))
    assert gaps == {"http://a.example": 20.0, "http://b.example": 20.0, "http://c.example": 20.0}  # 404 too
    assert list(politeness.rows[3]) == [15.0, 15.0, 15.0]  # the wait the harvest recorded
    harvests = tables["harvests"]
    assert harvests.rows[harvests.columns.index("pages_per_second")] == [0.04]
    assert "scores" in sections and tables["scores-top-pagerank"].rows[0][0] == "http://a.example/p0"


def test_a_plot_and_a_table_as_html(small_crawl):
    directory, _ = small_crawl
    with Collection(directory, readonly=True) as collection:
        report = build_report(collection, config(), as_of=NOW)
    section = next(s for s in report.sections if s.key == "sites")
    svg = render_plot(section.plots[0])
    assert svg.startswith('<figure id="plot-sites-size"') and "<svg" in svg and "pages" in svg
    table = render_table(next(t for t in section.tables if t.name == "sites-top-pages"))
    assert '<a href="http://a.example">http://a.example</a>' in table


def test_a_ranking_of_pages_lists_no_robots_txt(small_crawl):
    """A robots.txt every page links to has the highest PageRank, and is a document of the collection; the
    pages with the highest PageRank are pages of the sites."""
    directory, ids = small_crawl
    with Collection(directory) as collection:
        robots, _ = collection.add_url("http://a.example/robots.txt", depth=0)
        record = collection.documents.records[robots]
        record["visits"], record["status"], record["mime"] = 1, 200, b"text/plain"
        collection.sites.records[collection.urls.site_id("http://a.example")]["robots_docid"] = robots
        for page in ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("c", 0), ("c", 1):
            collection.links.set_links(ids[page], [robots])
    with Collection(directory, readonly=True) as collection:
        report = build_report(collection, config(), as_of=NOW)
    tables = {t.name: t for s in report.sections for t in s.tables}
    top = tables["scores-top-pagerank"].rows[0]
    assert len(top) == 9 and "http://a.example/robots.txt" not in top
    status = dict(zip(tables["documents-status"].rows[0], tables["documents-status"].rows[1]))
    assert status["a site's robots.txt"] == 1  # still a document: counted, scored, not ranked among pages
    pagerank = tables["scores-pagerank"]
    assert sum(pagerank.rows[1]) == 10


def test_the_report_links_its_top_pages_to_their_replay_where_the_archive_has_an_index(small_crawl, tmp_path):
    directory, _ = small_crawl
    archive = tmp_path / "archive"
    archive.mkdir()
    (archive / "harvest-1.warc.gz").write_bytes(b"")  # a WARC file a kill left with no index yet
    for warc_dir in ("", str(archive)):  # no archive; an archive with no index: the report as ever
        with Collection(directory, readonly=True) as collection:
            report = build_report(
                collection, config(WIRE_WARC_DIR=warc_dir), NOW, "http://localhost:8080/crawl/"
            )
        table = next(t for s in report.sections for t in s.tables if t.name == "scores-top-pagerank")
        assert report.replay is None and "replay" not in table.columns
        assert 'id="replay"' not in render_html(report) and "localhost:8080" not in render_html(report)

    (archive / "harvest-1.cdxj").write_text("")
    with Collection(directory, readonly=True) as collection:
        report = build_report(
            collection, config(WIRE_WARC_DIR=str(archive)), NOW, "http://localhost:8080/crawl"
        )
    table = next(t for s in report.sections for t in s.tables if t.name == "scores-top-pagerank")
    column = dict(zip(table.columns, table.rows))
    assert column["replay"][0] == "http://localhost:8080/crawl/http://a.example/p0"
    assert [f"http://localhost:8080/crawl/{url}" for url in column["url"]] == column["replay"]
    assert table.csv().splitlines()[1].startswith("http://a.example/p0,http://localhost:8080/crawl/http://a.")
    page = render_html(report)
    assert '<h2 id="replay">Replay</h2>' in page
    assert (
        f"scrapy export --wacz crawl.wacz -s WIRE_WARC_DIR={archive} &amp;&amp; wb-manager init crawl "
        "&amp;&amp; wb-manager add --unpack-wacz crawl crawl.wacz &amp;&amp; wayback</pre>"
    ) in page
    link = "http://localhost:8080/crawl/http://a.example/p0"
    assert f'<a href="{link}">{link}</a>' in render_table(table)
    assert replay_of(archive, "http://10.0.0.1:8090/wire/").command.endswith(
        "wb-manager init wire && wb-manager add --unpack-wacz wire wire.wacz && wayback -p 8090"
    )
    assert replay_of(archive, "") is None  # no base: no link


def curve(points: int, kind: str = "ccdf") -> Plot:
    x = np.arange(1, points + 1, dtype=float)
    return Plot(f"{kind}-{points}", "a curve", kind, "x", "y", [Series("s", x, x[::-1])], table="t")


def bars(*counts: int) -> Plot:
    labels = np.array([f"c{i}" for i in range(len(counts))], dtype=object)
    return Plot("bars", "bars", "barh", "n", "", [Series("n", labels, np.array(counts))], table="t")


def test_a_plot_is_drawn_when_it_shows_more_than_its_table():
    for kind in ("ccdf", "line", "step", "scatter"):
        assert not curve(MIN_POINTS - 1, kind).worth_drawing and curve(MIN_POINTS, kind).worth_drawing
    assert not curve(0).worth_drawing and not Plot("none", "none", "line", "x", "y", []).worth_drawing
    assert MIN_BARS == 2 and not bars(0, 7, 0).worth_drawing and bars(1, 7, 0).worth_drawing


def test_a_plot_left_out_leaves_its_table_in_its_place():
    counts = histogram_table("t", "Counts", np.array([1, 2, 2]))  # shown in the page only by its plot
    assert counts.show == 0
    page = render_section(Section("s", "S", tables=[counts], plots=[curve(MIN_POINTS - 1)]))
    assert "<figure" not in page and "<h3>Counts</h3>" in page and '<td class="num">2</td>' in page
    page = render_section(Section("s", "S", tables=[counts], plots=[curve(MIN_POINTS)]))
    assert '<figure id="plot-ccdf-5"' in page and "<h3>Counts</h3>" not in page
    shown = Table("t", "Shown", ["value"], [np.array([1])])  # a table the page shows anyway: once
    assert render_section(Section("s", "S", tables=[shown], plots=[curve(1)])).count("<h3>Shown</h3>") == 1


def test_a_table_fits_the_page_and_scrolls_in_its_own_box_when_it_cannot():
    table = Table(
        "top",
        "Top",
        ["url", "in_degree", "state"],
        [["http://a.example/p"], np.array([3]), ["done"]],
        links={"url": "url"},
    )
    html = render_table(table)
    assert '<div class="scroll"><table>' in html and "in_<wbr>degree" in html  # a header breaks at "_"
    assert '<td class="url"><a href="http://a.example/p">' in html and '<td class="text">done</td>' in html


def test_the_page_of_a_small_crawl_draws_only_what_has_a_shape(small_crawl):
    """Nine pages on three sites: the bars of two kinds or more and the lengths of eight pages are drawn; the
    distributions of three sites, two degrees and one batch are left out, their tables shown instead."""
    directory, _ = small_crawl
    with Collection(directory, readonly=True) as collection:
        page = render_html(build_report(collection, config(), as_of=NOW))
    drawn = re.findall(r'<figure id="plot-([a-z-]+)"', page)
    assert drawn == ["status", "lengths", "bowtie", "languages"]
    assert "<h3>Depth (all)</h3>" in page and "<h3>Pages per site (documents known)</h3>" in page
    # The summary's twelve figures in two halves side by side.
    assert "<tr><td>documents known</td><td>9</td><td>links between documents</td><td>7</td></tr>" in page


def test_export_streams_documents_in_chunks(small_crawl, monkeypatch):
    directory, ids = small_crawl
    monkeypatch.setattr(export, "CHUNK", 2)  # the chunk boundaries fall inside every selection
    with Collection(directory, readonly=True) as collection:
        every = list(export.documents(collection, export.Selection()))
        assert [r["docid"] for r in every] == list(range(1, 10))
        assert every[0]["url"] == "http://a.example/p0" and every[0]["language"] == "en"
        chosen = export.Selection(
            first=2, last=8, sites=("http://b.example/", "http://c.example"), min_depth=1, pattern=r"p\d$"
        )
        assert [r["url"] for r in export.documents(collection, chosen)] == [
            "http://b.example/p1",
            "http://b.example/p2",
        ]
        text = list(export.documents(collection, export.Selection(first=1, last=1, content="document")))
        assert text[0]["content"] == ""  # nothing stored
        edges = list(export.links(collection))
        assert edges[:2] == [
            {"source": ids["a", 0], "target": ids["a", 1]},
            {"source": ids["a", 0], "target": ids["a", 2]},
        ]
        assert len(edges) == 8  # as stored: the repeat kept, the list order kept
        out = io.StringIO()
        writer = export.RowWriter(out, "csv")
        for row in export.sites(collection):
            writer.write(row)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["site"] for r in rows] == ["http://a.example", "http://b.example", "http://c.example"]


def test_the_report_reads_while_a_crawl_writes(small_crawl):
    directory, ids = small_crawl
    with Collection(directory) as writer:  # the crawl: holds the lock, goes on writing
        reader = Collection(directory, readonly=True)
        new = [writer.add_url(f"http://d.example/p{i}", depth=1)[0] for i in range(3)]
        writer.links.set_links(new[0], [ids["a", 0], new[1], new[2]])  # past what the reader counted
        writer.links.set_links(ids["a", 2], [new[0]])
        writer.checkpoint()
        with reader:
            report = build_report(reader, config(), as_of=NOW)
    assert report.summary["documents"] == 9 and report.summary["sites"] == 3  # as of when it opened
    assert report.as_of == NOW


def test_a_report_that_fails_half_way_leaves_the_previous_report_whole(small_crawl, tmp_path, monkeypatch):
    """The report is written beside its directory and takes its place whole: a report failing (or killed)
    while writing leaves the previous one as it was, never a mix; leftovers of a dead one are removed."""
    directory, _ = small_crawl
    with Collection(directory, readonly=True) as collection:
        report = build_report(collection, config(), as_of=NOW)
    out = tmp_path / "report"
    write_report(report, out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert (
        Path("index.html") in before
        and json.loads(before[Path("report.json")])["format"] == "wirescrapy-report"
    )
    for dead in (tmp_path / ".report.tmp-999999999", tmp_path / ".report.old-999999999"):  # of killed reports
        (dead / "data").mkdir(parents=True)
        (dead / "report.json").write_text("{")
    report.summary["documents"] = 10

    def full_disk(_report):  # the disk fills while the page is drawn, after the CSV files and report.json
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(render, "render_html", full_disk)
        with pytest.raises(OSError, match="No space"):
            write_report(report, out)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "report"]  # no temporary directory left
    monkeypatch.setattr(render, "_exchange", lambda a, b: False)  # where there is no atomic exchange
    write_report(report, out)
    assert json.loads((out / "report.json").read_text())["summary"]["documents"] == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "report"]
    (out / "notes.txt").write_text("mine")  # a directory holding other files is not replaced
    with pytest.raises(OSError, match="not a report's"):
        write_report(report, out)
    assert (out / "notes.txt").read_text() == "mine"


def test_the_report_of_a_collection_nothing_was_fetched_from_yet(tmp_path):
    """Seeded only (as a kill early in the first harvest leaves it): the report is written, not a
    traceback."""
    with Collection(tmp_path / "c") as collection:
        for url in ("http://a.example/", "http://b.example/"):
            collection.add_url(url, depth=0)
    with Collection(tmp_path / "c", readonly=True) as collection:
        report = build_report(collection, config(), as_of=NOW)
    index = write_report(report, tmp_path / "report")
    assert json.loads((tmp_path / "report" / "report.json").read_text())["summary"]["documents"] == 2
    assert index.read_text().rstrip().endswith("</html>")


@pytest.mark.parametrize("kind", ["line", "ccdf", "bar"])
@pytest.mark.parametrize("values", [[], [0.0, 0.0]])
def test_a_log_scaled_plot_with_no_positive_value_is_drawn(kind, values):
    """A distribution of a young crawl can be empty: a log-log CCDF of nothing raised ValueError."""
    nothing = Series("pages", np.array(values), np.array(values))
    svg = render_plot(Plot(f"p-{kind}", "nothing yet", kind, "x", "y", [nothing], logx=True, logy=True))
    assert "<svg" in svg


def test_the_politeness_section_counts_what_servers_asked_of_the_harvests(small_crawl):
    directory, _ = small_crawl
    path = next(directory.glob("batches/*/harvest.json"))
    harvest = json.loads(path.read_text())
    path.write_text(json.dumps({**harvest, "holds": 2, "held_pages": 5, "backoffs": 3}))
    with Collection(directory, readonly=True) as collection:
        report = build_report(collection, config(), as_of=NOW)
    figures = {s.key: s for s in report.sections}["politeness"].figures
    assert (figures["server_holds"], figures["pages_held"], figures["backoffs"]) == (2, 5, 3)


def test_the_report_reads_the_scores_the_manager_stored_over_the_same_graph(small_crawl):
    """The manager stamps the scores it stores with the link graph they are over (``scores.json``); the
    report reads them from the records while the graph, the documents and the dampening are the same, and
    computes them again as soon as one differs."""
    directory, ids = small_crawl
    every = config(WIRE_SCORE_WEIGHTS={"pagerank": 1, "hub": 1, "authority": 1, "wlrank": 1, "siterank": 1})
    with Collection(directory, readonly=True) as collection:
        computed = CrawlData(collection, every).scores
    with Collection(directory) as collection:
        manage(collection, every, NOW)
    assert set(json.loads((directory / "scores.json").read_text())["scores"]) == set(computed)
    with Collection(directory, readonly=True) as collection:
        data = CrawlData(collection, every)
        assert set(data.stored_scores) == set(computed)
        for name, values in data.scores.items():
            np.testing.assert_allclose(values, computed[name], rtol=0, atol=1e-5)
        sections = {s.key: s for s in build_report(collection, every, as_of=NOW).sections}
        assert "site rank as the manager stored them over this very graph." in sections["scores"].intro

    # Read, not computed: a value written into the records is what the report shows.
    with Collection(directory) as collection:
        collection.documents.records[ids["a", 3]]["pagerank"] = 0.5
    with Collection(directory, readonly=True) as collection:
        assert CrawlData(collection, every).scores["pagerank"][ids["a", 3]] == 0.5
        assert CrawlData(collection, config(WIRE_PAGERANK_DAMPING=0.2)).stored_scores == ()

    # A changed list, or a new document, and every score is computed again.
    with Collection(directory) as collection:
        collection.links.set_links(ids["c", 0], [ids["a", 3]])
    with Collection(directory, readonly=True) as collection:
        data = CrawlData(collection, every)
        assert data.stored_scores == () and data.scores["pagerank"][ids["a", 3]] < 0.5
    with Collection(directory) as collection:
        manage(collection, config(), NOW)  # the default weights: PageRank alone
        collection.add_url("http://c.example/new", depth=1)
    with Collection(directory, readonly=True) as collection:
        assert CrawlData(collection, every).stored_scores == ()
    with Collection(directory) as collection:
        manage(collection, config(), NOW)
    with Collection(directory, readonly=True) as collection:
        assert CrawlData(collection, every).stored_scores == ("pagerank",)
    (directory / "scores.json").write_text("{damaged")
    with Collection(directory, readonly=True) as collection:
        assert CrawlData(collection, every).stored_scores == ()
