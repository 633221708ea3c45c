import scrapy


class EmptySpider(scrapy.Spider):
    """A spider with nothing to fetch: enough for Scrapy to build a crawler and its extensions."""

    name = "empty"
    start_urls = []
