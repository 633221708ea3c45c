import time

import pytest
from scrapy.settings import Settings

from wirescrapy.config import default_settings
from wirescrapy.gatherer import Parser
from wirescrapy.gatherer.encoding import decode, detect_encoding
from wirescrapy.items import Link, ParsedPage

URL = "http://example.com/dir/page.html"


@pytest.fixture(scope="module")
def parser():
    return Parser.default()


def urls(page: ParsedPage) -> list[str]:
    return [link.url for link in page.links]


def parse(parser, html: str | bytes, content_type: str | None = None, url: str = URL) -> ParsedPage:
    body = html.encode("utf-8") if isinstance(html, str) else html
    return parser.parse(body, url, content_type)


# Configuration


def test_parser_from_settings_reads_the_wire_settings():
    settings = Settings(default_settings())
    settings.set("WIRE_LINK_ATTRIBUTES", ["a/href", "img/src"])
    settings.set("WIRE_MAX_STORED_SIZE", 1000)
    settings.set("WIRE_OBEY_NOFOLLOW", False)
    parser = Parser.from_settings(settings)
    assert parser.link_attributes == {"a": ("href",), "img": ("src",)}
    assert parser.max_stored_size == 1000 and parser.obey_nofollow is False
    page = parser.parse(b'<img src="/i.png"><a href="/a" rel=nofollow>a</a><frame src="/f">', URL)
    assert [(link.tag, link.url, link.nofollow) for link in page.links] == [
        ("img", "http://example.com/i.png", False),
        ("a", "http://example.com/a", True),
    ]


def test_parser_rejects_bad_configuration():
    with pytest.raises(ValueError, match="tag/attribute"):
        Parser(link_attributes=["href"])
    with pytest.raises(ValueError, match="encoding"):
        Parser(default_charset="no-such-charset")
    with pytest.raises(ValueError, match="max_stored_size"):
        Parser(max_stored_size=0)


def test_parse_checks_its_arguments(parser):
    with pytest.raises(TypeError):
        parser.parse("<p>text</p>", URL)
    with pytest.raises(TypeError):
        parser.parse(b"<p>text</p>", None)
    assert parser.parse(bytearray(b"<p>x</p>"), URL).text == "x"


# Links


def test_links_from_each_configured_tag_in_document_order(parser):
    page = parse(
        parser,
        """<html><head><link rel=stylesheet href="/s.css"></head><body>
        <a href="a.html">A</a><map><area href="/area" alt="An area"></map>
        <iframe src="/if"></iframe><a href="b.html">B</a></body></html>""",
    )
    assert [(link.tag, link.url, link.position) for link in page.links] == [
        ("link", "http://example.com/s.css", 0),
        ("a", "http://example.com/dir/a.html", 1),
        ("area", "http://example.com/area", 2),
        ("iframe", "http://example.com/if", 3),
        ("a", "http://example.com/dir/b.html", 4),
    ]
    assert isinstance(page.links[0], Link)


def test_tag_and_attribute_names_in_any_case(parser):
    page = parse(parser, '<A HREF="/upper">U</A><Area Href="/mixed" ALT="m"><IFRAME SRC="/f"></IFRAME>')
    assert urls(page) == ["http://example.com/upper", "http://example.com/mixed", "http://example.com/f"]
    assert b'<a href="/upper">U</a>' in page.document


def test_frames_of_a_frameset(parser):
    page = parse(parser, '<frameset><frame src="top.html"><frame src="/main.html"></frameset>')
    assert urls(page) == ["http://example.com/dir/top.html", "http://example.com/main.html"]


def test_anchor_text_is_whitespace_collapsed_and_includes_markup_text(parser):
    page = parse(parser, '<a href="/x">  Hello\n\t <b>bold</b>   world </a>')
    assert page.links[0].text == "Hello bold world"


def test_anchor_text_of_an_image_link_is_its_alt(parser):
    page = parse(parser, '<a href="/x"> <img src="logo.png" alt="The  logo"> </a><area href="/y" alt="Map">')
    assert [link.text for link in page.links] == ["The logo", "Map"]


def test_links_in_comments_scripts_and_styles_are_not_extracted(parser):
    page = parse(
        parser,
        """<!-- <a href="/comment">c</a> -->
        <script>document.write('<a href="/script">s</a>')</script>
        <style>a { background: url("/style.png") } /* <a href="/style"> */</style>
        <a href="/real">real</a><!-- unclosed comment <a href="/late">""",
    )
    assert urls(page) == ["http://example.com/real"]


