"""A harvester process's start: when the garbage collector stops walking what it loaded.

What is loaded when the crawl starts (Scrapy, the collection's indexes, the batch) lives as long as the crawl.
``freeze_loaded`` moves it out of the collector's sight (``gc.freeze``): a full collection no longer walks it,
which would hold up the reactor and the sites' requests while it runs, nor does the one at the process's exit.
A crawl after another in the same process first hands the objects frozen by the one before back to the
collector, so their cycles do not outlive it.

A job that may wait for the collection (``WIRE_COLLECTION_WAIT``: queued behind another job) walks and freezes
what it loaded before it takes it (``before_waiting``), and starts its parse workers then too (the gatherer's,
so the spider Scrapy runs does it: ``spiders/harvester.py``, ``gatherer/workers.py prestart``). A job queued
behind another does that while the other one harvests, not after it took the collection, when every site waits
for it. The crawl's components are not imported early: some import Twisted's reactor, which Scrapy installs
only later.
"""

from __future__ import annotations

import gc


def before_waiting() -> bool:
    """Walk and freeze what is loaded (the module's docstring). True: ``freeze_loaded`` needs to walk only
    what was loaded since."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    return True


def freeze_loaded(*, frozen_before: bool) -> None:
    """The crawl starts: out of the collector's sight with what is loaded (the module's docstring); after
    ``before_waiting``, only what was loaded since is walked."""
    if not frozen_before:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
