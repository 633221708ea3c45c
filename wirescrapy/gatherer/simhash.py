"""Near-duplicate fingerprints: a 64-bit SimHash of a page's text, its site's template left out.

An exact digest (content-seen) tells copies apart by one changed byte: a date, a counter, the name of a
mirror. SimHash (Charikar) maps a page to 64 bits so that pages sharing most of their word shingles differ in
few bits: each shingle's hash votes for or against each bit, and the page's bit is the majority.

The text is the visible text the parser makes (``ParsedPage.text``), not the markup, so that two templates
around one article compare alike. Words are runs of letters and digits (any non-ASCII byte counts as a
letter), ASCII letters lower-cased; a shingle is ``SHINGLE_WORDS`` words in a row. The hashing and the
SimHash are a small C kernel (``_simhash.c``, which defines the hashes), linear in the text.

A page of too little text (fewer than ``MIN_SHINGLES`` distinct shingles: empty, one word repeated, markup
with no text) has no fingerprint (``None``): nothing tells its copies from pages that merely share a line,
and exact copies of it are content-seen's. A long page keeps its ``MAX_SHINGLES`` smallest shingle hashes, a
sample two copies draw alike: what a page leaves held in memory is bounded whatever a server sends, and the
time is linear in its text, which the fetch's size limit bounds.

The site's template — navigation, headers, footers: text on many of the site's pages — must not decide it,
or every page of a large template would be a copy of every other. ``Fingerprinter`` counts each site's
shingles in a small count-min sketch, and a shingle seen on at least ``TEMPLATE_SHARE`` of the site's pages
(and on ``TEMPLATE_MIN_PAGES``) gets no vote. A site's first ``WARMUP_PAGES`` pages are held back until the
sketch has seen them all, so that its first pages are not fingerprinted with the template in them. The
sketches and the held pages are bounded (``Fingerprinter``), the least recently seen site released first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

import numpy as np

from . import _simhash

SHINGLE_WORDS = 4  # words per shingle: one changed word changes this many shingles (_simhash.c)
MIN_SHINGLES = 8  # distinct shingles below which a page has no fingerprint
MAX_SHINGLES = 8192  # the smallest shingle hashes kept of a long page (a consistent sample)

TEMPLATE_SHARE = 0.4  # a shingle on this share of a site's pages is its template
TEMPLATE_MIN_PAGES = 4  # ... and on at least this many: two or three versions of a page are no template
WARMUP_PAGES = 8  # a site's pages held back until its sketch has seen this many
# Each of the sketch's two rows has 2**15 one-byte counters: a page of MAX_SHINGLES shingles adds a
# quarter of a count to each on average, well under a template's share of the pages.
SKETCH_BITS = 15

_MASK64 = (1 << 64) - 1
_MAX_COUNT = 255  # a sketch counter's largest (uint8)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def word_hashes(text: str) -> np.ndarray:
    """A 64-bit hash per word of ``text`` (uint64, in order)."""
    return np.frombuffer(_simhash.word_hashes(_utf8(text)), np.uint64)


def shingles(text: str) -> np.ndarray:
    """The distinct hashes (uint64) of the text's shingles, at most ``MAX_SHINGLES`` of them: of a longer
    page the smallest, a sample that copies of a page draw alike. Empty if there are fewer than
    ``MIN_SHINGLES``."""
    return np.frombuffer(_simhash.shingles(text, MIN_SHINGLES, MAX_SHINGLES), np.uint64)


def simhash(hashes: np.ndarray, weights: np.ndarray | None = None) -> int | None:
    """The SimHash of shingle ``hashes`` with their int32 ``weights`` (all 1 if None): bit *i* is set when
    the shingles whose hash has bit *i* set outweigh the others. None when no shingle has weight."""
    hashes = np.ascontiguousarray(hashes, np.uint64)
    if weights is not None:
        weights = np.ascontiguousarray(weights, np.int32)
        if len(weights) != len(hashes):
            raise ValueError(f"{len(weights)} weights for {len(hashes)} hashes")
    return _simhash.simhash(hashes, weights)


def hamming(a: int, b: int) -> int:
    """Bits in which two fingerprints differ."""
    return ((a ^ b) & _MASK64).bit_count()


class _Site:
    __slots__ = ("held", "pages", "sketch")

    def __init__(self):
        self.sketch = np.zeros((2, 1 << SKETCH_BITS), np.uint8)
        self.pages = 0
        self.held: list[tuple[Hashable, np.ndarray]] | None = []  # None once warmed up


class Fingerprinter:
    """SimHashes of pages with their site's template left out. ``add`` takes a page's shingles
    (``shingles``) and returns the pages whose fingerprints are now decided, ``(key, fingerprint or None)``:
    none while its site warms up, then all the site's held pages at once, then each page as it comes.
    ``flush`` decides every held page (at the crawl's end). Memory is bounded: at most ``max_sites`` sketches
    and ``max_held`` shingles held; past either, the least recently seen site is dropped, its held pages
    decided with what its sketch has seen."""

    def __init__(self, max_sites: int = 256, max_held: int = 1 << 21):
        if max_sites < 1:
            raise ValueError(f"max_sites must be >= 1, got {max_sites!r}")
        self.max_sites = max_sites
        self.max_held = max_held
        self.held = 0  # shingles of the pages held back, waiting for their site's sketch
        self._sites: OrderedDict[Hashable, _Site] = OrderedDict()

    def add(self, site: Hashable, key: Hashable, hashes: np.ndarray) -> list[tuple[Hashable, int | None]]:
        decided: list[tuple[Hashable, int | None]] = []
        hashes = np.ascontiguousarray(hashes, np.uint64)
        state = self._sites.get(site)
        if state is None:
            state = self._sites[site] = _Site()
        else:
            self._sites.move_to_end(site)
        if state.held is None:
            decided.append((key, _count(state, hashes, fingerprint=True)))
        else:
            _count(state, hashes)
            state.held.append((key, hashes))
            self.held += len(hashes)
            if state.pages >= WARMUP_PAGES:
                decided += self._release(state)
        while len(self._sites) > self.max_sites or self.held > self.max_held:
            _, oldest = self._sites.popitem(last=False)
            decided += self._release(oldest)
        return decided

    def flush(self) -> list[tuple[Hashable, int | None]]:
        decided = []
        for state in self._sites.values():
            decided += self._release(state)
        return decided

    def _release(self, state: _Site) -> list[tuple[Hashable, int | None]]:
        held, state.held = state.held or [], None
        self.held -= sum(len(hashes) for _, hashes in held)
        return [(key, self._fingerprint(state, hashes)) for key, hashes in held]

    @staticmethod
    def _fingerprint(state: _Site, hashes: np.ndarray) -> int | None:
        """The SimHash of the shingles the site's sketch saw on fewer pages than its template's share (the
        count-min estimate: the lesser of a shingle's two counters, at its low bits and at bits 32 on)."""
        return _simhash.template_simhash(hashes, state.sketch, _template(state))


def _template(state: _Site) -> float:
    """The pages a shingle is seen on, at least, to be the site's template."""
    return max(TEMPLATE_MIN_PAGES, TEMPLATE_SHARE * state.pages)


def _count(state: _Site, hashes: np.ndarray, fingerprint: bool = False) -> int | None:
    """Count a page's shingles (each once) in its site's sketch; with ``fingerprint``, return the page's
    fingerprint as ``Fingerprinter._fingerprint`` makes it, in the same pass over the shingles. Counters
    that would overflow halve, with the page count: the template is then what the site's recent pages
    share."""
    if state.pages >= _MAX_COUNT:
        state.sketch >>= 1
        state.pages >>= 1
    state.pages += 1
    # two shingles of a page in one counter count it once
    if not fingerprint:
        _simhash.sketch_count(state.sketch, hashes)
        return None
    return _simhash.sketch_count(state.sketch, hashes, _template(state))
