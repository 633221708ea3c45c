"""First-fit allocation of space in a large file: WIRE's free-space list (thesis §7.3.2).

The allocator is pure bookkeeping (no I/O): it hands out byte offsets for extents of a given size, takes
extents back, and knows where the used part of the file ends. The page store and the link graph keep
it in memory only; on open it is rebuilt from the live extents named by their index (``rebuild``), so
a kill can never leave the free list and the index disagreeing.

Policy
    *First fit*: ``allocate(size)`` returns the lowest-offset free extent that is large enough, or
    ``end`` (growing the file) when none is. Sizes are rounded up to the *granularity* (a power of two,
    64 bytes by default), so every offset is a multiple of it. Freed extents are coalesced with free
    neighbours, and a free extent that reaches ``end`` moves ``end`` back instead.

Structure (exact first fit without scanning the free list)
    Free extents are kept in two dicts, start → size and end → start (O(1) coalescing), and indexed
    by *size class*: the size in granularity units. Below ``max_class`` every size has its own class,
    a heap of the starts of the free extents of exactly that size (entries are deleted lazily: an
    entry is live while start → size still holds that size). ``cmin[k]`` is the lowest live start of
    class *k*, and ``bmin[b]`` the lowest ``cmin`` in block *b* of ``B ≈ √classes`` classes. The lowest
    start among all extents of size ≥ *n* is ``min(cmin[n:end of n's block])`` against ``min(bmin[later
    blocks])``: two scans of ≈ √classes list items done in C, then ``list.index`` to find the class.
    Extents of ``max_class`` or more share one last class, a list sorted by start: any of them fits a
    request below ``max_class``, so its head competes like any class head; a request of ``max_class``
    or more scans that list in offset order (it is short: big free extents are few).

Exactness
    The result is exactly the first fit over the rounded sizes: the same offsets as a linear scan of
    a free list sorted by offset (``tests/test_allocator.py`` checks this against such a reference,
    ``wirescrapy/testing/naive_allocator.py``).

Costs
    ``allocate`` and ``free`` do O(√classes) C-level work plus O(log n) heap operations, where a linear
    scan of the free list is O(free extents) (timings: ``benchmarks/pagestore.py``).
    Lazily deleted heap entries are bounded: the heaps are rebuilt when they hold more than twice the
    free extents.
"""

from __future__ import annotations

import bisect
from heapq import heapify, heappop, heappush

import numpy as np

_NONE = 1 << 62  # "no free extent": above any start


class OverlapError(ValueError):
    """Live extents given to ``rebuild`` overlap, or lie outside the allocatable space."""


