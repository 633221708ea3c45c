"""robots.txt policy (robots.py), sitemaps and robots.rdf (sitemaps.py)."""

import gzip
import os
import time

import pytest
from scrapy.settings import BaseSettings

from wirescrapy.collection.metadata import RobotsState
from wirescrapy.config import WireConfig
from wirescrapy.seeder.robots import MAX_ROBOTS_BYTES, RobotsPolicy, limit_body, user_agent_token
from wirescrapy.seeder.sitemaps import parse_date, parse_robots_rdf, parse_sitemap, robots_rdf_url
from wirescrapy.testing.hostile import gzip_bomb

DAY = 86400
NOW = 1_700_000_000.0

RULES = b"""\
User-agent: *
Disallow: /private/
Crawl-delay: 2

User-agent: wirescrapy
Disallow: /cgi-bin/
Allow: /cgi-bin/ok
Crawl-delay: 7.5

User-agent: otherbot
Disallow: /

Sitemap: http://a.cl/sitemap.xml
Sitemap: /relative-sitemap.xml.gz
"""


def valid(body: bytes = RULES, **kwargs) -> RobotsPolicy:
    policy = RobotsPolicy(**kwargs)
    assert policy.fetched(200, body, NOW) is RobotsState.VALID
    return policy


# -- user agent ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "user_agent, token",
    [
        ("wirescrapy/0.1 (WIRE crawler; +https://pypi.org/project/wirescrapy/)", "wirescrapy"),
        ("wirescrapy", "wirescrapy"),
        ("MyBot/2.0", "MyBot"),
        ("", "wirescrapy"),
        ("   ", "wirescrapy"),
    ],
)
def test_user_agent_token(user_agent, token):
    assert user_agent_token(user_agent) == token


def test_robots_rdf_url():
    assert robots_rdf_url("http://a.cl/") == "http://a.cl/robots.rdf"


# -- states --------------------------------------------------------------------------------------------


def test_unknown_allows_nothing_and_is_due():
    policy = RobotsPolicy()
    assert policy.state is RobotsState.UNKNOWN
    assert not policy.allowed("http://a.cl/") and policy.due(0) and policy.crawl_delay is None


def test_valid_uses_our_group():
    policy = valid()
    assert policy.allowed("http://a.cl/private/x")  # our group does not forbid it, '*' would
    assert not policy.allowed("http://a.cl/cgi-bin/x")
    assert policy.allowed("http://a.cl/cgi-bin/ok")  # the longest match wins (RFC 9309 §2.2.2)
    assert policy.crawl_delay == 7.5


def test_other_agents_fall_back_to_star():
    policy = valid(user_agent="somebot/1.0")
    assert not policy.allowed("http://a.cl/private/x") and policy.allowed("http://a.cl/cgi-bin/x")
    assert policy.crawl_delay == 2.0
    assert not valid(user_agent="OtherBot").allowed("http://a.cl/")


def test_user_agent_matching_ignores_case():
    assert not valid(b"User-agent: WireScrapy\nDisallow: /x\n").allowed("http://a.cl/x")


def test_sitemaps_listed():
    assert valid().sitemaps() == ["http://a.cl/sitemap.xml", "/relative-sitemap.xml.gz"]
    assert valid().sitemaps("http://a.cl/robots.txt")[1] == "http://a.cl/relative-sitemap.xml.gz"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451, 301, 302])
def test_4xx_means_everything_allowed(status):
    policy = RobotsPolicy()
    assert policy.fetched(status, b"<html>not found</html>", NOW) is RobotsState.MISSING
    assert policy.allowed("http://a.cl/anything") and policy.crawl_delay is None and policy.sitemaps() == []
    assert policy.body == b""


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429, 100, 0, 999])
def test_5xx_means_nothing_allowed(status):
    policy = RobotsPolicy()
    assert policy.fetched(status, None, NOW) is RobotsState.UNREACHABLE
    assert not policy.allowed("http://a.cl/")


def test_network_error_means_nothing_allowed():
    policy = valid()
    assert policy.failed(NOW + 10) is RobotsState.UNREACHABLE
    assert not policy.allowed("http://a.cl/") and policy.crawl_delay is None and policy.fetched_at == NOW + 10


def test_recovery_after_unreachable():
    policy = RobotsPolicy()
    policy.failed(NOW)
    assert policy.fetched(200, b"User-agent: *\nDisallow: /x\n", NOW + DAY) is RobotsState.VALID
    assert policy.allowed("http://a.cl/y") and not policy.allowed("http://a.cl/x")


