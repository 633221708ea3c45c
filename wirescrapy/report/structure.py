"""The site graph's structure: Broder et al.'s bow-tie over sites, as Baeza-Yates and Castillo measured
national webs (a site links to another when any of its pages links to a page of the other).

* MAIN: the largest strongly connected component (every site reaches every other);
* IN: sites that reach MAIN and are not reached from it; OUT: reached from MAIN, not reaching it;
* TENDRILS: reached from IN, or reaching OUT, without passing through MAIN (and not both);
* TUNNELS: reached from IN *and* reaching OUT, without MAIN;
* ISLANDS: connected to none of these.

Baeza-Yates and Castillo split MAIN further for national webs, by its links with the rest: MAIN-IN (sites of
MAIN linked from IN), MAIN-OUT (linking to OUT), MAIN-MAIN (both) and MAIN-NORM (neither) — ``MAIN_PARTS``.

``bowtie`` is pure: a site graph (scipy CSR, index = site-id, row 0 no site) in, a component label per site
and the strongly connected components' sizes out (``scipy.sparse.csgraph``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_matrix

COMPONENTS = ("MAIN", "IN", "OUT", "TENDRILS", "TUNNELS", "ISLANDS")
MAIN_PARTS = ("MAIN-NORM", "MAIN-IN", "MAIN-OUT", "MAIN-MAIN")  # index: 1 linked from IN + 2 linking to OUT


class BowTie(NamedTuple):
    component: np.ndarray  # index into COMPONENTS per site (entry 0: -1, no site)
    scc_sizes: np.ndarray  # size of every strongly connected component, largest first
    no_in: int  # sites no other site links to
    no_out: int  # sites that link to no other site
    main_part: np.ndarray  # index into MAIN_PARTS per site of MAIN (-1 elsewhere)


def reach(graph: csr_matrix, sources: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Sites reached from ``sources`` (a mask) along ``graph``, moving only through ``allowed`` sites; the
    sources count as reached."""
    reached = sources.copy()
    frontier = np.flatnonzero(sources)
    indptr, indices = graph.indptr, graph.indices
    while frontier.size:
        starts, ends = indptr[frontier], indptr[frontier + 1]
        lengths = ends - starts
        if not lengths.sum():
            break
        offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        targets = indices[np.arange(lengths.sum()) + offsets]
        targets = np.unique(targets)
        new = targets[allowed[targets] & ~reached[targets]]
        reached[new] = True
        frontier = new
    return reached


def bowtie(graph: csr_matrix) -> BowTie:
    size = graph.shape[0]
    component = np.full(size, -1, dtype=np.int64)
    if size < 2:
        return BowTie(component, np.zeros(0, dtype=np.int64), 0, 0, component.copy())
    graph = csr_matrix(graph)
    graph.setdiag(0)
    graph.eliminate_zeros()
    sites = np.ones(size, dtype=bool)
    sites[0] = False
    # scipy's graph algorithms, imported here: not at every command's start (see commands/report.py).
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(graph, directed=True, connection="strong")
    sizes = np.bincount(labels[1:])
    main_label = int(np.argmax(sizes))
    main = (labels == main_label) & sites
    back = graph.T.tocsr()
    out = reach(graph, main, sites) & ~main
    into = reach(back, main, sites) & ~main
    rest = sites & ~main & ~out & ~into
    from_in = reach(graph, into, rest | into) & rest
    to_out = reach(back, out, rest | out) & rest
    component[main] = 0
    component[into] = 1
    component[out] = 2
    component[(from_in ^ to_out)] = 3
    component[from_in & to_out] = 4
    component[rest & ~from_in & ~to_out] = 5
    if sizes.max() == 1:  # no component holds two sites: there is no MAIN, every site is on its own
        component[sites] = 5
    in_degree = np.diff(back.indptr)
    out_degree = np.diff(graph.indptr)
    main = component == 0
    linked_from_in = np.zeros(size, dtype=bool)
    linked_from_in[graph.indices[np.repeat(into, out_degree)]] = True
    linking_out = np.zeros(size, dtype=bool)
    linking_out[back.indices[np.repeat(out, in_degree)]] = True
    main_part = np.where(main, (linked_from_in & main) * 1 + (linking_out & main) * 2, -1)
    return BowTie(
        component,
        np.sort(sizes)[::-1],
        int((in_degree[1:] == 0).sum()),
        int((out_degree[1:] == 0).sum()),
        main_part,
    )
