"""Which pages are worth fetching next: filters, intrinsic quality and profit (thesis §7.2.1, paper §2.1).

Every function works on whole arrays: ``docs`` is the document records of doc-ids 1..n
(``collection.documents.records[1:n + 1]``) and per-page arrays are aligned with it (position i is doc-id
i + 1); ``sites`` is the site records indexed by site-id (``collection.sites.records``, record 0 unused).

Filters (``eligible``)
    A page is left out of this cycle when it is a duplicate, a multimedia link (never fetched), forbidden
    by robots.txt, deeper than ``WIRE_MAX_DEPTH_STATIC`` / ``_DYNAMIC``, has failed
    ``WIRE_MAX_ERRORS_DIFFERENT_BATCH`` times in a row, is past the first ``WIRE_MAX_URLS_PER_SITE`` pages
    of its site (in doc-id order, i.e. order of discovery), or was visited more recently than its minimum
    revisit period: ``WIRE_MINPERIOD_UNSUCCESSFUL`` after a failed fetch (an ``error`` in the record, or no
    status after a visit), ``_SUCCESSFUL_NOT_OK`` after a status other than 200, ``_SUCCESSFUL_OK`` after a
    200 or a 304 (a conditional revisit that found the stored 200 unchanged).

Intrinsic quality (``intrinsic_quality``)
    Σ wₖ sₖ / Σ wₖ over the score functions of ``WIRE_SCORE_WEIGHTS`` with a weight > 0, each score first
    mapped onto [0, 1]:

    =========================================  =================================================
    score                                      on [0, 1]
    =========================================  =================================================
    pagerank, wlrank, hub, authority, opic,    ``log_scale``: log(1 + s/m) / log(1 + M/m), m and M
    siterank (the page's site's),              the smallest and largest s > 0; 0 for s = 0
    queuesize (pages of the site still to get),
    crosslinks, mirrors (``sections.py``)
    static                                     1 static, 0 dynamic
    depth                                      1 / (1 + depth): the first levels matter most
    random                                     uniform on [0, 1)
    =========================================  =================================================

    Link scores are heavy-tailed: PageRank spans five or six orders of magnitude, so dividing by the
    largest would leave nearly every page at 0 and let the other scores decide alone; the logarithm keeps
    the order and spreads the values over [0, 1]. "hub" tells nothing about pages not fetched yet: they
    have no links, so their hub score is 0 (alone, it orders them by doc-id: breadth-first). "opic" is a
    page's OPIC cash plus history: for a page not fetched yet, the cash its fetched in-links handed it.
    "queuesize" is the number of eligible pages of the page's site not downloaded yet, so larger sites go
    first (Castillo et al., "Scheduling algorithms for Web crawling", 2004). The result is multiplied by
    the age factor (a/A)^e, a the time since the page's last visit (never visited: the largest), A the
    largest, e = ``WIRE_SCORE_AGE_EXPONENT`` (0: factor 1), and for site front pages by
    ``WIRE_SCORE_BOOST_FRONTPAGE``; so quality lies in [0, boost].

Profit (``profit``, α = β = γ = 1)
    The value of a page in the collection is quality × Pr(fresh) × representational quality (1 if the page
    was downloaded, else 0); downloading it now makes it quality × 1 × 1. The profit is the difference.

The batch
    ``planner.py`` chooses the pages of a batch from their profits.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.items import FetchError

NEVER_FETCHED = DocFlag.DUPLICATE | DocFlag.MULTIMEDIA | DocFlag.ROBOTS_DISALLOWED
LOG_SCALED = (
    "pagerank",
    "wlrank",
    "hub",
    "authority",
    "siterank",
    "opic",
    "queuesize",
    "crosslinks",
    "mirrors",
)


# -- filters ---------------------------------------------------------------------------------------------


def eligible(docs: np.ndarray, config, now: float, *, exclude: np.ndarray | None = None) -> np.ndarray:
    """Which pages may go into a batch now (bool array); ``exclude`` lists doc-ids to leave out (the
    sites' robots.txt documents, fetched on their own schedule)."""
    # Each field is read once into an array: a field of the records is a strided view, slow to read.
    flags = np.array(docs["flags"])
    ok = (flags & NEVER_FETCHED) == 0
    max_depth = np.array([config.max_depth_static, config.max_depth_dynamic])
    ok &= docs["depth"] <= max_depth[((flags & DocFlag.DYNAMIC) != 0).view(np.int8)]
    ok &= docs["errors"] < config.max_errors_different_batch
    ok &= ~too_recent(docs, config, now)
    ok &= within_site_limit(docs["siteid"], config.max_urls_per_site)
    if exclude is not None:
        exclude = np.asarray(exclude, dtype=np.int64)
        exclude = exclude[(exclude >= 1) & (exclude <= len(docs))]
        ok[exclude - 1] = False
    return ok


def too_recent(docs: np.ndarray, config, now: float) -> np.ndarray:
    """Pages visited more recently than their minimum revisit period (WIRE's manager/minperiod)."""
    status, error = np.array(docs["status"]), np.array(docs["error"])
    answered = (status > 0) & (error == 0)  # a status with an error (a redirect loop): failed
    ok = answered & ((status == 200) | (status == 304))  # a 304: the stored 200 still holds
    periods = np.array(
        [config.minperiod_unsuccessful, config.minperiod_successful_not_ok, config.minperiod_successful_ok]
    )
    period = periods[answered.view(np.int8) + ok.view(np.int8)]
    refused = error == FetchError.BLOCKED_IP  # no visit made: due as soon as the setting allows it
    last_visit = np.array(docs["last_visit"])
    return (last_visit > 0) & (now - last_visit < period) & ~refused


def within_site_limit(site_ids: np.ndarray, limit: int) -> np.ndarray:
    """Whether each page is among the first ``limit`` pages (by doc-id) of its site."""
    ok = np.ones(len(site_ids), dtype=bool)
    counts = np.bincount(site_ids)
    big = np.flatnonzero(counts > limit)
    if len(big) == 0:
        return ok
    members = np.flatnonzero(np.isin(site_ids, big))  # doc-id order
    order = np.argsort(site_ids[members], kind="stable")
    ranks = rank_in_group(site_ids[members][order])
    ok[members[order[ranks >= limit]]] = False
    return ok


def rank_in_group(sorted_keys: np.ndarray) -> np.ndarray:
    """0, 1, 2 … within each run of equal keys of a sorted array."""
    positions = np.arange(len(sorted_keys))
    starts = np.ones(len(sorted_keys), dtype=bool)
    starts[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return positions - np.maximum.accumulate(np.where(starts, positions, 0))


# -- quality ---------------------------------------------------------------------------------------------


def log_scale(score: np.ndarray) -> np.ndarray:
    """A non-negative heavy-tailed score on [0, 1]: log(1 + s/m) / log(1 + M/m) (float32)."""
    score = np.asarray(score)
    out = np.zeros(len(score), dtype=np.float32)
    positive = score > 0
    if not positive.any():
        return out
    values = score[positive].astype(np.float64)
    low, high = values.min(), values.max()
    values = np.log1p(values / low) / np.log1p(high / low)
    out[positive] = values
    return out


def pages_to_download(site_ids: np.ndarray, eligible_pages: np.ndarray, visited: np.ndarray) -> np.ndarray:
    """For each page, how many eligible pages of its site have never been downloaded ("queuesize")."""
    waiting = np.bincount(site_ids[eligible_pages & ~visited])
    counts = np.zeros(int(site_ids.max(initial=0)) + 1, dtype=np.int64)
    counts[: len(waiting)] = waiting
    return counts[site_ids]


def intrinsic_quality(
    docs: np.ndarray,
    weights: Mapping[str, float],
    scores: Mapping[str, np.ndarray],
    *,
    now: float,
    age_exponent: float = 0.0,
    front_page_boost: float = 1.0,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The weighted combination described in the module docstring (float32, aligned with ``docs``).

    ``scores`` holds the raw per-page arrays of the link scores with a weight > 0 ("pagerank", "wlrank",
    "hub", "authority", "opic", "siterank": the page's site's) and of "queuesize", "crosslinks" and
    "mirrors"; "static", "depth" and "random" are computed here.
    """
    used = {name: float(w) for name, w in weights.items() if w > 0}
    quality = np.zeros(len(docs), dtype=np.float32)
    total = sum(used.values())
    for name, weight in used.items():
        quality += np.float32(weight / total) * _term(name, docs, scores, rng)
    if age_exponent > 0:
        quality *= _age(docs, now) ** np.float32(age_exponent)
    if front_page_boost != 1:
        quality[(docs["flags"] & DocFlag.FRONT_PAGE) != 0] *= np.float32(front_page_boost)
    return quality


def _term(name: str, docs: np.ndarray, scores: Mapping[str, np.ndarray], rng) -> np.ndarray:
    if name in LOG_SCALED:
        if name not in scores:
            raise ValueError(f"score {name!r} has a weight but was not computed")
        return log_scale(scores[name])
    if name == "static":
        return ((docs["flags"] & DocFlag.DYNAMIC) == 0).astype(np.float32)
    if name == "depth":
        return (1.0 / (1.0 + docs["depth"].astype(np.float32))).astype(np.float32)
    if name == "random":
        return (rng or np.random.default_rng()).random(len(docs), dtype=np.float32)
    raise ValueError(f"unknown score {name!r}")


def _age(docs: np.ndarray, now: float) -> np.ndarray:
    last_visit = docs["last_visit"]
    age = np.maximum(now - last_visit, 0.0)
    never = last_visit <= 0
    oldest = age[~never].max(initial=0.0)
    if oldest <= 0:
        return np.ones(len(docs), dtype=np.float32)
    age[never] = oldest
    return (age / oldest).astype(np.float32)


# -- profit ----------------------------------------------------------------------------------------------


def profit(quality: np.ndarray, fresh: np.ndarray, visited: np.ndarray) -> np.ndarray:
    """Value after downloading (quality) minus value now (quality × Pr(fresh) × visited), float32."""
    quality = np.asarray(quality, dtype=np.float32)
    current = quality * np.asarray(fresh, dtype=np.float32) * np.asarray(visited, dtype=np.float32)
    return quality - current
