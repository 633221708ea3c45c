"""Collection benchmark: the URL store, the page store and content-seen, each beside baselines measured in
the same run.

    python -m benchmarks.collection                       # 1M and 10M URLs (several minutes)
    python -m benchmarks.collection --sizes 20000 --pages 5000   # smoke run (CI)

URL store, at each size: inserts/s, random lookups/s, same-site lookups/s (the links of one page are
mostly of its own site), disk bytes per URL and resident memory per URL, for
  - wirescrapy's URL store (batch calls, as the seeder and the gatherer use it; single calls too),
  - a Python dict {url: doc-id},
  - LMDB used plainly (key = URL bytes, value = doc-id),
  - SQLite used plainly (a table url TEXT PRIMARY KEY, id INTEGER; WAL, synchronous=OFF).
The URLs are web-like: N/200 sites, paths of 20-40 bytes.

Page store and content-seen: see ``benchmarks.pagestore`` (called from here).
"""

from __future__ import annotations

import argparse
import gc
import math
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

from wirescrapy.collection.urls import URLStore

CHUNK = 10_000
PROCESS = psutil.Process()


def rss() -> int:
    gc.collect()
    return PROCESS.memory_info().rss


def site_of(i: np.ndarray, n_sites: int) -> np.ndarray:
    # Scatter documents over sites with a skew: a few big sites, many small ones.
    return (((i * 2654435761) % 2**32) % n_sites) ** 2 // max(n_sites, 1) + 1


def make_paths(start: int, stop: int) -> list[bytes]:
    return [f"/section{i % 53}/item-{i}.html".encode() for i in range(start, stop)]


def urls_of(idx: np.ndarray, n_sites: int) -> tuple[list[int], list[bytes]]:
    sites = site_of(idx, n_sites).tolist()
    return sites, [f"/section{i % 53}/item-{i}.html".encode() for i in idx.tolist()]


