"""The harvest's own signals, beside Scrapy's (``scrapy.signals``): how the harvester's spider, its downloader
middlewares, its extensions and the item pipelines hear of each other.

A component that works inside a harvest connects to ``harvest_opened`` in its ``from_crawler`` and keeps the
harvest it carries (``harvester/session.py``: the collection, the batch being harvested, the robots.txt owner,
where fetches are archived). It never asks the spider for it. Until a harvest opens, the component passes
everything, as in a crawl of any other spider. This module imports nothing of the project, so that every
layer can send and hear these signals.
"""

harvest_opened = object()
"""Sent once by a spider that harvests (the harvester's, and ``scrapy ingest``'s) when it opens, before any
request or item reaches a component. Argument: ``harvest``."""

write_failed = object()
"""A write to the collection failed for want of room (``collection/writes.py``). The harvester's spider stops
the harvest. Argument: ``exc``, the ``OSError``."""

render_wanted = object()
"""``WIRE_RENDER_JS`` ``auto``: a raw page that looks script-built is recorded, and the harvester is asked to
render it. Argument: ``fetch``."""

rendering_paused = object()
"""Splash did not answer a render: pages are fetched raw until ``until`` (``time.monotonic``), their renders
recorded as failed. Argument: ``until``."""
