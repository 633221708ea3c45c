import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from w3lib.url import safe_url_string

from wirescrapy.url import (
    BadURL,
    canonical_parts,
    canonicalize,
    host_of,
    origin,
    remove_dot_segments,
    request_host,
    robots_txt_url,
    root_url,
    site_of,
    split,
    url_scheme,
)

CASES = [
    # scheme and host case, trailing dot, empty path
    ("HTTP://WWW.Example.COM", "http://www.example.com/"),
    ("hTTps://a.CL/Path/X", "https://a.cl/Path/X"),
    ("http://a.cl./", "http://a.cl/"),
    ("http://a.cl?q", "http://a.cl/?q"),
    # ports
    ("http://a.cl:80/", "http://a.cl/"),
    ("https://a.cl:443/x", "https://a.cl/x"),
    ("http://a.cl:443/", "http://a.cl:443/"),
    ("https://a.cl:80/", "https://a.cl:80/"),
    ("http://a.cl:08080/", "http://a.cl:8080/"),
    ("http://a.cl:/", "http://a.cl/"),
    ("ftp://a.cl:21/f", "ftp://a.cl/f"),
    # international host names
    ("http://BÜCHER.de/", "http://xn--bcher-kva.de/"),
    ("http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/"),
    ("http://ñandú.cl/", "http://xn--and-6ma2c.cl/"),
    ("http://例え.テスト/", "http://xn--r8jz45g.xn--zckzah/"),
    ("http://ＥＸＡＭＰＬＥ。com/", "http://example.com/"),
    ("http://%77ww.a.cl/", "http://www.a.cl/"),
    ("http://faß.example/", "http://xn--fa-hia.example/"),  # UTS #46 (IDNA 2008), not IDNA 2003's fass
    ("http://ⓐ.Straße.de/", "http://a.xn--strae-oqa.de/"),
    # IPv4 and IPv6
    ("http://192.168.0.1:80/", "http://192.168.0.1/"),
    (
        "http://0xc0.0250.01/",
        "http://192.168.0.1/",
    ),  # every numeric form browsers read: one address, one site
    ("http://3232235521/", "http://192.168.0.1/"),
    ("http://192.168.1/", "http://192.168.0.1/"),
    ("http://0XC0.0xA8.0.0x1./", "http://192.168.0.1/"),
    ("http://[::0:1]/", "http://[::1]/"),
    ("http://[2001:DB8:0:0::1]:8080/a", "http://[2001:db8::1]:8080/a"),
    # user information is dropped
    ("http://user:pass@a.cl/", "http://a.cl/"),
    ("http://a@b@a.cl/", "http://a.cl/"),
    # dot segments
    ("http://a.cl/a/./b/../c", "http://a.cl/a/c"),
    ("http://a.cl/../../x", "http://a.cl/x"),
    ("http://a.cl/a/b/..", "http://a.cl/a/"),
    ("http://a.cl/a/.", "http://a.cl/a/"),
    ("http://a.cl/a/%2E%2e/b", "http://a.cl/b"),
    ("http://a.cl/a/.%2E", "http://a.cl/"),
    ("http://a.cl/.../x", "http://a.cl/.../x"),
    ("http://a.cl//a//b", "http://a.cl//a//b"),
    # percent-encoding
    ("http://a.cl/%7Euser/%41%62", "http://a.cl/~user/Ab"),
    ("http://a.cl/%e2%82%ac", "http://a.cl/%E2%82%AC"),
    ("http://a.cl/a%2fb", "http://a.cl/a%2Fb"),
    ("http://a.cl/a%2Fb/../c", "http://a.cl/c"),
    ("http://a.cl/100%", "http://a.cl/100%25"),
    ("http://a.cl/%zz", "http://a.cl/%25zz"),
    ("http://a.cl/a b", "http://a.cl/a%20b"),
    ("http://a.cl/ñ", "http://a.cl/%C3%B1"),
    ("http://a.cl/café?q=ñ", "http://a.cl/caf%C3%A9?q=%C3%B1"),
    ("http://a.cl/a|b{c}^`", "http://a.cl/a%7Cb%7Bc%7D%5E%60"),
    ('http://a.cl/<x>"', "http://a.cl/%3Cx%3E%22"),
    ("http://a.cl/[x]", "http://a.cl/%5Bx%5D"),
    ("http://a.cl/p;a=1,b=2:@!$&'()*+", "http://a.cl/p;a=1,b=2:@!$&'()*+"),
    ("http://a.cl/%E9t%E9", "http://a.cl/%E9t%E9"),  # Latin-1 escapes stay as they are
    # query: kept in order, reserved escapes kept, empty query dropped
    ("http://a.cl/?b=2&a=1", "http://a.cl/?b=2&a=1"),
    ("http://a.cl/?a=%3d%26&b=%7e", "http://a.cl/?a=%3D%26&b=~"),
    ("http://a.cl/?a=1+2&b=x/y?z", "http://a.cl/?a=1+2&b=x/y?z"),
    ("http://a.cl/?a='", "http://a.cl/?a=%27"),
    ("http://a.cl/x?", "http://a.cl/x"),
    ("http://a.cl/x?#f", "http://a.cl/x"),
    # fragment dropped
    ("http://a.cl/x#frag", "http://a.cl/x"),
    ("http://a.cl/x?y=1#a?b", "http://a.cl/x?y=1"),
    ("http://a.cl#", "http://a.cl/"),
    # URL Standard leniencies for http(s)
    ("  http://a.cl/x \n", "http://a.cl/x"),
    ("http://a.cl/a\tb\nc", "http://a.cl/abc"),
    ("http:\\\\a.cl\\x\\y", "http://a.cl/x/y"),
    ("http:///a.cl/x", "http://a.cl/x"),
    ("http:a.cl/x", "http://a.cl/x"),
    ("http://a.cl/?q=a\\b", "http://a.cl/?q=a%5Cb"),
    # other schemes keep their host form
    ("FTP://Files.A.cl/Pub", "ftp://files.a.cl/Pub"),
    ("foo://a.cl/a/../b", "foo://a.cl/b"),
]


