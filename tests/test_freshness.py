"""Pr(fresh) from the visit history (Cho & Garcia-Molina's change-rate estimator)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wirescrapy.collection.metadata import DOCUMENT_DTYPE
from wirescrapy.manager.freshness import DAY, PRIOR_RATE, change_rate, freshness

NOW = 1_700_000_000.0


def pages(*rows):
    """Records from (siteid, visits, visits_changed, first_visit, last_visit[, last_modified]) rows."""
    docs = np.zeros(len(rows), dtype=DOCUMENT_DTYPE)
    for i, row in enumerate(rows):
        site, visits, changed, first, last, *modified = row
        docs[i]["siteid"], docs[i]["visits"], docs[i]["visits_changed"] = site, visits, changed
        docs[i]["first_visit"], docs[i]["last_visit"] = first, last
        docs[i]["last_modified"] = modified[0] if modified else 0
    return docs


def test_estimator_formula():
    # 11 visits a day apart: 10 revisits, 3 of which found a change.
    docs = pages((1, 11, 3, NOW - 10 * DAY, NOW))
    expected = -math.log((10 - 3 + 0.5) / (10 + 0.5)) / DAY
    assert change_rate(docs)[0] == pytest.approx(expected)
    later = NOW + 2 * DAY
    assert freshness(docs, later)[0] == pytest.approx(math.exp(-expected * 2 * DAY), rel=1e-6)


def test_estimator_is_finite_when_every_revisit_changed_and_zero_when_none():
    docs = pages((1, 5, 4, NOW - 4 * DAY, NOW), (1, 5, 0, NOW - 4 * DAY, NOW), (1, 5, 9, NOW - 4 * DAY, NOW))
    rates = change_rate(docs)
    assert rates[0] == pytest.approx(math.log(2 * 4 + 1) / DAY)
    assert rates[1] == 0
    assert rates[2] == rates[0]  # a first visit counted as a change is cut to n
    assert freshness(docs, NOW + DAY)[1] == 1


def test_estimator_recovers_a_poisson_rate():
    rng = np.random.default_rng(3)
    rate, interval, revisits = 1 / (3 * DAY), DAY, 2000
    changed = rng.poisson(rate * interval, size=revisits) > 0  # a revisit sees only whether it changed
    docs = pages((1, revisits + 1, int(changed.sum()), NOW - revisits * interval, NOW))
    assert change_rate(docs)[0] == pytest.approx(rate, rel=0.1)


def test_pages_seen_once_borrow_their_sites_then_the_collections_rate():
    docs = pages(
        (1, 11, 5, NOW - 10 * DAY, NOW),  # site 1 has history
        (1, 1, 0, NOW, NOW),  # seen once: site 1's rate
        (2, 1, 0, NOW, NOW),  # site 2 has no history: the collection's
        (2, 0, 0, 0, 0),  # never visited
    )
    rates = change_rate(docs)
    assert rates[1] == rates[0]
    assert rates[2] == rates[0]  # the only history there is
    fresh = freshness(docs, NOW + DAY)
    assert fresh[3] == 0
    assert fresh.dtype == np.float32


def test_prior_when_nothing_is_known():
    docs = pages((1, 1, 0, NOW, NOW))
    assert change_rate(docs)[0] == PRIOR_RATE
    # Half the pages change within 50 days.
    assert freshness(docs, NOW + 50 * DAY)[0] == pytest.approx(0.5, rel=1e-5)


def test_last_modified_after_the_visit_means_stale():
    docs = pages((1, 3, 0, NOW - 2 * DAY, NOW, NOW + 10), (1, 3, 0, NOW - 2 * DAY, NOW, NOW - DAY))
    fresh = freshness(docs, NOW + DAY)
    assert fresh[0] == 0
    assert fresh[1] == 1  # never changed in two revisits, not modified since


def test_clock_before_the_last_visit_counts_no_time():
    docs = pages((1, 3, 1, NOW - 2 * DAY, NOW))
    assert freshness(docs, NOW - 100)[0] == 1
