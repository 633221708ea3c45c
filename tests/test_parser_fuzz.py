"""Property tests: the parser never crashes, and what it returns always has the promised shape."""

from urllib.parse import urlsplit

import ada_url
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wirescrapy.gatherer import Parser
from wirescrapy.gatherer.resolve import _PLAIN_REFERENCE, Resolver, _is_plain_absolute

FUZZ = settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PARSER = Parser.default()
SMALL = Parser(
    link_attributes=["a/href", "area/href", "frame/src", "iframe/src", "link/href", "base/href", "img/src"],
    keep_tags=[
        "html",
        "head",
        "body",
        "p",
        "a",
        "b",
        "div",
        "table",
        "tr",
        "td",
        "pre",
        "iframe",
        "meta",
        "title",
    ],
    keep_attributes=["href", "src", "alt", "title", "content", "charset", "name"],
    discard_content=["script", "style", "svg", "object", "noscript"],
    max_stored_size=512,
    obey_nofollow=False,
)

TOKENS = [
    "<a href=",
    "<a href='",
    '<a href="',
    "</a>",
    "<area href=x>",
    "<base href=",
    "<frame src=",
    "<iframe src=",
    "</iframe>",
    "<link href=",
    "<img src=x alt=",
    "<p>",
    "</p>",
    "<div class=x style='a:b'>",
    "</div>",
    "<b>",
    "</b>",
    "<table><tr><td>",
    "</td>",
    "<pre>",
    "</pre>",
    "<script>",
    "</script>",
    "<style>",
    "</style>",
    "<svg>",
    "</svg>",
    "<noscript>",
    "</noscript>",
    "<object>",
    "<template>",
    "</template>",
    "<xmp>",
    "<plaintext>",
    "<noembed>",
    "<noframes>",
    "<textarea>",
    "<title>",
    "</title>",
    "<!--",
    "-->",
    "--!>",
    "<!DOCTYPE html>",
    "<?xml version='1.0'?>",
    "<![CDATA[",
    "]]>",
    "<meta charset=utf-8>",
    "<meta name=robots content=nofollow>",
    "<meta http-equiv=content-type content='text/html; charset=",
    "<math>",
    "<mi>",
    "<select><option>",
    "<frameset>",
    "<html>",
    "<body onload=x>",
    "&amp;",
    "&lt;",
    "&gt;",
    "&quot;",
    "&#0;",
    "&#xD800;",
    "&#x110000;",
    "&nbsp;",
    "&eacute;",
    "&",
    "<",
    ">",
    '"',
    "'",
    "=",
    " ",
    "\n",
    "\t",
    "\x00",
    "\x0c",
    "\ufeff",
    "\ufffd",
    "é",
    "日本",
    "\U0001f600",
    "javascript:",
    "mailto:x@y",
    "http://",
    "https://h.org/",
    "//cdn.org/",
    "#frag",
    "?q=1&r=2",
    "../",
    "./",
    "/",
    "%",
    "%zz",
    "%C3%A9",
    "\\",
    "[::1]",
    ":99999",
    "xn--",
    "bücher.de",
    " rel=nofollow",
    ' title="x y="',
    '=""',
    "<a",
    '<p title="',
    '>"',
    # foreign elements named like raw-text or discarded ones, which may hold elements
    "<svg><iframe>",
    "<svg><xmp>",
    "<svg><script>",
    "<svg><style>",
    "<math><xmp>",
    "<math><mtext>",
    "<svg><foreignObject>",
    "<annotation-xml encoding='text/html'>",
    "<svg><title>",
    "<svg><noscript>",
]

ENCODINGS = ["utf-8", "latin-1", "cp1252", "utf-16", "shift_jis", "cp1251", "gb18030"]
CONTENT_TYPES = [
    None,
    "text/html",
    "text/html; charset=utf-8",
    "text/html; charset=iso-8859-1",
    "text/html; charset=shift_jis",
    "text/html; charset=utf-16",
    "text/html; charset=bogus",
    "text/plain",
    "text/plain; charset=utf-8",
    "application/xhtml+xml",
    'text/html; charset="utf-7"',
]
BASES = [
    "http://example.com/",
    "http://example.com/dir/page.html",
    "https://h.example.org/a/b/c?x=1",
    "http://example.com",
    "http://example.com/dir/",
    "https://example.com:8443/a/./b/../c.html?q",
    "http://xn--bcher-kva.de/%C3%A9/x",
]

soup = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)), max_size=300).map("".join)


def check(page, parser):
    for link in page.links:
        url = link.url
        assert url.startswith(("http://", "https://")), url
        assert "#" not in url and not any(char.isspace() for char in url), url
        assert urlsplit(url).netloc, url
        assert not any(char.isspace() for char in link.text.replace(" ", "")), link.text
        assert link.text == link.text.strip()
    assert [link.position for link in page.links] == list(range(len(page.links)))
    assert len(page.document) <= parser.max_stored_size
    page.document.decode("utf-8")  # valid UTF-8, not cut inside a character
    assert isinstance(page.text, str)
    page.text.encode("utf-8")  # no lone surrogates
    page.title.encode("utf-8")


