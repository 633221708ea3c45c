"""The per-doc data of a batch in the harvester, column-wise: no Python object per queued URL."""

from __future__ import annotations

from array import array


class DocTable:
    """The per-doc data of a batch, column-wise: append-only rows of doc-id, site-id, depth, a small tag
    and the URL's path (its part after the site, UTF-8): 27 bytes a row (ids 8 + 8, depth 2, tag 1, the
    path's end 8) plus the path.

    Rows are never removed; the table lives as long as its batch.
    """

    def __init__(self) -> None:
        self.doc_ids = array("q")
        self.site_ids = array("q")
        self.depths = array("H")
        self.tags = array("B")
        self._ends = array("Q", [0])
        self._paths = bytearray()

    def append(self, doc_id: int, site_id: int, depth: int, path: str, tag: int = 0) -> int:
        """Store a row and return its number. ``OverflowError`` if depth or tag do not fit (0–65535,
        0–255) or an id is over 2**63, and the table is left as it was."""
        row = len(self.doc_ids)
        data = path.encode("utf-8")
        columns = (self.depths, self.tags, self.site_ids, self.doc_ids)
        try:
            for column, value in zip(columns, (depth, tag, site_id, doc_id)):
                column.append(value)
        except (OverflowError, TypeError):
            for column in columns:
                del column[row:]
            raise
        self._paths += data
        self._ends.append(len(self._paths))
        return row

    def __len__(self) -> int:
        return len(self.doc_ids)

    def path(self, row: int) -> str:
        return self._paths[self._ends[row] : self._ends[row + 1]].decode("utf-8")

    def get(self, row: int) -> tuple[int, int, int, str, int]:
        """``(doc_id, site_id, depth, path, tag)`` of a row."""
        return self.doc_ids[row], self.site_ids[row], self.depths[row], self.path(row), self.tags[row]
