"""Every WIRE setting: name, WIRE's name, default, type, meaning and checks (``SETTINGS``). ``page.py``
renders them as ``docs/settings.md``."""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any


class WireSettingsError(ValueError):
    """A WIRE_* setting has a wrong type or an impossible value."""


@dataclass(frozen=True)
class Setting:
    name: str
    wire: str  # WIRE's XPath name, "" for settings WIRE did not have
    default: Any
    kind: str  # int, float, bool, str, list, dict
    doc: str
    minimum: float | None = None
    maximum: float | None = None
    check: Callable[[Any], str | None] | None = None  # returns an error message or None
    component: str = ""  # the WIRE program that reads it

    @property
    def attribute(self) -> str:
        """The name of its ``WireConfig`` field: ``wait_normal`` for ``WIRE_WAIT_NORMAL``."""
        return self.name.removeprefix("WIRE_").lower()


def _networks(values: Sequence[str]) -> str | None:
    for value in values:
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            return f"{value!r} is not an IP address or network (CIDR)"
    return None


def _extensions(values: Sequence[str]) -> str | None:
    for value in values:
        if not value.startswith(".") or "/" in value:
            return f"{value!r} is not a file extension such as '.html'"
    return None


_HOST_SUFFIX = re.compile(r"\.?[\w-]+(\.[\w-]+)*")  # labels of a host name: letters, digits, hyphens
_MEANT_ON = frozenset({"on", "true", "yes", "1", "all", "always", "js", "javascript", "splash", "enabled"})


def _suffixes(values: Sequence[str]) -> str | None:
    for value in values:
        if _HOST_SUFFIX.fullmatch(value) is None:
            return f"{value!r} is not a domain suffix such as '.cl' or '.uchile.cl'"
    return None


POLITENESS_GROUPS = ("host", "ip", "domain")  # WIRE_POLITENESS_GROUP (collection/groups.py)


def _render_js(value: str) -> str | None:
    if value.strip().lower() in ("off", "auto"):
        return None
    suffixes = [part.strip() for part in value.split(",")]
    if not any(suffixes):
        return "expected off, auto, or comma-separated host suffixes such as .example.org"
    word = value.strip().lower()
    if word in _MEANT_ON or difflib.get_close_matches(word, ("auto", "off"), n=1, cutoff=0.75):
        # a mode misspelled, or a wish to render everything, would be taken for a host suffix matching nothing
        return (
            f"{value.strip()!r} is neither off, auto nor a host suffix such as .example.org (to render "
            "every site: the suffixes of their hosts, or auto)"
        )
    return _suffixes([part for part in suffixes if part])


def _score_weights(values: Mapping) -> str | None:
    for key, value in values.items():
        if key not in SCORE_FUNCTIONS:
            return f"unknown score {key!r}; known: {', '.join(SCORE_FUNCTIONS)}"
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            return f"weight of {key!r} must be a number >= 0, got {value!r}"
    return None


def _ip_map(values: Mapping) -> str | None:
    for key, value in values.items():
        try:
            ipaddress.ip_address(value)
        except ValueError:
            return f"{key!r} maps to {value!r}, which is not an IP address"
    return None


def _link_attributes(values: Sequence[str]) -> str | None:
    for value in values:
        tag, _, attribute = value.partition("/")
        if not tag or not attribute:
            return f"{value!r} is not a tag/attribute pair such as 'a/href'"
    return None


def _component(name: str, *settings: Setting) -> tuple[Setting, ...]:
    return tuple(replace(spec, component=name) for spec in settings)


# Score functions the manager can combine (WIRE manager/score/*).
SCORE_FUNCTIONS = (
    "pagerank",
    "wlrank",
    "hub",
    "authority",
    "siterank",
    "opic",
    "static",
    "depth",
    "queuesize",
    "random",
    "crosslinks",
    "mirrors",
)

DAY = 86400

# Non-public address ranges (RFC 6890 special-purpose registries): WIRE's harvester/blocked-ip.
BLOCKED_NETWORKS = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.88.99.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "::/128",
    "::1/128",
    "::ffff:0:0/96",
    "64:ff9b:1::/48",
    "100::/64",
    "2001:db8::/32",
    "fc00::/7",
    "fe80::/10",
    "ff00::/8",
]