def test_script_text_is_not_anchor_text(parser):
    page = parse(parser, '<a href="/x">Go<script>var x = 1;</script></a>')
    assert page.links[0].text == "Go"


def test_only_http_and_https_links_are_kept(parser):
    page = parse(
        parser,
        """<a href="javascript:void(0)">j</a><a href="mailto:a@b.c">m</a>
        <a href="data:text/html,<p>x</p>">d</a><a href="tel:+5621234">t</a><a href="ftp://f.org/x">f</a>
        <a href="news:comp.lang">n</a><a href="file:///etc/passwd">file</a><a href="JavaScript:x()">J</a>
        <a href="https://secure.org/">s</a><a href="HTTP://Upper.ORG/Path">u</a>""",
    )
    assert urls(page) == ["https://secure.org/", "http://upper.org/Path"]


def test_fragments_are_removed_and_fragment_only_links_dropped(parser):
    page = parse(
        parser,
        '<a href="#top">top</a><a href="">self</a><a href="other.html#part">o</a>'
        '<a href="/x?q=1#frag">q</a><a href="#">hash</a>',
    )
    assert urls(page) == ["http://example.com/dir/other.html", "http://example.com/x?q=1"]


def test_hrefs_that_differ_after_the_hash_share_their_url(parser):
    page = parse(
        parser,
        '<a href="os.html#os.stat">1</a><a href="os.html#os.open">2</a><a href=" os.html# ">3</a>'
        '<a href="os.html #x">4</a><a href="os.html ">5</a><area href="#map"><link href="#l">',
    )
    # a space before the "#" is inside the href: the URL Standard percent-encodes it
    assert urls(page) == ["http://example.com/dir/os.html"] * 3 + [
        "http://example.com/dir/os.html%20",
        "http://example.com/dir/os.html",
    ]


def test_relative_links_resolve_as_a_browser_resolves_them(parser):
    page = parse(
        parser,
        """<a href="../up.html">1</a><a href="./here/./x/../y.html">2</a>
        <a href="/root">3</a><a href="//cdn.example.org/lib.js">4</a><a href="?page=2">5</a>
        <a href="../../../../too-far">6</a><a href="sub/">7</a><a href="a//b">8</a>""",
        url="http://example.com/dir/sub/page.html?x=1",
    )
    assert urls(page) == [
        "http://example.com/dir/up.html",
        "http://example.com/dir/sub/here/y.html",
        "http://example.com/root",
        "http://cdn.example.org/lib.js",
        "http://example.com/dir/sub/page.html?page=2",
        "http://example.com/too-far",
        "http://example.com/dir/sub/sub/",
        "http://example.com/dir/sub/a//b",  # the URL Standard keeps an empty segment (urljoin dropped it)
    ]


def test_entities_in_urls_are_decoded(parser):
    page = parse(
        parser, '<a href="/search?q=a&amp;lang=es&amp;x=&lt;y&gt;">s</a><a href="/&#233;t&eacute;">e</a>'
    )
    assert urls(page) == [
        "http://example.com/search?q=a&lang=es&x=%3Cy%3E",
        "http://example.com/%C3%A9t%C3%A9",
    ]


def test_whitespace_inside_an_href(parser):
    page = parse(parser, '<a href="  /a\n/b\t/c.html\r\n ">x</a><a href="/with space/x y.html">y</a>')
    assert urls(page) == ["http://example.com/a/b/c.html", "http://example.com/with%20space/x%20y.html"]


def test_latin1_page_link_path_is_percent_encoded_as_utf8_and_query_in_page_encoding(parser):
    body = '<a href="/café/résumé.html?q=é">x</a>'.encode("latin-1")
    page = parser.parse(body, URL, "text/html; charset=ISO-8859-1")
    assert page.encoding == "cp1252"
    assert urls(page) == ["http://example.com/caf%C3%A9/r%C3%A9sum%C3%A9.html?q=%E9"]


