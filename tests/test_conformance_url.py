"""The gatherer's link resolution against the WHATWG URL tests (web-platform-tests' urltestdata.json, vendored
with its BSD licence): every case of an input resolved against an http or https base, as a page's href is,
and every absolute http(s) input whatever its base (resolved against an http page of ours).

What a link is differs from a URL on purpose, and the expectation is read accordingly:
- only http and https URLs are links: a case whose URL has another scheme, or that fails, expects none;
- the fragment is not part of a link's URL: it is cut from the expected URL;
- an href that is empty or only a fragment is a link to the page itself: none;
- inputs holding lone surrogates are out of scope (the scanner hands over valid UTF-8 only).
Every case in scope must then pass (before the resolver followed the Standard, 218 of 459 did).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from wirescrapy.gatherer.resolve import Resolver

DATA = Path(__file__).parent / "data" / "conformance" / "wpt-url" / "urltestdata.json"
_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")

ANY_PAGE = "http://example.invalid/page"


def _valid(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


@cache
def cases() -> list[tuple[int, str, str, str | None]]:
    """(index in the file, input, base, expected link or None) of the cases in scope."""
    selected = []
    for index, case in enumerate(json.loads(DATA.read_text(encoding="utf-8"))):
        if not isinstance(case, dict):
            continue
        base, href = case.get("base") or "", case["input"]
        if not _valid(href) or not _valid(base):
            continue
        if not base.lower().startswith(("http:", "https:")):
            # an absolute http(s) URL means the same on any page: resolved against one of ours
            if not href.strip(_C0_AND_SPACE).lower().startswith(("http://", "https://")):
                continue
            base = ANY_PAGE
        expected = None if case.get("failure") else case["href"].split("#", 1)[0]
        if expected is not None and not expected.startswith(("http://", "https://")):
            expected = None
        if not href.strip(_C0_AND_SPACE).translate(_TAB_NEWLINE).split("#", 1)[0]:
            expected = None
        selected.append((index, href, base, expected))
    return selected


def run(resolver_class=Resolver) -> tuple[int, int, list[tuple[int, str, str, str | None, str | None]]]:
    passed, failed = 0, []
    for index, href, base, expected in cases():
        got = resolver_class(base, "utf-8").resolve(href)
        if got == expected:
            passed += 1
        else:
            failed.append((index, href, base, expected, got))
    return passed, len(cases()), failed


def test_every_case_in_scope_resolves_as_the_standard_says():
    _passed, checked, failed = run()
    assert checked > 400
    assert failed == [], "(index in urltestdata.json, href, base, expected, got)"


@pytest.mark.parametrize(
    "href, expected",
    [
        ("\\x", "http://example.org/x"),
        ("///host/path", "http://host/path"),
        ("http:/path", "http://example.org/path"),
        ("http:path", "http://example.org/foo/path"),
        ("http://faß.example/", "http://xn--fa-hia.example/"),
        ("http://0xc0.0250.01/", "http://192.168.0.1/"),
    ],
)
def test_the_hrefs_of_issue_16(href, expected):
    assert Resolver("http://example.org/foo/bar", "utf-8").resolve(href) == expected


if __name__ == "__main__":
    passed, checked, failed = run()
    print(f"urltestdata: {passed}/{checked} cases pass")
    for case in failed:
        print("  fail", case)
