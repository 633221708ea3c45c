"""The naive first fit: the reference ``tests/test_allocator.py`` checks ``FirstFitAllocator`` against, and
the baseline ``benchmarks/pagestore.py`` measures it against. A fixture: no crawler code uses it.
"""

from __future__ import annotations

import bisect


class NaiveFirstFit:
    """First-fit by definition: a free list sorted by offset, scanned from the start.

    The tests check ``FirstFitAllocator`` against it, and the benchmark measures it as the naive baseline.
    """

    def __init__(self, granularity: int, base: int = 0):
        self.granularity = granularity
        self.end = base
        self.starts = []
        self.sizes = []

    def _round(self, size):
        return -(-size // self.granularity) * self.granularity

    def allocate(self, size):
        size = self._round(size)
        if size == 0:
            return self.end
        for i, free in enumerate(self.sizes):
            if free >= size:
                offset = self.starts[i]
                if free == size:
                    del self.starts[i], self.sizes[i]
                else:
                    self.starts[i] += size
                    self.sizes[i] -= size
                return offset
        offset = self.end
        self.end += size
        return offset

    def free(self, offset, size):
        start, end = offset, offset + self._round(size)
        if start == end:
            return
        i = bisect.bisect_left(self.starts, start)
        if i < len(self.starts) and self.starts[i] == end:
            end += self.sizes[i]
            del self.starts[i], self.sizes[i]
        if i and self.starts[i - 1] + self.sizes[i - 1] == start:
            i -= 1
            start = self.starts[i]
            del self.starts[i], self.sizes[i]
        if end == self.end:
            self.end = start
        else:
            self.starts.insert(i, start)
            self.sizes.insert(i, end - start)

    def extents(self):
        return list(zip(self.starts, self.sizes))
