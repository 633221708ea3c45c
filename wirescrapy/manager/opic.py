"""OPIC (``opic``, Abiteboul, Preda & Cobena 2003, "Adaptive on-line page importance computation", WWW'03)

On-line page importance: every page holds *cash*; visiting a page adds its cash to its *history*
H and hands it out evenly over its links (the cash C of the page becomes 0); a page's importance is
(H + C) / (G + 1), G the cash handed out so far. As every page is visited again and again, this
converges to the importance the link matrix defines (PageRank's fixpoint), with no matrix iteration;
a crawler that fetches the page holding the most cash (the paper's Greedy policy) goes for the
important pages first. The manager keeps no cash between runs, so ``opic`` replays the crawl so far:
the pages fetched, in the order of their first visit, each visited once. The cash starts at the
pages of ``start``, shared evenly (the manager's: the seeds and their sites' home pages, where the
crawl started; by default every page, the paper's 1/n). A page never fetched keeps all the cash it
received: that is its priority for the frontier. A page fetched keeps what reached it after its
visit (it would hand it out at its next one).

The virtual page Ω (the paper's fix for a graph that is not strongly connected): every page links to
Ω and Ω to every page. A visited page of d links hands 1/(d + 1) of its cash to each link and
1/(d + 1) to Ω (a page without links, one not fetched successfully, all of it); Ω is visited once, at
the end (the manager run), and spreads its cash evenly over the N pages, which changes no order among
pages never fetched and keeps Σ C = 1: cash is conserved. (In the paper's steady state, the cash
flowing through Ω plays the part of PageRank's random jump.)

Replaying page by page in Python would take minutes at ten million pages, so the replay runs in
rounds of ``OPIC_ROUND`` consecutive fetches, in matrix form. In one round, every page of the round
hands out its cash at once, and the cash that reaches a page of the same round fetched *later* is
handed out again, in further steps, until none is left in flight (a page can only pass cash to pages
after it, so this ends in at most ``OPIC_ROUND`` steps, usually a few). By linearity that is the
page-by-page replay exactly (up to rounding): the round size sets the speed, not the result.
Cash for a page fetched earlier, or never, stays with it; a page of a later round hands it out in its
round (its time in a manager run: ``benchmarks/manager.py --all-scores``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_matrix

from .ranking import index_dtype

OPIC_ROUND = 1 << 16  # fetches replayed together by ``opic``: speed only, not the result


class Cash(NamedTuple):
    scores: np.ndarray  # (H + C), one per index, sum 1 over the real nodes, entry 0 is 0
    cash: np.ndarray  # C at the end (float64), Ω's share spread in: what each page holds now
    history: np.ndarray  # H (float64): the cash each fetched page handed out at its visit
    virtual: float  # the cash Ω received (and spread at the end)
    steps: int  # hand-outs in matrix form: one per round, more when cash moves on within a round


def opic(
    links: csr_matrix,
    order: np.ndarray,
    start: np.ndarray | None = None,
    *,
    round_size: int = OPIC_ROUND,
    dtype=np.float32,
) -> Cash:
    """OPIC cash and history after replaying the visits of the pages ``order`` lists (doc-ids, each once,
    in the order they were first fetched) over ``links`` (its links, each counted once:
    ``ranking.link_matrix``); see the module docstring. ``start`` weighs the pages that hold the cash at
    first (one entry per index; default, or all zero: every page alike)."""
    size = links.shape[0]
    if links.shape != (size, size):
        raise ValueError(f"the link matrix must be square, got {links.shape}")
    if round_size < 1:
        raise ValueError(f"round_size must be >= 1, got {round_size}")
    order = np.asarray(order, dtype=index_dtype(0, size))
    if size < 2:
        return Cash(np.zeros(size, dtype=dtype), np.zeros(size), np.zeros(size), 0.0, 0)
    cash = _initial_cash(start, size)
    history = np.zeros(size)
    # Fetch position of every page; pages never fetched come after every round.
    position = np.full(size, len(order), dtype=order.dtype)
    position[order] = np.arange(len(order), dtype=order.dtype)
    virtual, steps = 0.0, 0
    for first in range(0, len(order), round_size):
        pages = order[first : first + round_size]
        given, done = _replay_round(links, position, pages, first, cash, history)
        virtual += given
        steps += done
    cash[1:] += virtual / (size - 1)
    estimate = history + cash
    estimate[0] = 0
    estimate /= estimate.sum()
    return Cash(estimate.astype(dtype), cash, history, virtual, steps)


def _initial_cash(start, size: int) -> np.ndarray:
    """The cash at first: ``start`` normalised to sum 1 over the real nodes, or 1/N each."""
    cash = np.zeros(size)
    if start is not None:
        if np.shape(start) != (size,) or (np.asarray(start) < 0).any():
            raise ValueError(f"start must have {size} entries >= 0")
        cash[1:] = start[1:]
    total = cash.sum()
    if total > 0:
        cash /= total
    else:
        cash[1:] = 1.0 / (size - 1)
    return cash


def _replay_round(
    links: csr_matrix,
    position: np.ndarray,
    pages: np.ndarray,
    first: int,
    cash: np.ndarray,
    history: np.ndarray,
) -> tuple[float, int]:
    """Visit ``pages``, the fetches at positions ``first``, ``first + 1`` …, passing on in further steps the
    cash they hand to each other forwards; returns the cash handed to Ω and the steps taken. Updates
    ``cash`` and ``history``."""
    giving = pages[cash[pages] > 0]
    amount = cash[giving]
    cash[giving] = 0  # what reaches them from now on came after their visit, unless passed on below
    virtual, steps = 0.0, 0
    while len(giving):
        steps += 1
        history[giving] += amount
        rows = links[giving]
        degree = np.diff(rows.indptr)
        share = amount / (degree + 1)  # each link and Ω get one share
        virtual += float(share.sum())
        targets = rows.indices
        shares = np.repeat(share, degree)
        # A page of this round fetched after the page paying it hands the cash on in the next step.
        slot = np.take(position, targets) - first
        onward = (slot < len(pages)) & (slot > np.repeat(np.take(position, giving) - first, degree))
        kept = ~onward
        np.add.at(cash, targets[kept], shares[kept])
        received = np.bincount(slot[onward], weights=shares[onward], minlength=len(pages))
        slots = np.flatnonzero(received)
        giving, amount = pages[slots], received[slots]
    return virtual, steps
