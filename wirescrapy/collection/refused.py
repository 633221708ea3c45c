"""The new sites each site's pages linked to that the bounds on new sites refused, remembered so that a site's
``new_sites_refused`` counts each of them once (``seeder/add.py``).

A refused site is not in the collection: nothing else would remember that it was counted, and a page linking
it again, another page of the same site, or the same page revisited in a later batch would count it again. A
(linking site-id, refused site name) pair is kept as a 64-bit fingerprint in a ``FingerprintIndex``
(``fingerprints.py``, 12 bytes a pair), its value the linking site-id.

Counting each refused site once needs memory for every pair, without end in principle (a site's pages may link
any number of hosts), so it is bounded: a site's pairs are remembered, and counted, up to ``PER_SITE`` (its
``new_sites_refused`` stops there, meaning "at least that many": a trap linking 50,000 hosts never seen costs
no more than that), and the store holds at most ``MAX_PAIRS`` (48 MB in memory and on disk); once full, a
refusal not remembered is not counted either, so that a counter never counts a site twice. Where the
collection is full (``WIRE_MAX_SITES``) and every site's links to new hosts are refused, that is 400 refused
sites a site at 10,000 sites, 40 at 100,000. A site refused once and added later stays remembered (it is known
from then on, and never refused again).

File ``refused.fpi``: the ``FingerprintIndex`` checkpoint format (``covered`` unused, 0).

Crash behaviour: the pairs live in memory and are written with the collection's checkpoints (the end of every
harvested batch) and at close, to a temporary file renamed over the old one: the file is always whole, and a
kill loses the pairs since the last checkpoint, whose sites may then be counted once more.
"""

from __future__ import annotations

import os
from pathlib import Path

from xxhash import xxh3_64_intdigest

from .fingerprints import FingerprintIndex

FILE = "refused.fpi"
PER_SITE = 10_000  # refused sites remembered and counted per linking site
MAX_PAIRS = 1 << 22  # (linking site, refused site) pairs remembered in all


class RefusedSites:
    def __init__(self, directory: str | os.PathLike, readonly: bool = False):
        self.path = Path(directory) / FILE
        self.readonly = readonly
        self.index, _ = FingerprintIndex.load(self.path)
        self._dirty = False

    def first(self, site_id: int, site: str, counted: int) -> bool:
        """Whether the refusal of the new site ``site`` by a page of site ``site_id``, which has ``counted``
        refused sites so far, is to be counted: the first time that pair is met, while the site has fewer than
        ``PER_SITE`` and the store is not full. It is remembered then."""
        if counted >= PER_SITE or len(self.index) >= MAX_PAIRS:
            return False
        key = xxh3_64_intdigest(f"{site_id} {site}".encode("utf-8", "surrogateescape"))
        if self.index.get(key):
            return False
        self.index.put(key, site_id)
        self._dirty = True
        return True

    def flush(self) -> None:
        if self.readonly or not self._dirty:
            return
        self.index.save(self.path, 0)
        self._dirty = False

    def close(self) -> None:
        self.flush()