@pytest.mark.parametrize("url, expected", CASES)
def test_canonical_form(url, expected):
    assert canonicalize(url) == expected
    assert canonicalize(expected) == expected


BAD = [
    "",
    "   ",
    "/relative/path",
    "www.uchile.cl",
    "mailto:someone@a.cl",
    "javascript:void(0)",
    "http://",
    "http:///",
    "http://a.cl:99999/",
    "http://a.cl:8o/",
    "http://a..cl/",
    "http://.a.cl/",
    "http://a b.cl/",
    "http://a<b.cl/",
    "http://[::1/",
    "http://[zz::1]/",
    "http://[::1]x/",
    "http://[fe80::1%25eth0]/",
    "http://" + "a" * 64 + ".cl/",
    "http://%ff.cl/",
    "data:text/html,hi",
    "http://1.2.3.256/",  # ends in a number but is no IPv4 address
    "http://a.09/",
    "http://a%2Fb.cl/",
]


@pytest.mark.parametrize("url", BAD)
def test_bad_urls(url):
    with pytest.raises(BadURL):
        canonicalize(url)


def test_bad_url_is_a_value_error():
    assert issubclass(BadURL, ValueError)
    with pytest.raises(BadURL, match="must be text"):
        canonicalize(b"http://a.cl/")


def test_lone_surrogate_becomes_replacement_character():
    assert canonicalize("http://a.cl/\ud800") == "http://a.cl/%EF%BF%BD"


def test_remove_dot_segments_rfc3986_examples():
    assert remove_dot_segments("/a/b/c/./../../g") == "/a/g"
    assert remove_dot_segments("/mid/content=5/../6") == "/mid/6"
    assert remove_dot_segments("/..") == "/"
    assert remove_dot_segments("/a/b/") == "/a/b/"


def test_scheme_and_site_helpers():
    assert url_scheme(" MailTo:x") == "mailto" and url_scheme("/x") == ""
    assert site_of("http://a.cl:8080/x?y") == "http://a.cl:8080"
    assert site_of("http://[::1]/") == "http://[::1]"


