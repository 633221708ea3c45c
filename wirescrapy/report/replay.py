"""Where the report's pages replay: the crawl's archive (``WIRE_WARC_DIR``) served by pywb.

The archive replays once it holds a CDXJ index (``warc/index.py``: one beside each WARC file as it is
closed). The report then says how to serve it, and links each page it lists to that page in the replay. A
link is pywb's latest-capture form, ``BASE<url>``: the report shows the collection as it is now, which is the
latest capture, and a capture's timestamp would cost a reading of every index, which grows with the crawl.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from wirescrapy.warc.index import SUFFIX

PYWB_PORT = 8080  # where ``wayback`` listens unless told


@dataclass
class Replay:
    base: str  # the collection's root in pywb, ending in "/"
    archive: str  # the WARC directory

    def url(self, url: str) -> str:
        """Where pywb replays the latest capture of ``url``."""
        return self.base + url

    @property
    def command(self) -> str:
        """The command that serves the archive at ``base`` (README.md's): pywb's collection is named as the
        base's path ends, and ``wayback`` listens on the base's port."""
        where = urlsplit(self.base)
        name = shlex.quote(PurePosixPath(where.path).name or "crawl")
        port = f" -p {where.port}" if where.port and where.port != PYWB_PORT else ""
        return (
            f"scrapy export --wacz {name}.wacz -s WIRE_WARC_DIR={shlex.quote(self.archive)} "
            f"&& wb-manager init {name} && wb-manager add --unpack-wacz {name} {name}.wacz && wayback{port}"
        )


def replay_of(warc_dir: str | os.PathLike, base: str) -> Replay | None:
    """The replay of the archive ``warc_dir`` at ``base``; None when there is no archive, no index in it, or
    no base."""
    if not warc_dir or not base:
        return None
    directory = Path(warc_dir)
    if not directory.is_dir() or not any(p.name.endswith(SUFFIX) for p in directory.iterdir()):
        return None
    return Replay(base if base.endswith("/") else base + "/", os.fspath(warc_dir))
