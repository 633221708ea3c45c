"""A harvester process's start: when the garbage collector stops walking what it loaded.

What is loaded when the crawl starts (Scrapy, the collection's indexes, the batch) lives as long as the crawl.
``freeze_loaded`` moves it out of the collector's sight (``gc.freeze``): a full collection no longer walks it
(one took 0.1 s of the reactor, 17 times in the real web's crawl, each a site's request that late), nor does
the one at the process's exit (0.3-0.4 s, every scheduled job). A crawl after another in the same process
first hands the objects frozen by the one before back to the collector, so their cycles do not outlive it.

A job that may wait for the collection (``WIRE_COLLECTION_WAIT``: queued behind another job) walks and freezes
what it loaded before it takes it (``before_waiting``), and starts its parse workers then too (the gatherer's,
so the spider Scrapy runs does it: ``spiders/harvester.py``, ``gatherer/workers.py prestart``): a job queued
behind another does that while the other one harvests, rather than after it took the collection, when every
site waits for it (a worker's start takes a second, the collector's walk 80 ms;
``benchmarks/realweb_makespan.py --mode queued``). The crawl's components are not imported early: some import
Twisted's reactor, which Scrapy installs only later.
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