def test_root_host_and_robots_txt():
    assert root_url("http://www.uchile.cl/a/b?c") == "http://www.uchile.cl/"
    assert root_url("https://a.cl:8443/x") == "https://a.cl:8443/"
    assert host_of("https://a.cl:8443/x") == "a.cl" and host_of("http://[::1]:81/") == "[::1]"
    assert host_of("http://a.cl") == "a.cl"
    assert robots_txt_url("http://a.cl:8080") == "http://a.cl:8080/robots.txt"


def test_split_and_parts():
    assert split("http://a.cl:81/b?c") == ("http://a.cl:81", "/b?c")
    with pytest.raises(BadURL):
        split("http://a.cl")
    assert canonical_parts("HTTP://A.CL:80/x/../y?q#f") == ("http://a.cl", "/y?q")
    assert canonical_parts("http://a.cl") == ("http://a.cl", "/")


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("http://a.cl/x", "http://a.cl"),
        ("HTTP://A.CL:80/x?y#z", "http://a.cl"),
        ("https://a.cl:443", "https://a.cl"),
        ("http://a.cl:8080/", "http://a.cl:8080"),
        ("http://user:pw@a.cl/", "http://a.cl"),
        ("http://[::1]:81/", "http://[::1]:81"),
    ],
)
def test_origin_of_any_url(url, site):
    assert origin(url) == site


def test_origin_refuses_urls_without_a_host():
    for bad in ("/relative", "http://a.cl:99999/"):
        with pytest.raises(ValueError):
            origin(bad)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://example.cl/a?b#c", "example.cl"),
        ("http://user:pw@example.cl:8080/", "example.cl"),
        ("http://[::1]:8080/x", "::1"),
        ("http://127.0.0.1", "127.0.0.1"),
        ("http://a.cl?x", "a.cl"),
        ("http://a.cl#x", "a.cl"),
        ("no-scheme", ""),
        ("http://[::1/", ""),
    ],
)
def test_request_host(url, host):
    assert request_host(url) == host


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["http://", "https://", "HTTP://"]),
    st.from_regex(r"[A-Za-z0-9.-]{1,12}", fullmatch=True),
    st.sampled_from(["", ":80", ":443", ":8080"]),
    st.text(max_size=12),
)
def test_the_origin_of_a_canonical_url_is_its_site(scheme, host, port, rest):
    try:
        url = canonicalize(f"{scheme}{host}{port}/{rest}")
    except ValueError:
        return
    assert origin(url) == site_of(url) == split(url)[0]
    assert canonical_parts(url) == split(url)


def test_canonical_urls_split_as_the_collection_expects():
    url = canonicalize("HTTP://User@WWW.A.CL:8080/a/../b c?x=1#f")
    parts = urllib.parse.urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == site_of(url) == "http://www.a.cl:8080"
    assert parts.path == "/b%20c" and parts.query == "x=1"


# -- properties ----------------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    list("aZ09.-_~:/?#[]@!$&'()*+,;=% \t\\|<>\"^`{}éñ☃Ａ。ß")
    + [
        "%2e",
        "%2E",
        "%41",
        "%7e",
        "%2F",
        "%zz",
        "%e9",
        "..",
        "./",
        "/..",
        "xn--",
        "\x00",
        "\ud800",
        ":80",
        "@",
    ]
)
_PREFIXES = st.sampled_from(
    [
        "http://",
        "https://",
        "HTTP://",
        "ftp://",
        "http:",
        "http:\\\\",
        "mailto:",
        "x://",
        "",
        "http://a.cl",
        "http://[::1]",
        "http://a.cl:80",
        "http://u@",
        "https://xn--bcher-kva.de/",
    ]
)
_URLS = st.one_of(
    st.builds(
        lambda p, body, tail: p + body + tail,
        _PREFIXES,
        st.lists(_PIECES, max_size=20).map("".join),
        st.text(max_size=8),
    ),
    st.text(max_size=40),
)


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_URLS)
def test_canonicalize_is_idempotent_and_safe(url):
    try:
        canonical = canonicalize(url)
    except BadURL:
        return
    assert "#" not in canonical
    assert canonicalize(canonical) == canonical
    assert safe_url_string(canonical) == canonical  # nothing left for w3lib to escape
    assert canonical.isascii()