@FUZZ
@given(
    body=st.binary(max_size=20_000), content_type=st.sampled_from(CONTENT_TYPES), base=st.sampled_from(BASES)
)
def test_random_bytes_never_crash(body, content_type, base):
    for parser in (PARSER, SMALL):
        check(parser.parse(body, base, content_type), parser)


@FUZZ
@given(
    html=soup,
    encoding=st.sampled_from(ENCODINGS),
    content_type=st.sampled_from(CONTENT_TYPES),
    base=st.sampled_from(BASES),
)
def test_html_token_soup_never_crashes(html, encoding, content_type, base):
    body = html.encode(encoding, "replace")
    for parser in (PARSER, SMALL):
        page = parser.parse(body, base, content_type)
        check(page, parser)
        if parser is SMALL and page.is_html and not page.truncated:
            assert b"<!--" not in page.document and b"<script" not in page.document


def browser_join(base: str, href: str) -> str | None:
    """What a browser makes of ``href`` on a page at ``base`` (ada, the URL Standard), as a link: http(s)
    only, without the fragment; None for an empty or fragment-only href (the page itself)."""
    cleaned = href.strip("".join(map(chr, range(0x21)))).translate(str.maketrans("", "", "\t\n\r"))
    if not cleaned.split("#")[0]:
        return None
    try:
        url = ada_url.join_url(base, cleaned)
    except ValueError:
        return None
    return url.split("#")[0] if url.startswith(("http://", "https://")) else None


@FUZZ
@given(
    href=st.text(alphabet=st.sampled_from("ab/.?=&%:@!$()*+,~_-9Zé #\t;\\[]'\"2eE"), max_size=20),
    base=st.sampled_from(BASES),
)
def test_links_resolve_as_the_url_standard_says(href, base):
    """The fast path for plain relative references gives what the URL Standard's parser gives."""
    resolver = Resolver(base, "utf-8")
    assert resolver.resolve(href) == browser_join(base, href), (base, href)
    cleaned = href.strip("".join(map(chr, range(0x21)))).replace("\t", "").split("#")[0]
    if (
        cleaned
        and _PLAIN_REFERENCE.fullmatch(cleaned)
        and not cleaned.startswith("//")
        and "%2" not in cleaned
        and ":" not in cleaned.split("/")[0]
    ):
        assert resolver._join_plain(cleaned) == browser_join(base, cleaned)


@FUZZ
@given(
    scheme=st.sampled_from(
        ["http://", "https://"] * 3 + ["HTTP://", "hTtps://", "http:", "http:///", "ftp://"]
    ),
    host=st.one_of(
        st.sampled_from(
            [
                "example.com",
                "a-b.c0.org",
                "xn--bcher-kva.de",
                "10.0.0.1",
                ".",
                "-",
                "0x7f.1",
                "1.2.3",
                "a.09",
                "xn--a.b",
                "a..b",
                "192.168.0.1.",
            ]
        ),
        st.text(alphabet=st.sampled_from("az09.-_AZé%@[]:x"), max_size=12),
    ),
    port=st.sampled_from(
        [""] * 4 + [":", ":0", ":08", ":80", ":443", ":8080", ":65535", ":65536", ":99999", ":x"]
    ),
    rest=st.one_of(
        st.sampled_from(["", "/", "/a?b", "/x/../y?q=1&r", "?a", "/a?", "/%2e/", "/a/."]),
        st.text(alphabet=st.sampled_from("ab/.?=&%:@!$()*+,~_-9Z"), max_size=16),
        st.text(alphabet=st.sampled_from("ab/.?=&%:@!$()*+,~_-9Zé #\t;\\[]'\""), max_size=16),
    ),
    base=st.sampled_from(BASES),
    encoding=st.sampled_from(["utf-8", "cp1252", "utf-16-le", "utf-7"]),
)
def test_absolute_links_resolve_as_the_url_standard_says(scheme, host, port, rest, base, encoding):
    """The fast path for absolute URLs gives what the URL Standard's parser gives, in any page encoding."""
    href = scheme + host + port + rest
    if _is_plain_absolute(href):
        assert browser_join(base, href) == href
    got = Resolver(base, encoding).resolve(href)
    if href.isascii() or encoding in ("utf-8", "utf-16-le", "utf-7"):  # the query in UTF-8
        assert got == browser_join(base, href), (base, href)


@settings(max_examples=300, deadline=None)
@given(size=st.integers(min_value=1, max_value=400), html=soup)
def test_document_never_exceeds_max_stored_size(size, html):
    parser = Parser(
        keep_tags=["p", "a", "b", "html", "head", "body"], keep_attributes=["href"], max_stored_size=size
    )
    page = parser.parse(html.encode("utf-8", "replace"), "http://example.com/")
    assert len(page.document) <= size
    document = page.document.decode("utf-8")
    if page.truncated:
        assert document.rfind("<") <= document.rfind(">")