def test_hrefs_that_browsers_resolve(parser):
    page = parse(
        parser,
        r"""<a href="\x">1</a><a href="\\other.org\y">2</a><a href="///host.org/path">3</a>
        <a href="http:/abs">4</a><a href="http:rel">5</a><a href="https:other.org/z">6</a>
        <a href="http://faß.example/">7</a><a href="http://0xc0.0250.01/">8</a><a href="http://3232235521/">9</a>
        <a href="%2e%2E/up">10</a><a href="http://EXAMPLE.com:80/a/./b/../c">11</a>""",
    )
    assert urls(page) == [
        "http://example.com/x",
        "http://other.org/y",
        "http://host.org/path",
        "http://example.com/abs",
        "http://example.com/dir/rel",
        "https://other.org/z",
        "http://xn--fa-hia.example/",
        "http://192.168.0.1/",
        "http://192.168.0.1/",
        "http://example.com/up",
        "http://example.com/a/c",
    ]


def test_the_query_is_encoded_in_the_page_encoding_as_browsers_do(parser):
    body = '<a href="/q?a=é&b=€&c=\u65e5">1</a><a href="/q?d=é #x">2</a>'.encode(
        "cp1252", "xmlcharrefreplace"
    )
    page = parser.parse(body, URL, "text/html; charset=windows-1252")
    # a character windows-1252 lacks is sent as its HTML reference, "&#26085;" with its "#" escaped
    assert urls(page) == ["http://example.com/q?a=%E9&b=%80&c=&%2326085;", "http://example.com/q?d=%E9%20"]


def test_international_host_names_become_punycode(parser):
    page = parse(parser, '<a href="http://bücher.de/x">x</a>')
    assert urls(page) == ["http://xn--bcher-kva.de/x"]


def test_invalid_urls_are_dropped(parser):
    page = parse(
        parser,
        '<a href="http://example.com:99999/">port</a><a href="https://[::1/">ipv6</a><a href="/ok">ok</a>',
    )
    assert urls(page) == ["http://example.com/ok"]


def test_repeated_links_are_all_listed(parser):
    page = parse(parser, '<a href="/x">one</a><a href="/x#a">two</a><a href="/x">three</a>')
    assert urls(page) == ["http://example.com/x"] * 3
    assert [link.position for link in page.links] == [0, 1, 2]


# <base href>


def test_base_href_absolute(parser):
    page = parse(parser, '<head><base href="http://other.org/b/"></head><a href="x.html">x</a>')
    assert page.base_url == "http://other.org/b/"
    assert urls(page)[-1] == "http://other.org/b/x.html"


def test_base_href_relative_is_resolved_against_the_page(parser):
    page = parse(parser, '<base href="../base/"><a href="x.html">x</a>')
    assert page.base_url == "http://example.com/base/"
    assert urls(page) == ["http://example.com/base/x.html"]  # a <base> is no link (WIRE_LINK_ATTRIBUTES)


def test_only_the_first_base_counts_and_an_invalid_one_is_ignored(parser):
    page = parse(parser, '<base href="/first/"><base href="/second/"><a href="x">x</a>')
    assert page.base_url == "http://example.com/first/"
    page = parse(parser, '<base href="javascript:void(0)"><a href="x">x</a>')
    assert page.base_url == URL and urls(page) == ["http://example.com/dir/x"]
    page = parse(parser, '<base target="_blank"><base href="/b/"><a href="x">x</a>')
    assert page.base_url == "http://example.com/b/"


# nofollow, noindex


def test_rel_nofollow_links_are_excluded_when_obeying(parser):
    page = parse(
        parser,
        '<a href="/a" rel="NoFollow">a</a><a href="/b" rel="noopener nofollow">b</a>'
        '<a href="/c" rel="nofollowing">c</a>',
    )
    assert urls(page) == ["http://example.com/c"]


def test_rel_nofollow_links_are_flagged_when_not_obeying():
    parser = Parser(link_attributes=["a/href"], obey_nofollow=False)
    page = parser.parse(b'<a href="/a" rel="nofollow">a</a><a href="/b">b</a>', URL)
    assert [(link.url, link.nofollow) for link in page.links] == [
        ("http://example.com/a", True),
        ("http://example.com/b", False),
    ]


@pytest.mark.parametrize(
    "content, nofollow, noindex",
    [
        ("nofollow", True, False),
        ("NOINDEX", False, True),
        ("noindex, nofollow", True, True),
        ("none", True, True),
        ("index,follow", False, False),
    ],
)
def test_robots_meta(parser, content, nofollow, noindex):
    page = parse(parser, f'<meta name="Robots" content="{content}"><a href="/x">x</a>')
    assert (page.nofollow, page.noindex) == (nofollow, noindex)
    assert urls(page) == ([] if nofollow else ["http://example.com/x"])


