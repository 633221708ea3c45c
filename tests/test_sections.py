"""A site's sections, the links that reach a page from other sections and a page's copies in other sections
(``manager/sections.py``), and the scores "crosslinks" and "mirrors" built on them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.settings import Settings

from tests.test_ranking import counts_matrix
from wirescrapy.collection.metadata import DOCUMENT_DTYPE
from wirescrapy.collection.urls import PATH_PAD, URLStore
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.manager import plan, sections
from wirescrapy.manager.sections import (
    cross_section_links,
    group_ids,
    mirror_ids,
    mirror_path,
    mirrored,
    section,
    section_ids,
)


def test_a_section_is_the_first_directory_of_the_path():
    assert section(b"/en/mod/core.html") == b"en"
    assert section(b"/library/") == b"library"
    assert section(b"/") == b""
    assert section(b"/index.html") == b""
    assert section(b"/classFoo.html?x=a/b") == b""  # the query is not the path
    assert section(b"/search.html#a/b") == b""


def test_section_ids_are_equal_within_a_site_and_section():
    ids = section_ids(
        [
            (1, b"/en/a.html"),
            (1, b"/fr/a.html"),
            (1, b"/en/mod/b.html"),
            (2, b"/en/a.html"),
            (1, b"/"),
            (1, b"/x.html"),
        ]
    )
    assert ids[0] == ids[2] and ids[4] == ids[5]
    assert len(set(ids.tolist())) == 4  # 1/en, 1/fr, 2/en, 1's root
    assert section_ids([]).tolist() == []


def test_cross_section_links_count_distinct_pages_from_other_sections():
    # Pages 1-3 in section 1, 4-5 in section 2, 6 in section 3 (another site).
    section_of = np.array([0, 1, 1, 1, 2, 2, 3])
    links = counts_matrix(
        6,
        [
            (1, 2),
            (1, 3),
            (2, 3),  # inside section 1: not counted
            (4, 3),
            (4, 3),
            (5, 3),
            (6, 3),  # page 4 twice: once
            (4, 5),
            (3, 4),
            (3, 3),
        ],
    )
    assert cross_section_links(links, section_of).tolist() == [0, 0, 0, 3, 1, 0, 0]
    with pytest.raises(ValueError, match="section_of"):
        cross_section_links(links, section_of[:-1])


def config(**settings) -> WireConfig:
    return WireConfig.from_settings(Settings({**default_settings(), **settings}))


def test_crosslinks_breaks_a_tie_towards_the_page_other_sections_link():
    # One site: the home page (fetched) links /a/1, /a/2, /b/1 and /b/2; /a/1 (fetched) links /a/2 and /b/2.
    # /a/2 and /b/2 have the same in-links, so the same PageRank and depth; only /b/2's in-link from /a/1
    # comes from another section.
    paths = [b"/", b"/a/1.html", b"/a/2.html", b"/b/1.html", b"/b/2.html"]
    docs = np.zeros(len(paths), DOCUMENT_DTYPE)
    docs["docid"] = np.arange(1, len(paths) + 1)
    docs["siteid"] = 1
    docs["depth"] = [0, 1, 1, 1, 1]
    docs["visits"][:2] = 1
    docs["status"][:2] = 200
    docs["first_visit"][:2] = docs["last_visit"][:2] = 1000.0
    links = counts_matrix(5, [(1, 2), (1, 3), (1, 4), (1, 5), (2, 3), (2, 5)])
    sections = section_ids((1, path) for path in paths)
    weights = {"pagerank": 4, "depth": 1}
    plain = plan(docs, links, config(WIRE_SCORE_WEIGHTS=weights, WIRE_BATCH_SIZE=1), 2000.0, count=1)
    crossed = plan(
        docs,
        links,
        config(WIRE_SCORE_WEIGHTS={**weights, "crosslinks": 0.15}, WIRE_BATCH_SIZE=1),
        2000.0,
        count=1,
        sections=sections,
    )
    assert crossed.quality[4] > crossed.quality[2]
    assert plain.quality[4] == pytest.approx(plain.quality[2])
    assert crossed.batches[0].tolist() == [5]
    assert "crosslinks" in crossed.timings
    with pytest.raises(ValueError, match="sections"):
        plan(docs, links, config(WIRE_SCORE_WEIGHTS={**weights, "crosslinks": 1}), 2000.0, count=1)


def test_a_page_copies_the_pages_with_its_path_after_the_first_directory():
    assert mirror_path(b"/en/sitemap.html") == mirror_path(b"/ru/sitemap.html") == b"sitemap.html"
    assert mirror_path(b"/en/mod/index.html?lang=en") == b"mod/index.html"
    assert mirror_path(b"/en/") == mirror_path(b"/ru/") == b""
    # A page at the site's top is no copy of a page in a section.
    assert mirror_path(b"/sitemap.html") == b"/sitemap.html"
    assert mirror_path(b"/") == b"/"
    ids = mirror_ids(
        [(1, b"/en/a.html"), (1, b"/ru/a.html"), (2, b"/en/a.html"), (1, b"/a.html"), (1, b"/en/b.html")]
    )
    assert ids.tolist() == [1, 1, 2, 3, 4]


def test_mirrored_is_the_mean_over_a_pages_copies():
    mirror_of = np.array([0, 1, 1, 2, 1])
    assert mirrored(np.array([0.0, 4, 2, 1, 3]), mirror_of).tolist() == [0, 3, 3, 1, 3]
    with pytest.raises(ValueError, match="aligned"):
        mirrored(np.zeros(4), mirror_of)


def test_mirrors_breaks_a_tie_towards_the_copy_of_a_well_linked_page():
    # One site: the home page and /en/x.html are fetched; /en/a.html is linked from both, /en/b.html from the
    # home page only. /ru/a.html and /ru/b.html, each linked once from the home page, tie on PageRank and
    # depth; only /ru/a.html's copy in another section is well linked.
    paths = [b"/", b"/en/x.html", b"/en/a.html", b"/en/b.html", b"/ru/a.html", b"/ru/b.html"]
    docs = np.zeros(len(paths), DOCUMENT_DTYPE)
    docs["docid"] = np.arange(1, len(paths) + 1)
    docs["siteid"] = 1
    docs["depth"] = [0, 1, 1, 1, 1, 1]
    docs["visits"][:2] = 1
    docs["status"][:2] = 200
    docs["first_visit"][:2] = docs["last_visit"][:2] = 1000.0
    links = counts_matrix(6, [(1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (2, 3)])
    mirrors = mirror_ids((1, path) for path in paths)
    weights = {"pagerank": 4, "depth": 1}
    plain = plan(docs, links, config(WIRE_SCORE_WEIGHTS=weights), 2000.0, count=1)
    copied = plan(
        docs, links, config(WIRE_SCORE_WEIGHTS={**weights, "mirrors": 0.5}), 2000.0, count=1, mirrors=mirrors
    )
    assert plain.quality[4] == pytest.approx(plain.quality[5])
    assert copied.quality[4] > copied.quality[5]
    assert "mirrors" in copied.timings
    # Alone, it needs PageRank computed all the same.
    alone = plan(docs, links, config(WIRE_SCORE_WEIGHTS={"mirrors": 1}), 2000.0, count=1, mirrors=mirrors)
    assert alone.quality[4] > alone.quality[5]
    with pytest.raises(ValueError, match="mirror"):
        plan(docs, links, config(WIRE_SCORE_WEIGHTS={**weights, "mirrors": 1}), 2000.0, count=1)


def test_groups_by_several_keys_in_one_pass_are_those_by_each_alone():
    urls = [
        (1, b"/en/a.html"),
        (1, b"/ru/a.html?x=1"),
        (2, b"/en/a.html"),
        (1, b"/a.html"),
        (1, b"/en/mod/b.html"),
    ]
    read = []

    def once():  # a manager run reads the URL store once for both
        for url in urls:
            read.append(url)
            yield url

    by_section, by_mirror = group_ids(once(), section, mirror_path)
    assert len(read) == len(urls)
    assert by_section.tolist() == section_ids(urls).tolist() == [1, 2, 3, 4, 1]
    assert by_mirror.tolist() == mirror_ids(urls).tolist() == [1, 1, 2, 3, 4]
    assert [ids.tolist() for ids in group_ids([], section, mirror_path)] == [[], []]


KEYS = (section, mirror_path)


def reference_ids(urls: list[tuple[int, bytes]], key) -> list[int]:
    """The definition ``group_ids`` keeps: equal (site, key of the path), equal number, from 1 in the order
    groups first appear."""
    numbers: dict[tuple[int, bytes], int] = {}
    return [numbers.setdefault((site_id, key(path)), len(numbers) + 1) for site_id, path in urls]


# Pieces of paths: the bytes that cut a path (slashes, query, fragment), dots, UTF-8 and percent-encoded
# text, NUL, and segments longer than the 8 bytes read at once.
PATH_PIECES = [
    b"/",
    b"//",
    b"?",
    b"#",
    b".",
    b"en",
    b"ru",
    b"a",
    b".html",
    b"index",
    b"x=1&y=/z",
    "ñandú".encode(),
    "日本語".encode(),
    b"%2F",
    b"\x00",
    b"\xff",
    b"a_rather_long_segment_name",
    b"0123456789abcdef0123",
]
url_paths = st.one_of(
    st.lists(st.sampled_from(PATH_PIECES), max_size=24).map(b"".join),
    st.binary(max_size=40),
    st.integers(1, 200).map(lambda depth: b"/d" * depth + b"/p.html"),  # very deep
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), url_paths), max_size=60), st.data())
def test_group_ids_are_the_groups_of_the_key_functions(urls, data):
    # Some URLs again, or their paths in other sites.
    again = data.draw(
        st.lists(st.tuples(st.integers(1, 4), st.sampled_from(urls)), max_size=20) if urls else st.just([])
    )
    urls = urls + [(site_id, path) for site_id, (_, path) in again]
    urls = data.draw(st.permutations(urls))
    got = group_ids(urls, *KEYS)
    for key, ids in zip(KEYS, got):
        assert ids.dtype == np.int64
        assert ids.tolist() == reference_ids(urls, key), key.__name__


def test_group_ids_follow_the_key_functions_where_they_are_subtle():
    urls = [
        (1, b"/a//b.html"),  # after the first directory, "/b.html": the mirror path of ...
        (1, b"/b.html"),  # ... a page at the top
        (1, b"///b.html?x=/y/z"),  # leading slashes and the query do not count
        (1, b""),
        (1, b"?x=/a/b"),  # an empty path with a query: at the top, like ...
        (1, b"/"),
        (1, b"/en/"),  # trailing slashes
        (1, b"/en//"),
        (2, b"/en/"),  # another site
    ]
    for key, ids in zip(KEYS, group_ids(urls, *KEYS)):
        assert ids.tolist() == reference_ids(urls, key), key.__name__
    assert mirror_path(b"/a//b.html") == mirror_path(b"/b.html")


def test_group_ids_over_many_sites_and_long_paths():
    rng = np.random.default_rng(7)
    pieces = np.array(PATH_PIECES, dtype=object)
    urls = [
        (int(site_id), b"/" + b"/".join(rng.choice(pieces, rng.integers(0, 12))))
        for site_id in rng.integers(1, 3000, 20_000)
    ]
    urls += [(5, b"/" + b"x" * 65_000 + b"/y"), (5, b"/" + b"x" * 65_000 + b"/y"), (5, b"/" + b"x" * 64_999)]
    for key, ids in zip(KEYS, group_ids(urls, *KEYS)):
        assert ids.tolist() == reference_ids(urls, key), key.__name__


@pytest.mark.parametrize("kept", [0, 0xC000_0000_0000_0000], ids=["one hash", "four hashes"])
def test_group_ids_are_exact_when_hashes_collide(monkeypatch, kept):
    # A hash that keeps a few bits or none: URLs with other keys share a hash, and the byte by byte check
    # splits them.
    mix = sections._mix
    monkeypatch.setattr(sections, "_mix", lambda x: mix(x) & np.uint64(kept))
    rng = np.random.default_rng(3)
    pieces = np.array(PATH_PIECES, dtype=object)
    urls = [(int(rng.integers(1, 4)), b"".join(rng.choice(pieces, rng.integers(0, 8)))) for _ in range(400)]
    for key, ids in zip(KEYS, group_ids(urls, *KEYS)):
        assert ids.tolist() == reference_ids(urls, key), key.__name__


@pytest.mark.parametrize("urls_at_once, bytes_at_once", [(1, 1), (7, 1 << 21), (1 << 16, 64)])
def test_group_ids_do_not_depend_on_how_many_urls_are_cut_at_once(monkeypatch, urls_at_once, bytes_at_once):
    monkeypatch.setattr(sections, "_CHUNK_URLS", urls_at_once)
    monkeypatch.setattr(sections, "_CHUNK_BYTES", bytes_at_once)
    rng = np.random.default_rng(4)
    pieces = np.array(PATH_PIECES, dtype=object)
    urls = [(int(rng.integers(1, 6)), b"".join(rng.choice(pieces, rng.integers(0, 10)))) for _ in range(300)]
    for key, ids in zip(KEYS, group_ids(urls, *KEYS)):
        assert ids.tolist() == reference_ids(urls, key), key.__name__


def test_group_ids_read_the_url_stores_arrays(tmp_path):
    rng = np.random.default_rng(5)
    pieces = np.array(PATH_PIECES, dtype=object)
    store = URLStore(tmp_path)
    for site in range(3):
        store.add_site(f"http://site{site}.example")
    urls = list(
        dict.fromkeys(
            (int(rng.integers(1, 4)), b"/" + b"".join(rng.choice(pieces, rng.integers(0, 10))))
            for _ in range(500)
        )
    )
    store.add_many([site_id for site_id, _ in urls], [path for _, path in urls])
    try:
        for first, last in [(1, None), (1, 1), (5, 16), (16, 17), (17, 40), (490, 600), (30, 20)]:
            arrays = store.path_arrays(first, last)
            read = [(site_id, path) for _, site_id, path in store.iter_urls(first, last)]
            assert arrays.site_ids.tolist() == [site_id for site_id, _ in read]
            assert [arrays.data[a : a + n].tobytes() for a, n in zip(arrays.starts, arrays.lengths)] == [
                path for _, path in read
            ]
            groups = [reference_ids(read, key) for key in KEYS]
            assert [ids.tolist() for ids in group_ids(arrays, *KEYS)] == groups
            # The same bytes without the zeros the store puts around them.
            bare = arrays._replace(data=arrays.data[PATH_PAD:-PATH_PAD], starts=arrays.starts - PATH_PAD)
            assert [ids.tolist() for ids in group_ids(bare, *KEYS)] == groups
    finally:
        store.close()


def test_group_ids_take_only_the_path_keys():
    with pytest.raises(ValueError, match="no grouping by"):
        group_ids([(1, b"/a")], len)
    with pytest.raises(ValueError, match="32-bit"):
        group_ids([(1 << 32, b"/a")], section)