def full_urls(sites: list[int], paths: list[bytes]) -> list[bytes]:
    return [b"http://www.site%d.cl%s" % (s, p) for s, p in zip(sites, paths)]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def disk_usage(path: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def queries(n: int, n_sites: int, count: int, rng) -> dict:
    """Random lookups, and same-site lookups in groups of 50 (one page's links)."""
    random_idx = rng.integers(0, n, count)
    all_idx = np.arange(n)
    sites_all = site_of(all_idx, n_sites)
    order = np.argsort(sites_all, kind="stable")
    starts = rng.integers(0, n - 50, count // 50)
    same_idx = np.concatenate([order[s : s + 50] for s in starts])
    return {"random": urls_of(random_idx, n_sites), "same-site": urls_of(same_idx, n_sites)}


# -- the contenders ------------------------------------------------------------------------------------


def bench_wire(n, n_sites, work, q):
    base = rss()
    store = URLStore(work)
    for s in range(1, n_sites + 1):
        store.add_site(f"http://www.site{s}.cl")

    def insert():
        for start in range(0, n, CHUNK):
            idx = np.arange(start, min(n, start + CHUNK))
            store.add_many(site_of(idx, n_sites).tolist(), make_paths(start, idx[-1] + 1))

    t_insert = timed(insert)
    store.checkpoint()
    row = {"insert/s": n / t_insert}
    for kind, (sites, paths) in q.items():
        group = 1000 if kind == "random" else 50
        out = []
        t = timed(
            lambda: out.extend(
                store.lookup_many(sites[i : i + group], paths[i : i + group])
                for i in range(0, len(paths), group)
            )
        )
        assert all((o > 0).all() for o in out)
        row[f"{kind}/s"] = len(paths) / t
    sites, paths = q["random"]
    m = min(len(paths), 200_000)
    row["single/s"] = m / timed(lambda: [store.lookup(sites[i], paths[i]) for i in range(m)])
    row["B/URL disk"] = disk_usage(work) / n
    row["B/URL RAM"] = (rss() - base) / n
    store.close()
    return row


def bench_dict(n, n_sites, work, q):
    base = rss()
    table: dict[bytes, int] = {}

    def insert():
        next_id = 1
        for start in range(0, n, CHUNK):
            idx = np.arange(start, min(n, start + CHUNK))
            for url in full_urls(site_of(idx, n_sites).tolist(), make_paths(start, idx[-1] + 1)):
                if url not in table:
                    table[url] = next_id
                    next_id += 1

    row = {"insert/s": n / timed(insert)}
    for kind, (sites, paths) in q.items():
        urls = full_urls(sites, paths)
        get = table.get
        row[f"{kind}/s"] = len(urls) / timed(lambda: [get(u) for u in urls])
    row["single/s"] = row["random/s"]
    row["B/URL disk"] = float("nan")
    row["B/URL RAM"] = (rss() - base) / n
    table.clear()
    return row


def bench_lmdb(n, n_sites, work, q):
    import lmdb

    env = lmdb.open(str(work), map_size=64 << 30, writemap=True, sync=False, metasync=False)

    def insert():
        next_id = 1
        for start in range(0, n, CHUNK):
            idx = np.arange(start, min(n, start + CHUNK))
            with env.begin(write=True) as txn:
                for url in full_urls(site_of(idx, n_sites).tolist(), make_paths(start, idx[-1] + 1)):
                    if txn.put(url, next_id.to_bytes(4, "little"), overwrite=False):
                        next_id += 1

    row = {"insert/s": n / timed(insert)}
    for kind, (sites, paths) in q.items():
        urls = full_urls(sites, paths)
        with env.begin() as txn:
            get = txn.get
            row[f"{kind}/s"] = len(urls) / timed(lambda: [get(u) for u in urls])
    row["single/s"] = row["random/s"]
    info, stat = env.info(), env.stat()
    row["B/URL disk"] = (info["last_pgno"] + 1) * stat["psize"] / n
    row["B/URL RAM"] = float("nan")
    env.close()
    return row


def bench_sqlite(n, n_sites, work, q):
    db = sqlite3.connect(work / "urls.db")
    db.executescript(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
        "CREATE TABLE urls (url BLOB PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;"
    )

    def insert():
        next_id = 1
        for start in range(0, n, CHUNK):
            idx = np.arange(start, min(n, start + CHUNK))
            urls = full_urls(site_of(idx, n_sites).tolist(), make_paths(start, idx[-1] + 1))
            with db:
                db.executemany(
                    "INSERT OR IGNORE INTO urls VALUES (?, ?)", zip(urls, range(next_id, next_id + len(urls)))
                )
            next_id += len(urls)

    row = {"insert/s": n / timed(insert)}
    for kind, (sites, paths) in q.items():
        urls = full_urls(sites, paths)
        m = min(len(urls), 200_000)
        cur = db.cursor()
        row[f"{kind}/s"] = m / timed(
            lambda: [cur.execute("SELECT id FROM urls WHERE url = ?", (u,)).fetchone() for u in urls[:m]]
        )
    row["single/s"] = row["random/s"]
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    row["B/URL disk"] = disk_usage(work) / n
    row["B/URL RAM"] = float("nan")
    return row


CONTENDERS = {"wirescrapy": bench_wire, "dict": bench_dict, "lmdb": bench_lmdb, "sqlite": bench_sqlite}
COLUMNS = ["insert/s", "random/s", "same-site/s", "single/s", "B/URL disk", "B/URL RAM"]


def fmt(value: float) -> str:
    if math.isnan(value):
        return "-"
    if value >= 10_000:
        return f"{value / 1e6:.2f}M"
    return f"{value:.1f}"


def url_store(sizes, contenders, tmp):
    for n in sizes:
        n_sites = max(1, n // 200)
        q = queries(n, n_sites, min(n, 1_000_000), np.random.default_rng(42))
        print(
            f"\nURL store, {n:,} URLs over {n_sites:,} sites ({len(q['random'][1]):,} lookups of each kind)"
        )
        print(f"{'':12}" + "".join(f"{c:>14}" for c in COLUMNS))
        rows = {}
        for name in contenders:
            work = Path(tempfile.mkdtemp(dir=tmp))
            try:
                rows[name] = CONTENDERS[name](n, n_sites, work, q)
            finally:
                shutil.rmtree(work)
            print(f"{name:12}" + "".join(f"{fmt(rows[name][c]):>14}" for c in COLUMNS), flush=True)
        ours = rows.get("wirescrapy")
        if ours:
            for name, row in rows.items():
                if name != "wirescrapy":
                    print(
                        f"  wirescrapy / {name}: random lookups ×{ours['random/s'] / row['random/s']:.2f}, "
                        f"same-site ×{ours['same-site/s'] / row['same-site/s']:.2f}, "
                        f"inserts ×{ours['insert/s'] / row['insert/s']:.2f}"
                    )


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000000,10000000", help="URL counts, comma-separated")
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    parser.add_argument("--pages", default="100000,1000000", help="page counts for the page store")
    parser.add_argument("--skip-pages", action="store_true")
    parser.add_argument("--tmp", default=None, help="directory for the stores (default: system temp)")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="wire-bench-", dir=args.tmp))
    try:
        url_store([int(s) for s in args.sizes.split(",")], args.contenders.split(","), tmp)
        if not args.skip_pages:
            from benchmarks import pagestore

            pagestore.main(["--sizes", args.pages, "--tmp", str(tmp)])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