def test_robots_meta_nofollow_when_not_obeying_keeps_links():
    parser = Parser(link_attributes=["a/href"], obey_nofollow=False)
    page = parser.parse(b'<meta name=robots content=nofollow><a href="/x">x</a>', URL)
    assert page.nofollow and urls(page) == ["http://example.com/x"]


# Title, meta, text


def test_title_description_keywords(parser):
    page = parse(
        parser,
        """<title> The
        title &amp; more </title><meta name="description" content="A  page">"""
        """<meta name=KEYWORDS content="a, b">
        <body><svg><title>not this</title></svg>""",
    )
    assert (page.title, page.description, page.keywords) == ("The title & more", "A page", "a, b")


def test_text_is_the_visible_text(parser):
    page = parse(
        parser,
        """<html><head><title>Title</title><style>p {color: red}</style></head>
        <body><h1>Head</h1><p>One &amp; two&nbsp;three</p><script>var hidden;</script>"""
        """<noscript>no js</noscript>
        <table><tr><td>cell1</td><td>cell2</td></tr></table><!-- comment --><p>x &lt; y</p></body></html>""",
    )
    assert page.text == "Head One & two\xa0three cell1 cell2 x < y".replace("\xa0", " ")


def test_blocks_never_glue_words(parser):
    page = parse(parser, "<div>one</div><div>two</div><p>three<br>four</p><ul><li>five<li>six</ul>")
    assert page.text == "one two three four five six"


# The cleaned document


def test_cleaned_document_keeps_structure_and_formatting(parser):
    page = parse(
        parser,
        """<!DOCTYPE html><html><head><title>T</title><link rel=stylesheet href=s.css>
        <style>body{}</style><script src=x.js></script></head>
        <body bgcolor="#ffffff" onload="init()"><div class="main" id="m" style="width: 80%">
        <h1 align=center><font face="Arial" color="red" size=5>Big</font> title</h1>
        <p>Some <b>bold</b>, <i>italic</i> and <strong>strong</strong> text.<!-- secret --></p>
        <table width=100 border=1 cellpadding=2><tr><td width="50" bgcolor="blue">cell</td></tr></table>
        <a href="/x" title="X" target="_blank" onclick="track()">link</a><img src="i.png" alt="pic" width=10>
        <center><marquee>moving</marquee></center><noscript>enable js</noscript></div></body></html>""",
    )
    document = page.document.decode("utf-8")
    for kept in (
        "<title>T</title>",
        "<h1>Big title</h1>",
        "<b>bold</b>",
        "<i>italic</i>",
        "<strong>strong</strong>",
        "<table><tr><td>cell</td></tr></table>",
        '<a href="/x" title="X">link</a>',
        '<img src="i.png" alt="pic">',
        "<body><div>",
        "moving",
    ):
        assert kept in document
    for dropped in (
        "DOCTYPE",
        "body{}",
        "x.js",
        "secret",
        "bgcolor",
        "class=",
        "style=",
        "width",
        "font",
        "center",
        "marquee",
        "onclick",
        "onload",
        "enable js",
        "target",
        "<link",
        "<script",
        "<style",
    ):
        assert dropped not in document


def test_cleaned_document_is_utf8_and_says_so(parser):
    body = (
        '<meta charset="iso-8859-1"><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
        "<p>año</p>".encode("latin-1")
    )
    page = parser.parse(body, URL)
    assert page.encoding == "cp1252"
    document = page.document.decode("utf-8")
    assert "<p>año</p>" in document
    assert '<meta charset="utf-8">' in document and 'content="text/html; charset=utf-8"' in document


def test_cleaned_document_keeps_escapes(parser):
    page = parse(parser, '<p title="a &quot;q&quot; &lt;b&gt;">1 &lt; 2 &amp;&amp; 3 &gt; 2</p>')
    assert b'<p title="a &quot;q&quot; &lt;b&gt;">1 &lt; 2 &amp;&amp; 3 &gt; 2</p>' in page.document


def test_attribute_like_text_is_not_touched(parser):
    page = parse(parser, '<pre>&lt;font color="red" size="2"&gt;</pre><p>say class="x" now</p>')
    assert b'<pre>&lt;font color="red" size="2"&gt;</pre>' in page.document
    assert b'say class="x" now' in page.document