SETTINGS: tuple[Setting, ...] = (
    *_component(
        "collection",
        Setting(
            "WIRE_COLLECTION_DIR",
            "collection/base",
            "./collection",
            "str",
            "Directory holding the collection, the crawl's only state (URLs, metadata, pages, links, "
            "batches).",
        ),
        Setting(
            "WIRE_PAGE_COMPRESSION",
            "",
            3,
            "int",
            "zstd level for stored pages; 0 stores them uncompressed.",
            0,
            22,
        ),
        Setting(
            "WIRE_COLLECTION_WAIT",
            "",
            0.0,
            "float",
            "Seconds a process that opens the collection for writing (a harvester, the manager, the "
            'seeder) waits for another one that has it open to close it, before it fails with "open for '
            'writing by ...". 0: it fails at once. For jobs queued on one collection, such as recrawls '
            "scheduled on Scrapyd before the previous one ended: each starts up (its imports, its "
            "crawler) while the previous one harvests, and takes the collection the moment it is "
            "closed; the next batch then follows at once, so the manager's planner keeps the slowest site's "
            "reserve back for it (wirescrapy/manager/timeshare.py).",
            0,
        ),
        Setting(
            "WIRE_MAX_SITES",
            "collection/maxsite",
            100_000,
            "int",
            "Most sites in the collection; beyond it a link to a new site is not added, and the new site "
            "is counted once on the linking site (`new_sites_refused`).",
            1,
        ),
    ),
    *_component(
        "seeder",
        Setting(
            "WIRE_MAX_URLS_PER_SITE",
            "seeder/max-urls-per-site",
            25_000,
            "int",
            "Most URLs added per site; beyond it a site's new URLs are counted, not added.",
            1,
        ),
        Setting(
            "WIRE_ACCEPT_PROTOCOLS",
            "seeder/accept/protocol",
            ["http", "https"],
            "list",
            "URL schemes accepted.",
        ),
        Setting(
            "WIRE_ACCEPT_DOMAIN_SUFFIXES",
            "seeder/accept/domain-suffixes",
            [],
            "list",
            "Host suffixes accepted, e.g. `.cl` or `.uchile.cl`; empty accepts every host (WIRE's "
            "default was `.cl`, its home domain).",
            check=_suffixes,
        ),
        Setting(
            "WIRE_EXTENSIONS_STATIC",
            "seeder/extensions/download/static",
            ["", ".html", ".htm", ".shtml", ".xhtml", ".txt"],
            "list",
            'File extensions downloaded as static pages (`""` is a path without extension).',
            check=lambda v: _extensions([e for e in v if e]),
        ),
        Setting(
            "WIRE_EXTENSIONS_DYNAMIC",
            "seeder/extensions/download/dynamic/group",
            [".php", ".php3", ".asp", ".aspx", ".jsp", ".pl", ".cgi", ".cfm"],
            "list",
            "Extensions downloaded as dynamic pages; a URL with a query string is dynamic too.",
            check=_extensions,
        ),
        Setting(
            "WIRE_EXTENSIONS_LOG",
            "seeder/extensions/log/group",
            [
                ".gif",
                ".jpg",
                ".jpeg",
                ".png",
                ".bmp",
                ".svg",
                ".webp",
                ".ico",
                ".mp3",
                ".wav",
                ".ogg",
                ".mp4",
                ".avi",
                ".mov",
                ".mpg",
                ".mpeg",
                ".wmv",
                ".zip",
                ".gz",
                ".tgz",
                ".bz2",
                ".rar",
                ".7z",
                ".tar",
                ".pdf",
                ".doc",
                ".docx",
                ".xls",
                ".xlsx",
                ".ppt",
                ".pptx",
            ],
            "list",
            "Extensions of multimedia and document links: counted for the reports, never fetched.",
            check=_extensions,
        ),
        Setting(
            "WIRE_EXTENSIONS_IGNORE",
            "seeder/extensions/ignore/group",
            [".css", ".js", ".exe", ".dll", ".iso", ".dmg", ".bin", ".class", ".jar"],
            "list",
            "Extensions ignored altogether.",
            check=_extensions,
        ),
        Setting(
            "WIRE_REJECT_PATTERNS",
            "seeder/reject-patterns",
            [
                "login",
                "logout",
                "logoff",
                "register",
                "signin",
                "signup",
                "sign-in",
                "sign-up",
                "password",
                "cart",
                "checkout",
            ],
            "list",
            "Substrings of known web applications' URLs; a URL containing one is rejected.",
        ),
        Setting(
            "WIRE_SESSION_IDS",
            "seeder/sessionids",
            [
                "phpsessid",
                "jsessionid",
                "sid",
                "sessionid",
                "session_id",
                "aspsessionid",
                "cfid",
                "cftoken",
                "zenid",
                "oscsid",
            ],
            "list",
            "Session-id parameters removed from URLs (query and `;name=` path parameters, any case).",
        ),
        # A page of a national domain links to a few other sites, a directory page to tens or hundreds; a
        # page linking to thousands of hosts never seen is a link farm or a wildcard-DNS trap, each new host
        # costing a robots.txt fetch and a queue.
        # Sites linked by more than one page are added from the others.
        Setting(
            "WIRE_NEW_SITES_PER_PAGE",
            "",
            100,
            "int",
            "Most sites one fetch of a page (or one sitemap) may add to the collection; further new sites "
            "are counted once on its site (`new_sites_refused`), and added when the page is revisited or "
            "another page links them.",
            0,
        ),
        Setting(
            "WIRE_NEW_SITES_PER_SITE",
            "",
            1_000,
            "int",
            "Most sites one site's pages may add to the collection over the crawl (its `new_sites`): a "
            "trap site reaches at most a hundredth of WIRE_MAX_SITES with the defaults. Seeds are not "
            "bounded by it.",
            0,
        ),
        Setting("WIRE_ADD_ROOT", "seeder/add-root", True, "bool", "Adding a site also adds its home page."),
        Setting(
            "WIRE_ADD_ROBOTS_RDF",
            "seeder/add-robots-rdf",
            False,
            "bool",
            "Also fetch a site's robots.rdf (WIRE's server-cooperation file).",
        ),
    ),
    *_component(
        "manager",
        Setting(
            "WIRE_MAX_DEPTH_STATIC",
            "manager/maxdepth/static",
            15,
            "int",
            "Deepest level (links from a seed) at which static pages are fetched.",
            0,
        ),
        Setting(
            "WIRE_MAX_DEPTH_DYNAMIC",
            "manager/maxdepth/dynamic",
            5,
            "int",
            "Deepest level at which dynamic pages are fetched.",
            0,
        ),
        Setting("WIRE_BATCH_SIZE", "manager/batch/size", 100_000, "int", "URLs per batch (K).", 1),
        Setting(
            "WIRE_BATCH_SAMESITE",
            "manager/batch/samesite",
            500,
            "int",
            "Most URLs from one site in a batch (WIRE's cap; the planner shares a batch among sites "
            "within it).",
            1,
        ),
        Setting(
            "WIRE_BATCH_SITE_GROWTH",
            "",
            4.0,
            "float",
            "Most URLs from one site in a batch, as a multiple of the documents fetched from it so far "
            "(at least 1, and at least its seeds not fetched yet): what the manager knows of a site comes "
            "from its fetched pages, so a site's part of the batches grows as it is seen (the planner's rule "
            "3, wirescrapy/manager/planner.py). 0: no such limit.",
            0,
        ),
        Setting(
            "WIRE_BATCH_EXPLORE",
            "",
            0.2,
            "float",
            "The part of every batch shared among the sites by their known pages not fetched yet, whatever "
            "their estimated value (the planner's rule 2, wirescrapy/manager/planner.py): a site whose pages "
            "have not been fetched shows few links and a low value, and would stay unexplored; "
            "docs/planner.md says why. 0: by value alone.",
            0,
            1,
        ),
        Setting("WIRE_BATCH_COUNT", "manager/batch/count", 1, "int", "Batches written per manager run.", 1),
        Setting(
            "WIRE_MAX_ERRORS_SAME_BATCH",
            "manager/max-errors/same-batch",
            3,
            "int",
            "Errors on one page within a batch before it is given up for that batch.",
            1,
        ),
        Setting(
            "WIRE_MAX_ERRORS_DIFFERENT_BATCH",
            "manager/max-errors/different-batch",
            5,
            "int",
            "Errors on one page over several batches before it is never tried again.",
            1,
        ),
        # The default weights fetched the most PageRank first on the sample and real webs
        # (benchmarks/crawl_order.py keeps the figures; mirrors: a manual's languages): PageRank on the links
        # found so far is the evidence, depth the prior (shallow pages are the linked ones, Najork &
        # Wiener 2001) that breaks the near-ties among pages with one or two in-links found. queuesize, in
        # WIRE's default, is 0: the same for a site's pages, it adds nothing to a batch's per-site share, and
        # without the share it sends whole batches to the largest sites.
        Setting(
            "WIRE_SCORE_WEIGHTS",
            "manager/score/*/weight",
            {
                "pagerank": 4,
                "wlrank": 0,
                "hub": 0,
                "authority": 0,
                "siterank": 0,
                "opic": 0,
                "static": 0,
                "depth": 1,
                "queuesize": 0,
                "random": 0,
                "crosslinks": 0,
                "mirrors": 0.5,
            },
            "dict",
            "Weights of the score functions combined into a page's intrinsic quality: pagerank, wlrank, "
            "hub, authority, siterank, opic (on-line page importance), static, depth, queuesize, random, "
            "crosslinks (the fetched pages linking to a page from another section of its site, its first "
            "directory, or from another site; wirescrapy/manager/sections.py), mirrors (the mean PageRank of "
            "a page's copies in the other sections of its site: same path after the first directory). "
            "`hub` ranks every page not fetched yet at 0 (it has no links yet). "
            "Default: pagerank 4, depth 1, mirrors 0.5.",
            check=_score_weights,
        ),
        Setting(
            "WIRE_SCORE_AGE_EXPONENT",
            "manager/score/age/exponent",
            0.0,
            "float",
            "Exponent of the age term in the score (0 disables it).",
            0,
        ),
        Setting(
            "WIRE_SCORE_BOOST_FRONTPAGE",
            "manager/score/boostfrontpage",
            2.0,
            "float",
            "Factor multiplying the score of site front pages.",
            0,
        ),
        Setting(
            "WIRE_PAGERANK_DAMPING",
            "manager/score/pagerank/dampening",
            0.15,
            "float",
            "Probability of a random jump in PageRank (WIRE's q; networkx's alpha is 1 - q).",
            0,
            1,
        ),
        Setting(
            "WIRE_PAGERANK_MAX_ERROR",
            "manager/score/pagerank/max-error",
            1e-6,
            "float",
            "PageRank stops when the L1 change of an iteration is below this.",
            0,
        ),
        Setting(
            "WIRE_HITS_MAX_ERROR",
            "manager/score/hits/max-error",
            1e-6,
            "float",
            "HITS stops when the L1 change of an iteration is below this.",
            0,
        ),
        Setting(
            "WIRE_SITERANK_MAX_ERROR",
            "manager/score/siterank/max-error",
            1e-6,
            "float",
            "Site rank (PageRank on the graph of sites) convergence threshold.",
            0,
        ),
        Setting(
            "WIRE_MINPERIOD_UNSUCCESSFUL",
            "manager/minperiod/unsuccessful",
            DAY,
            "int",
            "Seconds before a page whose fetch failed is tried again.",
            0,
        ),
        Setting(
            "WIRE_MINPERIOD_SUCCESSFUL_NOT_OK",
            "manager/minperiod/successful-but-not-ok",
            3 * DAY,
            "int",
            "Seconds before a page fetched with a non-200 status is fetched again.",
            0,
        ),
        Setting(
            "WIRE_MINPERIOD_SUCCESSFUL_OK",
            "manager/minperiod/successful-and-ok",
            7 * DAY,
            "int",
            "Seconds before a page fetched with status 200 is fetched again.",
            0,
        ),
        Setting(
            "WIRE_ROBOTS_TXT_VALID_PERIOD",
            "manager/minperiod/robots-txt/when-valid",
            7 * DAY,
            "int",
            "Seconds a fetched robots.txt stays valid before it is fetched again.",
            0,
        ),
        Setting(
            "WIRE_ROBOTS_TXT_INVALID_PERIOD",
            "manager/minperiod/robots-txt/when-not-valid",
            DAY,
            "int",
            "Seconds before a robots.txt that could not be fetched (5xx, unreachable) is tried again.",
            0,
        ),
        Setting(
            "WIRE_PART_TIMEOUT",
            "",
            2 * DAY,
            "int",
            "Seconds the pages of a batch part out on another machine (harvested into WARC, not yet "
            "ingested) are not selected again; after that they may go into a new batch.",
            0,
        ),
    ),
    *_component(
        "harvester",
        Setting(
            "WIRE_WAIT_NORMAL",
            "harvester/wait/normal",
            15.0,
            "float",
            "Seconds between two accesses to the same site (politeness).",
            0,
        ),
        Setting(
            "WIRE_WAIT_LARGE_SITE",
            "harvester/wait/big",
            5.0,
            "float",
            "Seconds between accesses to a site with more than WIRE_LARGE_SITE_PAGES pages.",
            0,
        ),
        Setting(
            "WIRE_LARGE_SITE_PAGES",
            "harvester/wait/countbig",
            100,
            "int",
            "Pages above which a site is large and gets the shorter wait.",
            0,
        ),
        Setting(
            "WIRE_CONNECTIONS",
            "harvester/nthreads/start",
            300,
            "int",
            "Servers (WIRE_POLITENESS_GROUP's groups) fetched at the same time, one connection each.",
            1,
        ),
        Setting(
            "WIRE_POLITENESS_GROUP",
            "",
            "ip",
            "str",
            "What one connection at a time, and the wait after each access, are kept for: `ip`, the server "
            "a site's name resolved to; `host`, each host name; `domain`, each registered domain by the "
            "Public Suffix List. The default is `ip` because servers, not names, are what a crawl can "
            "overload: shared hosting puts many sites on one address, and many connections to one server "
            "is what gets a crawler blocked. Sites of one group take turns. `host` is faster where many "
            "unrelated sites share one address (a CDN).",
            check=lambda value: (
                None
                if value in POLITENESS_GROUPS
                else f"{value!r} is not one of {', '.join(POLITENESS_GROUPS)}"
            ),
        ),
        Setting(
            "WIRE_MAX_SITES_PER_GROUP",
            "",
            0,
            "int",
            "Sites of one server group (WIRE_POLITENESS_GROUP) a batch holds at most, so that one server's "
            "many sites do not fill a batch they can only be fetched from one at a time. 0: no bound.",
            0,
        ),
        Setting(
            "WIRE_MAX_RETRY_AFTER",
            "",
            3600.0,
            "float",
            "Seconds a server's `Retry-After` (on a 429 or 503, robots.txt included) holds its whole server "
            "group at most. The page asked for waits, and is fetched again in this batch or the next, "
            "while its holds add up to less than this.",
            0,
        ),
        Setting(
            "WIRE_MAX_BACKOFF",
            "",
            600.0,
            "float",
            "Seconds a server group's wait may grow to: each 5xx answer or time-out doubles it, each "
            "other answer halves it back to the site's wait.",
            0,
        ),
        Setting(
            "WIRE_SOFTMIN",
            "harvester/nthreads/softmin",
            3,
            "int",
            "A batch that began with at least this many sites ends early when fewer still have pages to "
            "fetch and those pages need at least twice what starting the next batch takes (the manager's "
            "run); in a harvester's last cycle (a job's only one), when they would keep the site the crawl "
            "waits for longest (its pages left for later batches included) idle at least twice a new job's "
            "start. The pages it did not fetch stay eligible for the next batches, which fetch them beside "
            "the sites that were idle. 0: a batch ends when its last page is fetched.",
            0,
        ),
        Setting(
            "WIRE_SOFTMIN_TIME",
            "harvester/nthreads/softmintime",
            0.0,
            "float",
            "Seconds a batch runs at least before WIRE_SOFTMIN may end it.",
            0,
        ),
        Setting(
            "WIRE_PLAN_AHEAD",
            "",
            True,
            "bool",
            "Plan the next batch while the current one finishes (the manager's computation in a thread "
            "once the pages left take less time than twice the last run did, leaving out the batch's "
            "pages not fetched yet; written when the batch ends), and write it at the end of the last "
            "cycle too, so the next harvester starts fetching at once. The links found in the last "
            "moments of a batch wait one batch more.",
        ),
        Setting(
            "WIRE_CONNECTION_TIMEOUT",
            "harvester/timeout/connection",
            30.0,
            "float",
            "Seconds allowed for a fetch before it fails.",
            0.001,
        ),
        Setting(
            "WIRE_MAX_FILE_SIZE",
            "harvester/maxfilesize",
            400_000,
            "int",
            "Bytes downloaded from one page; a larger page is truncated and kept.",
            1,
        ),
        Setting(
            "WIRE_MAX_HEADER_SIZE",
            "",
            65_536,
            "int",
            "Bytes of status line and headers read from one response; a fetch sending more is stopped "
            "and recorded with the error `headers_too_large`.",
            1024,
        ),
        Setting(
            "WIRE_MAX_HEADERS",
            "",
            256,
            "int",
            "Header lines read from one response; a fetch sending more is stopped and recorded with the "
            "error `headers_too_large`.",
            8,
        ),
        Setting(
            "WIRE_ACCEPT_MIME",
            "harvester/acceptmime",
            ["text/html", "text/plain"],
            "list",
            "MIME types downloaded; other responses are stopped after the headers and recorded.",
        ),
        Setting(
            "WIRE_BLOCKED_IPS",
            "harvester/blocked-ip",
            BLOCKED_NETWORKS,
            "list",
            "Addresses and networks never visited, checked after DNS resolution (default: loopback, "
            "private, link-local and other non-public ranges).",
            check=_networks,
        ),
        Setting(
            "WIRE_MAX_REDIRECTS",
            "",
            3,
            "int",
            "Redirect hops followed from the page that was linked, counted across batches (5 for robots.txt, "
            "RFC 9309); each hop is recorded as a link one deeper and waits its site's turn; a new URL past "
            "the limit is not added.",
            0,
            20,
        ),
        Setting(
            "WIRE_SITEMAPS_PER_SITE",
            "",
            5,
            "int",
            "Sitemaps fetched for a site when its robots.txt names them (an index counts its children); "
            "0 fetches none.",
            0,
        ),
        Setting(
            "WIRE_RENDER_JS",
            "",
            "off",
            "str",
            "Pages rendered through Splash (scrapy-splash, `SPLASH_URL`) so that the links scripts write are "
            "found: `off`; comma-separated host suffixes (`.example.org,shop.example.com`) whose sites are "
            "always rendered; or `auto`: an HTML page that looks script-built (docs/rendering.md) is "
            "rendered once more through Splash, and a site where that found links goes straight "
            "to Splash, one where it never did stops being tried.",
            check=_render_js,
        ),
        Setting(
            "WIRE_RENDER_SUBRESOURCES",
            "",
            4,
            "int",
            "Requests to the page's own site a render may make besides the page (scripts, style sheets, "
            "XHR); the rest are aborted, as are images and every other site's resources.",
            0,
            50,
        ),
        Setting(
            "WIRE_RENDER_WAIT",
            "",
            0.5,
            "float",
            "Seconds a render lets the page's scripts run after it loaded.",
            0,
            10,
        ),
        Setting(
            "WIRE_RENDER_TIMEOUT",
            "",
            15.0,
            "float",
            "Seconds Splash is given for a render (its `timeout`); the crawler waits 5 s more.",
            1,
            90,
        ),
        Setting(
            "WIRE_RENDER_FROZEN_AFTER",
            "",
            5.0,
            "float",
            "A render that ends without an answer after this many seconds froze Splash (`render_timeout`: "
            "the page is never rendered again); sooner, Splash was down (`render_failed`: rendered at a "
            "later visit).",
            0.1,
        ),
        Setting(
            "WIRE_RENDER_TRIES",
            "",
            3,
            "int",
            "`auto`: pages of a site rendered without finding a link before it is marked as never helped by "
            "rendering.",
            1,
            1000,
        ),
        Setting(
            "WIRE_DNS_HOSTS",
            "harvester/resolvconf",
            {},
            "dict",
            "Static host map `{domain: ip}` used before DNS (a name matches its domain and "
            "sub-domains); for tests and the offline demo.",
            check=_ip_map,
        ),
        Setting(
            "WIRE_WARC_DIR",
            "",
            "",
            "str",
            "Directory the harvester also writes every fetch into, as WARC/1.1 files (request, response "
            "as received, fetch metadata); empty: no WARC.",
        ),
        Setting(
            "WIRE_WARC_MAX_SIZE",
            "",
            1_000_000_000,
            "int",
            "Bytes after which a WARC file is closed and the next one begun.",
            1,
        ),
    ),
    *_component(
        "gatherer",
        Setting(
            "WIRE_MAX_STORED_SIZE",
            "gatherer/maxstoredsize",
            300_000,
            "int",
            "Bytes of cleaned page kept in the page store.",
            1,
        ),
        Setting(
            "WIRE_LINK_ATTRIBUTES",
            "gatherer/link/attribute",
            ["a/href", "area/href", "frame/src", "iframe/src", "link/href"],
            "list",
            "Tag/attribute pairs holding links.",
            check=_link_attributes,
        ),
        Setting(
            "WIRE_KEEP_TAGS",
            "gatherer/keep/tag",
            [
                "html",
                "head",
                "title",
                "meta",
                "body",
                "h1",
                "h2",
                "h3",
                "h4",
                "h5",
                "h6",
                "p",
                "br",
                "hr",
                "div",
                "span",
                "a",
                "ul",
                "ol",
                "li",
                "dl",
                "dt",
                "dd",
                "table",
                "tr",
                "td",
                "th",
                "thead",
                "tbody",
                "tfoot",
                "caption",
                "pre",
                "blockquote",
                "b",
                "i",
                "u",
                "em",
                "strong",
                "code",
                "sub",
                "sup",
                "img",
                "area",
                "map",
                "frame",
                "iframe",
                "form",
                "section",
                "article",
                "nav",
                "header",
                "footer",
                "main",
                "figure",
                "figcaption",
            ],
            "list",
            "Tags kept in the cleaned document (structure, logical and physical formatting).",
        ),
        Setting(
            "WIRE_KEEP_ATTRIBUTES",
            "gatherer/keep/attribute",
            ["href", "src", "alt", "title", "name", "content", "http-equiv", "lang", "charset", "rel"],
            "list",
            "Attributes kept on the kept tags.",
        ),
        Setting(
            "WIRE_DISCARD_CONTENT",
            "gatherer/discard/content",
            ["script", "style", "noscript", "template", "object", "embed", "applet", "svg"],
            "list",
            "Tags dropped together with their content.",
        ),
        Setting(
            "WIRE_DEFAULT_CHARSET",
            "gatherer/defaultcharset",
            "windows-1252",
            "str",
            "Encoding assumed when neither the header, a BOM, a meta tag nor detection decides.",
        ),
        Setting(
            "WIRE_OBEY_NOFOLLOW",
            "",
            True,
            "bool",
            "Links with rel=nofollow, and pages with a robots meta `nofollow`, add no URLs.",
        ),
        Setting(
            "WIRE_FOLLOW_DUPLICATE_LINKS",
            "",
            False,
            "bool",
            "On: a duplicate's links (content-seen: its content is an earlier page's) that lead elsewhere "
            "than its original's are followed, when both are on one site and the duplicate's path does not "
            "continue the original's: relative links in a copy stored at another path reach pages only "
            "copies link to (wirescrapy/gatherer/pipelines/linkgraph.py). Off, as in WIRE: a duplicate's "
            "links are ignored, which stops a tree of copies (a session id in the path) at its first copy.",
        ),
        Setting(
            "WIRE_PARSE_WORKERS",
            "",
            1,
            "int",
            "Processes that parse the pages beside the crawl's own (other cores), so that parsing never "
            "holds up the requests; the results are stored in the order the fetches ended, as without "
            "them. 0: parse in the crawl's process.",
            0,
            64,
        ),
        Setting(
            "WIRE_PARSE_TIMEOUT",
            "",
            60.0,
            "float",
            "Seconds a page may take in the parse workers, from the moment it is handed to them, before "
            "they are taken as hung: they are stopped and started again, the pages they had are parsed "
            "again one at a time, and a page that hangs a worker parsing it alone is recorded as the "
            "gatherer's error (fetched again in a later batch) while the crawl goes on. 0: no limit.",
            0,
        ),
        Setting(
            "WIRE_NEAR_DUPLICATES",
            "",
            True,
            "bool",
            "Fingerprint each page's text (SimHash, the site's template left out) and cluster "
            "near-duplicates: pages that differ from an earlier one only in a date, a counter or a mirror's "
            "name (nearduplicates.rec; scrapy export documents --near-duplicates; the report). A revisit "
            "that changed only within its cluster counts as unchanged for freshness. On by default: the "
            "shingles are computed in the parse workers, and what is left in the crawl's thread is a small "
            "part of a page's gathering (benchmarks/README.md).",
        ),
        Setting(
            "WIRE_NEAR_DUPLICATE_DISTANCE",
            "",
            7,
            "int",
            "Bits two pages' fingerprints may differ in and be near-duplicates: 7, the best on labelled "
            "real near-copies (a date, a counter, a version, another template). Up to 3 a lookup reads one "
            "bucket in each of the index's four tables; 4 to 7 it reads 17 (benchmarks/README.md).",
            0,
            7,
        ),
    ),
)


def default_settings() -> dict[str, Any]:
    """The WIRE_* defaults, for a Scrapy settings module."""
    return {spec.name: spec.default for spec in SETTINGS}
