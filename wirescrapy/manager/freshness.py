"""Freshness: the probability that the stored copy of a page is still the page on the Web (thesis §7.2.1,
step 3).

Pages are assumed to change as a Poisson process of rate λ, so a copy taken at ``last_visit`` is fresh at
``now`` with probability exp(−λ (now − last_visit)).

λ is estimated from the page's visits with the estimator of Cho & Garcia-Molina ("Estimating frequency of
change", ACM TOIT 2003, §4), made for a crawler that only sees *whether* a page changed between two visits:
with n revisits at interval I that found X changes,

    λ̂ = −log((n − X + 0.5) / (n + 0.5)) / I

which, unlike the naive X / (n I), stays finite when every revisit found a change and is nearly unbiased
for small n. From the document record: n = visits − 1 (the first visit cannot detect a change),
X = visits_changed (visits whose content differed from the visit before; the gatherer must not count the
first visit — if it does, X is cut to n), I = (last_visit − first_visit) / n.

A page seen once has no estimate of its own: it gets the estimate of its site's revisits pooled (the same
formula over the sums of n, X and n·I of the site's pages), else of the whole collection's, else
``PRIOR_RATE``: half of all pages changed within 50 days in Cho & Garcia-Molina's measurements ("The
evolution of the Web and implications for an incremental crawler", VLDB 2000), λ = ln 2 / 50 days.

A Last-Modified header or sitemap ``lastmod`` later than the last visit says the copy is stale:
freshness 0. A page never visited has no copy: freshness 0 (and representational quality 0, see
``profit.py``).

All functions work on whole arrays: ``docs`` is the document records of doc-ids 1..n,
``collection.documents.records[1:n + 1]``, and the results are aligned with it.
"""

from __future__ import annotations

import math

import numpy as np

DAY = 86400.0
PRIOR_RATE = math.log(2) / (50 * DAY)  # changes per second
_MIN_INTERVAL = 1.0  # seconds: two visits in the same second still say something


def _estimate(revisits, changes, observed) -> np.ndarray:
    """Cho & Garcia-Molina's λ̂ from n revisits, X changes and n·I seconds observed (arrays, n > 0). The
    steps work in place: at millions of pages a new array costs as much as the arithmetic."""
    revisits = np.array(revisits, dtype=np.float64)
    interval = np.asarray(observed, dtype=np.float64) / revisits
    np.maximum(interval, _MIN_INTERVAL, out=interval)
    rate = np.minimum(np.asarray(changes, dtype=np.float64), revisits)
    np.subtract(revisits, rate, out=rate)
    rate += 0.5
    revisits += 0.5
    rate /= revisits
    np.log(rate, out=rate)
    np.negative(rate, out=rate)
    rate /= interval
    return rate


def change_rate(docs: np.ndarray) -> np.ndarray:
    """Estimated changes per second (float64) of every page; ``PRIOR_RATE`` where nothing is known."""
    return _change_rate(docs, docs["visits"].astype(np.int64), np.array(docs["last_visit"], dtype=np.float64))


def _change_rate(docs: np.ndarray, visits: np.ndarray, last_visit: np.ndarray) -> np.ndarray:
    """``change_rate`` given the records' visits and last visits as arrays. Each other field is read once,
    and only for the pages it matters to: a field of the records is a strided view, whose every read
    touches one cache line a record."""
    revisits = np.maximum(visits - 1, 0)
    known = np.flatnonzero(revisits > 0)
    rate = np.full(len(docs), PRIOR_RATE, dtype=np.float64)
    if not len(known):
        return rate
    revisits = revisits[known]
    observed = np.maximum(last_visit[known] - docs["first_visit"][known], 0.0)
    changes = np.minimum(docs["visits_changed"][known].astype(np.int64), revisits)
    rate[known] = _estimate(revisits, changes, observed)

    # Pages seen once: their site's revisits pooled, else the collection's.
    site = docs["siteid"].astype(np.int64)
    sites = int(site.max()) + 1
    site_of_known = site[known]
    pooled = [np.bincount(site_of_known, weights=w, minlength=sites) for w in (revisits, changes, observed)]
    site_known = pooled[0] > 0
    site_rate = np.full(sites, _estimate(*(p.sum(keepdims=True) for p in pooled))[0])
    site_rate[site_known] = _estimate(*(p[site_known] for p in pooled))
    unknown = np.ones(len(docs), dtype=bool)
    unknown[known] = False
    rate[unknown] = site_rate[site[unknown]]
    return rate


def freshness(docs: np.ndarray, now: float) -> np.ndarray:
    """Pr(the stored copy is fresh at ``now``) of every page (float32); 0 for pages never visited."""
    visits = docs["visits"].astype(np.int64)
    last_visit = np.array(docs["last_visit"], dtype=np.float64)
    fresh = _change_rate(docs, visits, last_visit)
    np.negative(fresh, out=fresh)
    fresh *= np.maximum(now - last_visit, 0.0)
    np.exp(fresh, out=fresh)
    fresh[~((visits > 0) & (last_visit > 0))] = 0
    fresh[docs["last_modified"] > last_visit] = 0  # the server says it changed after our copy
    return fresh.astype(np.float32)