def test_raw_text_elements_become_text(parser):
    page = parse(
        parser,
        '<xmp><b>shown</b></xmp><iframe src="/f"><a href="/x">fallback</a></iframe>'
        '<noembed><i>n</i></noembed><plaintext><a href="/p">rest',
    )
    assert b"&lt;b&gt;shown&lt;/b&gt;" in page.document
    assert b'<iframe src="/f"></iframe>' in page.document
    assert urls(page) == ["http://example.com/f"]
    assert "<b>shown</b>" in page.text and '<a href="/p">rest' in page.text


def test_discarded_elements_go_with_their_content(parser):
    page = parse(
        parser,
        '<p>a<object data="x"><embed src="y"><param name=p value=q>obj</object>b'
        '<svg><text>vector</text><a href="/svg">in svg</a></svg>c<template><p>tpl</p></template></p>',
    )
    assert b"<p>abc</p>" in page.document
    assert page.text == "a b c"  # text nodes are joined with a space: words never glue, rarely split
    assert urls(page) == ["http://example.com/svg"]  # a real link, read before its <svg> is dropped


def test_cleaned_document_is_cut_at_max_stored_size_outside_tags_and_characters():
    parser = Parser(
        link_attributes=["a/href"],
        keep_tags=["p", "a", "body", "html", "head"],
        keep_attributes=["href"],
        max_stored_size=100,
    )
    body = ("<p>" + "é" * 10 + '<a href="/a-long-link-target">x</a>' * 10 + "</p>").encode("utf-8")
    page = parser.parse(body, URL)
    assert page.truncated and len(page.document) <= 100
    text = page.document.decode("utf-8")  # no broken character
    assert text.rfind("<") < text.rfind(">")  # no broken tag
    for size in range(1, 120):
        parser = Parser(
            keep_tags=["p", "a", "body", "html", "head"], keep_attributes=["href"], max_stored_size=size
        )
        document = parser.parse("<p>ñandú &amp; <a href='/x'>ünïcode</a> &lt;3</p>".encode(), URL).document
        assert len(document) <= size
        cut = document.decode("utf-8")
        assert cut.rfind("<") <= cut.rfind(">") and "&" not in cut[cut.rfind(";") + 1 :]


def test_document_size_is_not_cut_below_the_limit(parser):
    page = parse(parser, "<p>short</p>")
    assert not page.truncated and page.original_size == len(b"<p>short</p>")


# Encodings


def test_bom_wins_over_the_header_and_the_meta():
    body = b"\xef\xbb\xbf<meta charset=windows-1251><p>\xc3\xa9</p>"
    assert detect_encoding(body, "text/html; charset=iso-8859-5", "cp1252") == ("utf-8", 3)
    assert decode(body, "text/html; charset=iso-8859-5", "cp1252")[1].endswith("<p>é</p>")


def test_utf16_with_a_bom(parser):
    for codec in ("utf-16-le", "utf-16-be"):
        bom = "\ufeff".encode(codec)
        body = bom + '<meta charset="utf-8"><p>ñ ü</p><a href="/ü">x</a>'.encode(codec)
        page = parser.parse(body, URL, "text/html; charset=iso-8859-1")
        assert page.encoding == codec and page.text == "ñ ü x"
        assert urls(page) == ["http://example.com/%C3%BC"]


def test_header_charset_wins_over_meta_charset(parser):
    body = '<meta charset="windows-1251"><p>España</p>'.encode("latin-1")
    page = parser.parse(body, URL, "text/html; charset=ISO-8859-1")
    assert page.encoding == "cp1252" and page.text == "España"


def test_meta_charset_without_header(parser):
    body = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251"><p>Привет</p>'
    page = parser.parse(body.encode("cp1251"), URL, "text/html")
    assert page.encoding == "cp1251" and page.text == "Привет"


def test_meta_declaring_utf16_means_utf8(parser):
    page = parser.parse('<meta charset="utf-16"><p>ü</p>'.encode(), URL)
    assert page.encoding == "utf-8" and page.text == "ü"


def test_shift_jis(parser):
    body = '<meta charset="Shift_JIS"><title>日本語</title><a href="/日本?q=語">リンク</a>'.encode(
        "shift_jis"
    )
    page = parser.parse(body, URL)
    assert page.encoding == "cp932" and page.title == "日本語" and page.links[0].text == "リンク"
    assert urls(page) == ["http://example.com/%E6%97%A5%E6%9C%AC?q=%8C%EA"]
    assert "日本語".encode() in page.document