# -- re-fetch periods ----------------------------------------------------------------------------------


def test_valid_and_missing_are_refetched_after_the_valid_period():
    for policy in (valid(), RobotsPolicy()):
        if policy.state is RobotsState.UNKNOWN:
            policy.fetched(404, b"", NOW)
        assert not policy.due(NOW + 7 * DAY - 1) and policy.due(NOW + 7 * DAY)


def test_unreachable_is_retried_after_the_invalid_period():
    policy = RobotsPolicy()
    policy.fetched(503, b"", NOW)
    assert not policy.due(NOW + DAY - 1) and policy.due(NOW + DAY) and policy.next_fetch == NOW + DAY


def test_periods_and_token_from_config():
    config = WireConfig.from_settings(
        BaseSettings({"WIRE_ROBOTS_TXT_VALID_PERIOD": 100, "WIRE_ROBOTS_TXT_INVALID_PERIOD": 10})
    )
    policy = RobotsPolicy.from_config(config, "wirescrapy/0.1 (+x)")
    assert policy.user_agent == "wirescrapy"
    policy.fetched(200, b"", NOW)
    assert policy.next_fetch == NOW + 100
    policy.failed(NOW)
    assert policy.next_fetch == NOW + 10


# -- rebuilding from the collection --------------------------------------------------------------------


def test_rebuilt_from_state_body_and_time():
    policy = valid()
    rebuilt = RobotsPolicy(policy.state, policy.body, policy.fetched_at)
    assert rebuilt.allowed("http://a.cl/cgi-bin/ok") and not rebuilt.allowed("http://a.cl/cgi-bin/x")
    assert rebuilt.crawl_delay == 7.5 and rebuilt.next_fetch == policy.next_fetch
    assert RobotsPolicy(RobotsState.MISSING, b"", NOW).allowed("http://a.cl/x")
    assert not RobotsPolicy(int(RobotsState.UNREACHABLE), b"junk", NOW).allowed("http://a.cl/x")


# -- broken robots.txt files ---------------------------------------------------------------------------


def test_binary_junk():
    policy = valid(os.urandom(4096) + b"\x00\xff\xfe")
    assert policy.allowed("http://a.cl/x")


def test_html_served_as_robots_txt():
    html = b"<!DOCTYPE html><html><head><title>Home</title></head><body><p>Welcome</p></body></html>"
    assert valid(html).allowed("http://a.cl/x")


def test_byte_order_mark():
    policy = valid(b"\xef\xbb\xbfUser-agent: *\nDisallow: /private\n")
    assert not policy.allowed("http://a.cl/private")


def test_crlf_and_cr_line_ends():
    assert not valid(b"User-agent: *\r\nDisallow: /x\r\nCrawl-delay: 3\r\n").allowed("http://a.cl/x")
    assert valid(b"User-agent: *\r\nCrawl-delay: 3\r\n").crawl_delay == 3.0
    assert not valid(b"User-agent: *\rDisallow: /x\r").allowed("http://a.cl/x")


def test_rules_without_user_agent_line():
    policy = valid(b"Disallow: /x\nCrawl-delay: 3\n")
    assert policy.allowed("http://a.cl/x") and policy.crawl_delay is None


def test_nul_bytes_and_latin1():
    policy = valid(b"User-agent: *\x00\nDisallow: /caf\xe9\nDisallow: /x\x00y\n")
    assert not policy.allowed("http://a.cl/xy")


@pytest.mark.parametrize("value", [b"abc", b"-5", b"inf", b"nan", b""])
def test_bad_crawl_delay_is_ignored(value):
    assert valid(b"User-agent: *\nCrawl-delay: " + value + b"\n").crawl_delay is None


