"""Near-duplicates benchmark: the index's lookups at a collection's size, the step's cost per page, and the
fingerprint's quality on real near-copies.

    python -m benchmarks.nearduplicates --index 1000000,10000000     # lookups at 1M and 10M pages
    python -m benchmarks.nearduplicates --step                       # the step's cost per page
    python -m benchmarks.nearduplicates --quality                    # precision and recall on Debian docs
    python -m benchmarks.nearduplicates --index 100000 --queries 2000 --step --limit 40 --repeat 1 \
        --quality --pages 20                                         # smoke run

``--index`` builds ``NearDuplicateIndex`` (``collection/nearduplicates.py``) over N random fingerprints, in
its layout (``BANDS`` tables of 16 bits: one bucket a table up to 3 bits, 17 from 4 to 7) and in another
(three tables of 21 or 22 bits: one bucket a table up to 2 bits, 22 or 23 from 3 to 5, about 240 from 6 to
7). It times, per call, in CPU time: a lookup of a fingerprint near none (the common case), a lookup of a
stored page's near-copy (a hit), and an insertion with its share of the merges (the fingerprints added one
at a time folded into the tables). Baselines, timed in the same run: the same buckets read with numpy array
operations instead of the C loop (``collection/_nearindex.c``), and a scan of all N fingerprints (numpy's
XOR and bit count over one array): what a lookup would cost without the bands. It prints the index's memory
per page, and the time to build it from the side file's arrays (a harvest's start).

``--step`` times the near-duplicate step per page on python3-doc's pages (``benchmarks/gatherer.py``'s
corpus), in CPU time: the shingles and the SimHash by their C kernels (``gatherer/_simhash.c``), each
against the same computation in numpy (the baseline, checked to give the same hashes on every page), the
site's template sketch with the SimHash, and the cluster (index lookup and record). Each is compared with
the parse of the page and with the gatherer's whole work on it, the goal's measure: every step of
``ITEM_PIPELINES`` timed on the same pages, on a first visit into a new collection and on a revisit. The
near-duplicate step is also timed inside the gatherer, as its pipeline, caches shared with the other steps.

``--quality`` measures whether the fingerprint calls "near-duplicate" what is one, on a labelled set of real
pages (Debian documentation; the packages are installed with apt-get when missing):

- versions: the LLVM manual of LLVM 14, 15 and 16 (``llvm-14-doc``, ``llvm-15-doc``, ``llvm-16-doc``), each
  a site; the pairs are one page's path in two versions;
- dates and counters: pages of the Python manual (``python3.11-doc``) with a date, a visit counter or a
  session token injected, in the page's text or in its footer, paired with the page;
- two templates: the same pages as a print view (the main text alone, on the same site) and through another
  site's real template (CMake's manual's, on a mirror site of its own), paired with the page;
- translations: the chapters of the Debian Reference in English and in eight other languages, one site;
- pages of one template: random pairs of different pages of one site (LLVM 15, Python, JUnit's javadoc);
- tiny pages: pairs of JUnit's javadoc "uses of class" pages, a line or two of text in a large template.

A pair's label does not come from the fingerprint: it is the word-level similarity of the two pages' main
text (lxml's element of ``role="main"``, or the body; ``difflib``'s ratio over the words): a near-duplicate at
``SIMILAR`` or more, a different page at ``DIFFERENT`` or less, and left out between them (counted). Each
site's pages go through ``Fingerprinter`` in path order, as a crawl of the site would hand them over, then
the variants. The pairs are split by their page's path: ``HELD_OUT`` of them are held out, the threshold (the
Hamming distance, 0 to 3) is chosen on the rest by F1, and precision and recall are reported on the held-out
part, by kind. Baselines in the same run: content-seen's exact hash of the cleaned document, and SimHash
without the template sketch.
"""

from __future__ import annotations

import argparse
import difflib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xxhash import xxh3_64_intdigest

from wirescrapy.collection.nearduplicates import (
    BANDS,
    EXACT_DISTANCE,
    MAX_DISTANCE,
    NearDuplicateFile,
    NearDuplicateIndex,
    assign,
    load_index,
)
from wirescrapy.gatherer import Parser
from wirescrapy.gatherer.simhash import (
    MAX_SHINGLES,
    MIN_SHINGLES,
    SHINGLE_WORDS,
    Fingerprinter,
    hamming,
    shingles,
    simhash,
)

