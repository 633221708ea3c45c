"""benchmarks.crawl_order's table of the bench of webs: every web's line, then the worst web, and the worst
of the held-out webs and of the webs tuned on apart; and its ``--explore`` values."""

from __future__ import annotations

import pytest

from benchmarks.crawl_order import EXPLORE, WebFigures, bench_table, explore_values

ROWS = [
    WebFigures("web1", False, 15, 12000, 0.45, 0.60, 0.30, 0.99),  # 75 % of the oracle
    WebFigures("docs13", False, 13, 7830, 0.54, 0.60, 0.40, 0.93),  # 90 %
    WebFigures("web2", True, 14, 11000, 0.48, 0.60, 0.35, 1.0),  # 80 %
    WebFigures("web6", True, 14, 10000, 0.57, 0.60, 0.35, 1.0),  # 95 %
]


def test_the_bench_table_has_a_line_per_web_then_the_worst_of_all_of_the_held_out_and_of_the_tuned():
    table = bench_table(ROWS, 0.2, "default").splitlines()
    assert table[0] == "The bench of webs: the PageRank share of the first 20% of N pages (crawl: default):"
    assert table[1].split() == [
        "web",
        "held",
        "out",
        "hosts",
        "pages",
        "crawl",
        "oracle",
        "BFS",
        "/oracle",
        "coverage",
    ]
    assert table[3].split() == ["web1", "no", "15", "12000", "0.4500", "0.6000", "0.3000", "75.0%", "99.0%"]
    assert table[5].split()[:2] == ["web2", "yes"]
    assert table[-3] == (
        "Worst web: web1, 75.0% of the oracle (0.4500 / 0.6000; BFS 0.3000), coverage 99.0%, of 4 webs."
    )
    assert table[-2].startswith("Worst held-out web: web2, 80.0% of the oracle") and "of 2 webs" in table[-2]
    assert table[-1].startswith("Worst web tuned on: web1, 75.0%")


def test_a_bench_without_held_out_webs_says_so():
    table = bench_table(ROWS[:1], 0.2, "default").splitlines()
    assert table[-3].endswith("of 1 web.")
    assert table[-2] == "Worst held-out web: none crawled."


def test_explore_values_are_the_planner_s_exploration_parts_crawled_beside_the_default():
    assert explore_values(None, smoke=False) == EXPLORE
    assert explore_values(None, smoke=True) == []
    assert explore_values("", smoke=False) == []
    assert explore_values("0, 0.1,1", smoke=True) == [0.0, 0.1, 1.0]
    with pytest.raises(ValueError, match="between 0 and 1"):
        explore_values("0.2,1.5", smoke=False)
    with pytest.raises(ValueError, match="not a number"):
        explore_values("lots", smoke=False)
