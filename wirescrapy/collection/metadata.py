"""Metadata records for documents and sites (thesis §7.3.1), as numpy structured dtypes.

Both live in ``RecordFile``s (``records.py``): ``documents.rec`` indexed by doc-id, ``sites.rec`` by
site-id. Every field is fixed-size and little-endian; times are Unix seconds (float64, 0 = never).
Adding a field is a format change: bump ``RecordFile`` kinds' version (the kind name carries it).

``document/2`` keeps what the server said apart from what we concluded: ``status`` is the HTTP status as
sent (100–999; 0 when no response came, or its status was no HTTP status) and ``error`` our
:class:`~wirescrapy.items.FetchError` (0: none) — a redirect loop keeps its 3xx there, a timeout has
status 0. ``document/1`` stored an error kind as a negative ``status``, so a server sending ``-5`` chose
one. ``document/3`` and ``site/2`` added the fields after their comments (language, rendering, the validators
of conditional requests, new sites). A writer upgrades the files of an earlier kind in place
(``upgrade.py``); a reader is told to.
"""

from __future__ import annotations

import enum

import numpy as np


class DocFlag(enum.IntFlag):
    DYNAMIC = 1  # a dynamic page (script extension or query string)
    DUPLICATE = 2  # exact duplicate of ``duplicate_of``
    FRONT_PAGE = 4  # a site's home page
    SEED = 8  # given as a start URL
    NOFOLLOW = 16  # robots meta nofollow: its links were not followed
    NOINDEX = 32  # robots meta noindex
    TRUNCATED = 64  # longer than the max file size, cut
    CHANGED = 128  # content changed at the last visit
    ROBOTS_DISALLOWED = 256  # robots.txt forbids it
    MULTIMEDIA = 512  # a logged (never fetched) link to a non-HTML file
    REDIRECT = 1024  # the last fetch was a redirect (its target is its only link)


class RobotsState(enum.IntEnum):
    UNKNOWN = 0  # not fetched yet
    VALID = 1  # fetched and parsed
    MISSING = 2  # 4xx, or a redirect not followed: everything allowed (RFC 9309 §2.3.1.2-3)
    UNREACHABLE = 3  # 5xx or network error: nothing allowed for now (RFC 9309 §2.3.1.4)


class RenderState(enum.IntEnum):  # a page's last fetch and Splash
    NOT_RENDERED = 0
    RENDERED = 1  # the rendered DOM was parsed and stored
    FAILED = 2  # Splash down or refusing: the raw HTML was kept, to be rendered later
    TIMED_OUT = 3  # Splash gave up or froze on it: the raw HTML was kept, never rendered again


class SiteRender(enum.IntEnum):  # whether a site's pages are rendered (WIRE_RENDER_JS auto)
    UNTRIED = 0
    HELPS = 1  # rendering found more links than the raw HTML: its pages go straight to Splash
    NEVER_HELPS = 2  # it never did: not tried again


DOCUMENT_DTYPE = np.dtype(
    [
        ("docid", "<u4"),
        ("siteid", "<u4"),
        (
            "status",
            "<u2",
        ),  # HTTP status the server sent at the last fetch; 0: none (not fetched, no response…)
        ("flags", "<u2"),  # DocFlag
        ("error", "u1"),  # FetchError of the last fetch; 0: none
        (
            "redirects",
            "u1",
        ),  # redirect hops that led to this URL from the page that linked it (0: a plain link)
        ("depth", "<u2"),  # links from the nearest seed
        ("errors", "<u2"),  # consecutive failed fetches
        ("mime", "S32"),  # MIME type of the last fetch
        ("latency", "<f4"),  # seconds to the first byte
        ("speed", "<f4"),  # bytes per second of the transfer
        ("visits", "<u4"),
        ("visits_changed", "<u4"),  # visits that found new content
        ("first_visit", "<f8"),
        ("last_visit", "<f8"),
        ("last_change", "<f8"),  # last visit that found new content
        ("time_unchanged", "<f8"),  # seconds observed without a change, summed over visits
        ("last_modified", "<f8"),  # from the Last-Modified header or a sitemap
        ("raw_length", "<u4"),  # bytes received
        ("stored_length", "<u4"),  # bytes of the cleaned page kept
        ("content_hash", "<u8"),  # xxh3-64 of the stored content
        ("duplicate_of", "<u4"),  # original doc-id when DUPLICATE
        ("batch", "<u4"),  # last batch the page was put in
        ("pagerank", "<f4"),
        ("wlrank", "<f4"),
        ("hub", "<f4"),
        ("authority", "<f4"),
        ("quality", "<f4"),  # combined intrinsic quality
        ("freshness", "<f4"),  # Pr(stored copy is fresh)
        ("profit", "<f4"),
        # document/3
        ("language", "S4"),  # language of the last OK fetch (ISO 639 code), b"" unknown
        ("render", "u1"),  # RenderState: whether and how the page was rendered through Splash
        ("render_links", "<u2"),  # links found only in the rendered DOM
        ("etag", "S40"),  # ETag of the last OK fetch, exactly as sent (b"" none, or too long to keep)
        (
            "last_modified_header",
            "S32",
        ),  # Last-Modified of the last OK fetch, exactly as sent (b"" none, or too long)
    ]
)

SITE_DTYPE = np.dtype(
    [
        ("siteid", "<u4"),
        ("flags", "<u2"),
        ("robots_state", "<u1"),  # RobotsState
        ("render", "u1"),  # SiteRender: whether the site's pages go to Splash
        ("ip", "S16"),  # 16-byte network order; IPv4 as ::ffff:a.b.c.d
        ("ip_resolved", "<f8"),
        ("docs", "<u4"),  # documents known (in the URL store)
        ("docs_over_limit", "<u4"),  # new URLs seen but not added (max URLs per site)
        ("enqueued", "<u4"),
        ("fetched", "<u4"),
        ("ok", "<u4"),
        ("errors", "<u4"),
        ("static", "<u4"),
        ("dynamic", "<u4"),
        ("multimedia", "<u4"),  # logged links to non-HTML files
        ("robots_fetched", "<f8"),
        ("robots_docid", "<u4"),  # the stored robots.txt
        ("crawl_delay", "<f4"),  # seconds, from robots.txt
        ("last_visit", "<f8"),
        ("siterank", "<f4"),
        ("pagerank_sum", "<f4"),
        # site/2
        ("render_tries", "<u2"),  # pages rendered to test whether rendering helps
        ("render_gains", "<u2"),  # of those, pages where rendering found more links than the raw HTML
        ("new_sites", "<u4"),  # sites first added from this site's pages
        (
            "new_sites_refused",
            "<u4",
        ),  # distinct new sites its pages linked to that the bounds refused (refused.py)
    ]
)

DOCUMENT_KIND = "document/3"
SITE_KIND = "site/2"