PACKAGES = (
    "llvm-14-doc",
    "llvm-15-doc",
    "llvm-16-doc",
    "python3.11-doc",
    "cmake-doc",
    "debian-reference",
    "junit4-doc",
)
LLVM = {version: Path(f"/usr/share/doc/llvm-{version}-doc/html") for version in (14, 15, 16)}
PYTHON = Path("/usr/share/doc/python3.11/html")
CMAKE = Path("/usr/share/doc/cmake-data/html")
REFERENCE = Path("/usr/share/debian-reference")
JAVADOC = Path("/usr/share/doc/junit4/api")
LANGUAGES = ("de", "es", "fr", "id", "it", "ja", "pt", "zh-cn")
SIMILAR, DIFFERENT = 0.95, 0.80  # the labels' bounds on the main text's word similarity
HELD_OUT = 1 / 3
OTHER_BANDS = 3  # --index's other layout: three tables of 21 to 22 bits, probed two bits away past 5 bits
MAX_LABEL_WORDS = 20_000  # pages longer than this are left out of the pairs (difflib's time)
T0 = 1_700_000_000.0  # --step: the gatherer's fetches' time


def flip_bits(values: np.ndarray, bits: int, rng: np.random.Generator) -> np.ndarray:
    """``values`` with ``bits`` random bits of each flipped."""
    out = values.copy()
    for _ in range(bits):
        out ^= np.uint64(1) << rng.integers(0, 64, len(values)).astype(np.uint64)
    return out


def per_call(function, items) -> float:
    """CPU seconds per call (``time.process_time``): other work on a busy machine weighs less."""
    start = time.process_time()
    for item in items:
        function(item)
    return (time.process_time() - start) / len(items)


def numpy_lookup(index: NearDuplicateIndex, simhash: int) -> list[tuple[int, int]]:
    """The baseline of the index's C lookup (``collection/_nearindex.c``): the same buckets read with numpy,
    one array operation at a time."""
    query = np.uint64(simhash)
    buckets = ((query >> index._probe_offset) & index._probe_mask) >> index._probe_shift
    rows = (buckets ^ index._probe_flip).astype(np.int64) + index._probe_row
    lo, hi = index._start_flat[rows], index._start_flat[rows + 1]
    sizes = hi - lo
    at = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    distances = np.bitwise_count(index._hashes[at] ^ query)
    near = np.flatnonzero(distances <= index.distance)
    return sorted(set(zip(distances[near].tolist(), index._ids[at[near]].tolist(), strict=True)))


def bench_index(size: int, queries: int, distance: int, bands: int, rng: np.random.Generator) -> None:
    stored = rng.integers(0, 1 << 64, size, dtype=np.uint64, endpoint=False)
    index = NearDuplicateIndex(distance, bands=bands)
    start = time.process_time()
    index.build(stored, np.arange(1, size + 1, dtype=np.uint32))
    build = time.process_time() - start
    misses = rng.integers(0, 1 << 64, queries, dtype=np.uint64, endpoint=False).tolist()
    near = flip_bits(stored[rng.integers(0, size, queries)], distance, rng).tolist()
    miss = per_call(index.query, misses)
    hit = per_call(index.query, near)
    found = sum(1 for query in near if index.query(query))
    assert all(numpy_lookup(index, query) == index.query(query) for query in near[:100])
    numpy = per_call(lambda q: numpy_lookup(index, q), misses)
    scan = per_call(
        lambda q: np.flatnonzero(np.bitwise_count(stored ^ np.uint64(q)) <= distance), misses[:50]
    )
    added = rng.integers(0, 1 << 64, max(queries, index.merge_at), dtype=np.uint64, endpoint=False).tolist()
    start = time.process_time()
    for doc_id, value in enumerate(added, size + 1):
        index.add(value, doc_id)
    index.merge()
    insert = (time.process_time() - start) / len(added)
    print(
        f"{size:>12,} pages, {bands} tables, within {distance} bits: lookup {miss * 1e6:6.1f} us "
        f"(none near), {hit * 1e6:6.1f} us (a near-copy, {found}/{len(near)} found); numpy's lookup "
        f"{numpy * 1e6:6.1f} us "
        f"({numpy / miss:.1f}x); scan of all {scan * 1e6:9.1f} us ({scan / miss:,.0f}x); insert "
        f"{insert * 1e6:5.1f} us with merges; build {build:5.2f} s; {index.nbytes / size:5.1f} bytes/page",
        flush=True,
    )