def test_undeclared_utf8_is_detected_and_otherwise_the_default_charset_is_used(parser):
    assert parser.parse("<p>€ ñ</p>".encode(), URL).text == "€ ñ"
    page = parser.parse("<p>€ ñ</p>".encode("cp1252"), URL)
    assert page.encoding == "cp1252" and page.text == "€ ñ"
    parser_1251 = Parser(default_charset="windows-1251")
    assert parser_1251.parse("<p>Привет</p>".encode("cp1251"), URL).text == "Привет"


def test_utf8_cut_in_the_middle_of_a_character_is_still_utf8(parser):
    body = "<p>ñandú</p><p>€".encode()[:-1]
    page = parser.parse(body, URL)
    assert page.encoding == "utf-8" and page.text.startswith("ñandú")


def test_invalid_utf8_becomes_replacement_characters(parser):
    page = parser.parse(b"<p>ok \xff\xfe \xc3 bad \xe2\x82</p>", URL, "text/html; charset=utf-8")
    assert page.text == "ok \ufffd\ufffd \ufffd bad \ufffd"
    page.document.decode("utf-8")


# Malformed input


def test_nul_bytes_and_control_characters(parser):
    page = parse(parser, b'<p>a\x00b\x01c\x1f<a hr\x00ef="/x" href="/y\x00z">l\x00ink</a>\x7f</p>\x00')
    assert "\x00" not in page.text and b"\x00" not in page.document
    assert urls(page) == ["http://example.com/y%EF%BF%BDz"]
    page.document.decode("utf-8")


def test_binary_bytes_sent_as_html(parser):
    body = bytes(range(256)) * 200 + b"\x89PNG\r\n\x1a\n" + bytes(reversed(range(256))) * 200
    page = parser.parse(body, URL, "text/html")
    assert page.links == [] and len(page.document) <= parser.max_stored_size
    page.document.decode("utf-8")
    page.text.encode("utf-8")


@pytest.mark.parametrize(
    "body", [b"", b"   \n\t\r\n  ", b"\xef\xbb\xbf", b"\xff\xfe", b"<!--", b"<a href=", b"<"]
)
def test_empty_and_degenerate_bodies(parser, body):
    page = parser.parse(body, URL)
    assert page.links == [] and page.text == ("<" if body == b"<" else "") and page.title == ""
    assert page.document == (b"&lt;" if body == b"<" else b"")  # no tag is added: the page's own are kept


def test_plain_text_pages_have_no_links(parser):
    body = "Just text with <a href='/x'>markup</a> and http://example.org/ and ñ\n".encode()
    page = parser.parse(body, URL, "text/plain; charset=utf-8")
    assert not page.is_html and page.links == []
    assert page.text == body.decode("utf-8") and page.document == body


def test_plain_text_is_cut_at_max_stored_size():
    page = Parser(max_stored_size=5).parse("ñññ".encode(), URL, "text/plain")
    assert page.truncated and page.document == "ññ".encode()


def test_thousand_deep_nesting(parser):
    body = b"<div>" * 1000 + b'<a href="/deep">deep</a>' + b"</div>" * 1000
    page = parser.parse(body, URL)
    assert urls(page) == ["http://example.com/deep"] and page.text == "deep"
    assert page.document.count(b"<div>") == 1000


