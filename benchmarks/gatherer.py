"""Gatherer benchmark: the parser against the usual ways of extracting links, on real HTML, in one run.

    python -m benchmarks.gatherer               # every page of the corpus, best of 3 runs each
    python -m benchmarks.gatherer --limit 40    # smoke run
    python -m benchmarks.gatherer --steps       # and where the parser's time goes, step by step
    python -m benchmarks.gatherer --links       # and the links into a collection (the seeder's work per link)
    python -m benchmarks.gatherer --pickle      # and what a parse worker's result costs to send back

The corpus is Debian's ``python3-doc`` (the Python documentation as HTML: ~530 pages, ~50 MB, UTF-8, much
markup: syntax-highlighted code, tables, thousands of links); it is installed with apt-get when missing.
Each page gets the URL it has on docs.python.org.

Contenders, all given the same bytes:
  - wirescrapy: ``Parser.parse`` — links (resolved, made safe) + the cleaned document + the UTF-8 text;
  - selectolax, links only: Lexbor parse + ``css("a[href], …")`` + the attribute, unresolved (a floor);
  - lxml.html: full DOM (``lxml.html.fromstring``) + xpath for the same tag/attribute pairs + ``urljoin``;
  - Scrapy's ``LinkExtractor`` on an ``HtmlResponse`` (lxml + parsel + w3lib, what a Scrapy spider uses).
``--steps`` times the steps of ``Parser.parse`` one by one (the same calls, in the same order).
``--links`` times what the link-graph pipeline does with each page's links after parsing: every link through
the seeder's rules (``SeederRules.classify``: canonical form, session ids, domain, patterns, extension,
depth) into a fresh collection's URL store (``seeder.add.add_links``: known or new, site limits, home pages
of new sites) and the page's out-links into the link graph; per link, first pass (most links new) and
second pass (all known, as on a recrawl), against the parse itself.
``--pickle`` times pickling and unpickling each page's ``parse_page`` result (the page, its links and their
decisions by the seeder's rules: what a parse worker sends back, ``WIRE_PARSE_WORKERS``, unpickled by the
worker pool's thread under the crawl's GIL), with ``Decision``'s own ``__reduce__`` against the dataclasses
default for frozen slots classes (``__getstate__``/``__setstate__`` calling ``fields()`` per object).
Rates are per CPU second of this process (``time.process_time``, the best of ``--repeat`` runs) so that other
work on the machine weighs less; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urljoin

from wirescrapy.gatherer import Parser

DOC_DIR = Path("/usr/share/doc/python3/html")
BASE = "https://docs.python.org/3/"
LINK_TAGS = ("a", "area", "frame", "iframe", "link")


def ensure_corpus() -> Path:
    if not DOC_DIR.is_dir():
        if shutil.which("apt-get") is None:
            sys.exit(
                f"{DOC_DIR} is missing and apt-get is not available: install Debian's python3-doc package"
            )
        print("installing python3-doc (apt-get)...", flush=True)
        for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "python3-doc"]):
            done = subprocess.run(
                command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            if done.returncode != 0:
                sys.exit(
                    f"{' '.join(command)} failed ({done.stderr.strip()[-300:]}): install python3-doc by hand"
                )
        if not DOC_DIR.is_dir():
            sys.exit(f"python3-doc is installed but {DOC_DIR} does not exist")
    return DOC_DIR.resolve()


def load(limit: int | None) -> list[tuple[str, bytes]]:
    root = ensure_corpus()
    files = sorted(root.rglob("*.html"))[:limit]
    return [(BASE + str(path.relative_to(root)), path.read_bytes()) for path in files]


def run_wirescrapy(pages):
    parser = Parser.default()
    out = []
    for url, body in pages:
        page = parser.parse(body, url, "text/html")
        out.append((len(page.links), len(page.document), len(page.text.encode("utf-8")), page.truncated))
    return out


def run_selectolax(pages):
    from selectolax.lexbor import LexborHTMLParser

    query = "a[href], area[href], frame[src], iframe[src], link[href]"
    out = []
    for _url, body in pages:
        links = [
            node.attrs.get("href") or node.attrs.get("src") for node in LexborHTMLParser(body).css(query)
        ]
        out.append((len(links),))
    return out


def run_lxml(pages):
    import lxml.html

    xpath = "|".join(f"//{tag}/@{'src' if tag.endswith('frame') else 'href'}" for tag in LINK_TAGS)
    out = []
    for url, body in pages:
        tree = lxml.html.fromstring(body)
        links = [urljoin(url, str(value).strip()) for value in tree.xpath(xpath)]
        out.append((len(links),))
    return out


def run_linkextractor(pages):
    from scrapy.http import HtmlResponse
    from scrapy.linkextractors import LinkExtractor

    extractor = LinkExtractor(tags=LINK_TAGS, attrs=("href", "src"), deny_extensions=[])
    out = []
    for url, body in pages:
        response = HtmlResponse(url, body=body, headers={"Content-Type": "text/html"})
        out.append((len(extractor.extract_links(response)),))
    return out


def run_steps(pages) -> dict[str, float]:
    """CPU seconds of each step of ``Parser.parse`` over ``pages``: the calls ``Parser._parse_html`` makes."""
    from wirescrapy.gatherer import parser as steps
    from wirescrapy.gatherer.encoding import detect_encoding

    parser = Parser.default()
    clock = time.process_time
    seconds: dict[str, float] = {}

    def lap(name: str, start: float) -> float:
        now = clock()
        seconds[name] = seconds.get(name, 0.0) + now - start
        return now

    for url, body in pages:
        start = clock()
        encoding, skip = detect_encoding(body, "text/html", parser.default_charset)
        source = steps._utf8(body, skip, encoding)
        start = lap("encoding: detect, check UTF-8", start)
        document, _text, _title, _base, found, _metas = parser._scanner.scan(source)
        start = lap("scanner: document, text, links (one pass)", start)
        parser._resolve_links(found, steps.Resolver(url, encoding))
        start = lap("links: resolution", start)
        steps._truncate(document, parser.max_stored_size, html=True)
        lap("cut at WIRE_MAX_STORED_SIZE", start)
    return seconds


def run_links(parsed: list[tuple[str, list[str]]], directory: Path) -> tuple[float, float, float, int]:
    """CPU seconds to add every page's links to a new collection (first pass: mostly new URLs), again
    (second pass: all known), and again with their decisions made beforehand (third pass: what the crawl's
    reactor thread does when parse workers classify the links); and the number of links."""
    from wirescrapy.collection import Collection
    from wirescrapy.seeder.add import add_links
    from wirescrapy.seeder.rules import SeederRules

    rules = SeederRules.default()
    decisions = [[rules.classify(link, 1) for link in links] for _, links in parsed]
    seconds = []
    with Collection(directory) as collection:
        for classified in (False, False, True):
            start = time.process_time()
            for (url, links), made in zip(parsed, decisions, strict=True):
                page, _ = collection.add_url(url, depth=1)
                report = add_links(
                    collection, rules, links, parent_depth=1, classified=made if classified else ()
                )
                collection.links.set_links(page, report.targets)
            seconds.append(time.process_time() - start)
    return seconds[0], seconds[1], seconds[2], sum(len(links) for _, links in parsed)


def print_links(pages, repeat: int) -> None:
    import tempfile

    parser = Parser.default()
    start = time.process_time()
    parsed = [(url, [link.url for link in parser.parse(body, url, "text/html").links]) for url, body in pages]
    parse = time.process_time() - start
    best_new = best_known = best_classified = float("inf")
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="wire-links-") as directory:
            new, known, classified, count = run_links(parsed, Path(directory))
        best_new, best_known = min(best_new, new), min(best_known, known)
        best_classified = min(best_classified, classified)
    print(f"\nlinks into a collection ({count:,} links of {len(parsed)} pages, CPU, best of {repeat}):")
    print(
        f"  first pass (new URLs)    {best_new / count * 1e6:6.2f} us/link {count / best_new:10,.0f} links/s"
    )
    print(
        f"  second pass (all known)  {best_known / count * 1e6:6.2f} us/link "
        f"{count / best_known:10,.0f} links/s"
    )
    print(
        f"  all known, classified    {best_classified / count * 1e6:6.2f} us/link "
        f"{count / best_classified:10,.0f} links/s (decisions made by a parse worker)"
    )
    print(f"  parsing, for comparison  {parse / count * 1e6:6.2f} us/link")


def run_pickle(results: list, repeat: int) -> tuple[float, float, int]:
    """Best CPU seconds to pickle, and to unpickle, every result; the bytes."""
    import pickle

    best_dumps = best_loads = float("inf")
    data: list[bytes] = []
    for _ in range(repeat):
        start = time.process_time()
        data = [pickle.dumps(result, pickle.HIGHEST_PROTOCOL) for result in results]
        best_dumps = min(best_dumps, time.process_time() - start)
        start = time.process_time()
        for blob in data:
            pickle.loads(blob)
        best_loads = min(best_loads, time.process_time() - start)
    return best_dumps, best_loads, sum(map(len, data))


def print_pickle(pages, repeat: int) -> None:
    import dataclasses

    from wirescrapy.gatherer.workers import parse_page
    from wirescrapy.seeder.rules import Decision, SeederRules

    parser, rules = Parser.default(), SeederRules.default()
    results = [parse_page(parser, body, url, "text/html", None, rules, 1) for url, body in pages]
    decisions = sum(len(result[2]) for result in results)
    ours = run_pickle(results, repeat)
    own = Decision.__reduce__
    try:  # the dataclasses default, as Decision had it before its own __reduce__
        del Decision.__reduce__
        assert Decision.__getstate__ is dataclasses._dataclass_getstate, "not dataclasses' default pickling"
        base = run_pickle(results, repeat)
    finally:
        Decision.__reduce__ = own
    print(
        f"\nparse results sent back by a parse worker ({len(results)} pages, {decisions:,} link decisions, "
        f"CPU, best of {repeat}):"
    )
    for name, (dumps, loads, size) in (("Decision.__reduce__", ours), ("dataclasses' default", base)):
        print(
            f"  {name:22s} pickle {dumps / len(results) * 1e3:6.3f} ms/page, unpickle "
            f"{loads / len(results) * 1e3:6.3f} ms/page, {size / len(results) / 1e3:6.1f} kB/page"
        )
    print(
        f"  unpickling with Decision.__reduce__: {base[1] / ours[1]:.2f}x the speed; pickling "
        f"{base[0] / ours[0]:.2f}x"
    )


def print_steps(pages, total: int, repeat: int) -> None:
    run_steps(pages[: max(1, len(pages) // 10)])  # warm-up
    best: dict[str, float] = {}
    for _ in range(repeat):
        for name, seconds in run_steps(pages).items():
            best[name] = min(best.get(name, float("inf")), seconds)
    whole = sum(best.values())
    print(f"\nParser.parse step by step (CPU s, best of {repeat}):")
    for name, seconds in best.items():
        print(f"  {name:44s} {seconds:6.3f} s {seconds / whole:6.1%} {total / 1e6 / seconds:8.1f} MB/s")
    print(f"  {'sum':44s} {whole:6.3f} s         {total / 1e6 / whole:8.1f} MB/s")


CONTENDERS = {
    "wirescrapy Parser (links+document+text)": run_wirescrapy,
    "selectolax links only (floor)": run_selectolax,
    "lxml.html DOM + xpath + urljoin": run_lxml,
    "Scrapy LinkExtractor": run_linkextractor,
}


def measure(function, pages, repeat: int):
    function(pages[: max(1, len(pages) // 10)])  # warm-up: imports, allocator
    best_cpu = best_wall = float("inf")
    result = None
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        result = function(pages)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_cpu, best_wall, result


def main(argv=None) -> None:
    arguments = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    arguments.add_argument("--limit", type=int, default=None, help="use the first N pages only")
    arguments.add_argument("--repeat", type=int, default=3, help="runs per contender; the best counts")
    arguments.add_argument("--steps", action="store_true", help="also time the parser's steps one by one")
    arguments.add_argument("--links", action="store_true", help="also time adding the links to a collection")
    arguments.add_argument(
        "--pickle", action="store_true", help="also time sending a parse worker's results back"
    )
    options = arguments.parse_args(argv)

    pages = load(options.limit)
    total = sum(len(body) for _, body in pages)
    print(
        f"corpus: {len(pages)} pages, {total / 1e6:.1f} MB ({DOC_DIR}), load average "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs\n"
    )
    rows = {}
    for name, function in CONTENDERS.items():
        cpu, wall, result = measure(function, pages, options.repeat)
        rows[name] = (cpu, wall, result)
        links = sum(r[0] for r in result)
        print(
            f"{name:42s} {len(pages) / cpu:9.0f} pages/s {total / 1e6 / cpu:7.1f} MB/s "
            f"(cpu {cpu:.2f} s, wall {wall:.2f} s) {links:>9,} links",
            flush=True,
        )

    ours = rows["wirescrapy Parser (links+document+text)"]
    print()
    for name, (cpu, _wall, _result) in rows.items():
        if name.startswith("wirescrapy"):
            continue
        print(f"wirescrapy vs {name:34s}: {cpu / ours[0]:5.2f}x the speed")
    results = ours[2]
    document = sum(r[1] for r in results)
    text = sum(r[2] for r in results)
    print(
        f"\ncleaned document / original: {document / total:.1%} (text: {text / total:.1%}); "
        f"{sum(r[3] for r in results)} documents cut at WIRE_MAX_STORED_SIZE"
    )
    if options.steps:
        print_steps(pages, total, options.repeat)
    if options.links:
        print_links(pages, options.repeat)
    if options.pickle:
        print_pickle(pages, options.repeat)
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