# -- the step's cost per page -------------------------------------------------------------------------------

_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5], np.uint64
)
_POWERS = np.cumprod(np.full(32, 0x100000001B3, dtype=np.uint64), dtype=np.uint64)


def _mix(values: np.ndarray) -> np.ndarray:
    values = values ^ (values >> np.uint64(30))
    values = values * np.uint64(0xBF58476D1CE4E5B9)
    values = values ^ (values >> np.uint64(27))
    values = values * np.uint64(0x94D049BB133111EB)
    return values ^ (values >> np.uint64(31))


def numpy_shingles(text: str) -> np.ndarray:
    """The baseline of ``simhash.shingles``'s C kernel: the same hashes in numpy over the text's bytes (no
    Python loop per word), sorted."""
    data = np.frombuffer(text.encode("utf-8", "surrogatepass").lower(), dtype=np.uint8)
    letter = ((data >= 0x30) & (data <= 0x39)) | ((data >= 0x61) & (data <= 0x7A)) | (data >= 0x80)
    at = np.flatnonzero(letter)
    if len(at) == 0:
        return np.empty(0, np.uint64)
    starts = np.ones(len(at), dtype=bool)
    starts[1:] = at[1:] != at[:-1] + 1
    first = np.flatnonzero(starts)
    offset = np.arange(len(at)) - np.repeat(first, np.diff(first, append=len(at)))
    words = _mix(np.add.reduceat(data[at].astype(np.uint64) * _POWERS[np.minimum(offset, 31)], first))
    if len(words) < SHINGLE_WORDS:
        return np.empty(0, np.uint64)
    n = len(words) - SHINGLE_WORDS + 1
    combined = np.zeros(n, np.uint64)
    for i, multiplier in enumerate(_MULTIPLIERS[:SHINGLE_WORDS]):
        combined += words[i : i + n] * multiplier
    distinct = np.unique(_mix(combined))
    return distinct[:MAX_SHINGLES] if len(distinct) >= MIN_SHINGLES else np.empty(0, np.uint64)


def numpy_simhash(hashes: np.ndarray) -> int | None:
    """The baseline of ``simhash.simhash``'s C kernel: each byte value counted at each place (one
    bincount), then the bits of those values."""
    if not len(hashes):
        return None
    slots = hashes.astype("<u8").view(np.uint8).reshape(-1, 8) + np.arange(0, 2048, 256, dtype=np.intp)
    counts = np.bincount(slots.ravel(), minlength=2048)
    # integers: numpy's float product would start BLAS's threads, whose spinning counts in the CPU time
    bits = (np.arange(256)[:, None] >> np.arange(8)) & 1
    votes = (counts.reshape(8, 256) @ bits).ravel()
    return int(np.packbits(2 * votes > len(hashes), bitorder="little").view("<u8")[0])


