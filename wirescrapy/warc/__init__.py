"""WARC (ISO 28500, WARC/1.1) in and out of the crawl, with warcio.

* :mod:`~wirescrapy.warc.records`: one fetch as request, response (as received; or a revisit, or a render's
  resource) and metadata records;
* :mod:`~wirescrapy.warc.digests`: the payloads an archive directory holds, for revisits across harvests;
* :mod:`~wirescrapy.warc.writer`: files of a harvest, gzipped per record, rotated at a size, each indexed as
  it is closed;
* :mod:`~wirescrapy.warc.index`: CDXJ indexes, pywb's format;
* :mod:`~wirescrapy.warc.wacz`: an archive directory as one WACZ file;
* :mod:`~wirescrapy.warc.pipeline`: the item pipeline that writes every fetch (``-a warc=OUTDIR``,
  ``WIRE_WARC_DIR``);
* :mod:`~wirescrapy.warc.reader`: the fetches of a file read back (``scrapy ingest``);
* :mod:`~wirescrapy.warc.export`: a collection's stored pages as response records.

It sits beside the seeder: it knows the items and the collection, and the harvester and the commands use it.
"""
