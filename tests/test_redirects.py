"""Where a redirect leads (wirescrapy.harvester.redirects), without a reactor or a request."""

from __future__ import annotations

import pytest

from wirescrapy.harvester.redirects import (
    ROBOTS_MAX_REDIRECTS,
    Redirect,
    decide_redirect,
    is_redirect,
)
from wirescrapy.items import FetchError
from wirescrapy.seeder.rules import SeederRules

RULES = SeederRules.default()
PAGE = "http://a.cl/page"


def page(location: bytes | None, chain: tuple[str, ...] = (PAGE,), hops: int = 0) -> Redirect:
    return decide_redirect(location, PAGE, chain, hops, 3, rules=RULES, depth=1)


@pytest.mark.parametrize(
    "status, redirect", [(301, True), (302, True), (308, True), (304, False), (200, False), (400, False)]
)
def test_which_statuses_are_redirects(status, redirect):
    assert is_redirect(status) is redirect


def test_a_page_s_target_is_resolved_and_put_in_the_seeder_s_form():
    redirect = page(b" ../b/../c?jsessionid=42 ")
    assert redirect == Redirect("http://a.cl/c", follow=True, chain=(PAGE, "http://a.cl/c"))
    assert redirect.message == "http://a.cl/page -> http://a.cl/c"


def test_a_page_s_target_the_rules_reject_is_not_recorded_and_one_they_only_log_is_not_followed():
    assert page(b"mailto:x@a.cl") == Redirect(rejected=True)
    assert page(b"/report.pdf") == Redirect("http://a.cl/report.pdf")


def test_a_missing_or_unusable_location_leads_nowhere():
    assert page(None) == page(b"") == Redirect()
    assert (
        decide_redirect(b"http://[::1", "http://a.cl/robots.txt", (), 0, ROBOTS_MAX_REDIRECTS) == Redirect()
    )


def test_a_loop_and_a_chain_too_long_end_in_an_error_naming_the_chain():
    loop = page(b"/page", chain=("http://a.cl/start", PAGE), hops=1)
    assert loop.error is FetchError.REDIRECT_LOOP and not loop.follow and loop.target == PAGE
    assert loop.message == "http://a.cl/start -> http://a.cl/page -> http://a.cl/page"
    long = page(b"/next", hops=3)
    assert long.error is FetchError.TOO_MANY_REDIRECTS and long.target == "http://a.cl/next"
    assert page(b"/next", hops=2).follow


def test_robots_txt_follows_any_fetchable_url_five_times_without_the_seeder_rules():
    robots = "http://a.cl/robots.txt"
    moved = decide_redirect(b"HTTP://B.CL:80/rules.TXT", robots, (robots,), 4, ROBOTS_MAX_REDIRECTS)
    assert moved.follow and moved.target == "http://b.cl/rules.TXT"
    assert (
        decide_redirect(b"http://b.cl/x", robots, (robots,), 5, ROBOTS_MAX_REDIRECTS).error
        is FetchError.TOO_MANY_REDIRECTS
    )