def gatherer_cost(pages: list[tuple[str, bytes]], repeat: int) -> list[dict[str, float]]:
    """CPU seconds per page of each of the gatherer's steps on ``pages``, on a first visit into a new
    collection and on a second visit of the same pages (their content unchanged, their links known), each
    the best of ``repeat`` runs. The steps are the item pipelines of ``settings/default.py``'s
    ``ITEM_PIPELINES``, built from a crawler as Scrapy builds them, given the fetches the harvester's spider
    makes; the pages are parsed in this thread (``WIRE_PARSE_WORKERS`` 0: the near-duplicate step computes
    the shingles itself). A step's ``close_spider`` (the near-duplicate step decides its held pages there)
    counts in the second visit's time."""
    from scrapy import Request, Spider
    from scrapy.exceptions import NotConfigured
    from scrapy.http import Response
    from scrapy.utils.misc import build_from_crawler, load_object
    from scrapy.utils.reactor import install_reactor, is_reactor_installed
    from scrapy.utils.test import get_crawler

    from settings.default import ITEM_PIPELINES
    from wirescrapy.config import WireConfig
    from wirescrapy.gatherer.language import identify
    from wirescrapy.harvester import meta
    from wirescrapy.harvester.fetch import response_fetch
    from wirescrapy.harvester.session import Harvest
    from wirescrapy.signals import harvest_opened

    if not is_reactor_installed():  # get_crawler checks the settings against the installed reactor
        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    identify("the language model loads on first use: before the clock runs")
    clock = time.process_time
    best: list[dict[str, float]] = [{}, {}]
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="wire-gatherer-") as directory:
            crawler = get_crawler(
                Spider,
                {"LOGSTATS_INTERVAL": 0, "WIRE_COLLECTION_DIR": directory, "WIRE_PARSE_WORKERS": 0},
            )
            config = WireConfig.from_crawler(crawler)
            spider = Spider("gatherer")
            harvest = Harvest.open(config, "wire-benchmark")
            try:
                steps = []
                for path in sorted(ITEM_PIPELINES, key=ITEM_PIPELINES.get):
                    try:
                        steps.append(build_from_crawler(load_object(path), crawler))
                    except NotConfigured:  # the WARC writer, with no WARC directory
                        continue
                crawler.signals.send_catch_log(harvest_opened, harvest=harvest)
                harvest.seed(url for url, _ in pages)
                for visit, at in enumerate((T0, T0 + 86_400)):
                    seconds = dict.fromkeys((type(step).__name__ for step in steps), 0.0)
                    for url, body in pages:
                        doc_id = harvest.collection.lookup(url)
                        record = harvest.collection.documents.records[doc_id]
                        request = Request(
                            url,
                            meta={
                                meta.DOC_ID: doc_id,
                                meta.SITE_ID: int(record["siteid"]),
                                meta.DEPTH: int(record["depth"]),
                                meta.STARTED: at,
                                "download_latency": 0.1,
                            },
                            dont_filter=True,
                        )
                        response = Response(
                            url, headers={"Content-Type": "text/html"}, body=body, request=request
                        )
                        item = response_fetch(response, config.max_file_size, at + 0.5)
                        for step in steps:
                            start = clock()
                            item = step.process_item(item, spider)
                            seconds[type(step).__name__] += clock() - start
                    if visit == 1:
                        for step in steps:
                            if hasattr(step, "close_spider"):
                                start = clock()
                                step.close_spider(spider)
                                seconds[type(step).__name__] += clock() - start
                    for name, value in seconds.items():
                        best[visit][name] = min(best[visit].get(name, float("inf")), value / len(pages))
                if crawler.stats.get_value("gatherer/near_duplicates/no_fingerprint", 0) >= 2 * len(pages):
                    raise AssertionError("the near-duplicate step fingerprinted no page")
            finally:
                harvest.close()
    return best


