"""Links out of the crawl, counted (WIRE's reports of links to multimedia files and to other domains).

The seeder turns some links away without adding them: files of an extension it does not crawl, hosts
outside ``WIRE_ACCEPT_DOMAIN_SUFFIXES``. Nothing else would remember them, so it counts them here, by
group and key: ``extension`` (".pdf", ".jpg"; "" for none) and ``tld`` (the last label of the host: "com",
"org"; an IP address counts as "(ip)"). Links to the log-only extensions (``WIRE_EXTENSIONS_LOG``) become
documents too, flagged multimedia; their links are counted here as well, so the two groups are complete.

File ``outlinks.json``::

    {"format": "wirescrapy-outlinks", "version": 1, "groups": {"extension": {".pdf": 12, …}, "tld": {…}}}

Memory and size are bounded: a group keeps at most ``MAX_KEYS`` keys, later new keys count under
"(other)" (a page can invent extensions without end).

Crash behaviour: the counts live in memory and are written with the collection's checkpoints (the end of
every harvested batch) and at close, to a temporary file renamed over the old one: the file is always
whole, and a kill loses the counts since the last checkpoint.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

FILE = "outlinks.json"
FORMAT = "wirescrapy-outlinks"
VERSION = 1
MAX_KEYS = 1000
OTHER = "(other)"


class OutLinks:
    def __init__(self, directory: str | os.PathLike, readonly: bool = False):
        self.path = Path(directory) / FILE
        self.readonly = readonly
        self.groups: dict[str, Counter] = {name: Counter(keys) for name, keys in self.read(directory).items()}
        self._dirty = False

    @staticmethod
    def read(directory: str | os.PathLike) -> dict[str, dict[str, int]]:
        """The counts in ``directory`` ({} if none, or unreadable: counts are a report, never a reason to
        stop a crawl)."""
        try:
            data = json.loads((Path(directory) / FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return {}
        groups = data.get("groups", {})
        return {
            str(g): {str(k): int(v) for k, v in keys.items()}
            for g, keys in groups.items()
            if isinstance(keys, dict)
        }

    def count(self, group: str, key: str, n: int = 1) -> None:
        keys = self.groups.setdefault(group, Counter())
        if key not in keys and len(keys) >= MAX_KEYS:
            key = OTHER
        keys[key] += n
        self._dirty = True

    def flush(self) -> None:
        if self.readonly or not self._dirty:
            return
        data = {
            "format": FORMAT,
            "version": VERSION,
            "groups": {name: dict(keys.most_common()) for name, keys in self.groups.items()},
        }
        temporary = self.path.with_name(FILE + ".tmp")
        temporary.write_text(json.dumps(data, indent=0) + "\n", encoding="utf-8")
        os.replace(temporary, self.path)
        self._dirty = False

    def close(self) -> None:
        self.flush()
