"""Web shapes of the sample web: how many pages each site has and where its
power-law links point (``SampleWebConfig.shape``).

``uniform`` (the default) is the sample web as it always was: every site has
``pages_per_site`` pages; a page's extra in-site links go to low page numbers,
``int(n * u ** 2.5)``, and so do cross-site links, ``int(n * u ** 3)``, which
favour low site numbers, ``int(sites * u ** 2)``. Low page numbers are also the
shallow ones of the 4-ary tree (page I's parent is (I - 1) // 4), so on this
web the most linked pages are the ones nearest the seeds, and a breadth-first
crawl fetches them first almost by construction.

``weblike`` keeps everything else -- the tree, the links per page, the shares
of cross-site and broken links, the seeds, the special pages -- and changes
three things, each after a measured property of real webs:

* **Site sizes are heavy-tailed.** Pages per site follow Zipf's law over the
  sites, size ∝ 1 / rank (``ZIPF_EXPONENT``), scaled so that the web has
  ``sites x pages_per_site`` pages in all (``pages_per_site`` is the mean, so a
  weblike web is as large as the uniform one and a crawl budget means the same),
  no site below 4 pages (pages 1..3 carry the redirect, copy and mirror
  targets). The rank of each site is a shuffle drawn from the seed, so the
  large sites are not the ones with special roles. Pages per site follow a
  power law on the Web (Huberman & Adamic, "Growth dynamics of the World-Wide
  Web", Nature 1999: many sites with a few pages, very few with very many) and
  on national webs (Baeza-Yates, Castillo et al., studies of the Chilean web
  that WIRE crawled); a slope near 1 in rank order is Zipf's law, which the
  upper tail of site sizes follows (e.g. Schmeiser 2014). With 25 sites and a
  mean of 80 pages, sizes run from about 520 down to about 20.
* **Cross-site links go to popular sites.** The site a cross-site link points
  to is drawn with probability proportional to its pages (the linking site
  excluded): the static outcome of preferential attachment in a web that grows
  as in Huberman & Adamic's model, where sites gain pages, and links, in
  proportion to what they have. In-links per site are then as heavy-tailed as
  site sizes and concentrate on a few large sites, as measured on the Web
  (Bharat et al., "Who links to whom", 2001) and as the "larger sites first"
  ordering of Baeza-Yates, Castillo, Marín & Rodríguez ("Crawling a country:
  better strategies than breadth-first for web page ordering", WWW 2005)
  relies on. (The uniform shape sends them to low site numbers, whatever
  their size, since all sizes are equal there.)
* **In-site popularity is only loosely tied to depth.** The power-law in-site
  links, and the page a cross-site link lands on, are drawn as before over a
  popularity rank (``int(n * u ** 2.5)``, ``int(n * u ** 3)``), but rank r is
  the page ``order[r]`` of a per-site random permutation of the page numbers,
  the home page kept first (rank 0). The tree (navigation) still links every
  page from its parent and gives the home page and the shallow pages their
  share of in-links, so depth and popularity remain correlated, but a much
  linked page may sit deep in a large site (an article everybody cites), as on
  the real Web, where breadth-first order finds high-PageRank pages early
  (Najork & Wiener 2001) but orderings that look at the links found so far
  find them earlier still (Cho, Garcia-Molina & Page 1998; Baeza-Yates et al.
  2005): depth is a good but imperfect proxy for popularity.

The seeds stay every site's home page, as in a national crawl that starts from
the registered domains (WIRE's setting). Every page stays reachable (the tree
does not change), everything is drawn from ``(seed, site)``-keyed generators,
so the same config gives the same bytes, and the ground truth is still the
model crawled, so it stays exact. What it does to crawl orders:
``benchmarks/crawl_order.py --shape weblike``.
"""

from __future__ import annotations

import bisect
import random

