"""Which links of a duplicate are followed with WIRE_FOLLOW_DUPLICATE_LINKS
(``gatherer/pipelines/linkgraph.py``)."""

import numpy as np

from wirescrapy.gatherer.pipelines.linkgraph import elsewhere, follows_duplicate


def test_a_copy_at_another_path_of_the_same_site_is_followed():
    assert follows_duplicate(1, b"/en/mod/core.html", 1, b"/da/mod/core.html")
    assert follows_duplicate(1, b"/docs/v2/a.html", 1, b"/docs/a.html")  # a shorter path too


def test_a_copy_on_another_site_or_under_its_original_s_path_is_not():
    assert not follows_duplicate(1, b"/en/a.html", 2, b"/en/a.html")  # a mirror
    assert not follows_duplicate(1, b"/index.php", 1, b"/index.php/x/")  # the path goes on: a trap
    assert not follows_duplicate(1, b"/a/", 1, b"/a/a/")  # a directory linked to itself
    assert not follows_duplicate(1, b"/", 1, b"/index.html")  # same directory: its links resolve alike


def test_only_the_targets_its_original_does_not_link_to_stay_in_order():
    assert elsewhere([7, 3, 9, 4], np.array([3, 4], dtype=np.uint32)) == [7, 9]
    assert elsewhere([3, 4], np.array([3, 4], dtype=np.uint32)) == []
    assert elsewhere([5], np.zeros(0, dtype=np.uint32)) == [5]
