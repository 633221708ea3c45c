"""WARC (ISO 28500, WARC/1.1) in and out of the crawl, with warcio.

* :mod:`~wirescrapy.warc.records`: one fetch as request, response (as received) and metadata records;
* :mod:`~wirescrapy.warc.writer`: files of a harvest, gzipped per record, rotated at a size;
* :mod:`~wirescrapy.warc.pipeline`: the item pipeline that writes every fetch (``-a warc=OUTDIR``,
  ``WIRE_WARC_DIR``);
* :mod:`~wirescrapy.warc.reader`: the fetches of a file read back (``scrapy ingest``);
* :mod:`~wirescrapy.warc.export`: a collection's stored pages as response records.

It sits beside the seeder: it knows the items and the collection, and the harvester and the commands use it.
"""