def step_cost(limit: int | None, repeat: int) -> None:
    from benchmarks.gatherer import load

    pages = load(limit)
    parser = Parser.default()

    def best(function) -> float:
        times = []
        for _ in range(repeat):
            start = time.process_time()
            function()
            times.append(time.process_time() - start)
        return min(times) / len(pages)

    parse = best(lambda: [parser.parse(body, url, "text/html") for url, body in pages])
    texts = [parser.parse(body, url, "text/html").text for url, body in pages]
    hashes = [shingles(text) for text in texts]
    assert all(np.array_equal(np.sort(h), numpy_shingles(t)) for h, t in zip(hashes, texts, strict=True))
    assert all(simhash(h) == numpy_simhash(h) for h in hashes)

    def kernel_run() -> float:
        """CPU seconds of the kernel's shingles of new copies of the texts, as a page's text is shingled
        once: a str keeps what a first reading made (the earlier kernel read a UTF-8 copy the str kept)."""
        copies = [text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass") for text in texts]
        start = time.process_time()
        for text in copies:
            shingles(text)
        return time.process_time() - start

    kernel = min(kernel_run() for _ in range(repeat)) / len(pages)
    baseline = best(lambda: [numpy_shingles(text) for text in texts])
    kernel_simhash = best(lambda: [simhash(h) for h in hashes])
    baseline_simhash = best(lambda: [numpy_simhash(h) for h in hashes])

    def sketch():
        fingerprinter = Fingerprinter()
        for n, h in enumerate(hashes):
            fingerprinter.add(n % 4, n, h)  # four sites
        fingerprinter.flush()

    sketched = best(sketch)
    fingerprints = [simhash(h) for h in hashes]

    def cluster() -> float:
        """CPU seconds of the pages' assignments; the file's creation and close, once a harvest, left out
        (the step's time inside the gatherer, below, has them)."""
        with tempfile.TemporaryDirectory(prefix="wire-neardup-") as directory:
            file = NearDuplicateFile(directory)
            index = load_index(file)
            start = time.process_time()
            for doc_id, fingerprint in enumerate(fingerprints, 1):
                assign(index, file, doc_id, fingerprint)
            seconds = time.process_time() - start
            file.close()
        return seconds

    clustered = min(cluster() for _ in range(repeat)) / len(pages)
    visits = gatherer_cost(pages, repeat)
    gatherer = [sum(steps.values()) for steps in visits]
    whole = kernel + sketched + clustered
    words = sum(len(text.split()) for text in texts) / len(texts)
    print(
        f"\nthe near-duplicate step per page ({len(pages)} pages, {words:,.0f} words a page, CPU, "
        f"best of {repeat}), against the parse and the gatherer's whole work on a page (a first visit, a "
        "revisit):"
    )
    rows = (
        ("shingles (C kernel; a parse worker's)", kernel),
        ("  baseline: shingles in numpy", baseline),
        ("SimHash (C kernel)", kernel_simhash),
        ("  baseline: SimHash in numpy", baseline_simhash),
        ("template sketch + SimHash", sketched),
        ("cluster: index lookup + record", clustered),
        ("in the reactor thread (sketch, SimHash, cluster)", sketched + clustered),
        ("the whole step", whole),
        ("the whole step with the numpy shingles", baseline + sketched + clustered),
    )
    print(f"  {'':50s} {'':15s} {'parse':>7s} {'first':>7s} {'revisit':>7s}")
    for name, seconds in rows:
        shares = " ".join(f"{seconds / total:7.1%}" for total in (parse, *gatherer))
        print(f"  {name:50s} {seconds * 1e6:7.1f} us/page {shares}")
    print(f"  {'the parse (Parser.parse)':50s} {parse * 1e6:7.1f} us/page")
    print(
        "\nthe gatherer's steps per page (ITEM_PIPELINES; pages parsed in this thread), first visit, revisit:"
    )
    for name in visits[0]:
        first, again = (steps[name] for steps in visits)
        print(f"  {name:50s} {first * 1e6:8.1f} {again * 1e6:8.1f} us/page")
    print(f"  {'the gatherer: all its steps':50s} {gatherer[0] * 1e6:8.1f} {gatherer[1] * 1e6:8.1f} us/page")
    inside = [steps["NearDuplicatePipeline"] for steps in visits]
    parsing = [steps["ParsePipeline"] for steps in visits]
    print(
        "the goal: the whole near-duplicate step under 10% of the gatherer's time per page (all its steps)\n"
        f"  timed alone, caches warm: {whole * 1e6:.1f} us/page, {whole / parse:.1%} of the parse; "
        f"{whole / gatherer[0]:.1%} of the gatherer's time on a first visit, {whole / gatherer[1]:.1%} on a "
        "revisit\n"
        f"  timed inside the gatherer (NearDuplicatePipeline, its shingles in this thread): "
        f"{inside[0] * 1e6:.1f} and {inside[1] * 1e6:.1f} us/page, {inside[0] / gatherer[0]:.1%} and "
        f"{inside[1] / gatherer[1]:.1%} of the gatherer's time; {inside[0] / parsing[0]:.1%} and "
        f"{inside[1] / parsing[1]:.1%} of ParsePipeline's (the parse and the language)"
    )


# -- quality -------------------------------------------------------------------------------------------------


def ensure_packages() -> None:
    missing = [p for p in PACKAGES if not any(Path("/usr/share/doc", p).glob("*"))]
    if not missing or all(path.is_dir() for path in (*LLVM.values(), PYTHON, CMAKE, REFERENCE, JAVADOC)):
        return
    if shutil.which("apt-get") is None:
        sys.exit(f"missing Debian packages {' '.join(missing)} and no apt-get: install them by hand")
    print(f"installing {' '.join(missing)} (apt-get)...", flush=True)
    done = subprocess.run(
        ["apt-get", "install", "-y", "-q", *missing], check=False, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"apt-get install failed ({done.stderr.strip()[-300:]}): install {' '.join(missing)}")


@dataclass
class Page:
    site: str
    key: str  # what the split goes by: the page's path in its manual
    html: bytes
    text: str = ""
    words: list[str] = field(default_factory=list)  # the main text's words, for the label
    digest: int = 0  # content-seen's hash of the cleaned document
    plain: int | None = None  # SimHash without the template sketch
    fingerprint: int | None = None


def main_text(tree) -> str:
    main = tree.xpath('//*[@role="main"]') or tree.xpath("//body") or [tree]
    return " ".join(" ".join(main[0].itertext()).split())  # a space between elements: h1 and p are two words


def main_element(tree):
    found = tree.xpath('//div[@role="main"]')
    return found[0] if found else None


def load_page(site: str, key: str, html: bytes) -> Page:
    import lxml.html

    page = Page(site, key, html)
    page.words = main_text(lxml.html.fromstring(html)).lower().split()
    return page


def variants(page: Page, rng: random.Random, cmake_template: bytes) -> list[tuple[str, Page]]:
    """The near-copies of a Python manual page: dates, counters and tokens injected, a print view, and the
    page through CMake's template."""
    import lxml.html

    out = []
    stamp = f"{rng.randint(2001, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    injections = {
        "date in text": f"<p>Last updated on {stamp} at {rng.randint(0, 23):02d}:{rng.randint(10, 59)}.</p>",
        "counter in text": f"<p>This page has been viewed {rng.randint(1000, 9_999_999)} times.</p>",
        "token in footer": f"<div class='footer'>session {rng.getrandbits(64):016x} served by mirror "
        f"{rng.choice(('ftp.cl', 'ftp.de', 'ftp.jp'))}.debian.org</div>",
    }
    for kind, snippet in injections.items():
        tree = lxml.html.fromstring(page.html)
        main = main_element(tree)
        if main is None:
            return []
        where = main if "text" in kind else tree.xpath("//body")[0]
        node = lxml.html.fragment_fromstring(snippet)
        if "text" in kind:
            children = list(where)
            where.insert(rng.randint(0, len(children)), node)
        else:
            where.append(node)
        out.append((kind, load_page(page.site, page.key, lxml.html.tostring(tree))))
    tree = lxml.html.fromstring(page.html)
    main = main_element(tree)
    title = (tree.findtext(".//title") or "").strip()
    body = lxml.html.tostring(main, encoding="unicode")
    view = f"<html><head><title>{title}</title></head><body>{body}</body></html>".encode()
    out.append(("print view", load_page(page.site, page.key, view)))
    host = lxml.html.fromstring(cmake_template)
    slot = main_element(host)
    slot.getparent().replace(slot, lxml.html.fragment_fromstring(body))
    out.append(("another template", load_page("mirror", page.key, lxml.html.tostring(host))))
    return out


