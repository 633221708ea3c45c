"""The seeder's rules (thesis §7.2.4): which URLs enter the collection, in what form, at what depth.

``SeederRules.classify(url, parent_depth)`` decides for one URL, in this order:

1. **scheme** — not in ``WIRE_ACCEPT_PROTOCOLS``: rejected (``mailto:``, ``javascript:`` …);
2. **canonical form** (``canonical.py``) — not an absolute URL with a host: rejected as a bad URL;
3. **transform** — session-id parameters (``WIRE_SESSION_IDS``, any case) removed from the query and from
   the path parameters of every segment (``/a;jsessionid=X/b``), then the URL canonicalised again;
4. **domain** — the host must be one of ``WIRE_ACCEPT_DOMAIN_SUFFIXES`` or below one (``.cl`` and ``cl``
   both accept ``uchile.cl`` and ``www.uchile.cl``, never ``evilcl.com``); an empty list accepts every host;
5. **reject patterns** — a ``WIRE_REJECT_PATTERNS`` substring in the path and query (any case): rejected;
   so is a path and query longer than the URL store keeps (``MAX_PATH`` bytes): a server may write any
   ``href``, and one the collection cannot hold must not stop the links after it;
6. **extension** of the last path segment, first group that has it: ``WIRE_EXTENSIONS_IGNORE`` (ignored),
   ``WIRE_EXTENSIONS_LOG`` (multimedia: logged, never fetched), ``WIRE_EXTENSIONS_DYNAMIC`` (dynamic page),
   ``WIRE_EXTENSIONS_STATIC`` (static page, dynamic if it has a query string). An extension in no group is
   ignored, as WIRE's accept patterns are a list of what to fetch; an all-digit "extension" (``/v1.2``,
   ``/2004.10.01``) is no extension;
7. **depth** — a seed is at depth 0, a link target one deeper than its page; a page deeper than
   ``WIRE_MAX_DEPTH_STATIC`` (``…_DYNAMIC`` for dynamic pages) is rejected as too deep. The collection keeps
   a document's smallest depth.

robots.txt is not a rule here: it changes over time, so URLs it forbids are still added and the harvester
asks the site's ``RobotsPolicy`` before each fetch.

This module only decides (pure: no collection, no I/O); a ``Decision`` carries the canonical URL's site and
target, so that whoever applies it (``add.py``, which writes to the collection) does not split it again.
"""

from __future__ import annotations

import enum
import logging
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

from wirescrapy.collection.metadata import DocFlag
from wirescrapy.collection.urls import MAX_PATH
from wirescrapy.url import BadURL, canonical_parts, host_of, split, url_scheme

logger = logging.getLogger(__name__)

# The collection's URL store holds http and https URLs only (``collection.split_url``).
STORABLE_SCHEMES = frozenset({"http", "https"})
MAX_STORED_DEPTH = 0xFFFF  # the document record's depth is a uint16


class Verdict(enum.Enum):
    STATIC = "static"  # fetch, a static page
    DYNAMIC = "dynamic"  # fetch, a dynamic page
    LOG = "log"  # multimedia or document: added for the reports, never fetched
    IGNORE = "ignore"  # an extension that is not crawled
    REJECT = "reject"  # see the reason


class Reason(enum.Enum):
    BAD_URL = "bad URL"
    BAD_SCHEME = "scheme not accepted"
    DOMAIN = "domain not accepted"
    PATTERN = "reject pattern"
    TOO_LONG = "too long"
    TOO_DEEP = "too deep"
    IGNORED_EXTENSION = "ignored extension"
    UNKNOWN_EXTENSION = "unknown extension"


_DYNAMIC, _MULTIMEDIA, _FRONT_PAGE = int(DocFlag.DYNAMIC), int(DocFlag.MULTIMEDIA), int(DocFlag.FRONT_PAGE)


