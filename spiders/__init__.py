"""wirescrapy's spiders (SPIDER_MODULES). The harvester spider lands here."""
