"""OPIC (Abiteboul, Preda & Cobena 2003): the replay of a crawl's fetches, and its use by the manager."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scrapy.settings import Settings

from wirescrapy.collection.metadata import DOCUMENT_DTYPE, DocFlag
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.manager import crawl_start, fetch_order, plan
from wirescrapy.manager.opic import opic
from wirescrapy.manager.ranking import link_matrix

NOW = 1_700_000_000.0


def graph(n: int, edges) -> csr_matrix:
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    counts = csr_matrix((np.ones(len(edges), np.float32), (edges[:, 0], edges[:, 1])), shape=(n + 1, n + 1))
    return link_matrix(counts)


def replay(links: csr_matrix, order, start) -> tuple[np.ndarray, np.ndarray, float]:
    """The paper's algorithm, one page at a time, with the virtual page: (cash, history, Ω's cash)."""
    cash = np.asarray(start, dtype=np.float64) / np.sum(start)
    history = np.zeros(len(cash))
    virtual = 0.0
    for page in order:
        targets = links.indices[links.indptr[page] : links.indptr[page + 1]]
        given, cash[page] = cash[page], 0.0
        history[page] += given
        cash[targets] += given / (len(targets) + 1)
        virtual += given / (len(targets) + 1)
    cash[1:] += virtual / (len(cash) - 1)
    return cash, history, virtual


def test_hand_computed():
    # 1 → 2, 3; 2 → 1, 3; 4 → 3. The crawl starts at 1 and fetched 1, then 4, then 2; 3 is not fetched.
    links = graph(4, [[1, 2], [1, 3], [2, 1], [2, 3], [4, 3]])
    result = opic(links, [1, 4, 2], [0, 1, 0, 0, 0], dtype=np.float64)
    # 1 hands 1/3 to each of 2, 3 and Ω; 4 has nothing to hand; 2 hands 1/9 to 1, 3 and Ω.
    # 1 keeps the 1/9 that came after its visit; Ω's 4/9 is spread at the end, 1/9 a page.
    third, ninth = Fraction(1, 3), Fraction(1, 9)
    history = [0, 1, third, 0, 0]
    cash = [0, ninth + ninth, 0 + ninth, third + ninth + ninth, 0 + ninth]
    np.testing.assert_allclose(result.history, [float(x) for x in history], rtol=1e-12)
    np.testing.assert_allclose(result.cash, [float(x) for x in cash], rtol=1e-12)
    assert result.virtual == pytest.approx(4 / 9)
    estimate = [h + c for h, c in zip(history, cash)]
    np.testing.assert_allclose(result.scores, [float(x / sum(estimate)) for x in estimate], rtol=1e-12)
    # The page not fetched holds the most cash: it is the one a crawler fetches next.
    assert result.cash.argmax() == 3


def test_a_round_passes_cash_on_within_itself_as_page_by_page():
    # 1 → 2 → 3 → 4, fetched in that order: every page hands on everything it got, whatever the rounds.
    links = graph(4, [[1, 2], [2, 3], [3, 4]])
    for round_size in (1, 2, 3, 100):
        result = opic(links, [1, 2, 3], [0, 1, 0, 0, 0], round_size=round_size, dtype=np.float64)
        np.testing.assert_allclose(result.history[1:], [1, 1 / 2, 1 / 4, 0])
        assert result.cash[4] == pytest.approx(1 / 8 + result.virtual / 4)


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    links = graph(n, rng.integers(1, n + 1, size=(int(rng.integers(0, 6 * n)), 2)))
    order = rng.permutation(np.arange(1, n + 1))[: int(rng.integers(0, n + 1))]
    start = np.zeros(n + 1)
    start[rng.integers(1, n + 1, size=3)] = 1
    return links, order, start


@pytest.mark.parametrize("seed", range(8))
def test_rounds_equal_the_page_by_page_algorithm(seed):
    links, order, start = random_case(seed)
    cash, history, virtual = replay(links, order, start)
    for round_size in (1, 3, 16, 1 << 16):
        result = opic(links, order, start, round_size=round_size)
        np.testing.assert_allclose(result.cash, cash, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(result.history, history, rtol=1e-9, atol=1e-15)
        assert result.virtual == pytest.approx(virtual)


@pytest.mark.parametrize("seed", range(8))
def test_cash_is_conserved(seed):
    links, order, start = random_case(seed)
    result = opic(links, order, start)
    assert result.cash[0] == 0 and (result.cash >= 0).all()
    assert result.cash[1:].sum() == pytest.approx(1, abs=1e-12)  # Ω's cash spread back
    # Ω got 1/(d + 1) of every hand-out, all of it from pages without links.
    degree = np.diff(links.indptr)
    assert result.virtual == pytest.approx(float((result.history / (degree + 1)).sum()))
    assert result.scores.sum() == pytest.approx(1, abs=1e-6)


def test_dangling_pages_hand_everything_to_the_virtual_page():
    links = graph(3, [[1, 2]])
    result = opic(links, [1, 2], [0, 1, 0, 0], dtype=np.float64)
    # 1 hands 1/2 to 2 and 1/2 to Ω; 2 has no links and hands its 1/2 to Ω; Ω spreads 1 over 3 pages.
    assert result.virtual == pytest.approx(1.0)
    np.testing.assert_allclose(result.cash[1:], [1 / 3] * 3)
    np.testing.assert_allclose(result.history[1:], [1, 1 / 2, 0])


def test_default_start_is_every_page_alike():
    links = graph(4, [[1, 2]])
    result = opic(links, [], dtype=np.float64)
    np.testing.assert_allclose(result.cash, [0, 0.25, 0.25, 0.25, 0.25])
    assert result.steps == 0
    np.testing.assert_allclose(opic(links, [], np.zeros(5)).cash, result.cash)
    assert opic(csr_matrix((1, 1), dtype=np.float32), []).scores.tolist() == [0]


def test_bad_arguments():
    links = graph(3, [[1, 2]])
    with pytest.raises(ValueError, match="square"):
        opic(csr_matrix((3, 4), dtype=np.float32), [])
    with pytest.raises(ValueError, match="start"):
        opic(links, [1], [0, -1, 0, 0])
    with pytest.raises(ValueError, match="start"):
        opic(links, [1], [0, 1])
    with pytest.raises(ValueError, match="round_size"):
        opic(links, [1], round_size=0)


# -- in the manager --------------------------------------------------------------------------------------


def test_fetch_order_and_crawl_start():
    docs = np.zeros(5, dtype=DOCUMENT_DTYPE)
    docs["visits"] = [1, 0, 2, 1, 1]
    docs["first_visit"] = [30.0, 0.0, 10.0, 20.0, 0.0]  # doc-id 5: counted a visit, no time: not replayed
    assert fetch_order(docs).tolist() == [3, 4, 1]
    docs["depth"] = [0, 0, 0, 1, 0]
    docs["flags"] = [DocFlag.SEED, DocFlag.FRONT_PAGE, 0, DocFlag.FRONT_PAGE, DocFlag.SEED | DocFlag.DYNAMIC]
    # 1 and 5 are seeds, 2 a seed's home page; 3 (a robots.txt, depth 0) and 4 (a home page found later)
    # are not where the crawl started.
    assert crawl_start(docs).tolist() == [True, True, False, False, True]


def test_the_manager_fetches_the_page_holding_most_cash_first():
    # Seed 1 was fetched and links to 2, 3, 4; 2 was fetched and links to 4. Of the pages not fetched,
    # 4 holds 1/4 + 1/8 of the cash, 3 holds 1/4: with OPIC alone, 4 comes first, then 3.
    docs = np.zeros(4, dtype=DOCUMENT_DTYPE)
    docs["siteid"] = 1
    docs["depth"] = [0, 1, 1, 1]
    docs["flags"][0] = DocFlag.SEED
    docs["visits"][:2] = 1
    docs["status"][:2] = 200
    docs["first_visit"][:2] = docs["last_visit"][:2] = [NOW - 20, NOW - 10]
    counts = csr_matrix((np.ones(4, np.float32), ([1, 1, 1, 2], [2, 3, 4, 4])), shape=(5, 5))
    config = WireConfig.from_settings(Settings({**default_settings(), "WIRE_SCORE_WEIGHTS": {"opic": 1}}))
    result = plan(docs, counts, config, NOW)
    assert result.batches[0].tolist() == [4, 3]
    assert set(result.scores) == {"opic"} and result.iterations["opic"] >= 1
    assert result.scores["opic"][4] > result.scores["opic"][3]