@dataclass(frozen=True, slots=True)
class Decision:
    url: str  # canonical, after the transforms; the text given when it is a bad URL or scheme
    verdict: Verdict
    depth: int
    dynamic: bool = False
    reason: Reason | None = None  # why it is ignored or rejected
    detail: str = ""  # the pattern, extension or parse error, for the log
    site: str = ""  # the canonical URL's site and target (``url == site + target``); "" for a bad URL
    target: str = ""

    @property
    def fetch(self) -> bool:
        return self.verdict in (Verdict.STATIC, Verdict.DYNAMIC)

    @property
    def kept(self) -> bool:
        """Whether the URL goes into the collection (fetched, or logged as multimedia)."""
        return self.fetch or self.verdict is Verdict.LOG

    @property
    def flags(self) -> DocFlag:
        return DocFlag(self.flag_bits)

    @property
    def flag_bits(self) -> int:
        """``flags`` as an int, without building enum values (this is done for every link of every page)."""
        bits = _DYNAMIC if self.dynamic else 0
        if self.verdict is Verdict.LOG:
            bits |= _MULTIMEDIA
        if self.target == "/" and self.kept:
            bits |= _FRONT_PAGE
        return bits

    def __str__(self) -> str:
        why = f" ({self.reason.value}{': ' + self.detail if self.detail else ''})" if self.reason else ""
        return f"{self.verdict.value} {self.url} depth={self.depth}{why}"

    def __reduce__(self):
        # Parse workers send a page's decisions back by the hundred (gatherer/workers.py). A frozen slots
        # dataclass pickles through dataclasses' __getstate__/__setstate__, which call fields() on every
        # object; a plain tuple is cheaper at both ends (benchmarks/gatherer.py --pickle measures it).
        return Decision, (
            self.url,
            self.verdict,
            self.depth,
            self.dynamic,
            self.reason,
            self.detail,
            self.site,
            self.target,
        )


class SeederRules:
    """The accept / reject / transform rules of one configuration (a ``WireConfig``)."""

    def __init__(self, config):
        protocols = {p.lower() for p in config.accept_protocols}
        if protocols - STORABLE_SCHEMES:
            logger.warning(
                "WIRE_ACCEPT_PROTOCOLS: %(schemes)s cannot be stored in the collection, ignored",
                {"schemes": ", ".join(sorted(protocols - STORABLE_SCHEMES))},
            )
        self.protocols = frozenset(protocols & STORABLE_SCHEMES)
        self.domain_suffixes = tuple(_suffix(s) for s in config.accept_domain_suffixes)
        self.ignore_extensions = _lowered(config.extensions_ignore)
        self.log_extensions = _lowered(config.extensions_log)
        self.dynamic_extensions = _lowered(config.extensions_dynamic)
        self.static_extensions = _lowered(config.extensions_static)
        self.reject_patterns = tuple(p.lower() for p in config.reject_patterns if p)
        self.session_ids = _lowered(config.session_ids)
        self.max_depth_static = config.max_depth_static
        self.max_depth_dynamic = config.max_depth_dynamic
        self.max_urls_per_site = config.max_urls_per_site
        self.max_redirects = config.max_redirects
        self.max_sites = config.max_sites
        self.new_sites_per_page = config.new_sites_per_page
        self.new_sites_per_site = config.new_sites_per_site
        self.add_root = config.add_root

    @classmethod
    def default(cls) -> SeederRules:
        """The rules of WIRE's defaults (``wirescrapy/config/table.py``)."""
        from scrapy.settings import BaseSettings

        from wirescrapy.config import WireConfig

        return cls(WireConfig.from_settings(BaseSettings()))

    # -- one URL -------------------------------------------------------------------------------------

    def classify(self, url: str, parent_depth: int | None = None) -> Decision:
        """The decision for ``url``, a seed (``parent_depth`` None) or a link from a page at that depth."""
        return self.classify_at(url, 0 if parent_depth is None else parent_depth + 1)

    def classify_at(self, url: str, depth: int) -> Decision:
        """The decision for ``url`` reached at ``depth``."""
        scheme = url_scheme(url)
        if scheme and scheme not in self.protocols:
            return Decision(url.strip(), Verdict.REJECT, depth, reason=Reason.BAD_SCHEME, detail=scheme)
        try:
            site, target = self.transform_parts(url)
        except BadURL as exc:
            return Decision(url.strip(), Verdict.REJECT, depth, reason=Reason.BAD_URL, detail=str(exc))
        url = site + target

        def decided(verdict: Verdict, dynamic: bool = False, reason: Reason | None = None, detail: str = ""):
            return Decision(url, verdict, depth, dynamic, reason, detail, site, target)

        if not self.accepts_host(host_of(site)):
            return decided(Verdict.REJECT, reason=Reason.DOMAIN)
        pattern = self.reject_pattern(target)
        if pattern:
            return decided(Verdict.REJECT, reason=Reason.PATTERN, detail=pattern)
        if len(target) > MAX_PATH // 4 and len(target.encode("utf-8", "surrogateescape")) > MAX_PATH:
            return decided(Verdict.REJECT, reason=Reason.TOO_LONG, detail=f"{len(target)} characters")
        path, has_query, _ = target.partition("?")
        ext = extension(path)
        dynamic = bool(has_query) or ext in self.dynamic_extensions
        if ext in self.ignore_extensions:
            return decided(Verdict.IGNORE, dynamic, Reason.IGNORED_EXTENSION, ext)
        if ext in self.log_extensions:
            return decided(Verdict.LOG, dynamic)
        if ext not in self.dynamic_extensions and ext not in self.static_extensions:
            return decided(Verdict.IGNORE, dynamic, Reason.UNKNOWN_EXTENSION, ext)
        limit = self.max_depth_dynamic if dynamic else self.max_depth_static
        if depth > limit:
            return decided(Verdict.REJECT, dynamic, Reason.TOO_DEEP, f"{depth} > {limit}")
        return decided(Verdict.DYNAMIC if dynamic else Verdict.STATIC, dynamic)

    def transform(self, url: str) -> str:
        """The canonical URL without session ids; ``BadURL`` if it is not an absolute URL."""
        site, target = self.transform_parts(url)
        return site + target

    def transform_parts(self, url: str) -> tuple[str, str]:
        """``transform`` as (site, target)."""
        site, target = canonical_parts(url)
        if self.session_ids and ("?" in target or ";" in target):  # where session ids can be
            stripped = remove_session_ids(site + target, self.session_ids)
            if stripped != site + target:
                site, target = canonical_parts(stripped)
        return site, target

    def accepts_host(self, host: str) -> bool:
        if not self.domain_suffixes:
            return True
        return any(host == suffix or host.endswith("." + suffix) for suffix in self.domain_suffixes)

    def reject_pattern(self, target: str) -> str:
        """The first reject pattern found in ``target`` (path and query), or ""."""
        lowered = target.lower()
        return next((p for p in self.reject_patterns if p in lowered), "")

    def within_site_limit(self, docs: int) -> bool:
        """Whether a site that has ``docs`` documents may get a new one (``WIRE_MAX_URLS_PER_SITE``)."""
        return within_site_limit(docs, self.max_urls_per_site)

    def within_redirect_limit(self, redirects: int) -> bool:
        """Whether a new URL that ``redirects`` redirect hops led to may be added (``WIRE_MAX_REDIRECTS``)."""
        return redirects <= self.max_redirects

    def new_sites_allowed(self, added_by_site: int, sites: int) -> int:
        """How many new sites one page's links may add, its site having added ``added_by_site`` and the
        collection holding ``sites`` (``WIRE_NEW_SITES_PER_PAGE``, ``…_PER_SITE``, ``WIRE_MAX_SITES``)."""
        return new_sites_allowed(
            added_by_site, sites, self.new_sites_per_page, self.new_sites_per_site, self.max_sites
        )


