"""Which link scores a manager run stored, and over which link graph: ``scores.json`` in the collection.

The manager stores each link score it computes in the records (documents: pagerank, wlrank, hub,
authority; sites: siterank); a score with weight 0 is not computed and its field keeps what it held. A
report reads the stored scores instead of computing them again when the collection's link graph, its
documents and sites and the dampening are those the scores were computed over. This file says so::

    {"version": 1, "documents": 1234, "sites": 56, "links": "<32 hex digits>",
     "pagerank_damping": 0.15, "scores": ["pagerank"]}

``links`` is ``link_digest``: an xxh3-128 digest of the doc-id and the content hash of every list of
documents 1..documents. The link store keeps each list's hash in its index, so any change to any list
changes the digest, and computing it reads the index, not the links.

The manager takes the digest when it reads the links, and writes the file after the records are flushed,
atomically (a temporary file renamed over the old one). A kill in between leaves the old stamp over the new
records. Those records then hold scores over the graph the manager read: if that is the old stamp's graph,
they are still its scores; if not, the digests differ and the report computes the scores again.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import xxhash

FILE = "scores.json"
VERSION = 1
DOCUMENT_SCORES = ("pagerank", "wlrank", "hub", "authority")
SITE_SCORES = ("siterank",)


def link_digest(links, documents: int) -> str:
    """The digest of the lists of documents 1..``documents`` in the link store ``links`` (a ``LinkGraph``)."""
    index = links.extents.index()
    mine = index.ids <= documents
    digest = xxhash.xxh3_128()
    digest.update(index.ids[mine].astype("<i8").tobytes())
    digest.update(index.hash[mine].astype("<u8").tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class ScoreStamp:
    documents: int
    sites: int
    links: str
    pagerank_damping: float
    scores: tuple[str, ...] = field(default=())

    def stored(self, current: ScoreStamp) -> tuple[str, ...]:
        """The scores stored over the graph ``current`` describes: all this stamp lists if it matches,
        else none."""
        same = (self.documents, self.sites, self.links, self.pagerank_damping) == (
            current.documents,
            current.sites,
            current.links,
            current.pagerank_damping,
        )
        return self.scores if same else ()

    def write(self, directory: str | os.PathLike) -> None:
        """Write ``scores.json`` into the collection ``directory``, atomically."""
        path = Path(directory) / FILE
        temporary = path.with_name(f".{FILE}.tmp")
        text = json.dumps({"version": VERSION, **asdict(self), "scores": list(self.scores)})
        with open(temporary, "w", encoding="utf-8") as out:
            out.write(text + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)

    @classmethod
    def read(cls, directory: str | os.PathLike) -> ScoreStamp | None:
        """The stamp in the collection ``directory``; None if there is none, or it cannot be read (then
        every score is computed again)."""
        try:
            data = json.loads((Path(directory) / FILE).read_text(encoding="utf-8"))
            if data.get("version") != VERSION:
                return None
            known = DOCUMENT_SCORES + SITE_SCORES
            return cls(
                int(data["documents"]),
                int(data["sites"]),
                str(data["links"]),
                float(data["pagerank_damping"]),
                tuple(name for name in data["scores"] if name in known),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
