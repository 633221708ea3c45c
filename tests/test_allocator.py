from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wirescrapy.collection.allocator import FirstFitAllocator, OverlapError
from wirescrapy.testing.naive_allocator import NaiveFirstFit


def test_allocates_at_end_then_reuses_lowest_fit():
    a = FirstFitAllocator(granularity=16, base=64)
    offsets = [a.allocate(n) for n in (100, 20, 300, 20, 50)]
    assert offsets == [64, 176, 208, 512, 544]
    assert a.end == 608
    a.free(176, 20)  # 32 bytes free at 176
    a.free(512, 20)  # 32 bytes free at 512
    assert a.allocate(30) == 176  # the lowest of the two that fit
    assert a.allocate(40) == 608  # neither 32-byte hole fits: grow
    assert a.allocate(1) == 512


def test_rounds_to_granularity():
    a = FirstFitAllocator(granularity=64)
    assert a.rounded(1) == 64 and a.rounded(64) == 64 and a.rounded(65) == 128
    assert a.allocate(1) == 0
    assert a.allocate(65) == 64
    assert a.end == 192


def test_coalesces_neighbours_and_moves_end_back():
    a = FirstFitAllocator(granularity=16)
    offsets = [a.allocate(16) for _ in range(5)]
    a.free(offsets[1], 16)
    a.free(offsets[3], 16)
    assert a.extents() == [(16, 16), (48, 16)]
    a.free(offsets[2], 16)  # joins both neighbours
    assert a.extents() == [(16, 48)]
    assert len(a) == 1
    a.free(offsets[4], 16)  # touches end: end moves back over the whole free run
    assert a.extents() == []
    assert a.end == 16
    assert a.free_bytes == 0


def test_zero_size_extents_take_no_space():
    a = FirstFitAllocator(granularity=16)
    a.allocate(16)
    assert a.allocate(0) == 16
    a.free(16, 0)
    assert a.end == 16 and a.extents() == []


def test_huge_requests_scan_big_extents_in_offset_order():
    a = FirstFitAllocator(granularity=16, max_class=256)
    big = [a.allocate(n) for n in (1024, 16, 4096, 16, 2048, 16)]
    for offset, size in ((big[0], 1024), (big[2], 4096), (big[4], 2048)):
        a.free(offset, size)
    assert a.allocate(2000) == big[2]  # the 1024 extent is lower but too small
    assert a.allocate(1000) == big[0]
    assert a.allocate(100) == big[2] + 2000  # the 16 bytes left at 1008 are too few


def test_rebuild_derives_gaps_and_end():
    a = FirstFitAllocator(granularity=16, base=64)
    a.rebuild([64, 160, 400], [20, 16, 100])
    assert a.extents() == [(96, 64), (176, 224)]
    assert a.end == 512
    assert a.allocate(50) == 96
    a.rebuild([], [])
    assert a.end == 64 and a.extents() == []


@pytest.mark.parametrize(
    "offsets, sizes",
    [([64, 80], [32, 16]), ([72], [16]), ([0], [16])],
    ids=["overlap", "misaligned", "below-base"],
)
def test_rebuild_rejects_bad_extents(offsets, sizes):
    a = FirstFitAllocator(granularity=16, base=64)
    with pytest.raises(OverlapError):
        a.rebuild(offsets, sizes)


def test_rejects_bad_configuration():
    with pytest.raises(ValueError):
        FirstFitAllocator(granularity=48)
    with pytest.raises(ValueError):
        FirstFitAllocator(granularity=64, base=32)


def test_lazy_entries_are_compacted():
    a = FirstFitAllocator(granularity=1, max_class=64)
    live = [a.allocate(1) for _ in range(20000)]
    for offset in live[::2]:  # 10000 one-byte holes
        a.free(offset, 1)
    for offset in live[1:-1:2]:  # each free coalesces two holes away from their heap heads
        a.free(offset, 1)
    assert a._entries <= 2 * len(a) + 4096
    assert a.extents() == [(0, 19999)]
    assert a.allocate(5) == 0


@settings(max_examples=300, deadline=None)
@given(
    granularity=st.sampled_from([1, 4, 16]),
    max_class=st.sampled_from([8, 64, 1024]),
    ops=st.lists(
        st.tuples(st.booleans(), st.integers(0, 300), st.integers(0, 10**6)),
        min_size=1,
        max_size=150,
    ),
)
def test_matches_reference_first_fit(granularity, max_class, ops):
    a = FirstFitAllocator(granularity=granularity, max_class=max_class)
    ref = NaiveFirstFit(granularity)
    live = []
    for is_alloc, size, pick in ops:
        if is_alloc or not live:
            offset = a.allocate(size)
            assert offset == ref.allocate(size)
            live.append((offset, size))
        else:
            offset, size = live.pop(pick % len(live))
            a.free(offset, size)
            ref.free(offset, size)
        assert a.extents() == ref.extents()
        assert a.end == ref.end
    spans = sorted((o, o + a.rounded(s)) for o, s in live if s)
    assert all(e <= s for (_, e), (s, _) in pairwise(spans)), "live extents overlap"
    free = a.extents()
    assert all(o + n < p for (o, n), (p, _) in pairwise(free)), "adjacent free extents not coalesced"
    # The free list is exactly the gaps between live extents: rebuilding gives the same state.
    b = FirstFitAllocator(granularity=granularity, max_class=max_class)
    b.rebuild([o for o, _ in live], [s for _, s in live])
    assert b.extents() == free and b.end == a.end
    for size in (1, 7, 40, 300):
        assert b.allocate(size) == a.allocate(size) == ref.allocate(size)
