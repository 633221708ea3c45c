"""Where a redirect leads: the harvester's decision on a 3xx response, pure (nothing is requested here).

Redirects are the harvester's, not Scrapy's ``RedirectMiddleware`` (``REDIRECT_ENABLED`` is off): a 3xx is
recorded on its page, with its target as the page's only link, and the spider requests the target through
the target site's politeness queue when :func:`decide_redirect` says to follow it:

* a page's target goes through the seeder rules as a link of the page, one deeper (a chain of redirects to
  ever-new pages is bounded by the depth limit too): one they reject is not recorded, one they keep but would
  not fetch is recorded and not followed;
* a robots.txt's or sitemap's target need only be a URL the crawler can fetch;
* a target already in the chain ends it in a redirect-loop error on the response, and a hop past the limit
  in a too-many-redirects error (``WIRE_MAX_REDIRECTS`` from a page, :data:`ROBOTS_MAX_REDIRECTS` from a
  robots.txt or sitemap). A page's hops count from the page that was linked, across batches: a target
  queued for a later batch keeps the hops that led to it (the document record's ``redirects``), the batch
  carries them, and the seeder adds no new URL past the limit (``seeder/add.py``).

A ``Location`` that is missing or is no URL leaves the 3xx as it is: recorded, leading nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from w3lib.url import safe_url_string

from wirescrapy.items import FetchError
from wirescrapy.url import BadURL, canonicalize

if TYPE_CHECKING:
    from wirescrapy.seeder.rules import SeederRules

ROBOTS_MAX_REDIRECTS = 5  # RFC 9309 §2.3.1.2; also for sitemaps


def is_redirect(status: int) -> bool:
    """A status whose ``Location`` the harvester follows (304 Not Modified is no redirect)."""
    return 300 <= status < 400 and status != 304


@dataclass(frozen=True, slots=True)
class Redirect:
    """The decision on one 3xx response."""

    target: str = ""  # the canonical target; "" when the Location is unusable or the seeder rules reject it
    follow: bool = False  # request the target: the next hop of the chain
    error: FetchError | None = None  # the chain ends in this error on the response
    chain: tuple[str, ...] = ()  # a followed or failed chain's URLs, its target last
    rejected: bool = False  # the seeder rules reject a page's target

    @property
    def message(self) -> str:
        """The chain, for the fetch's message."""
        return " -> ".join(self.chain)[:500]


def decide_redirect(
    location: bytes | None,
    url: str,
    chain: tuple[str, ...],
    hops: int,
    limit: int,
    rules: SeederRules | None = None,
    depth: int = 0,
) -> Redirect:
    """Where the 3xx response of ``url`` leads.

    ``location``: its ``Location`` header; ``chain``: the URLs of the chain up to ``url``; ``hops``:
    redirects followed to reach ``url``; ``limit``: the most hops allowed. ``rules`` judge a page's target at
    ``depth``, the page's depth + 1 (``None`` for robots.txt and sitemaps).
    """
    if not location:
        return Redirect()
    try:
        target = safe_url_string(urljoin(url, location.decode("latin-1").strip()))
    except ValueError:
        return Redirect()
    if rules is not None:
        decision = rules.classify_at(target, depth)
        if not decision.kept:
            return Redirect(rejected=True)
        target = decision.url
        if not decision.fetch:
            return Redirect(target)
    else:
        try:
            target = canonicalize(target)
        except BadURL:
            return Redirect()
    chain = (*chain, target)
    if target in chain[:-1]:
        return Redirect(target, error=FetchError.REDIRECT_LOOP, chain=chain)
    if hops >= limit:
        return Redirect(target, error=FetchError.TOO_MANY_REDIRECTS, chain=chain)
    return Redirect(target, follow=True, chain=chain)
