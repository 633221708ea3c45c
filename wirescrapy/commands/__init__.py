"""wirescrapy's Scrapy commands (COMMANDS_MODULE): ``scrapy seed``, ``scrapy demo``."""
