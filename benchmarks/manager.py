"""Manager benchmark: link analysis, freshness, profit and the batch on a web-like graph.

    python -m benchmarks.manager                    # 10M pages, 100M links (a few minutes)
    python -m benchmarks.manager --pages 1000000    # 1M pages
    python -m benchmarks.manager --pages 20000 --sample 5000     # smoke run

The graph is web-like: site sizes follow a Pareto law (capped at WIRE_MAX_URLS_PER_SITE), doc-ids are
ordered by site, 30 % of the pages are not downloaded yet and have no links, out-degrees are geometric
with mean ``--links-per-page`` over all pages, and 80 % of the links stay in their site. Targets are drawn
log-uniformly by rank (inside the site the front page is rank 0; across sites ranks are a random
permutation of the pages), which gives a power-law in-degree. It is built directly as CSR arrays, as
``LinkGraph.to_csr`` would return it (counts, repeats summed), not through the link store. Records are
synthetic: downloaded pages have 1–10 visits over the last months, some changes, some errors.

Printed:
  - per-iteration time of PageRank and of HITS (two products), beside the memory-bandwidth bound of one
    sparse matrix × vector product: the bytes it must touch (8 per link, 4 per row for the row pointers,
    the input and the output vector) over the bandwidth of a large numpy copy measured in the same run;
    and scipy's one-core product over the same matrix, the baseline of the threaded kernel;
  - the end-to-end time of one manager run as ``manage`` does it (the path groups, read from a URL store of
    the pages' paths; filters, the sites' shares of a batch, link matrix, transpose, PageRank, OPIC, quality,
    freshness, profit, selection of K = WIRE_BATCH_SIZE pages, writing the batch, storing the scores), with
    the default WIRE_SCORE_WEIGHTS, or all of them with ``--all-scores``. OPIC replays the downloaded pages
    in order of ``first_visit``, which is random here (a real crawl's order has more links between pages
    fetched close together, which costs it more steps);
  - peak RSS;
  - networkx's ``pagerank`` and ``hits`` on a ``--sample``-page graph of the same kind, beside ours.

``--save FILE`` keeps the run's results (the batch's doc-ids in order, the scores, the eligible pages and a
SHA-256 of each file of the batch) and ``--compare FILE`` says whether this run's equal them, bit for bit:
run one with ``--save`` on the old code and one with ``--compare`` on the new to show a change leaves the
results as they were.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scrapy.settings import Settings

from wirescrapy.collection.metadata import DOCUMENT_DTYPE, DocFlag
from wirescrapy.collection.urls import BLOCK, URLStore
from wirescrapy.config import DAY, SCORE_FUNCTIONS, WireConfig, default_settings
from wirescrapy.items import FetchError
from wirescrapy.manager import plan, ranking
from wirescrapy.manager.batch import BatchSite, BatchURL, write_batch
from wirescrapy.manager.run import path_groups, store_scores

NOW = 1_700_000_000.0
SITE_CAP = 25_000


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def web_graph(pages: int, links_per_page: float, seed: int = 1, inside: float = 0.8, unvisited: float = 0.3):
    """(link counts as a CSR matrix indexed by doc-id, site of each doc-id, number of sites)."""
    rng = np.random.default_rng(seed)
    sizes = np.minimum(np.floor(rng.pareto(1.2, pages // 10 + 10) * 20).astype(np.int64) + 1, SITE_CAP)
    total = np.cumsum(sizes)
    sites = int(np.searchsorted(total, pages)) + 1
    sizes = sizes[:sites].copy()
    sizes[-1] -= total[sites - 1] - pages
    site_of = np.zeros(pages + 1, np.uint32)
    site_of[1:] = np.repeat(np.arange(1, sites + 1, dtype=np.uint32), sizes)
    first = np.zeros(sites + 1, np.int64)
    first[1:] = np.cumsum(sizes) - sizes + 1
    size_of = np.zeros(sites + 1, np.int64)
    size_of[1:] = sizes

    degree = rng.geometric(1 / (links_per_page / (1 - unvisited) + 1), pages + 1) - 1
    degree[rng.random(pages + 1) < unvisited] = 0
    degree[0] = 0
    indptr = np.zeros(pages + 2, np.int64)
    np.cumsum(degree, out=indptr[1:])
    indices = np.empty(int(indptr[-1]), np.int32)
    ranked = rng.permutation(pages).astype(np.int32) + 1
    log_pages = np.log(pages)
    step = 1 << 21
    for lo in range(1, pages + 1, step):
        hi = min(lo + step, pages + 1)
        a, b = indptr[lo], indptr[hi]
        source_site = np.repeat(site_of[lo:hi], degree[lo:hi]).astype(np.int64)
        u = rng.random(b - a)
        local = rng.random(b - a) < inside
        target = np.empty(b - a, np.int64)
        s = source_site[local]
        rank = np.floor(np.exp(u[local] * np.log(size_of[s]))).astype(np.int64) - 1
        target[local] = first[s] + np.minimum(rank, size_of[s] - 1)
        rank = np.minimum(np.floor(np.exp(u[~local] * log_pages)).astype(np.int64) - 1, pages - 1)
        target[~local] = ranked[rank]
        indices[a:b] = target
    counts = csr_matrix(
        (np.ones(len(indices), np.float32), indices, indptr.astype(np.int32)), shape=(pages + 1, pages + 1)
    )
    stored = counts.nnz
    counts.sum_duplicates()
    return counts, site_of, sites, stored


def web_records(site_of: np.ndarray, counts: csr_matrix, seed: int = 2) -> np.ndarray:
    """Document records 0..n (record 0 a blank header) for the pages of the graph."""
    rng = np.random.default_rng(seed)
    n = len(site_of) - 1
    records = np.zeros(n + 1, dtype=DOCUMENT_DTYPE)
    docs = records[1:]
    docs["docid"] = np.arange(1, n + 1)
    docs["siteid"] = site_of[1:]
    downloaded = np.diff(counts.indptr)[1:] > 0
    visits = np.where(downloaded, rng.integers(1, 11, n), 0)
    docs["visits"] = visits
    docs["visits_changed"] = rng.binomial(np.maximum(visits - 1, 0), 0.3)
    last = NOW - rng.random(n) * 30 * DAY
    docs["last_visit"] = np.where(downloaded, last, 0)
    docs["first_visit"] = np.where(downloaded, last - (visits - 1) * 7 * DAY, 0)
    outcome = rng.choice(3, n, p=[0.9, 0.05, 0.05])  # 200, 404, a DNS failure (no status)
    docs["status"] = np.where(downloaded, np.array([200, 404, 0])[outcome], 0)
    docs["error"] = np.where(downloaded & (outcome == 2), int(FetchError.DNS), 0)
    docs["depth"] = np.minimum(rng.geometric(0.4, n) - 1, 20)
    flags = np.where(rng.random(n) < 0.2, DocFlag.DYNAMIC, 0)
    flags[rng.random(n) < 0.01] |= DocFlag.DUPLICATE
    front = np.ones(n, bool)
    front[1:] = site_of[2:] != site_of[1:-1]
    flags[front] |= DocFlag.FRONT_PAGE
    docs["flags"] = flags
    return records


def url_store(site_of: np.ndarray, directory: Path) -> URLStore:
    """A URL store holding every page's path, ``/page<doc-id>.html`` as the batches below write, opened
    read-only. Its logs are written with numpy in the store's format (``collection/urls.py``), not URL by URL;
    the store builds its fingerprint index on opening."""
    pages = len(site_of) - 1
    doc = np.arange(1, pages + 1)
    digits = np.ones(pages, np.int64)
    for power in range(1, 20):
        digits += doc >= 10**power
    length = len(b"/page.html") + digits
    record = np.cumsum(6 + length) - (6 + length)  # each record's offset: uint32 site, uint16 length, path
    log = np.zeros(int(record[-1] + 6 + length[-1]), np.uint8)
    for byte in range(4):
        log[record + byte] = site_of[1:] >> (8 * byte) & 0xFF
    log[record + 4], log[record + 5] = length & 0xFF, length >> 8
    for place, char in enumerate(b"/page"):
        log[record + 6 + place] = char
    for place in range(int(digits.max())):  # the digits, from the last
        has = digits > place
        log[(record + 10 + digits - place)[has]] = ord("0") + doc[has] // 10**place % 10
    for place, char in enumerate(b".html"):
        log[record + 11 + digits + place] = char
    (directory / "urls.log").write_bytes(log.tobytes())
    (directory / "urls.blk").write_bytes(record[::BLOCK].astype("<u8").tobytes())
    sites = int(site_of.max())
    (directory / "sites.log").write_text("".join(f"http://www.site{s}.cl\n" for s in range(1, sites + 1)))
    return URLStore(directory, readonly=True)


def copy_bandwidth() -> float:
    """Bytes per second of a large numpy copy (read + write), best of five."""
    source = np.ones(1 << 26, dtype=np.float32)  # 256 MiB, eight times the largest L3 cache here
    target = np.zeros_like(source)
    best = min(_timed(lambda: np.copyto(target, source)) for _ in range(5))
    return 2 * source.nbytes / best


def _timed(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def spmv_bytes(matrix: csr_matrix) -> int:
    rows, columns = matrix.shape
    return (
        matrix.nnz * (matrix.indices.itemsize + matrix.data.itemsize)
        + (rows + 1) * matrix.indptr.itemsize
        + (rows + columns) * 4
    )


def per_iteration(function, extra: int = 10, repeat: int = 3) -> float:
    """Seconds per iteration of ``function(max_iterations)``, setup excluded:
    (t(1 + extra) − t(1)) / extra, each t the best of ``repeat`` (other jobs on the machine only add)."""
    one = min(_timed(lambda: function(1)) for _ in range(repeat))
    more = min(_timed(lambda: function(1 + extra)) for _ in range(repeat))
    return (more - one) / extra


def iteration_times(counts: csr_matrix, config) -> dict:
    graph = ranking.link_matrix(counts)
    back = ranking.transpose(graph)
    bandwidth = copy_bandwidth()
    touched = spmv_bytes(back)
    q = config.pagerank_damping
    logging.getLogger(ranking.__name__).setLevel(logging.ERROR)  # the timed runs stop short on purpose
    return {
        "links": graph.nnz,
        "bandwidth": bandwidth,
        "bytes": touched,
        "bound": touched / bandwidth,
        "pagerank": per_iteration(
            lambda k: ranking.pagerank(graph, q, 0.0, transposed=back, max_iterations=k)
        ),
        "hits": per_iteration(lambda k: ranking.hits(graph, 0.0, transposed=back, max_iterations=k)),
        "scipy": scipy_product(back),
    }


def scipy_product(back: csr_matrix) -> float:
    """Seconds of scipy's sparse product over the same matrix (one core, values stored), best of three: the
    baseline of the threaded kernel."""
    x = np.full(back.shape[0], 1 / back.shape[0], dtype=np.float32)
    return min(_timed(lambda: back @ x) for _ in range(3))


def end_to_end(records, counts, config, sites: int, store: URLStore, out_dir: Path) -> dict:
    docs = records[1:]
    started = time.perf_counter()
    # What a manager run reads from the URL store for the scores and estimates that need paths (the default
    # mirrors): every URL's site and path, read at once.
    groups = path_groups(config, store.path_arrays(1, len(docs)))
    grouped = time.perf_counter()
    result = plan(
        docs,
        counts,
        config,
        NOW,
        sites=sites,
        rng=np.random.default_rng(3),
        sections=groups.get("sections"),
        mirrors=groups.get("mirrors"),
    )
    written = time.perf_counter()
    paths = []
    for number, doc_ids in enumerate(result.batches, start=1):
        rows = docs[doc_ids - 1]
        urls = [
            BatchURL(d, s, depth, dynamic, profit, last, f"http://www.site{s}.cl/page{d}.html")
            for d, s, depth, dynamic, profit, last in zip(
                doc_ids.tolist(),
                rows["siteid"].tolist(),
                rows["depth"].tolist(),
                ((rows["flags"] & DocFlag.DYNAMIC) != 0).tolist(),
                result.profit[doc_ids - 1].astype(np.float64).tolist(),
                rows["last_visit"].astype(np.float64).tolist(),
            )
        ]
        site_list = [BatchSite(s, f"http://www.site{s}.cl") for s in np.unique(rows["siteid"]).tolist()]
        paths += write_batch(out_dir, number, urls, site_list, created=NOW)
    store_scores(docs, np.zeros(sites + 1, dtype=[("siterank", "<f4"), ("pagerank_sum", "<f4")]), result)
    finished = time.perf_counter()
    timings = {"path groups": grouped - started, **result.timings}
    timings["batch (write)"] = finished - written
    files = {
        str(path.relative_to(out_dir)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(out_dir.rglob("*"))
        if path.is_file()
    }
    return {"seconds": finished - started, "timings": timings, "result": result, "files": files}


def results(run: dict) -> dict[str, np.ndarray]:
    """What ``--save`` keeps of a run and ``--compare`` checks."""
    result = run["result"]
    return {
        "batch": np.concatenate(result.batches),
        **{name: result.scores[name] for name in sorted(result.scores)},
        "quality": result.quality,
        "freshness": result.freshness,
        "profit": result.profit,
        "eligible": result.eligible,
        "files": np.array(sorted(f"{name} {digest}" for name, digest in run["files"].items())),
    }


def compare(saved: dict[str, np.ndarray], current: dict[str, np.ndarray]) -> list[str]:
    """One line per array of either run: equal (values and type), or how it differs."""
    lines = []
    for name in sorted(saved.keys() | current.keys()):
        if name not in saved or name not in current:
            lines.append(f"  {name}: only in the {'saved' if name in saved else 'current'} run")
        elif saved[name].dtype == current[name].dtype and np.array_equal(saved[name], current[name]):
            lines.append(f"  {name}: equal ({len(current[name]):,} entries)")
        elif saved[name].shape != current[name].shape:
            lines.append(f"  {name}: DIFFERS, {saved[name].shape} against {current[name].shape}")
        else:
            lines.append(f"  {name}: DIFFERS in {int((saved[name] != current[name]).sum()):,} entries")
    return lines


def networkx_baseline(pages: int, links_per_page: float, config) -> dict:
    import networkx as nx

    counts, _, _, _ = web_graph(pages, links_per_page, seed=5)
    graph = ranking.link_matrix(counts)
    back = ranking.transpose(graph)
    q, tol = config.pagerank_damping, config.pagerank_max_error
    ours = {
        "pagerank": _timed(lambda: ranking.pagerank(graph, q, tol, transposed=back)),
        "hits": _timed(lambda: ranking.hits(graph, config.hits_max_error, transposed=back)),
    }
    mine = ranking.pagerank(graph, q, tol, transposed=back).scores
    rows, cols = graph.nonzero()
    digraph = nx.DiGraph()
    digraph.add_nodes_from(range(1, pages + 1))
    digraph.add_edges_from(zip(rows.tolist(), cols.tolist()))
    theirs = {}
    started = time.perf_counter()
    reference = nx.pagerank(digraph, alpha=1 - q, tol=tol / pages, max_iter=1000)  # their test is N·tol
    theirs["pagerank"] = time.perf_counter() - started
    theirs["hits"] = _timed(lambda: nx.hits(digraph, max_iter=10_000, tol=config.hits_max_error))
    difference = max(abs(float(mine[node]) - value) for node, value in reference.items())
    return {"pages": pages, "links": graph.nnz, "ours": ours, "networkx": theirs, "difference": difference}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=10_000_000)
    parser.add_argument("--links-per-page", type=float, default=10)
    parser.add_argument(
        "--sample", type=int, default=100_000, help="pages of the networkx comparison (0: skip)"
    )
    parser.add_argument(
        "--all-scores", action="store_true", help="weight every score function, not the defaults"
    )
    parser.add_argument("--save", type=Path, help="keep this run's batch and scores in FILE (.npz)")
    parser.add_argument("--compare", type=Path, help="say whether this run's batch and scores equal FILE's")
    args = parser.parse_args()

    settings = default_settings()
    if args.all_scores:
        settings["WIRE_SCORE_WEIGHTS"] = dict.fromkeys(SCORE_FUNCTIONS, 1)
    config = WireConfig.from_settings(Settings(settings))

    out_dir = Path(tempfile.mkdtemp(prefix="wirescrapy-manager-bench-"))
    try:
        started = time.perf_counter()
        counts, site_of, sites, stored = web_graph(args.pages, args.links_per_page)
        # The URL store before the records: opening it builds its index, and the temporaries of that then fit
        # beside the graph, under the manager run's peak.
        (out_dir / "urls").mkdir()
        store = url_store(site_of, out_dir / "urls")
        try:
            records = web_records(site_of, counts)
            print(
                f"graph: {args.pages:,} pages, {sites:,} sites, {stored:,} links stored, {counts.nnz:,} "
                f"distinct (built with the URL store in {time.perf_counter() - started:.1f} s)"
            )
            weights = {name: w for name, w in config.score_weights.items() if w}
            print(f"weights: {weights}; K = {config.batch_size:,}, same-site cap {config.batch_samesite}")
            run = end_to_end(records, counts, config, sites, store, out_dir / "batches")
        finally:
            store.close()
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    peak = peak_rss()
    result = run["result"]
    print(
        f"\nend to end (one manager run): {run['seconds']:.1f} s, peak RSS {peak / 2**30:.2f} GiB "
        f"(input graph and records included)"
    )
    for name, seconds in run["timings"].items():
        print(f"  {name:<14} {seconds:7.2f} s")
    print(
        f"  iterations: {result.iterations}; eligible {int(result.eligible.sum()):,}; "
        f"batch {sum(map(len, result.batches)):,} URLs"
    )
    if args.save:
        np.savez(args.save, **results(run))
    if args.compare:
        with np.load(args.compare) as saved:
            lines = compare(dict(saved), results(run))
        print(f"against {args.compare}:", *lines, sep="\n")
    del run, result

    step = iteration_times(counts, config)
    print(f"\nper iteration ({step['links']:,} links, float32 values, int32 indices):")
    print(
        f"  copy bandwidth {step['bandwidth'] / 1e9:.1f} GB/s (read + write); one product touches "
        f"{step['bytes'] / 1e6:.0f} MB: bound {step['bound'] * 1e3:.0f} ms"
    )
    print(
        f"  PageRank {step['pagerank'] * 1e3:.0f} ms/iteration "
        f"({step['pagerank'] / step['bound']:.1f}x the bound)"
    )
    print(
        f"  HITS     {step['hits'] * 1e3:.0f} ms/iteration "
        f"({step['hits'] / (2 * step['bound']):.1f}x the bound of two products)"
    )
    print(
        f"  scipy's one-core product alone {step['scipy'] * 1e3:.0f} ms "
        f"({step['scipy'] / step['bound']:.1f}x the bound); a PageRank iteration on {ranking.THREADS} "
        f"threads takes {step['pagerank'] / step['scipy']:.2f}x that"
    )
    del counts, records

    if args.sample:
        base = networkx_baseline(args.sample, args.links_per_page, config)
        print(
            f"\nnetworkx {sys.modules['networkx'].__version__} on {base['pages']:,} pages, "
            f"{base['links']:,} links (PageRank: L1 change < {config.pagerank_max_error:g} for both; "
            f"HITS: ours L1 change < {config.hits_max_error:g}, "
            f"networkx's ARPACK tol {config.hits_max_error:g}):"
        )
        for name in ("pagerank", "hits"):
            ours, theirs = base["ours"][name], base["networkx"][name]
            print(
                f"  {name:<8}  networkx {theirs:7.2f} s   wirescrapy {ours:6.3f} s   "
                f"ratio {theirs / ours:5.1f}x"
            )
        print(f"  largest PageRank difference {base['difference']:.2e}")
    print(f"\npeak RSS {peak_rss() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
