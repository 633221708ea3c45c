"""End to end: conditional revisits against a real nginx (Debian's package, ``wirescrapy.testing.nginx``).
nginx answers 304 only to the exact ``Last-Modified`` string (its default ``if_modified_since exact``) or a
matching ``ETag``: a revisit cycle sends both back as the server gave them, and every unchanged page comes
back as a 304 with no body — under ``/noetag/``, where nginx sends no ETag, on ``If-Modified-Since`` alone. A
page changed on disk comes back whole and is recorded as changed.
"""

from __future__ import annotations

import pytest

from tests.e2e.test_harvester import harvest
from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.testing import nginx

pytestmark = pytest.mark.skipif(
    nginx.binary() is None, reason="nginx is not installed here (apt-get install nginx-light; .ci/run does)"
)

PAGES = ["/", "/a.html", "/b.html", "/noetag/c.html", "/notes.txt"]
REVISIT = {
    "WIRE_MINPERIOD_SUCCESSFUL_OK": 0,
    "WIRE_MINPERIOD_SUCCESSFUL_NOT_OK": 0,
    "WIRE_MINPERIOD_UNSUCCESSFUL": 0,
}
FAST = {"WIRE_WAIT_NORMAL": 0, "WIRE_WAIT_LARGE_SITE": 0}


def page(text: str, *links: str) -> str:
    anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    return f"<html><head><title>{text}</title></head><body><p>{text}</p>{anchors}</body></html>\n"


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "www"
    (root / "noetag").mkdir(parents=True)
    (root / "index.html").write_text(page("home", "/a.html", "/b.html", "/noetag/c.html", "/notes.txt"))
    (root / "a.html").write_text(page("a " * 500, "/"))
    (root / "b.html").write_text(page("b " * 500, "/a.html"))
    (root / "noetag" / "c.html").write_text(page("c " * 500, "/"))
    (root / "notes.txt").write_text("plain text notes\n" * 50)
    with nginx.Nginx(
        [nginx.Server("docs.wire.test", "127.0.0.1", str(root), no_etag=("/noetag/",))], tmp_path / "nginx"
    ) as server:
        yield root, f"http://docs.wire.test:{server.port}", server.access_log


@pytest.mark.timeout(180)
def test_a_revisit_of_an_nginx_site_gets_304s_for_what_did_not_change(served, tmp_path):
    root, site, access_log = served
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(site + "/\n")
    collection = tmp_path / "collection"
    harvest(collection, "-a", f"seeds={seeds}", "-a", "cycles=5", settings=FAST)
    with Collection(collection, readonly=True) as stored:
        first = {path: stored.documents.records[stored.lookup(site + path)].copy() for path in PAGES}
    assert all(record["status"] == 200 and record["visits"] == 1 for record in first.values())
    assert first["/a.html"]["etag"] and not first["/noetag/c.html"]["etag"]
    crawled = len(nginx.read_log(access_log))
    (root / "b.html").write_text(page("b changed " * 500, "/a.html"))  # a new size: a new ETag

    harvest(collection, settings={**FAST, **REVISIT})
    revisits = {r.uri: r for r in nginx.read_log(access_log)[crawled:] if r.uri != "/robots.txt"}
    assert sorted(revisits) == sorted(PAGES)
    assert {uri: r.status for uri, r in revisits.items()} == {**dict.fromkeys(PAGES, 304), "/b.html": 200}
    assert all(r.bytes == 0 for uri, r in revisits.items() if uri != "/b.html")
    with Collection(collection, readonly=True) as stored:
        for path, before in first.items():
            record = stored.documents.records[stored.lookup(site + path)]
            # Sent back exactly as nginx gave them: If-None-Match where it sent an ETag, If-Modified-Since
            # always.
            assert revisits[path].if_none_match == bytes(before["etag"]).decode()
            assert revisits[path].if_modified_since == bytes(before["last_modified_header"]).decode()
            assert record["visits"] == 2 and record["first_visit"] == before["first_visit"]
            if path == "/b.html":
                assert (
                    record["status"] == 200
                    and record["visits_changed"] == 1
                    and record["flags"] & DocFlag.CHANGED
                )
                assert record["content_hash"] != before["content_hash"] and record["etag"] != before["etag"]
                continue
            assert record["status"] == 304 and record["visits_changed"] == 0, path
            assert record["time_unchanged"] == pytest.approx(record["last_visit"] - before["last_visit"]), (
                path
            )
            for field in ("content_hash", "stored_length", "etag", "last_modified_header"):
                assert record[field] == before[field], (path, field)
        assert stored.links.links(stored.lookup(site + "/")).size == 4  # the 304 left the home page's links