@pytest.mark.parametrize(
    "unit", [b"<div>", b"<dl><dt>", b"<b><div>", b"<span><section><blockquote>", b"<p><b><i><u>", b"<ul><li>"]
)
def test_pathological_nesting_stays_fast(parser, unit):
    # A tree builder's scope checks are quadratic on such pages (Lexbor took seconds); the scanner keeps no
    # stack.
    body = unit * (400_000 // len(unit)) + b'<a href="/deep">deep</a>'
    start = time.perf_counter()
    page = parser.parse(body, URL)
    assert time.perf_counter() - start < 2
    assert urls(page) == ["http://example.com/deep"]


def test_unclosed_and_misnested_markup(parser):
    page = parse(
        parser,
        '<p>one<b>two<i>three</b>four</i><a href="/a">x<a href="/b">y</p><table><td>z'
        '<tr><a href="/c" <<>>c</a><p <a href="/d">d</a>',
    )
    assert urls(page)[:2] == ["http://example.com/a", "http://example.com/b"]
    assert "one two three four".replace(" ", "") in page.text.replace(" ", "")


def test_page_over_400kb(parser):
    body = (
        b"<html><body>" + b'<p class="c">paragraph <a href="/x%d">link</a></p>\n' * 12_000 + b"</body></html>"
    )
    assert len(body) > 400_000
    page = parser.parse(body, URL)
    assert len(page.links) == 12_000 and page.truncated
    assert len(page.document) <= parser.max_stored_size
    assert page.text.count("paragraph") == 12_000


def test_parse_is_pure(parser):
    body = b'<base href="/b/"><a href="x">x</a>'
    assert parser.parse(body, URL) == parser.parse(body, URL)
    assert urls(parser.parse(b'<a href="x">x</a>', URL)) == ["http://example.com/dir/x"]


# What the one-pass scanner does where a tree builder would have decided


def test_character_references_follow_the_html_standard(parser):
    page = parse(
        parser,
        '<a href="/s?a=1&copy=2&amp;b=&notit;&lt">x</a>'
        "<p>&notit; &copy &amp &#150; &#x80; &#0; &#xD800; &#1114112; &#65 &bogus; &</p>",
    )
    # In a value, a legacy name followed by "=" or a letter stays as it is: "&copy=", "&notit;"
    assert urls(page) == ["http://example.com/s?a=1&copy=2&b=&notit;%3C"]
    assert page.text == "x ¬it; © & – € \ufffd \ufffd \ufffd A &bogus; &"


def test_inline_elements_do_not_split_words_and_blocks_do(parser):
    page = parse(parser, "<p>W<b>or</b>d<span>s</span></p><div>next</div>line<br>break<td>cell</td>x")
    assert page.text == "Words next line break cell x"


def test_a_new_anchor_closes_the_open_one(parser):
    page = parse(parser, '<a href="/1">one<a href="/2">two</a> after<a href="/3"><img alt="three">')
    assert [(link.url, link.text) for link in page.links] == [
        ("http://example.com/1", "one"),
        ("http://example.com/2", "two"),
        ("http://example.com/3", "three"),
    ]


def test_links_nested_in_an_anchor_keep_their_own_text(parser):
    page = parse(parser, '<a href="/a">anchor <iframe src="/f"></iframe> text</a>')
    assert [(link.url, link.text) for link in page.links] == [
        ("http://example.com/a", "anchor text"),
        ("http://example.com/f", ""),
    ]


def test_an_unclosed_discarded_element_ends_with_the_body(parser):
    page = parse(parser, "<body><p>before<object><p>gone</p></body><p>after</p>")
    assert page.text == "before after" and b"gone" not in page.document
    assert b"</body>" in page.document


def test_html_elements_break_out_of_svg(parser):
    page = parse(
        parser,
        '<svg><circle/><p>visible</p><a href="/x">x</a></svg>'
        '<svg/><p>also</p><math><![CDATA[<a href="/cdata">]]></math><p>end</p>',
    )
    assert page.text == 'visible x also <a href="/cdata"> end'  # CDATA in <math> (not discarded) is text
    assert urls(page) == ["http://example.com/x"]


def test_text_in_head_is_not_visible_unless_it_is_not_white_space(parser):
    page = parse(parser, "<html><head>\n  <meta charset=utf-8>\n</head><body>body</body>")
    assert page.text == "body"
    page = parse(parser, "<head><title>T</title>stray text<p>para</p>")
    assert page.text == "stray text para" and page.title == "T"


def test_raw_text_ends_only_at_its_own_end_tag(parser):
    page = parse(
        parser,
        '<script>if (a < b) { x = "</scriptx>"; y = "<a href=/no>" }</SCRIPT >'
        '<style>a::after { content: "</p>" }</style><textarea><a href="/t">&amp;</a></textarea>'
        '<title>a <b> &amp; b</title><a href="/yes">yes</a>',
    )
    assert urls(page) == ["http://example.com/yes"]
    assert page.title == "a <b> & b"
    assert page.text == '<a href="/t">&</a> yes'


def test_comments_end_as_the_standard_says(parser):
    page = parse(
        parser,
        '<!--><a href="/1">1</a><!---><a href="/2">2</a><!-- a -- b --!><a href="/3">3</a>'
        '<!-- <a href="/no"> --><? pi <a href="/no2"> ?><!DOCTYPE x><a href="/4">4</a>',
    )
    assert urls(page) == [f"http://example.com/{n}" for n in range(1, 5)]


def test_attributes_in_every_syntax(parser):
    page = parse(
        parser,
        '<a href=/u1 title=t>1</a><a HREF = \'/u2\'>2</a><a href="/u3"href="/no">3</a>'
        '<a href >4</a><a =x href=/u5>5</a><a/href="/u6">6</a><a href=/u7/>7</a>',
    )
    assert urls(page) == [
        "http://example.com/u1",
        "http://example.com/u2",
        "http://example.com/u3",
        "http://example.com/u5",
        "http://example.com/u6",
        "http://example.com/u7/",
    ]
    assert b'<a href="/u1" title="t">1</a>' in page.document and b'<a href="">4</a>' in page.document


def test_a_tag_cut_by_the_end_of_the_page_is_dropped(parser):
    page = parse(parser, '<p>text</p><a href="/x" title="unfinished')
    assert page.links == [] and page.text == "text" and page.document == b"<p>text</p>"


def test_many_attributes_and_long_names(parser):
    noise = " ".join(f"data-a{i}=v{i}" for i in range(500))
    page = parse(
        parser,
        f'<a {noise} href="/late">late</a><{"x" * 5000} href="/no">t</{"x" * 5000}>'
        f'<a {"y" * 100}="1" href="/ok">ok</a>',
    )
    assert urls(page) == ["http://example.com/late", "http://example.com/ok"]
    assert page.text == "latetok"  # inline elements, as a browser renders them


def test_document_white_space_is_collapsed_outside_pre(parser):
    page = parse(parser, "<div>\n\n   a   \t b\n</div><pre>  keep\n\n  this  </pre>")
    assert page.document == b"<div>\na b\n</div><pre>  keep\n\n  this  </pre>"


def test_tag_names_longer_than_the_scanner_knows_are_refused():
    with pytest.raises(ValueError, match="tag name"):
        Parser(keep_tags=["x" * 40])


# Defects found against html5lib's tests (tests/test_conformance_html.py runs the suites themselves)


def test_noscript_ends_at_its_end_tag_whatever_it_holds(parser):
    # A tag manager's snippet: the <iframe> is never closed; a browser running scripts reads the <noscript>
    # as raw text up to </noscript>, so the rest of the page is there.
    page = parse(
        parser,
        '<body><noscript><iframe src="https://www.googletagmanager.com/ns.html?id=GTM-X" '
        'height="0" width="0"></noscript><p>after</p><a href="/next">next</a>',
    )
    assert page.text == "after next"
    assert urls(page) == ["https://www.googletagmanager.com/ns.html?id=GTM-X", "http://example.com/next"]
    page = parse(
        parser, '<noscript><svg><a href="/in">in</a><!-- open comment </noscript>out <a href="/out">o</a>'
    )
    assert page.text == "out o" and urls(page) == ["http://example.com/in", "http://example.com/out"]


def test_named_references_whose_name_extends_another(parser):
    # &sup1; sorts after &sup; only without the ';': the table is searched that way
    page = parse(
        parser, '<p>&sup1;&sup2;&sup3; x&emsp13;y&emsp14;z &supE; &sup;</p><a href="/s?x=&sup2;">a</a>'
    )
    assert page.text == "¹²³ x y z \u2ac6 \u2283 a"  # U+2004 and U+2005 are white space
    assert "x\u2004y\u2005z".encode() in page.document
    assert urls(page) == ["http://example.com/s?x=%C2%B2"]


def test_an_html_end_tag_closes_the_svg_around_it(parser):
    page = parse(
        parser,
        '<div><svg><path d="M0"></div><p>after</p><span><svg><g></span>more'
        '<svg><a href="/in"><text>label</text></a></svg>last',
    )
    assert page.text == "after more last"
    assert urls(page) == ["http://example.com/in"]
    page = parse(parser, "<svg><foo></bar>inside</svg>out")  # no HTML element of that name: nothing closes
    assert page.text == "out"


def test_script_data_escapes_hide_a_nested_script_end_tag(parser):
    page = parse(parser, '<script><!-- document.write("<script>x()</script>"); --></script><p>after</p>')
    assert page.text == "after"


def test_nul_is_a_replacement_character_in_raw_text_and_names(parser):
    page = parse(parser, "<textarea>a\x00b</textarea>")
    assert page.text == "a\ufffdb"
