"""A site's sections and kinds of pages, the links that reach a page from outside its own section (the score
"crosslinks"), and a page's copies in the site's other sections (the score "mirrors").

A site's *section* is the first segment of its URL paths' directories: ``/en/mod/core.html`` is in section
``en``, ``/library/os.html`` in ``library``; a page at the top of the site (``/``, ``/index.html``,
``/classFoo.html``) is in the site's root section. Pages of other sites are in other sections. A page's
*kind* is its section and, when its file name has one of the prefixes or suffixes that documentation
generators give a kind of page (Doxygen's ``class``, ``struct``, ``group__``, ``dir_``, ``namespace``,
``_source``, ...), that affix: ``/classFoo.html`` is of kind ``|class``, ``/Matrix_8h_source.html`` of
``|_source``, ``/en/mod/core.html`` of ``en``.

Why kinds of pages (``WIRE_BATCH_SITE_UNSEEN = kinds``, ``sites.site_sizes``)
    A site's size is estimated from how often its known pages are linked, section by section, since a
    manual's language trees are found one at a time. A generated API reference is one section whose kinds
    of pages are linked in very different ways: each class page from the class lists and the other class
    pages, each source listing once, from its class page. Estimated together, the class pages' repeated
    links take the reference as nearly all known while its source listings, found late and each linked
    once, are most of what is not; estimated kind by kind, the listings found say there are many more
    (the Eigen reference of ``benchmarks/crawl_order.py --web real`` is such a site). A site without such
    file names is estimated as by section.

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

from array import array
from collections.abc import Callable, Iterable

import numpy as np
from scipy.sparse import csr_matrix


def _first_directory(path: bytes) -> tuple[bytes, bytes, bytes]:
    """``path`` without its query, split after its first directory: (first segment, b"/" or b"", the rest)."""
    return path.split(b"?", 1)[0].split(b"#", 1)[0].lstrip(b"/").partition(b"/")


def section(path: bytes) -> bytes:
    """The section of a URL path: its first directory segment, b"" for a page at the site's top (no
    further ``/`` after the leading one; the query does not count)."""
    first, slash, _ = _first_directory(path)
    return first if slash else b""


# File-name affixes that name a kind of page (Doxygen's, and DocBook's examples), kept by ``kind``.
KIND_PREFIXES = (b"class", b"struct", b"union", b"interface", b"group__", b"dir_", b"namespace", b"page_")
KIND_SUFFIXES = (b"_source", b"_8h", b"-members", b"-example")


def kind(path: bytes) -> bytes:
    """The kind of page of a URL path: its section and, after ``|``, the first of ``KIND_PREFIXES`` its file
    name (without extension) starts with, or else of ``KIND_SUFFIXES`` it ends with, if any (a name that is
    only the affix has none); the query does not count."""
    name = path.split(b"?", 1)[0].split(b"#", 1)[0].rpartition(b"/")[2]
    stem = name.rpartition(b".")[0] or name
    place = section(path)
    for prefix in KIND_PREFIXES:
        if stem.startswith(prefix) and len(stem) > len(prefix):
            return place + b"|" + prefix
    for suffix in KIND_SUFFIXES:
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return place + b"|" + suffix
    return place


def group_ids(urls: Iterable[tuple[int, bytes]], *keys: Callable[[bytes], bytes]) -> list[np.ndarray]:
    """For each of ``keys`` (a path's group: ``section``, ``kind``, ``mirror_path``), a number per URL (int64,
    in the order given, from 1 in the order groups first appear) that is equal for URLs of the same site
    (``site-id``) and group, in one pass over ``urls``, which yields (site-id, path) pairs (a manager run
    reads them from the URL store).

    A group is kept as the 64-bit hash of (site-id, group) while reading, 8 bytes a URL, and numbered after:
    ``mirror_path`` has nearly a group per URL, and a dict of them would take many times that. Two groups
    whose hashes collide (one pair in about 400,000 manager runs over 10 million URLs) are taken for one."""
    hashes = [array("q") for _ in keys]
    for site_id, path in urls:
        for key, out in zip(keys, hashes):
            out.append(hash((site_id, key(path))))
    return [_numbered(np.frombuffer(out, dtype=np.int64)) for out in hashes]


def _numbered(hashes: np.ndarray) -> np.ndarray:
    """Equal values, equal numbers: 1, 2, ... in the order the values first appear."""
    if not len(hashes):
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    number = np.empty(len(first), dtype=np.int64)
    number[np.argsort(first, kind="stable")] = np.arange(1, len(first) + 1)
    return number[inverse.ravel()]


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