def test_huge_robots_txt_is_parsed_up_to_500_kib():
    filler = b"# " + b"x" * 78 + b"\n"
    head = b"User-agent: *\nDisallow: /early\n" + filler * (MAX_ROBOTS_BYTES // len(filler) + 1)
    body = head + b"Disallow: /late-and-long\n" * 10_000
    started = time.monotonic()
    policy = valid(body)
    assert time.monotonic() - started < 5
    assert len(policy.body) <= MAX_ROBOTS_BYTES and policy.body.endswith(b"\n")
    assert not policy.allowed("http://a.cl/early") and policy.allowed("http://a.cl/late-and-long")


def test_cut_at_a_line_break_never_widens_a_rule():
    body = b"User-agent: *\nDisallow: /" + b"a" * (MAX_ROBOTS_BYTES + 10) + b"\n"
    assert limit_body(body) == b"User-agent: *\n"
    assert limit_body(b"x" * (MAX_ROBOTS_BYTES + 1)) == b""
    assert limit_body(b"short") == b"short"


def test_empty_robots_txt_allows_everything():
    policy = valid(b"")
    assert policy.allowed("http://a.cl/") and policy.sitemaps() == []


# -- sitemaps ------------------------------------------------------------------------------------------

URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url><loc>http://a.cl/</loc><lastmod>2005-01-01</lastmod><changefreq>daily</changefreq></url>
  <url><loc> http://a.cl/b.html </loc><lastmod>2004-12-23T18:00:15+00:00</lastmod>
       <image:image><image:loc>http://a.cl/i.jpg</image:loc></image:image></url>
  <url><loc>http://a.cl/c?x=1&amp;y=2</loc></url>
  <url><lastmod>2005-01-01</lastmod></url>
  <url><loc>http://a.cl/b.html</loc><lastmod>2006-01-01</lastmod></url>
</urlset>
"""


def test_urlset():
    document = parse_sitemap(URLSET)
    assert document.kind == "urlset" and not document.is_index and not document.truncated
    assert document.pairs() == [
        ("http://a.cl/", parse_date("2005-01-01")),
        ("http://a.cl/b.html", parse_date("2006-01-01")),  # repeated: the latest date
        ("http://a.cl/c?x=1&y=2", None),
    ]


def test_sitemap_index_and_gzip():
    index = b"""<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>http://a.cl/s1.xml.gz</loc><lastmod>2004-10-01T18:23:17Z</lastmod></sitemap>
      <sitemap><loc>/s2.xml</loc></sitemap></sitemapindex>"""
    document = parse_sitemap(gzip.compress(index), base_url="http://a.cl/sitemap.xml")
    assert document.is_index
    assert [e.url for e in document.entries] == ["http://a.cl/s1.xml.gz", "http://a.cl/s2.xml"]
    assert document.entries[0].last_modified == 1096655e3 - 3


def test_text_sitemap():
    document = parse_sitemap(b"\xef\xbb\xbfhttp://a.cl/1\r\n\r\nnot a url\nhttps://a.cl/2\n")
    assert document.kind == "text"
    assert [e.url for e in document.entries] == ["http://a.cl/1", "https://a.cl/2"]


def test_sitemap_caps():
    urls = b"".join(b"<url><loc>http://a.cl/%d</loc></url>" % i for i in range(100))
    body = b"<urlset>" + urls + b"</urlset>"
    capped = parse_sitemap(body, max_entries=10)
    assert len(capped.entries) == 10 and capped.truncated
    cut = parse_sitemap(body, max_bytes=200)  # the prefix that fits is still read
    assert cut.truncated and 0 < len(cut.entries) < 10


def test_gzip_bomb_is_capped():
    bomb = gzip.compress(b"<urlset>" + b" " * 20_000_000 + b"</urlset>")
    assert len(bomb) < 100_000
    document = parse_sitemap(bomb, max_bytes=1_000_000)
    assert document.truncated and document.entries == []


def test_a_sitemap_is_read_a_piece_at_a_time_whole():
    urls = [f"http://a.cl/{i}" for i in range(5000)]  # 200 KB: entries across the 64 KiB pieces
    body = ("<urlset>" + "".join(f"<url><loc>{u}</loc></url>" for u in urls) + "</urlset>").encode()
    for data in (body, gzip.compress(body)):
        document = parse_sitemap(data)
        assert [e.url for e in document.entries] == urls and not document.truncated


def test_a_bomb_of_one_entry_repeated_stops_at_the_entry_cap():
    entry = b"<url><loc>http://a.cl/x</loc></url>"
    bomb = gzip_bomb(b"<urlset>", entry * (1024 * 1024 // len(entry)), 64 << 20)
    document = parse_sitemap(bomb, max_entries=1000)  # every entry counts, repeated or not
    assert document.truncated and document.pairs() == [("http://a.cl/x", None)]


def test_foreign_elements_are_capped_too():
    bomb = gzip_bomb(b"<urlset>", b"<x><y/></x>" * 100_000, 64 << 20)
    document = parse_sitemap(bomb, max_entries=1000)
    assert document.kind == "urlset" and document.truncated and document.entries == []


def test_a_text_sitemap_line_too_long_to_be_a_url_is_skipped():
    document = parse_sitemap(b"http://a.cl/1\nhttp://a.cl/" + b"x" * 1_000_000 + b"\nhttp://a.cl/2\n")
    assert [e.url for e in document.entries] == ["http://a.cl/1", "http://a.cl/2"]


def test_xxe_and_entity_expansion_are_not_resolved(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    xxe = f"""<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file://{secret}">]>
        <urlset><url><loc>http://a.cl/&x;</loc></url></urlset>""".encode()
    for document in (parse_sitemap(xxe), parse_robots_rdf(xxe)):
        assert all("TOP-SECRET" not in e.url for e in document.entries)
    laughs = b"""<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">
        <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
        <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">]>
        <urlset><url><loc>http://a.cl/&e;</loc></url></urlset>"""
    document = parse_sitemap(laughs)
    assert all(len(e.url) < 100 for e in document.entries)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   ",
        b"\x00\x01\x02",
        pytest.param(os.urandom(512), id="random"),
        b"<html><body>no sitemap</body></html>",
        b"<urlset><url><loc>http://a.cl/x</loc>",
        b"\x1f\x8b\x08broken gzip",
        b"<<<>>>",
    ],
)
def test_broken_sitemaps_do_not_crash(body):
    for parse in (parse_sitemap, parse_robots_rdf):
        document = parse(body, base_url="http://a.cl/")
        assert isinstance(document.entries, list)


