"""The gatherer inside the crawl: item pipelines that put each fetch into the collection (thesis §7.2.3).

Each :class:`~wirescrapy.items.Fetch` goes through, in order (``ITEM_PIPELINES`` in
``settings/default.py``; one module each — ``document``, ``parse``, ``pagestore``, ``nearduplicates``,
``linkgraph``, ``metadata`` — on the shared ``base.GathererStep``):

=====  ======================  ===================================================================
order  pipeline                does
=====  ======================  ===================================================================
100    DocumentPipeline        finds the fetch's doc-id, adding a redirect target or a robots.txt
                               to the URL store (through the seeder rules) when it is new
200    ParsePipeline           parses an HTML or text page with status 200: links, cleaned
                               document, text (``Parser``)
300    PageStorePipeline       content-seen and page store: an exact duplicate becomes a reference to
                               its original's doc-id; notes whether the content changed
350    NearDuplicatePipeline   the page's SimHash, its site's template left out, and its near-duplicate
                               cluster (``nearduplicates.rec``); a change within the cluster is none
400    LinkGraphPipeline       the page's links through the seeder rules into the URL store, their
                               doc-ids into the link graph (a duplicate's only those its original's
                               do not reach, for a copy elsewhere on its site; a redirect's only link
                               is its target); a sitemap's URLs to the seeder
500    MetadataPipeline        the document and site records: status, MIME type, lengths, latency,
                               speed, visits, first/last visit, changes, errors, robots.txt state
=====  ======================  ===================================================================

A robots.txt fetch is written as the harvest's robots.txt owner says (``harvest.robots.record``, see
``harvester/robots.py``): the document it is recorded under, the body to store, the site record's fields.

The metadata record is written last, and it is what marks a page fetched in its batch (``last_visit``,
see ``harvester/session.py``): a kill before it means the page is fetched again on restart, and its
content, already stored, is found unchanged by content-seen.

They run in the crawl's process, on the reactor thread, one item at a time; each is small and synchronous,
but for the parse step with ``WIRE_PARSE_WORKERS`` > 0: what is pure of a page's gathering (the parse, the
language, each link's decision by the seeder's rules) runs in worker processes (``gatherer/workers.py``), and
the step hands the fetches on in the order they reached it (``parse.py``).
A pipeline's failure on one item is logged with the URL and recorded on the page as a gatherer error
(``FetchError.GATHERER``, see ``base.py``): the steps after it leave the fetch alone but the metadata step,
the page counts a failed visit and is fetched again in a later batch, and the items after it go on — never a
lost page, never a stopped crawl. Stats are under ``gatherer/``.
"""

from wirescrapy.gatherer.pipelines.document import DocumentPipeline
from wirescrapy.gatherer.pipelines.linkgraph import LinkGraphPipeline
from wirescrapy.gatherer.pipelines.metadata import MetadataPipeline, fetch_record
from wirescrapy.gatherer.pipelines.nearduplicates import NearDuplicatePipeline
from wirescrapy.gatherer.pipelines.pagestore import PageStorePipeline
from wirescrapy.gatherer.pipelines.parse import ParsePipeline

__all__ = [
    "DocumentPipeline",
    "LinkGraphPipeline",
    "MetadataPipeline",
    "NearDuplicatePipeline",
    "PageStorePipeline",
    "ParsePipeline",
    "fetch_record",
]