def new_sites_allowed(added_by_site: int, sites: int, per_page: int, per_site: int, max_sites: int) -> int:
    """The new sites a page may add: its own bound, within what its site may still add and the room left in
    the collection (never below 0)."""
    return max(0, min(per_page, per_site - added_by_site, max_sites - sites))


def within_site_limit(docs: int, max_urls_per_site: int) -> bool:
    """True: add the site's new URL; False: only count it (the site has its ``max_urls_per_site``)."""
    return docs < max_urls_per_site


def extension(path: str) -> str:
    """The lower-cased extension of a path's last segment (path parameters left out), "" if none."""
    segment = path.rpartition("/")[2].partition(";")[0]
    dot = segment.rfind(".")
    if dot == -1:
        return ""
    ext = segment[dot:].lower()
    return "" if ext[1:].isdigit() else ext


def remove_session_ids(url: str, names: Iterable[str]) -> str:
    """``url`` (canonical) without the query parameters and path parameters named in ``names``."""
    names = frozenset(n.lower() for n in names)
    site, target = split(url)
    path, has_query, query = target.partition("?")
    if ";" in path:
        segments = []
        for segment in path.split("/"):
            first, *params = segment.split(";")
            segments.append(";".join([first, *(p for p in params if _param_name(p) not in names)]))
        path = "/".join(segments)
    if has_query:
        query = "&".join(p for p in query.split("&") if _param_name(p) not in names)
    return site + path + ("?" + query if query else "")


def _param_name(parameter: str) -> str:
    return urllib.parse.unquote(parameter.partition("=")[0]).strip().lower()


def _suffix(value: str) -> str:
    suffix = value.strip().lstrip(".").lower()
    if not suffix.isascii():
        suffix = suffix.encode("idna").decode("ascii")
    return suffix


def _lowered(values: Iterable[str]) -> frozenset[str]:
    return frozenset(v.lower() for v in values)
