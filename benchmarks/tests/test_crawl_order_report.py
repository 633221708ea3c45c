"""benchmarks.crawl_order's per-site report: an order's shortfall from the oracle split into how the budget
was shared among sites and how the pages were chosen inside them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix

from benchmarks.crawl_order import FinalGraph, site_table

# Site a: pages of PageRank .4, .2, .1; site b: .2, .1 (page numbers 1..5).
URLS = ["http://a.test/1", "http://a.test/2", "http://a.test/3", "http://b.test/1", "http://b.test/2"]
RANK = np.array([0, 0.4, 0.2, 0.1, 0.2, 0.1])
GRAPH = FinalGraph(URLS, {url: i for i, url in enumerate(URLS, start=1)}, csr_matrix((6, 6)), RANK)


def shortfall(table: str, label: str) -> tuple[float, float]:
    line = next(line for line in table.splitlines() if line.strip().startswith(label) and "split" in line)
    words = line.split()
    return float(words[words.index("split") + 1].rstrip("%")), float(
        words[words.index("choice") + 1].rstrip("%")
    )


def test_the_shortfall_is_the_split_among_sites_times_the_choice_inside_them():
    oracle = [1, 2, 4, 3, 5]  # budget 3: .4 + .2 + .2 = .8
    orders = [
        ("oracle", oracle),
        ("counts right", [1, 3, 5]),  # a 2, b 1 as the oracle, worse pages: .4 + .1 + .1
        ("counts wrong", [1, 2, 3]),  # a 3, b 0: best with those counts .7, and chosen so
        ("both", [3, 2, 5]),
    ]  # a 2 (.1 + .2), b 1 (.1): the oracle's counts, half its PageRank
    table = site_table(orders, GRAPH, 3, set())
    assert shortfall(table, "counts right") == pytest.approx((100.0, 75.0))  # .6 / .8
    assert shortfall(table, "counts wrong") == pytest.approx((87.5, 100.0))  # .7 / .8
    split, choice = shortfall(table, "both")
    assert split == pytest.approx(100.0)
    assert choice == pytest.approx(50.0)
    assert "oracle" not in [
        line.split()[0] for line in table.splitlines() if "split" in line and "choice" in line
    ]
