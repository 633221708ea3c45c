"""The stamp of the scores the manager stored: what it matches, and what a kill leaves."""

from __future__ import annotations

from dataclasses import replace

from wirescrapy.collection import Collection
from wirescrapy.manager.scorefile import FILE, ScoreStamp, link_digest

STAMP = ScoreStamp(3, 1, "0" * 32, 0.15, ("hub", "pagerank"))


def test_the_stamp_matches_only_the_same_graph_documents_sites_and_dampening(tmp_path):
    STAMP.write(tmp_path)
    read = ScoreStamp.read(tmp_path)
    assert read == STAMP
    current = replace(STAMP, scores=())
    assert read.stored(current) == ("hub", "pagerank")
    for change in ({"documents": 4}, {"sites": 2}, {"links": "1" * 32}, {"pagerank_damping": 0.2}):
        assert read.stored(replace(current, **change)) == ()


def test_a_kill_while_writing_leaves_the_old_stamp(tmp_path):
    STAMP.write(tmp_path)
    # Killed before the rename: the temporary file is half written, the stamp is the old one.
    (tmp_path / f".{FILE}.tmp").write_text('{"version": 1, "documents"')
    assert ScoreStamp.read(tmp_path) == STAMP
    replace(STAMP, scores=("pagerank",)).write(tmp_path)
    assert ScoreStamp.read(tmp_path).scores == ("pagerank",)
    assert not (tmp_path / f".{FILE}.tmp").exists()


def test_a_damaged_or_unknown_stamp_is_none(tmp_path):
    assert ScoreStamp.read(tmp_path) is None
    for text in ("{damaged", "[]", '{"version": 2}', '{"version": 1, "documents": 3}'):
        (tmp_path / FILE).write_text(text)
        assert ScoreStamp.read(tmp_path) is None
    (tmp_path / FILE).write_text(
        '{"version": 1, "documents": 3, "sites": 1, "links": "x", "pagerank_damping": 0.15,'
        ' "scores": ["pagerank", "opic", "profit"]}'
    )
    assert ScoreStamp.read(tmp_path).scores == ("pagerank",)  # names of no stored score are left out


def test_the_digest_changes_with_any_list_of_the_documents_it_covers(tmp_path):
    with Collection(tmp_path / "c") as collection:
        ids = [collection.add_url(f"http://a.example/{i}", depth=1)[0] for i in range(4)]
        collection.links.set_links(ids[0], [ids[1], ids[2]])
        first = link_digest(collection.links, 3)
        assert link_digest(collection.links, 3) == first
        collection.links.set_links(ids[3], [ids[0]])  # a list of a document past those covered
        assert link_digest(collection.links, 3) == first
        assert link_digest(collection.links, 4) != first
        collection.links.set_links(ids[0], [ids[2], ids[1]])  # the same links, another order
        assert link_digest(collection.links, 3) != first
        collection.links.set_links(ids[0], [ids[1], ids[2]])
        assert link_digest(collection.links, 3) == first
        collection.links.set_links(ids[1], [])  # a page parsed and found without links
        assert link_digest(collection.links, 3) != first
