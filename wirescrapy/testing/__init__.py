"""What the tests, the benchmarks and ``scrapy demo`` share: the webs they crawl, and a harness to run them.

- ``sampleweb``: a generated web of several sites with its ground truth (the demo's, too);
- ``trapweb``, ``hostile``: servers that set traps or attack a crawler; ``realweb`` and ``nginx``: real
  documents served by a real nginx; ``splash``: a Splash to render with;
- ``process``: a command run as a user runs it, and its peak RSS; ``scrapyd``: a Scrapyd to deploy to;
- ``invariants``, ``naive_allocator``: what a collection must hold after a crash, and a reference allocator.

A fixture: no crawler code imports it, and it imports as little crawler code as it can (``.importlinter``).
"""
