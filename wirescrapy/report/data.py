"""What a report reads from a collection, read once: the record columns, the link graph, the link scores.

``CrawlData.load`` opens nothing for writing and takes no lock, so a report may run while a crawl writes:
it sees the documents counted when it opened the collection (``as_of``), and a record being written at
that instant may be seen half-written. Columns are copied out of the mapped record files one field at a
time (``doc``), so memory is the fields a section asks for, not whole records; the link graph is the
collection's CSR matrix (``LinkGraph.to_csr``), in page order for the weighted link rank and collapsed
for the rest. The link scores are those the manager stored in the records when it computed them over
this very link graph (``manager/scorefile.py`` says which); the others come from the manager's ranking code
(``manager/ranking.py``) with the configured dampening, whatever weights the manager gives them, so that a
report always has them all.
"""

from __future__ import annotations

import json
import time
from functools import cached_property
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import DocFlag
from wirescrapy.collection.outlinks import OutLinks
from wirescrapy.manager import ranking
from wirescrapy.manager.scorefile import SITE_SCORES, ScoreStamp, link_digest


class CrawlData:
    def __init__(self, collection: Collection, config, as_of: float | None = None):
        self.collection = collection
        self.config = config
        self.as_of = time.time() if as_of is None else as_of
        self.directory = collection.dir.resolve()
        self.n_docs = min(collection.documents.count, collection.urls.count, collection.documents.capacity)
        self.n_sites = min(collection.sites.count, collection.urls.site_count, collection.sites.capacity)
        self._docs = collection.documents.records[: self.n_docs + 1]
        self._sites = collection.sites.records[: self.n_sites + 1]
        self._columns: dict[str, np.ndarray] = {}
        self._site_columns: dict[str, np.ndarray] = {}

    # -- records -------------------------------------------------------------------------------------

    def doc(self, name: str) -> np.ndarray:
        """One field of every document record, index = doc-id (entry 0 is no document), copied once."""
        if name not in self._columns:
            self._columns[name] = np.array(self._docs[name])
        return self._columns[name]

    def site(self, name: str) -> np.ndarray:
        """One field of every site record, index = site-id."""
        if name not in self._site_columns:
            self._site_columns[name] = np.array(self._sites[name])
        return self._site_columns[name]

    def flag(self, flag: DocFlag) -> np.ndarray:
        return (self.doc("flags") & flag) != 0

    @cached_property
    def real(self) -> np.ndarray:
        """True for every real document (entry 0 is none)."""
        mask = np.ones(self.n_docs + 1, dtype=bool)
        mask[0] = False
        return mask

    @cached_property
    def fetched(self) -> np.ndarray:
        return self.doc("visits") > 0

    @cached_property
    def robots(self) -> np.ndarray:
        """The sites' robots.txt files: documents of the collection, not pages of the sites."""
        mask = np.zeros(self.n_docs + 1, dtype=bool)
        ids = self.site("robots_docid")[1:].astype(np.int64)
        mask[ids[(ids > 0) & (ids <= self.n_docs)]] = True
        return mask

    @cached_property
    def pages(self) -> np.ndarray:
        """The documents that are pages of the sites, what a ranking of pages lists: not robots.txt files.
        Sitemaps are never documents (the gatherer records none for them)."""
        return self.real & ~self.robots

    @cached_property
    def ok(self) -> np.ndarray:
        """WIRE's gathered pages: the last fetch was a 200 with no error (robots.txt files left out)."""
        return (self.doc("status") == 200) & (self.doc("error") == 0) & ~self.robots

    @cached_property
    def dynamic(self) -> np.ndarray:
        return self.flag(DocFlag.DYNAMIC)

    def subsets(self) -> dict[str, np.ndarray]:
        """The document sets WIRE's analysis reports each figure for."""
        return {
            "all": self.real,
            "gathered": self.ok,
            "static": self.ok & ~self.dynamic,
            "dynamic": self.ok & self.dynamic,
        }

    @cached_property
    def site_names(self) -> list[str]:
        urls = self.collection.urls
        return [""] + [urls.site_name(i) for i in range(1, self.n_sites + 1)]

    @cached_property
    def site_of(self) -> np.ndarray:
        site_of = self.doc("siteid").astype(np.int64)
        site_of[site_of > self.n_sites] = 0  # a record written after the sites were read
        return site_of

    # -- links ---------------------------------------------------------------------------------------

    @cached_property
    def ordered_links(self) -> csr_matrix:
        """The stored lists in page order, with repeats (one entry per link)."""
        graph = self.collection.links.to_csr(ordered=True)
        size = self.n_docs + 1
        if graph.shape[0] != size:  # lists written after the records were counted, or none at the end
            graph = _resize(graph, size)
        return graph

    @cached_property
    def links(self) -> csr_matrix:
        """Each linked pair once, self-links dropped (``ranking.link_matrix``): degrees, PageRank, HITS."""
        counts = self.ordered_links
        if "wlrank" in self.stored_scores:  # page order is not needed again: merge the repeats in place
            self.__dict__.pop("ordered_links", None)
        else:
            counts = counts.copy()
        counts.sum_duplicates()
        return ranking.link_matrix(counts)

    @cached_property
    def in_degree(self) -> np.ndarray:
        return np.bincount(self.links.indices, minlength=self.n_docs + 1)

    @cached_property
    def out_degree(self) -> np.ndarray:
        return np.diff(self.links.indptr)

    @cached_property
    def site_graph(self) -> csr_matrix:
        return ranking.site_graph(self.links, self.site_of, self.n_sites)

    # -- scores --------------------------------------------------------------------------------------

    @cached_property
    def stored_scores(self) -> tuple[str, ...]:
        """The link scores the manager stored over this very link graph, documents, sites and dampening
        (``manager/scorefile.py``): those the report reads from the records instead of computing them."""
        stamp = ScoreStamp.read(self.directory)
        if stamp is None:
            return ()
        current = ScoreStamp(
            self.n_docs,
            self.n_sites,
            link_digest(self.collection.links, self.n_docs),
            self.config.pagerank_damping,
        )
        return stamp.stored(current)

    @cached_property
    def scores(self) -> dict[str, np.ndarray]:
        """PageRank, HITS hub and authority and weighted link rank of every document; site rank by site.
        Each is read from the records where the manager stored it over this graph, else computed."""
        config = self.config
        q, error = config.pagerank_damping, config.pagerank_max_error
        stored = self.stored_scores
        scores = {}
        for name in stored:
            column = self.site(name) if name in SITE_SCORES else self.doc(name)
            scores[name] = column.astype(np.float32, copy=True)
            scores[name][0] = 0
        if "pagerank" not in scores or not {"hub", "authority"} <= scores.keys():
            back = ranking.transpose(self.links)
            if "pagerank" not in scores:
                scores["pagerank"] = ranking.pagerank(self.links, q, error, transposed=back).scores
            if not {"hub", "authority"} <= scores.keys():
                hits = ranking.hits(self.links, config.hits_max_error, transposed=back)
                scores["hub"], scores["authority"] = hits.hub, hits.authority
            del back
        if "wlrank" not in scores:
            scores["wlrank"] = ranking.wlrank(self.ordered_links, self.site_of, q, error).scores
        self.__dict__.pop("ordered_links", None)  # only the weighted link rank needs page order: free it
        if "siterank" not in scores:
            scores["siterank"] = ranking.pagerank(self.site_graph, q, error).scores
        return {name: scores[name] for name in ("pagerank", "hub", "authority", "wlrank", "siterank")}

    # -- other files ---------------------------------------------------------------------------------

    @cached_property
    def outlinks(self) -> dict:
        return OutLinks.read(self.collection.dir)

    @property
    def batches_dir(self) -> Path:
        return self.collection.dir / "batches"

    def batch_files(self) -> list[tuple[int, dict, dict | None]]:
        """(number, batch.json, harvest.json or None) of every batch, in order; damaged files are skipped."""
        from wirescrapy.harvester.session import HARVEST_FILE
        from wirescrapy.manager.batch import INFO_FILE, batch_numbers

        found = []
        for number in batch_numbers(self.batches_dir):
            path = self.batches_dir / f"{number:06d}"
            try:
                info = json.loads((path / INFO_FILE).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            try:
                harvest = json.loads((path / HARVEST_FILE).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                harvest = _parts_harvest(path, HARVEST_FILE)
            found.append((number, info, harvest))
        return found


def _parts_harvest(path: Path, name: str) -> dict | None:
    """The harvests of a batch split into parts, added up (None when no part is harvested)."""
    parts = []
    for part in sorted(path.glob("part-*")):
        try:
            parts.append(json.loads((part / name).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    if not parts:
        return None
    total: dict = {
        "started": min(p.get("started", 0) for p in parts),
        "finished": max(p.get("finished", 0) for p in parts),
    }
    for part in parts:
        for key, value in part.items():
            if isinstance(value, (int, float)) and key not in ("started", "finished", "batch", "part"):
                total[key] = total.get(key, 0) + value
            elif (
                isinstance(value, dict) and key == "waits"
            ):  # every part's harvester had its own: the shortest
                merged = total.setdefault(key, dict(value))
                for k, v in value.items():
                    merged[k] = min(merged.get(k, v), v)
            elif isinstance(value, dict):
                merged = total.setdefault(key, {})
                for k, v in value.items():
                    merged[k] = merged.get(k, 0) + v
    return total


def _resize(graph: csr_matrix, size: int) -> csr_matrix:
    """``graph`` cut or padded to ``size`` × ``size``: links to or from documents past ``size`` dropped."""
    if graph.shape[0] > size:
        graph = graph[:size]
        keep = graph.indices < size
        if not keep.all():
            rows = np.repeat(np.arange(size), np.diff(graph.indptr))[keep]
            graph = csr_matrix((graph.data[keep], (rows, graph.indices[keep])), shape=(size, size))
            return graph
        return csr_matrix((graph.data, graph.indices, graph.indptr), shape=(size, size))
    indptr = np.concatenate([graph.indptr, np.full(size - graph.shape[0], graph.indptr[-1])])
    return csr_matrix((graph.data, graph.indices, indptr), shape=(size, size))
