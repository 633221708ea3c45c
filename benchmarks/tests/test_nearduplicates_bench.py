"""benchmarks.nearduplicates: the labels come from the pages' main text, the near-copies it makes carry what
they say they inject, and the scores count what they should."""

from __future__ import annotations

import random

from benchmarks import nearduplicates as bench

PAGE = (
    b"<html><head><title>os</title></head><body><div class='nav'>Index Modules Next Previous</div>"
    b"<div role='main'><h1>os</h1><p>" + b" ".join(b"word%d" % n for n in range(300)) + b"</p></div>"
    b"<div class='footer'>Copyright the authors</div></body></html>"
)
HOST = (
    b"<html><head><title>CMake</title></head><body><div class='menu'>CMake menu</div>"
    b"<div role='main'><p>the host's own text</p></div></body></html>"
)


def test_a_page_s_label_reads_its_main_text_not_its_template():
    page = bench.load_page("python", "os.html", PAGE)
    assert page.words[:2] == ["os", "word0"] and "index" not in page.words
    other = bench.load_page(
        "python", "re.html", PAGE.replace(b"word1 ", b"other1 ").replace(b"word2 ", b"other2 ")
    )
    assert bench.label(page, other) is True
    different = bench.load_page("python", "x.html", PAGE.replace(b"word", b"term"))
    assert bench.label(page, different) is False


def test_the_near_copies_inject_what_they_say_and_keep_the_main_text():
    page = bench.load_page("python", "os.html", PAGE)
    copies = dict(bench.variants(page, random.Random(1), HOST))
    assert list(copies) == [
        "date in text",
        "counter in text",
        "token in footer",
        "print view",
        "another template",
    ]
    assert "last updated on" in " ".join(copies["date in text"].words)
    assert "viewed" in copies["counter in text"].words
    assert copies["token in footer"].words == page.words  # the footer is outside the main text
    assert b"Index Modules" not in copies["print view"].html
    assert b"CMake menu" in copies["another template"].html and copies["another template"].site == "mirror"
    assert all(bench.label(page, copy) for copy in copies.values())


def test_scores_are_precision_and_recall():
    rows = [(True, True), (True, False), (False, True), (False, False), (True, True)]
    assert bench.scores(rows) == (2 / 3, 2 / 3, 3, 5)
    assert bench.scores([(False, False)]) == (0.0, 0.0, 0, 1)