class FirstFitAllocator:
    """Exact first-fit allocator over ``[base, ∞)`` with sizes rounded to ``granularity`` bytes.

    Zero-size extents take no space: ``allocate(0)`` returns ``end`` and ``free(offset, 0)`` does
    nothing.
    """

    def __init__(self, granularity: int = 64, base: int = 0, max_class: int = 1 << 16):
        if granularity < 1 or granularity & (granularity - 1):
            raise ValueError(f"granularity must be a power of two, not {granularity}")
        if base < 0 or base % granularity:
            raise ValueError(f"base {base} is not a multiple of the granularity {granularity}")
        self.granularity = granularity
        self.base = base
        self._shift = granularity.bit_length() - 1
        self._mask = granularity - 1
        # Size classes 1 .. C-1 are exact; class C holds every extent of C units or more.
        self._C = max(2, -(-max_class // granularity))
        self._B = 1 << max(1, self._C.bit_length() // 2)
        self._reset(base >> self._shift)

    def _reset(self, end_units: int) -> None:
        C, B = self._C, self._B
        nblocks = C // B + 2  # the last block is always empty, so "later blocks" is never empty
        self._cmin = [_NONE] * (nblocks * B)
        self._bmin = [_NONE] * nblocks
        self._heaps: list[list[int]] = [[] for _ in range(C)]
        self._huge: list[int] = []
        self._fstart: dict[int, int] = {}
        self._fend: dict[int, int] = {}
        self._entries = 0
        self._end = end_units

    # -- queries ---------------------------------------------------------------------------------

    @property
    def end(self) -> int:
        """Offset just past the last allocated byte (the used length of the file)."""
        return self._end << self._shift

    @property
    def free_bytes(self) -> int:
        """Bytes in free extents below ``end``."""
        return sum(self._fstart.values()) << self._shift

    def __len__(self) -> int:
        """Number of free extents."""
        return len(self._fstart)

    def extents(self) -> list[tuple[int, int]]:
        """The free extents as (offset, size) in bytes, by offset."""
        shift = self._shift
        return [(s << shift, n << shift) for s, n in sorted(self._fstart.items())]

    def rounded(self, size: int) -> int:
        """Bytes that an extent of ``size`` bytes occupies."""
        return ((size + self._mask) >> self._shift) << self._shift

    # -- class index maintenance -----------------------------------------------------------------

    def _drop(self, s: int, n: int) -> None:
        """Extent (s, n) has left the free set (the dicts are already updated): fix its class head."""
        if n >= self._C:
            huge = self._huge
            i = bisect.bisect_left(huge, s)
            del huge[i]
            if i:
                return
            head = huge[0] if huge else _NONE
            n = self._C
        else:
            heap = self._heaps[n]
            if heap[0] != s:
                return  # not the head: its entry dies lazily
            heappop(heap)
            self._entries -= 1
            fstart = self._fstart
            while heap and fstart.get(heap[0]) != n:
                heappop(heap)
                self._entries -= 1
            head = heap[0] if heap else _NONE
        cmin = self._cmin
        old = cmin[n]
        cmin[n] = head
        B = self._B
        b = n // B
        if old == self._bmin[b]:
            lo = b * B
            self._bmin[b] = min(cmin[lo : lo + B])

    def _add(self, s: int, n: int) -> None:
        """Extent (s, n) has joined the free set (the dicts are already updated)."""
        if n >= self._C:
            huge = self._huge
            bisect.insort(huge, s)
            if huge[0] != s:
                return
            n = self._C
        else:
            heappush(self._heaps[n], s)
            self._entries += 1
            if self._entries > 2 * len(self._fstart) + 4096:
                self._compact()
            if s >= self._cmin[n]:
                return
        self._cmin[n] = s
        b = n // self._B
        if s < self._bmin[b]:  # noqa: PLR1730 -- on the hot path an if costs less than min()
            self._bmin[b] = s

    def _compact(self) -> None:
        """Drop the lazily deleted heap entries."""
        C = self._C
        heaps = [[] for _ in range(C)]
        for s, n in self._fstart.items():
            if n < C:
                heaps[n].append(s)
        for heap in heaps:
            heapify(heap)
        self._heaps = heaps
        self._entries = sum(map(len, heaps))

    # -- verbs -------------------------------------------------------------------------------------

    def allocate(self, size: int) -> int:
        """Offset of a free extent of ``size`` bytes (rounded up), chosen first-fit."""
        n = (size + self._mask) >> self._shift
        fstart = self._fstart
        if not fstart or n <= 0:
            s = self._end
            self._end = s + max(n, 0)
            return s << self._shift
        C = self._C
        if n < C:
            B = self._B
            cmin = self._cmin
            bmin = self._bmin
            b = n // B
            s = min(cmin[n : b * B + B])
            later = min(bmin[b + 1 :])
            if later < s:  # noqa: PLR1730 -- on the hot path an if costs less than min()
                s = later
            if s == _NONE:
                s = self._end
                self._end = s + n
                return s << self._shift
        else:
            for s in self._huge:
                if fstart[s] >= n:
                    break
            else:
                s = self._end
                self._end = s + n
                return s << self._shift
        size_units = fstart.pop(s)
        self._drop(s, size_units)
        if size_units == n:
            del self._fend[s + n]
        else:
            rest = s + n
            fstart[rest] = size_units - n
            self._fend[s + size_units] = rest
            self._add(rest, size_units - n)
        return s << self._shift

    def free(self, offset: int, size: int) -> None:
        """Give back the extent at ``offset`` of ``size`` bytes (as passed to ``allocate``)."""
        n = (size + self._mask) >> self._shift
        if n <= 0:
            return
        s = offset >> self._shift
        e = s + n
        fstart = self._fstart
        fend = self._fend
        left = fend.pop(s, None)
        if left is not None:
            self._drop(left, fstart.pop(left))
            s = left
        right = fstart.pop(e, None)
        if right is not None:
            del fend[e + right]
            self._drop(e, right)
            e += right
        if e == self._end:
            self._end = s
        else:
            fstart[s] = e - s
            fend[e] = s
            self._add(s, e - s)

    def rebuild(self, offsets, sizes) -> None:
        """Forget everything and derive the free list from the live extents (byte offsets and sizes).

        The free extents are the gaps between the live ones; ``end`` is the end of the last live one.
        Raises ``OverlapError`` if live extents overlap, are misaligned, or start below ``base``.
        """
        offsets = np.asarray(offsets, dtype=np.int64).ravel()
        sizes = np.asarray(sizes, dtype=np.int64).ravel()
        if offsets.shape != sizes.shape:
            raise ValueError("offsets and sizes differ in length")
        used = sizes > 0
        offsets, sizes = offsets[used], sizes[used]
        base = self.base >> self._shift
        if len(offsets) == 0:
            self._reset(base)
            return
        if (offsets & self._mask).any():
            raise OverlapError(f"extent offsets must be multiples of {self.granularity}")
        order = np.argsort(offsets, kind="stable")
        starts = offsets[order] >> self._shift
        ends = starts + ((sizes[order] + self._mask) >> self._shift)
        if starts[0] < base:
            raise OverlapError(f"extent at {int(starts[0]) << self._shift} below base {self.base}")
        clash = np.flatnonzero(starts[1:] < ends[:-1])
        if len(clash):
            i = int(clash[0])
            raise OverlapError(
                f"extents overlap: [{int(starts[i]) << self._shift}, {int(ends[i]) << self._shift}) and "
                f"[{int(starts[i + 1]) << self._shift}, {int(ends[i + 1]) << self._shift})"
            )
        self._reset(int(ends[-1]))
        gap_starts = np.concatenate(([base], ends[:-1]))
        gap_sizes = starts - gap_starts
        gap = gap_sizes > 0
        gap_starts, gap_sizes = gap_starts[gap], gap_sizes[gap]
        self._fstart = dict(zip(gap_starts.tolist(), gap_sizes.tolist()))
        self._fend = dict(zip((gap_starts + gap_sizes).tolist(), gap_starts.tolist()))
        # Gaps come sorted by start, so each class's starts (a stable sort keeps that order) are
        # already a heap and the class head is its first entry.
        C = self._C
        classes = np.minimum(gap_sizes, C)
        by_class = np.argsort(classes, kind="stable")
        classes, class_starts = classes[by_class], gap_starts[by_class]
        found, first = np.unique(classes, return_index=True)
        bounds = np.append(first, len(classes))
        for k, lo, hi in zip(found.tolist(), bounds[:-1].tolist(), bounds[1:].tolist()):
            members = class_starts[lo:hi].tolist()
            if k == C:
                self._huge = members
            else:
                self._heaps[k] = members
                self._entries += len(members)
            self._cmin[k] = members[0]
        B = self._B
        self._bmin = [min(self._cmin[lo : lo + B]) for lo in range(0, len(self._cmin), B)]
