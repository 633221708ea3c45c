"""A site's sections, the links that reach a page from outside its own section (the score "crosslinks"), and
a page's copies in the site's other sections (the score "mirrors").

A site's *section* is the first segment of its URL paths' directories: ``/en/mod/core.html`` is in section
``en``, ``/library/os.html`` in ``library``; a page at the top of the site (``/``, ``/index.html``,
``/classFoo.html``) is in the site's root section. Pages of other sites are in other sections.

Why the links from other sections
    PageRank on the graph crawled so far favours the part of a site crawled most: its fetched pages link
    to each other's unfetched neighbours through their navigation (side bars, "next", the section's
    index), so the rank the crawl has put into a section flows back to the rest of that section. When a
    site's first levels look alike — the language trees of a manual, each index linking its own tree —
    the first tree that gets ahead (by a tie broken on out-degree) keeps the site's share of the batches.
    A link from another section is not navigation of the section the page is in: it is a cross-reference
    (a tutorial citing a library module, a translation's language bar pointing to the complete version of
    a page), the links that make a page important beyond its own corner of the site — the idea of counting
    only links from other hosts (Kleinberg 1999; Bharat & Henzinger 1998), applied to a site's sections.
    Counted from distinct fetched pages, it is evidence a crawler has at that point; a small weight beside
    PageRank breaks the near-ties among a section's candidates towards the pages other parts of the web
    refer to (``benchmarks/crawl_order.py --web real``).

Why a page's copies in other sections (``mirrors``)
    Many sites repeat one tree under several first directories: a manual's languages (``/en/sitemap.html``,
    ``/ru/sitemap.html``), a library's versions. Each tree's navigation pages (its site map, module index,
    glossary) collect the in-links of their own tree, so they are among the site's most linked pages; but a
    tree's navigation shows in the graph crawled so far only once that tree has been crawled, and trees are
    found one at a time. Until then its navigation pages have one in-link each (the language bar of their
    copy in another tree), like any of its pages. The copies already crawled say what such a page is: the
    mean PageRank of the pages of the site with the same path after the first directory (the page itself
    included) gives the translation of a well-linked page a share of its rank, and leaves a page with no
    copies its own. Pages at the top of the site are their own group (``/index.html`` is not a copy of
    ``/en/index.html``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_matrix

from wirescrapy.collection.urls import PathArrays


def _first_directory(path: bytes) -> tuple[bytes, bytes, bytes]:
    """``path`` without its query, split after its first directory: (first segment, b"/" or b"", the rest)."""
    return path.split(b"?", 1)[0].split(b"#", 1)[0].lstrip(b"/").partition(b"/")


def section(path: bytes) -> bytes:
    """The section of a URL path: its first directory segment, b"" for a page at the site's top (no
    further ``/`` after the leading one; the query does not count)."""
    first, slash, _ = _first_directory(path)
    return first if slash else b""


def group_ids(
    urls: PathArrays | Iterable[tuple[int, bytes]], *keys: Callable[[bytes], bytes]
) -> list[np.ndarray]:
    """For each of ``keys`` (``section`` or ``mirror_path``), a number per URL (int64, in the order
    given, from 1 in the order groups first appear) that is equal for two URLs exactly when they are of the
    same site and their paths have the same key. ``urls``: (site-id, path) pairs, or the same as arrays
    (``URLStore.path_arrays``, which a manager run reads).

    A manager run groups every URL of the collection, so the paths are cut with numpy over their bytes, not
    one by one: each key is a tag (the ``/`` that starts a mirror path) and a piece of the
    path, hashed eight bytes at a time. Each URL is then compared byte by byte with the first URL of its
    hash, and a group whose hashes collide is split again: the groups are exact."""
    unknown = [key for key in keys if key not in _PIECES]
    if unknown:
        raise ValueError(f"no grouping by {unknown}; the keys are section and mirror_path")
    paths = urls if isinstance(urls, PathArrays) else _path_arrays(urls)
    count = len(paths.site_ids)
    if not count:
        return [np.zeros(0, dtype=np.int64) for _ in keys]
    sites, lengths = np.asarray(paths.site_ids), np.asarray(paths.lengths, dtype=np.int64)
    if sites.min() < 0 or int(sites.max()) >> 32 or lengths.max() >> 24:
        raise ValueError("site-ids must be 32-bit unsigned numbers, paths shorter than 2^24 bytes")
    data, starts = paths.data, np.asarray(paths.starts, dtype=np.int64)
    if starts.min() < _PAD or int((starts + lengths).max()) + _PAD > len(data):
        data = np.concatenate([np.zeros(_PAD, np.uint8), data, np.zeros(_PAD, np.uint8)])
        starts = starts + _PAD
    words = np.ndarray((len(data) - 7,), "<u8", data, 0, (1,))  # element i: the 8 bytes from byte i on
    found = [_Keys(count) for _ in keys]
    chunks = list(_chunks(lengths))
    for lo, hi in chunks:
        cut = _cut(data, starts[lo:hi], lengths[lo:hi])
        head = sites[lo:hi].astype(np.uint64) << np.uint64(32)
        for key, out in zip(keys, found):
            out.put(lo, hi, head, *_PIECES[key](cut, data, words), words)
    del sites, starts, lengths
    return [out.numbered(chunks, data, words) for out in found]


# Bytes around the paths (zeros if they must be added), so that the 16 bytes before or after any place in a
# path lie in the array.
_PAD = 16
# URLs and bytes of path handled at once: each step's arrays stay in the processor's caches.
_CHUNK_URLS = 1 << 16
_CHUNK_BYTES = 1 << 21


def _path_arrays(urls: Iterable[tuple[int, bytes]]) -> PathArrays:
    """(site-id, path) pairs as ``PathArrays``."""
    pairs = list(urls)
    paths = [path for _, path in pairs]
    lengths = np.fromiter(map(len, paths), dtype=np.int64, count=len(paths))
    data = np.frombuffer(b"".join(chain([bytes(_PAD)], paths, [bytes(_PAD)])), dtype=np.uint8)
    sites = np.array([site_id for site_id, _ in pairs], dtype=np.int64)
    return PathArrays(sites, np.cumsum(lengths) - lengths + _PAD, lengths, data)


def _chunks(lengths: np.ndarray) -> Iterable[tuple[int, int]]:
    """Ranges of at most ``_CHUNK_URLS`` URLs and about ``_CHUNK_BYTES`` bytes of path."""
    ends = np.cumsum(lengths)
    lo = 0
    while lo < len(lengths):
        by_bytes = int(np.searchsorted(ends, ends[lo] - lengths[lo] + _CHUNK_BYTES, side="right"))
        hi = min(max(by_bytes, lo + 1), lo + _CHUNK_URLS)
        yield lo, hi
        lo = hi


class _Cut(NamedTuple):
    """Positions in the padded bytes, for each path of a range."""

    start: np.ndarray  # its first byte
    end: np.ndarray  # where its query or fragment begins, or it ends
    top: np.ndarray  # its first byte after the leading slashes
    slash: np.ndarray  # the slash after its first directory, if ``directory``
    directory: np.ndarray  # whether it has one (bool)


def _cut(data: np.ndarray, start: np.ndarray, length: np.ndarray) -> _Cut:
    """Where the pieces of each path are (``_first_directory``), found in sorted lists of the positions of a
    few bytes in the range."""
    lo, hi = int(start.min()), int((start + length).max())
    part = data[lo:hi]

    def marks(*chars: bytes) -> np.ndarray:
        """Positions of ``chars``, between -1 and ``hi`` + 1: each search below finds one."""
        found = part == ord(chars[0])
        for char in chars[1:]:
            found |= part == ord(char)
        return np.concatenate([[-1], np.flatnonzero(found) + lo, [hi + 1]])

    queries = marks(b"?", b"#")
    end = np.minimum(queries[np.searchsorted(queries, start)], start + length)
    slashes = marks(b"/")
    # For each slash, the index of the first slash after its run of consecutive slashes.
    run = np.ones(len(slashes), dtype=bool)
    run[1:] = np.diff(slashes) != 1
    past_run = np.append(np.flatnonzero(run[1:]) + 1, len(slashes))[np.cumsum(run) - 1]
    at = np.searchsorted(slashes, start)
    leading = slashes[at] == start
    top = np.where(leading, np.minimum(slashes[past_run[at] - 1] + 1, end), start)
    # The first slash after the leading ones (if they reach ``end``, one after it: there is no directory).
    slash = slashes[np.where(leading, past_run[at], at)]
    directory = slash < end
    return _Cut(start, end, top, slash, directory)


def _section_piece(cut: _Cut, data: np.ndarray, words: np.ndarray):
    """``section``: the first directory, or nothing."""
    return 0, cut.top, np.where(cut.directory, cut.slash - cut.top, 0)


def _mirror_piece(cut: _Cut, data: np.ndarray, words: np.ndarray):
    """``mirror_path``: tag 1 for a leading ``/`` (that of a page at the top, or one the rest starts with),
    and the bytes after it."""
    rest = cut.slash + 1
    lead = cut.directory & (rest < cut.end) & (data[rest] == ord("/"))
    begin = np.where(cut.directory, rest + lead, cut.top)
    return (lead | ~cut.directory).astype(np.uint64), begin, cut.end - begin


_MASKS = np.array([(1 << 8 * n) - 1 for n in range(9)], dtype=np.uint64)  # the first n bytes of a word
_LENGTH = np.uint64((1 << 24) - 1)  # a head's bits that hold the piece's length
_ODD = 0x9E3779B97F4A7C15  # 2^64 / golden ratio, odd: its multiples modulo 2^64 salt a word's place


class _Keys:
    """Each URL's key, as a piece of its path (``begin``: a position in the padded bytes) and a ``head``: its
    site (the high 32 bits), the key's tag (8 bits) and the piece's length (24 bits). Two URLs have the same
    site and key exactly when their heads and pieces are equal. ``hashed``: a hash of head and piece, with the
    URL's index in its low ``bits`` (``_numbered_by_hash``)."""

    def __init__(self, count: int):
        self.bits = max(1, (count - 1).bit_length())
        self.head = np.empty(count, dtype=np.uint64)
        self.begin = np.empty(count, dtype=np.int64)
        self.hashed = np.empty(count, dtype=np.uint64)

    def put(self, lo: int, hi: int, site, tag, begin: np.ndarray, length: np.ndarray, words: np.ndarray):
        """Set URLs ``lo`` to ``hi``: ``site`` already shifted to its bits of the head."""
        head = site | np.asarray(tag, dtype=np.uint64) << np.uint64(24) | length.astype(np.uint64)
        self.head[lo:hi], self.begin[lo:hi] = head, begin
        # The hash mixes the head into the sum (modulo 2^64) of the piece's words, each mixed with its place.
        hashes = _mix(words[begin] & _MASKS[np.minimum(length, 8)])
        for place, which, word in _words(words, begin, length):
            hashes[which] += _mix(word ^ np.uint64(place * _ODD % (1 << 64)))
        hashes = _mix(hashes ^ _mix(head)) >> np.uint64(self.bits) << np.uint64(self.bits)
        self.hashed[lo:hi] = hashes | np.arange(lo, hi, dtype=np.uint64)

    def numbered(self, chunks: list[tuple[int, int]], data: np.ndarray, words: np.ndarray) -> np.ndarray:
        """Numbers of the groups of equal keys: by hash, then checked byte by byte (``chunks`` of URLs at a
        time)."""
        number, model = _numbered_by_hash(self.hashed, self.bits)
        del self.hashed
        apart = np.concatenate(
            [lo + np.flatnonzero(self._differ(lo, hi, model[lo:hi], words)) for lo, hi in chunks]
        )
        number = self._split(number, model, apart, data) if len(apart) else number
        del self.head, self.begin  # let go of them before the next key is numbered
        return number

    def _differ(self, lo: int, hi: int, model: np.ndarray, words: np.ndarray) -> np.ndarray:
        """Whether the keys of URLs ``lo`` to ``hi`` differ from those of URLs ``model``."""
        head = self.head[lo:hi]
        differ = head != self.head[model]
        checked = np.flatnonzero(~differ & (model != np.arange(lo, hi)))
        length = (head[checked] & _LENGTH).astype(np.int64)
        mine, theirs = self.begin[lo:hi][checked], self.begin[model[checked]]
        same = ((words[mine] ^ words[theirs]) & _MASKS[np.minimum(length, 8)]) == 0
        for (_, which, word), (_, _, other) in zip(
            _words(words, mine, length), _words(words, theirs, length)
        ):
            same[which] &= word == other
        differ[checked] = ~same
        return differ

    def _split(
        self, number: np.ndarray, model: np.ndarray, apart: np.ndarray, data: np.ndarray
    ) -> np.ndarray:
        """``number`` with the groups of ``apart`` (URLs whose keys differ from the first URL of their hash)
        split by their keys, compared as bytes: a new group takes its place in the order groups first appear,
        and the groups that appear after it move up by one."""

        def key(url: int) -> tuple[int, bytes]:
            head, begin = int(self.head[url]), int(self.begin[url])
            return head, data[begin : begin + (head & int(_LENGTH))].tobytes()

        hit = np.zeros(int(number.max()) + 1, dtype=bool)
        hit[number[apart]] = True
        urls = np.flatnonzero(hit[number])
        new_group = np.full(len(urls), -1)
        new: dict[tuple[int, bytes], int] = {}  # a new group's key, and its place among the new ones
        new_firsts: list[int] = []  # each new group's first URL
        for place, url in enumerate(urls.tolist()):
            mine = key(url)
            if mine != key(int(model[url])):
                if mine not in new:
                    new[mine] = len(new_firsts)
                    new_firsts.append(url)
                new_group[place] = new[mine]
        firsts = np.flatnonzero(model == np.arange(len(model)))  # each old group's first URL, by number
        earlier = np.searchsorted(firsts, new_firsts)  # the old groups that appear before each new one
        number = number + np.searchsorted(earlier, number - 1, side="right")
        moved = new_group >= 0
        number[urls[moved]] = (earlier + np.arange(1, len(earlier) + 1))[new_group[moved]]
        return number


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, in place: every bit of the input changes about half the output's bits."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _words(words: np.ndarray, begin: np.ndarray, length: np.ndarray):
    """The pieces' words after their first, place by place: (place from 1, the pieces that have a word
    there, their words there). A word's bytes past the piece are zeros."""
    which = np.arange(len(begin))
    place = 1
    while True:
        which = which[length[which] > 8 * place]
        if not len(which):
            return
        yield place, which, words[begin[which] + 8 * place] & _MASKS[np.minimum(length[which] - 8 * place, 8)]
        place += 1