def label(a: Page, b: Page) -> bool | None:
    if max(len(a.words), len(b.words)) > MAX_LABEL_WORDS or not a.words or not b.words:
        return None
    ratio = difflib.SequenceMatcher(None, a.words, b.words).ratio()
    if ratio >= SIMILAR:
        return True
    if ratio <= DIFFERENT:
        return False
    return None


def build_set(rng: random.Random, per_site: int):
    """The pages, by site in crawl order, and the pairs: (kind, page a, page b)."""
    sites: dict[str, list[Page]] = {}
    pairs: list[tuple[str, Page, Page]] = []
    common = sorted(
        set.intersection(
            *({str(p.relative_to(root)) for p in root.rglob("*.html")} for root in LLVM.values())
        )
    )
    chosen = sorted(rng.sample(common, min(per_site, len(common))))
    by_version = {}
    for version, root in LLVM.items():
        pages = [load_page(f"llvm-{version}", key, (root / key).read_bytes()) for key in chosen]
        sites[f"llvm-{version}"] = pages
        by_version[version] = pages
    for i in range(len(chosen)):
        for a, b in ((14, 15), (15, 16), (14, 16)):
            pairs.append(("versions", by_version[a][i], by_version[b][i]))
    for _ in range(len(chosen)):
        a, b = rng.sample(range(len(chosen)), 2)
        pairs.append(("one template", by_version[15][a], by_version[15][b]))

    files = sorted(str(p.relative_to(PYTHON)) for p in PYTHON.rglob("*.html") if "_" not in p.parts[-2][:1])
    python = [
        load_page("python", key, (PYTHON / key).read_bytes()) for key in sorted(rng.sample(files, per_site))
    ]
    cmake_template = (CMAKE / "index.html").read_bytes()
    copies = []
    for page in python[: per_site // 2]:
        for kind, copy in variants(page, rng, cmake_template):
            copies.append(copy)
            pairs.append((kind, page, copy))
    sites["python"] = python + [copy for copy in copies if copy.site == "python"]
    sites["mirror"] = [copy for copy in copies if copy.site == "mirror"]
    for _ in range(len(python)):
        a, b = rng.sample(range(len(python)), 2)
        pairs.append(("one template", python[a], python[b]))

    reference = []
    for english in sorted(REFERENCE.glob("*.en.html")):
        chapter = english.name.removesuffix(".en.html")
        original = load_page("reference", chapter, english.read_bytes())
        reference.append(original)
        for language in LANGUAGES:
            path = REFERENCE / f"{chapter}.{language}.html"
            if path.exists():
                translation = load_page("reference", chapter, path.read_bytes())
                reference.append(translation)
                pairs.append(("translations", original, translation))
    sites["reference"] = reference

    # javadoc: a large template around each class's text; a class's "uses" page is a line or two of its own
    files = sorted(str(p.relative_to(JAVADOC)) for p in JAVADOC.rglob("*.html"))
    classes = [key for key in files if "class-use" not in key and key[0] != "_" and "-" not in key]
    uses = [key for key in files if "/class-use/" in key]
    chosen = sorted(
        rng.sample(classes, min(per_site, len(classes))) + rng.sample(uses, min(per_site, len(uses)))
    )
    javadoc = [load_page("javadoc", key, (JAVADOC / key).read_bytes()) for key in chosen]
    sites["javadoc"] = javadoc
    class_pages = [page for page in javadoc if "/class-use/" not in page.key]
    use_pages = [page for page in javadoc if "/class-use/" in page.key]
    for kind, group in (("one template", class_pages), ("tiny pages", use_pages)):
        for _ in range(len(group)):
            a, b = rng.sample(range(len(group)), 2)
            pairs.append((kind, group[a], group[b]))
    return sites, pairs


def fingerprint_sites(sites: dict[str, list[Page]]) -> None:
    parser = Parser.default()
    fingerprinter = Fingerprinter()
    for site, pages in sites.items():
        for n, page in enumerate(pages):
            parsed = parser.parse(page.html, f"http://{site}.example/{page.key}", "text/html")
            page.text, page.digest = parsed.text, xxh3_64_intdigest(parsed.document)
            hashes = shingles(parsed.text)
            page.plain = simhash(hashes)
            for (_, at), value in fingerprinter.add(site, (site, n), hashes):
                pages[at].fingerprint = value
        for (_, at), value in fingerprinter.flush():
            pages[at].fingerprint = value


def scores(rows: list[tuple[bool, bool]]) -> tuple[float, float, int, int]:
    """Precision, recall, positives and pairs of (label, predicted) rows."""
    true_positive = sum(1 for truth, said in rows if truth and said)
    said = sum(1 for _, said in rows if said)
    positives = sum(1 for truth, _ in rows if truth)
    return true_positive / max(said, 1), true_positive / max(positives, 1), positives, len(rows)


def near(a: int | None, b: int | None, threshold: int) -> bool:
    return a is not None and b is not None and hamming(a, b) <= threshold


def quality(seed: int, per_site: int) -> None:
    ensure_packages()
    rng = random.Random(seed)
    start = time.perf_counter()
    sites, pairs = build_set(rng, per_site)
    fingerprint_sites(sites)
    labelled = []
    left_out = 0
    for kind, a, b in pairs:
        truth = label(a, b)
        if truth is None:
            left_out += 1
        else:
            labelled.append((kind, a, b, truth))
    held = [row for row in labelled if xxh3_64_intdigest(f"{seed}:{row[1].key}".encode()) % 3 == 0]
    tuning = [row for row in labelled if row not in held]
    print(
        f"\nlabelled pairs: {len(labelled)} ({sum(r[3] for r in labelled)} near-duplicates), {left_out} left "
        f"out between the bounds; {len(tuning)} to tune, {len(held)} held out; "
        f"{sum(map(len, sites.values()))} pages, {time.perf_counter() - start:.0f} s"
    )

    def f1(threshold: int, rows, field_name: str) -> float:
        precision, recall, _, _ = scores(
            [(t, near(getattr(a, field_name), getattr(b, field_name), threshold)) for _, a, b, t in rows]
        )
        return 2 * precision * recall / max(precision + recall, 1e-9)

    for threshold in range(MAX_DISTANCE + 1):
        print(
            f"  tuning, threshold {threshold}: F1 {f1(threshold, tuning, 'fingerprint'):.3f} "
            f"(without the template sketch {f1(threshold, tuning, 'plain'):.3f})"
        )
    chosen = max(range(MAX_DISTANCE + 1), key=lambda t: (f1(t, tuning, "fingerprint"), -t))
    plain_chosen = max(range(MAX_DISTANCE + 1), key=lambda t: (f1(t, tuning, "plain"), -t))
    print(f"chosen threshold: {chosen} bits (without the sketch: {plain_chosen})\n")
    methods = {
        f"SimHash, template sketch, <= {chosen}": lambda a, b: near(a.fingerprint, b.fingerprint, chosen),
        f"SimHash, no sketch, <= {plain_chosen}": lambda a, b: near(a.plain, b.plain, plain_chosen),
        "exact hash (content-seen)": lambda a, b: a.digest == b.digest,
    }
    kinds = sorted({row[0] for row in held})
    print(f"held out ({len(held)} pairs):")
    for name, said in methods.items():
        rows = [(t, said(a, b)) for _, a, b, t in held]
        precision, recall, positives, count = scores(rows)
        exact = f"{precision:6.1%}" if any(s for _, s in rows) else "  none"  # none called: no precision
        print(f"  {name:34s} precision {exact} recall {recall:6.1%} ({positives} of {count} positive)")
        for kind in kinds:
            rows = [(t, said(a, b)) for k, a, b, t in held if k == kind]
            positive = sum(t for t, _ in rows)
            called = sum(s for _, s in rows)
            print(
                f"      {kind:18s} {len(rows):4d} pairs, {positive:4d} near-duplicates, {called:4d} called so"
            )
    for name, field_name in (("template sketch", "fingerprint"), ("no sketch", "plain")):
        gaps = {
            kind: min(
                (
                    hamming(getattr(a, field_name), getattr(b, field_name))
                    for k, a, b, t in labelled
                    if k == kind
                    and not t
                    and getattr(a, field_name) is not None
                    and getattr(b, field_name) is not None
                ),
                default=None,
            )
            for kind in kinds
        }
        shown = ", ".join(f"{kind} {gap}" for kind, gap in gaps.items() if gap is not None)
        print(f"nearest different pages, in bits ({name}, all pairs): {shown}")
    pages = [page for pages in sites.values() for page in pages]
    exact = len(pages) - len({page.digest for page in pages})
    print(f"exact-duplicate rate of the pages: {exact / len(pages):.1%} ({exact} of {len(pages)})")


def main(argv=None) -> None:
    arguments = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    arguments.add_argument("--index", default="", help="comma-separated index sizes, in pages")
    arguments.add_argument("--queries", type=int, default=20_000, help="lookups timed per size")
    arguments.add_argument("--quality", action="store_true", help="precision and recall on real near-copies")
    arguments.add_argument("--step", action="store_true", help="the step's cost per page, against the parse")
    arguments.add_argument("--limit", type=int, default=None, help="--step: the first N pages of python3-doc")
    arguments.add_argument("--repeat", type=int, default=3, help="--step: runs of each; the best counts")
    arguments.add_argument("--seed", type=int, default=1)
    arguments.add_argument("--pages", type=int, default=300, help="--quality: pages sampled per manual")
    options = arguments.parse_args(argv)
    if not options.index and not options.quality and not options.step:
        arguments.error("nothing to measure: give --index SIZES, --step and/or --quality")
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs")
    rng = np.random.default_rng(options.seed)
    for size in (int(value) for value in options.index.split(",") if value):
        for distance in (EXACT_DISTANCE, MAX_DISTANCE):
            bench_index(size, options.queries, distance, BANDS, rng)
        for distance in (OTHER_BANDS - 1, MAX_DISTANCE):
            bench_index(size, options.queries, distance, OTHER_BANDS, rng)
    if options.step:
        step_cost(options.limit, options.repeat)
    if options.quality:
        quality(options.seed, options.pages)


if __name__ == "__main__":
    main()
