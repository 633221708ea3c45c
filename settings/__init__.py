"""Scrapy settings modules: ``default`` (scrapy.cfg points at it) and ``test`` (loopback allowed)."""
