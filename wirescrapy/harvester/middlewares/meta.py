"""``Request.meta`` keys the harvester's middlewares read and write, and the spider reads."""

KIND = "wire_kind"  # items.Kind value of a robots.txt or sitemap request; absent: a page
IP = "wire_ip"  # the address the host resolved to (BlockedIPMiddleware)
STARTED = "wire_started"  # Unix time the request went to the network (FetchLimitsMiddleware)
RECEIVED = "wire_received"  # bytes of body received so far
TRUNCATED = "wire_truncated"  # the body was cut at its size limit
MIME_REFUSED = "wire_mime_refused"  # the media type that stopped the download after its headers