def _numbered_by_hash(hashed: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """For URLs whose ``hashed`` hold a hash in their high bits and the URL's index in their low ``bits``:
    numbers, equal for equal hashes, 1, 2, ... in the order the hashes first appear; and for each URL the
    first URL of its hash, from one sort of the plain numbers rather than an argsort. Sorts ``hashed``."""
    count = len(hashed)
    hashed.sort()
    order = np.empty(count, dtype=np.int64)
    np.bitwise_and(hashed, np.uint64((1 << bits) - 1), out=order.view(np.uint64))
    hashed >>= np.uint64(bits)
    new = np.ones(count, dtype=bool)
    np.not_equal(hashed[1:], hashed[:-1], out=new[1:])
    # Where each hash begins in the sorted order, then its first URL there: the indexes lie in order.
    index = np.arange(count)
    first = hashed.view(np.int64)
    np.multiply(new, index, out=first)
    np.maximum.accumulate(first, out=first)
    np.take(order, first, out=first)
    model = np.empty(count, dtype=np.int64)
    model[order] = first
    number = np.cumsum(model == index, out=order)  # each hash's number, by where it first appears
    return np.take(number, model, out=index), model


def section_ids(urls: Iterable[tuple[int, bytes]]) -> np.ndarray:
    """``group_ids`` by section."""
    return group_ids(urls, section)[0]


def cross_section_links(links: csr_matrix, section_of: np.ndarray) -> np.ndarray:
    """For each doc-id (float64, entry 0 = 0), the distinct pages that link to it from another section
    (``section_of``, indexed by doc-id; other sites' pages count as other sections). ``links``: the link
    counts indexed by doc-id, as ``LinkGraph.to_csr`` gives them (a pair linked twice counts once)."""
    section_of = np.asarray(section_of)
    size = links.shape[0]
    if links.shape != (size, size) or section_of.shape != (size,):
        raise ValueError(
            f"links must be square and section_of must have one entry per row; got {links.shape} "
            f"and {section_of.shape}"
        )
    if not links.has_canonical_format:
        links = links.copy()
        links.sum_duplicates()
    sources = np.repeat(np.arange(size), np.diff(links.indptr))
    targets = links.indices
    across = (section_of[sources] != section_of[targets]) & (links.data > 0)
    return np.bincount(targets[across], minlength=size).astype(np.float64)


def mirror_path(path: bytes) -> bytes:
    """The part of a URL path that its copies in the site's other sections share: the path after its first
    directory, or the whole path (with its leading ``/``) for a page at the site's top; the query does not
    count."""
    first, slash, rest = _first_directory(path)
    return rest if slash else b"/" + first


# How ``group_ids`` finds each key in the paths' bytes.
_PIECES = {section: _section_piece, mirror_path: _mirror_piece}


def mirror_ids(urls: Iterable[tuple[int, bytes]]) -> np.ndarray:
    """``group_ids`` by ``mirror_path``: equal for a site's pages that are copies of each other in its
    sections."""
    return group_ids(urls, mirror_path)[0]


def mirrored(scores: np.ndarray, mirror_of: np.ndarray) -> np.ndarray:
    """For each doc-id (float64, entry 0 = 0), the mean of ``scores`` over the pages of its group
    (``mirror_of``, indexed by doc-id, ``mirror_ids``; entry 0 unused), the page itself included."""
    mirror_of = np.asarray(mirror_of)
    if mirror_of.shape != np.shape(scores):
        raise ValueError(
            f"scores and mirror_of must be aligned; got {np.shape(scores)} and {mirror_of.shape}"
        )
    groups = mirror_of[1:].astype(np.int64)
    total = np.bincount(groups, weights=np.asarray(scores, dtype=np.float64)[1:])
    count = np.bincount(groups, minlength=len(total))
    out = np.zeros(len(mirror_of))
    out[1:] = total[groups] / count[groups]
    return out
