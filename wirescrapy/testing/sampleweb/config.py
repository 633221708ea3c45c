"""The parameters of a sample web, checked when they are given.

Every field of :class:`SampleWebConfig` is also a flag of ``python -m wirescrapy.testing.sampleweb``
(``--pages-per-site``, ``--slow-delay``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wirescrapy.testing.sampleweb.shape import SHAPES

BROKEN_ROBOTS = ("500", "malformed")
BIG_PAGE_LIMIT = 400 * 1024
JS_MODES = ("off", "on", "endless")  # the script-built pages (wirescrapy.testing.sampleweb.scripts)


@dataclass(frozen=True)
class SampleWebConfig:
    """Parameters of a sample web; the same values always give the same web."""

    sites: int = field(default=6, metadata={"help": "number of sites, site0.wire.test and up"})
    pages_per_site: int = field(default=40, metadata={"help": "pages per site, home included (>= 4)"})
    seed: int = field(default=1, metadata={"help": "the same seed gives the same bytes"})
    page_size: int = field(default=2048, metadata={"help": "bytes of text on an ordinary page, roughly"})
    links_per_page: int = field(default=6, metadata={"help": "power-law in-site links per page, tree aside"})
    slow_delay: float = field(default=2.0, metadata={"help": "seconds before /slow.html answers"})
    crawl_delay: float = field(default=1.0, metadata={"help": "Crawl-delay in site1's robots.txt"})
    broken_robots: str = field(default="500", metadata={"help": "site3's robots.txt: 500 or malformed"})
    big_page_size: int = field(default=450_000, metadata={"help": "bytes of /odd/big.html (over 400 KB)"})
    binary_size: int = field(default=1 << 20, metadata={"help": "bytes of /files/big.bin"})
    shape: str = field(
        default="uniform",
        metadata={
            "help": "uniform, or weblike: Zipf site sizes (pages_per_site the mean), cross-site links "
            "to large sites, popular pages at any depth (see wirescrapy.testing.sampleweb.shape)"
        },
    )

    js: str = field(
        default="off",
        metadata={
            "help": "script-built pages under /js/ of site 5 (modulo sites): off, on, or endless (one "
            "page's script never ends; see wirescrapy.testing.sampleweb.scripts)"
        },
    )

    def __post_init__(self) -> None:
        if self.sites < 1:
            raise ValueError(f"sites must be >= 1, got {self.sites}")
        # Pages 1..3 carry the redirect, copy and mirror targets.
        if self.pages_per_site < 4:
            raise ValueError(f"pages_per_site must be >= 4, got {self.pages_per_site}")
        if self.page_size < 0 or self.links_per_page < 0:
            raise ValueError("page_size and links_per_page must be >= 0")
        if self.slow_delay < 0 or self.crawl_delay < 0:
            raise ValueError("slow_delay and crawl_delay must be >= 0")
        if self.broken_robots not in BROKEN_ROBOTS:
            raise ValueError(f"broken_robots must be one of {BROKEN_ROBOTS}, got {self.broken_robots!r}")
        if self.big_page_size <= BIG_PAGE_LIMIT:
            raise ValueError(f"big_page_size must exceed {BIG_PAGE_LIMIT}, got {self.big_page_size}")
        if self.binary_size < 1:
            raise ValueError(f"binary_size must be >= 1, got {self.binary_size}")
        if self.js not in JS_MODES:
            raise ValueError(f"js must be one of {JS_MODES}, got {self.js!r}")
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {SHAPES}, got {self.shape!r}")
