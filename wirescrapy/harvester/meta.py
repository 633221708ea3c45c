"""The ``Request.meta`` keys the harvester's components pass each other, with who writes and who reads each.

A request goes one way: the scheduler hands it out (it builds a batch page's Request when the site's turn
comes), the downloader middlewares check and measure it, and the spider turns what came back into a
:class:`~wirescrapy.items.Fetch`. Each key is written by one step and read by the steps after it. The spider
also writes keys into the requests it makes (robots.txt, sitemaps, redirect hops), which go the same way.
Scrapy's own keys (``dont_retry``, ``download_latency``) keep their names.
"""

# -- a page of the batch: written by WireScheduler when it builds the Request --------------------------------

# The page's doc-id (a redirect hop has none). Read by BatchFilterMiddleware (fetched in this batch already?),
# WireScheduler.pending_doc_ids and the spider (Fetch.doc_id).
DOC_ID = "wire_doc_id"
# The page's site-id; the spider writes 0 on a redirect hop. Read by the spider (Fetch.site_id).
SITE_ID = "wire_site_id"
# The page's depth; the spider copies it onto a redirect hop. Read by the spider (Fetch.depth, and the depth
# at which the seeder rules judge a redirect target).
DEPTH = "wire_depth"

# -- written by the spider on the requests it makes ----------------------------------------------------------

# The items.Kind value of a robots.txt or sitemap request and of its redirect hops; absent on a page. Read by
# RobotsMiddleware (not subject to robots.txt), FetchLimitsMiddleware (their own size limits, no media-type
# check) and the spider (Fetch.kind).
KIND = "wire_kind"
# robots.txt and sitemaps: the site they are for (a redirect may lead to another). Read by the spider
# (Fetch.origin).
ORIGIN = "wire_origin"
# robots.txt, and its redirect hops on its own site: the site's next requests wait for its rules. Read by
# WireScheduler, which keeps the site busy after the download until the spider releases it.
HOLD_SITE = "wire_hold_site"
# A redirect hop: the URLs of the chain so far. Read by the spider (a target already in it is a loop).
CHAIN = "wire_chain"
# A redirect hop: how many redirects led to it; also written by WireScheduler on a batch page that redirects
# in an earlier batch led to (the batch's ``redirects``), so that the limit holds across batches. Read by the
# spider (the limit; Fetch.hops).
HOPS = "wire_hops"
# A sitemap request for a robots.rdf, not a sitemap. Read by the spider (which parser).
RDF = "wire_rdf"

# -- written by the downloader middlewares -------------------------------------------------------------------

# The address the host resolved to (BlockedIPMiddleware). Read by the spider (Fetch.ip, unless the response
# names its own).
IP = "wire_ip"
# Unix time before which the request must not go to the network (WireScheduler: a site's request is
# handed out up to politeness.DISPATCH_LEAD before its wait ends). Read by FetchLimitsMiddleware, which
# holds it until then.
NOT_BEFORE = "wire_not_before"
# Unix time the request went to the network (FetchLimitsMiddleware). Read by the spider (Fetch.started).
STARTED = "wire_started"
# Unix time the download ended, whatever its outcome (WireScheduler, on request_left_downloader, or BODY_DONE
# when the response came in whole: the moment the site's wait starts from). Read by the spider (Fetch.ended,
# so a document's visit time is its access's end, not the later moment its callback ran).
ENDED = "wire_ended"
# Unix time the response's last byte came in (FetchLimitsMiddleware: the body's Content-Length reached, or a
# response of no body), unless it stopped the download. Read by WireScheduler: the access ended then, and the
# site's wait starts from it, not from the later moment the downloader is done with the response.
BODY_DONE = "wire_body_done"
# Bytes of body received so far (FetchLimitsMiddleware, which adds to it). Read by the spider
# (Fetch.raw_length).
RECEIVED = "wire_received"
# Seconds the page has been held by its server's Retry-After so far, its holds added up
# (ServerHoldMiddleware, which sends it back to its queue). Read by ServerHoldMiddleware (past
# WIRE_MAX_RETRY_AFTER the answer goes on to the spider) and WireScheduler (a robots.txt sent back ends its
# site's hold on its answer).
HELD = "wire_held"
# The body was cut at its size limit (FetchLimitsMiddleware). Read by the spider (Fetch.truncated).
TRUNCATED = "wire_truncated"
# The media type that stopped the download after its headers (FetchLimitsMiddleware). Read by the spider
# (Fetch.mime_refused: no body kept).
MIME_REFUSED = "wire_mime_refused"

# -- rendering through Splash (harvester/render.py) ----------------------------------------------------------

# A render of the page through Splash: "direct" (the page's only access: its site is always rendered) or
# "follow" (after this batch's raw fetch of it, already recorded). Written by RenderMiddleware and the spider
# on the SplashRequest; read by WireScheduler (the politeness key is the page's site, not Splash's), the
# middlewares (the Splash endpoint is exempt from the blocked-address, robots.txt and batch checks and from
# the media-type limit) and the spider (a render's response or failure).
RENDER = "wire_render"
# A page to fetch raw, never through Splash: the fallback of a direct render that failed. Written by the
# spider; read by RenderMiddleware.
NO_RENDER = "wire_no_render"
# The fallback's reason: (RenderState, FetchError value, message) of the failed render. Written by the spider;
# read by the spider (the raw fetch records the render's failure).
RENDER_FAILURE = "wire_render_failure"
# scrapy-splash's own key: the request has been rewritten into the request to Splash's endpoint. Read by
# BlockedIPMiddleware and RobotsMiddleware, which checked the page's URL before (Splash's address is exempt).
SPLASH_PROCESSED = "_splash_processed"
# The response as received, before Scrapy decoded its Content-Encoding, with the request as sent: an
# items.Exchange (ReceivedMiddleware, only when the harvest writes WARC). Read by the spider (Fetch.exchange).
EXCHANGE = "wire_exchange"