SHAPES = ("uniform", "weblike")
# Zipf's law over sites: pages of the site of size rank r (0 = largest) ∝ 1 / (r + 1) ** ZIPF_EXPONENT.
ZIPF_EXPONENT = 1.0
MIN_PAGES = 4  # pages 1..3 carry the redirect, copy and mirror targets


def zipf_sizes(count: int, mean: int, exponent: float = ZIPF_EXPONENT, floor: int = MIN_PAGES) -> list[int]:
    """``count`` sizes, largest first, ∝ 1 / (rank + 1) ** exponent, none below ``floor``, summing to
    ``count * mean`` exactly (``mean >= floor``)."""
    total = count * mean
    weights = [1.0 / (rank + 1) ** exponent for rank in range(count)]
    free = count  # sites above the floor: the first ``free`` ranks
    while True:
        scale = (total - floor * (count - free)) / sum(weights[:free])
        if free == 1 or weights[free - 1] * scale >= floor:
            break
        free -= 1
    exact = [w * scale for w in weights[:free]]
    sizes = [int(x) for x in exact]
    # Largest remainders get the pages rounding left over, so the total is exact.
    for rank in sorted(range(free), key=lambda r: sizes[r] - exact[r])[
        : total - floor * (count - free) - sum(sizes)
    ]:
        sizes[rank] += 1
    return sizes + [floor] * (count - free)


class Shape:
    """Site sizes and power-law link targets of a sample web (see the module docstring)."""

    def __init__(self, name: str, sites: int, pages_per_site: int, seed: int):
        if name not in SHAPES:
            raise ValueError(f"shape must be one of {SHAPES}, got {name!r}")
        self.name = name
        self.sites = sites
        self._seed = seed
        self._orders: dict[int, list[int]] = {}
        if name == "uniform":
            self._sizes = None
            self._n = pages_per_site
            return
        ranks = list(range(sites))
        random.Random(f"{seed}:shape:sites").shuffle(ranks)  # ranks[r]: the site of size rank r
        by_rank = zipf_sizes(sites, pages_per_site)
        self._sizes = [0] * sites
        for rank, site in enumerate(ranks):
            self._sizes[site] = by_rank[rank]
        self._cumulative = []  # popularity of sites for cross-site links: their pages
        running = 0
        for size in self._sizes:
            running += size
            self._cumulative.append(running)

    def size(self, site: int) -> int:
        """Pages of ``site``, home included."""
        return self._n if self._sizes is None else self._sizes[site]

    def page(self, rng: random.Random, site: int, skew: float, not_home: bool = False) -> int:
        """A page of ``site`` drawn by popularity rank ``int(n * u ** skew)`` (rank 0 the home page,
        rank 1 if ``not_home``): the rank itself on the uniform web, a page of a per-site random order
        of the pages on the weblike one."""
        n = self.size(site)
        rank = int(n * rng.random() ** skew) or int(not_home)
        if self._sizes is None:
            return rank
        order = self._orders.get(site)
        if order is None:
            order = list(range(1, n))
            random.Random(f"{self._seed}:{site}:shape:order").shuffle(order)
            order = self._orders[site] = [0, *order]
        return order[rank]

    def site(self, rng: random.Random, site: int, other: bool) -> int:
        """The site a cross-site link of ``site`` points to; ``other``: never ``site`` itself.

        Uniform: ``int(sites * u ** 2)`` (low site numbers), the next site instead of ``site`` itself.
        Weblike: drawn in proportion to site sizes, ``site`` left out if ``other``."""
        if self._sizes is None:
            target = int(self.sites * rng.random() ** 2)
            return (site + 1) % self.sites if other and target == site else target
        own = self._sizes[site] if other else 0
        x = rng.random() * (self._cumulative[-1] - own)
        before = self._cumulative[site] - self._sizes[site]
        if other and x >= before:
            x += own  # skip over the linking site's interval
        return min(bisect.bisect_right(self._cumulative, x), self.sites - 1)