# Differential: on well-formed pages the scanner (no tree) finds what an HTML5 tree builder (Lexbor) finds.

ENTITIES = [
    "&amp;",
    "&lt;",
    "&gt;",
    "&quot;",
    "&eacute;",
    "&#233;",
    "&#xE9;",
    "&nbsp;",
    "&copy",
    "&notit;",
    "&amp=",
    "&#150;",
    "&bogus;",
    "&",
    "&#0;",
    "&hellip;",
    "&NotNestedLessLess;",
]
WORDS = st.one_of(st.sampled_from(["word", "Ñandú", "日本", "a", "x-y", "42"]), st.sampled_from(ENTITIES))
VALUES = st.lists(
    st.one_of(
        st.sampled_from(["/p", "x.html", "?q=1", "http://h.org/é", "a b", "#f", ""]),
        st.sampled_from(ENTITIES),
    ),
    max_size=4,
).map("".join)
INLINE = ["b", "i", "span", "em", "code", "strong"]
BLOCK = ["div", "p", "li", "h2", "td", "section"]


def _attribute(name: str, value: str, quote: str) -> str:
    if quote == "" and (value == "" or any(c in value for c in " \"'=<>`")):
        quote = '"'
    if quote and quote in value:
        quote = "'" if quote == '"' else '"'
        if quote in value:
            value = value.replace('"', "&quot;").replace("'", "&#39;")
    return f" {name}={quote}{value}{quote}"


@st.composite
def elements(draw, depth=0):
    kind = draw(
        st.sampled_from(
            ["text", "inline", "block", "a", "area", "iframe", "script", "comment", "br"]
            if depth < 4
            else ["text", "a"]
        )
    )
    case = draw(st.sampled_from([str.lower, str.upper]))
    if kind == "text":
        return " ".join(draw(st.lists(WORDS, min_size=1, max_size=4)))
    if kind == "br":
        return f"<{case('br')}>"
    if kind == "comment":
        return "<!-- <a href='/hidden'>c</a> -->"
    if kind == "script":
        return '<script>var s = "<a href=/no>";</script>'
    quote = draw(st.sampled_from(['"', "'", ""]))
    if kind in ("a", "area", "iframe"):
        attribute = "src" if kind == "iframe" else "href"
        attrs = _attribute(attribute, draw(VALUES), quote)
        if draw(st.booleans()):
            attrs = _attribute("title", draw(VALUES), quote) + attrs
        if kind == "area":
            return f"<{case('area')}{attrs}{_attribute('alt', draw(VALUES), quote)}>"
        if kind == "iframe":
            return f"<{case('iframe')}{attrs}></iframe>"
        inner = "".join(draw(st.lists(st.sampled_from(["text"]).flatmap(lambda _: elements(4)), max_size=2)))
        return f"<{case('a')}{attrs}>{inner}</a>"
    tag = draw(st.sampled_from(INLINE if kind == "inline" else BLOCK))
    children = draw(st.lists(elements(depth + 1), max_size=4))
    if tag == "li":
        return f"<ul><li>{''.join(children)}</li></ul>"
    if tag == "td":
        return f"<table><tr><td>{''.join(children)}</td></tr></table>"
    if (
        tag == "p" or kind == "inline"
    ):  # no blocks inside a <p> or an inline element: the tree would move them
        children = [
            c
            for c in children
            if not c.startswith(
                (
                    "<div",
                    "<DIV",
                    "<p",
                    "<P",
                    "<ul",
                    "<UL",
                    "<h2",
                    "<H2",
                    "<table",
                    "<TABLE",
                    "<section",
                    "<SECTION",
                )
            )
        ]
    return f"<{case(tag)}{_attribute('class', 'c', quote)}>{''.join(children)}</{tag}>"


@st.composite
def pages(draw):
    title = " ".join(draw(st.lists(WORDS, max_size=3)))
    body = "".join(draw(st.lists(elements(), max_size=6)))
    return f"<!DOCTYPE html><html><head><title>{title}</title></head><body>{body}</body></html>"


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(html=pages())
def test_scanner_agrees_with_an_html5_tree_builder_on_well_formed_pages(html):
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html.encode("utf-8"))
    expected = []
    for node in tree.css("a, area, iframe"):
        value = node.attributes.get("src" if node.tag == "iframe" else "href")
        if value is not None and not value.startswith("#"):
            expected.append((node.tag, value))
    for script in tree.css("script"):
        script.decompose()  # not text
    _document, text, title, _base, found, _metas = PARSER._scanner.scan(html.encode("utf-8"))
    assert [(tag, value) for tag, value, _text, _nofollow in found] == expected
    assert title == " ".join(tree.css_first("title").text().split())
    assert "".join(text.split()) == "".join(tree.body.text(deep=True).split()).replace("\x00", "")
