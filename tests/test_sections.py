"""A site's sections, the links that reach a page from other sections and a page's copies in other sections
(``manager/sections.py``), and the scores "crosslinks" and "mirrors" built on them."""

from __future__ import annotations

import numpy as np
import pytest
from scrapy.settings import Settings

from tests.test_ranking import counts_matrix
from wirescrapy.collection.metadata import DOCUMENT_DTYPE
from wirescrapy.config import WireConfig, default_settings
from wirescrapy.manager import plan
from wirescrapy.manager.sections import (
    cross_section_links,
    kind,
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


def test_a_kind_is_the_section_and_the_affix_a_generator_gives_a_kind_of_page():
    assert kind(b"/classEigen_1_1Matrix.html") == b"|class"
    assert kind(b"/unsupported/dir_8d80.html") == b"unsupported|dir_"
    assert kind(b"/Matrix_8h_source.html") == b"|_source"  # a prefix first, then a suffix: _source before _8h
    assert kind(b"/structFoo.html?a=/b") == b"|struct"
    assert kind(b"/en/mod/core.html") == b"en"  # no affix: the section
    assert kind(b"/class.html") == b""  # the affix alone names no kind
    assert kind(b"/") == b"" and kind(b"/index.html") == b""
    assert kind(b"/tutorial/classes") == b"tutorial|class"


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
    from wirescrapy.manager.sections import group_ids, mirror_path, section

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
