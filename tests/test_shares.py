"""Sharing a batch among sites by water-filling (wirescrapy/manager/shares.py)."""

from __future__ import annotations

import numpy as np
import pytest

from wirescrapy.manager.shares import site_cap, site_caps


def test_site_cap_is_an_even_share_of_the_batch():
    many = np.full(25, 80)
    assert site_cap(101, 500, many) == 4  # the sample web: 25 sites, K = 5 % of 2029 pages: K // 25
    assert site_cap(100_000, 500, np.full(40, 10_000)) == 500  # WIRE's setting bounds it
    assert site_cap(10, 500, np.full(30, 5)) == 1  # more sites than URLs: one each, at least
    # Sites with fewer candidates than the share leave their slots to the others.
    assert site_cap(100, 500, np.array([1] * 20 + [200] * 5)) == 16  # 20 + 5 × 16 = 100
    assert site_cap(100, 500, np.array([10, 20, 30])) == 500  # everything fits
    assert site_cap(100, 40, np.array([10, 200, 300])) == 40


def test_site_caps_follow_the_site_weights():
    counts = np.array([100, 100, 100, 100])
    assert site_caps(20, 500, counts, np.array([1, 3, 3, 0.75])).tolist() == [2, 8, 8, 2]
    assert site_caps(20, 500, counts, np.full(4, 3.0)).tolist() == [5] * 4  # equal weights: site_cap
    assert site_caps(20, 500, counts, None).tolist() == [5] * 4
    assert site_caps(20, 6, counts, np.array([1, 3, 3, 0.75])).tolist() == [5, 6, 6, 3]  # samesite bounds
    assert site_caps(20, 500, np.array([1, 100, 100]), np.array([1, 3, 1])).tolist() == [1, 14, 4]
    assert site_caps(2, 500, counts, np.array([1, 3, 3, 1])).tolist() == [1] * 4  # at least 1 each
    with pytest.raises(ValueError, match="weights must be > 0"):
        site_caps(20, 500, counts, np.array([1, 0, 3, 1.0]))