def test_truncated_xml_keeps_what_it_has():
    document = parse_sitemap(b"<urlset><url><loc>http://a.cl/x</loc>")
    assert [e.url for e in document.entries] == ["http://a.cl/x"]


# -- robots.rdf ----------------------------------------------------------------------------------------

ROBOTS_RDF = b"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/">
  <rdf:Description rdf:about="/index.html"><dc:date>2004-10-01</dc:date></rdf:Description>
  <rdf:Description rdf:about="http://a.cl/news/1.html">
    <dcterms:modified>2004-10-02T10:00:00-04:00</dcterms:modified></rdf:Description>
  <rdf:Description about="/old.html" dc:date="2003-01-01"/>
  <rdf:Description rdf:about="/nodate.html"/>
</rdf:RDF>
"""


def test_robots_rdf():
    document = parse_robots_rdf(ROBOTS_RDF, base_url="http://a.cl/robots.rdf")
    assert document.pairs() == [
        ("http://a.cl/index.html", parse_date("2004-10-01")),
        ("http://a.cl/news/1.html", parse_date("2004-10-02T14:00:00Z")),
        ("http://a.cl/old.html", parse_date("2003-01-01")),
        ("http://a.cl/nodate.html", None),
    ]


def test_robots_rdf_as_rss_and_atom():
    rss1 = b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
      <item rdf:about="http://a.cl/1"><link>http://a.cl/1</link><dc:date>2004-10-01</dc:date></item>
    </rdf:RDF>"""
    rss2 = b"""<rss><channel><item><link>/2</link><pubDate>Fri, 01 Oct 2004 00:00:00 GMT</pubDate></item>
      </channel></rss>"""
    atom = b"""<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="http://a.cl/3"/>
      <updated>2004-10-01T00:00:00Z</updated></entry></feed>"""
    when = parse_date("2004-10-01")
    assert parse_robots_rdf(rss1).pairs() == [("http://a.cl/1", when)]
    assert parse_robots_rdf(rss2, "http://a.cl/").pairs() == [("http://a.cl/2", when)]
    assert parse_robots_rdf(atom).pairs() == [("http://a.cl/3", when)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2004-10-01", 1096588800.0),
        ("2004-10-01T18:23:17+00:00", 1096654997.0),
        ("2004-10-01T18:23:17Z", 1096654997.0),
        ("2004-10-01T15:23:17-03:00", 1096654997.0),
        ("2004-10-01T18:23:17.5+0000", 1096654997.5),
        ("2004-10-01T18:23Z", 1096654980.0),
        ("2004-10", 1096588800.0),
        ("2004", 1072915200.0),
        ("Fri, 01 Oct 2004 18:23:17 GMT", 1096654997.0),
        ("1096654997", 1096654997.0),
        ("", None),
        (None, None),
        ("yesterday", None),
        ("2004-13-45", None),
        ("0000-01-01", None),
        ("9999-12-31T23:59:59-23:59", None),
    ],
)
def test_parse_date(text, expected):
    assert parse_date(text) == expected
