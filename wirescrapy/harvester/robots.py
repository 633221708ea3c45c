"""robots.txt in a harvest: one owner for every site's rules, from the request to the site record.

A site's rules are a :class:`~wirescrapy.seeder.robots.RobotsPolicy` (the pure RFC 9309 state machine).
:class:`RobotsTxt` keeps one per site for the harvest (``Harvest.robots``) and is the only place that

* **loads** it: from the collection's site record (state, time and stored body), or from the batch's copy
  (``sites.jsonl``) when that is newer — another run fetched it since the collection was read (a detached
  harvest, with no collection, has the batch's copy only);
* says **what is due**: a site whose robots.txt must be fetched before its pages, requested once a batch;
* **answers** the ``RobotsMiddleware``: a URL is allowed, disallowed, or waits because its site's
  robots.txt is not fetched yet or is unreachable;
* **settles** a site when its robots.txt request ends, with a response or a failure, and says whether the
  site stays held meanwhile (``HOLD_SITE``) when the request is redirected;
* says what a robots.txt fetch **writes**: a :class:`RobotsRecord`, which the gatherer's pipelines write as
  it is (the document, the body to store, the site record's robots.txt fields, the old refusals lifted).

The spider makes the requests and hands over what came back; the scheduler holds the site meanwhile; none of
them, nor the pipelines, keeps or decides robots.txt state of its own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wirescrapy.collection.metadata import RobotsState
from wirescrapy.items import FetchError
from wirescrapy.seeder.robots import RobotsPolicy, limit_body, response_state
from wirescrapy.url import BadURL, robots_txt_url, site_of

if TYPE_CHECKING:
    from wirescrapy.collection import Collection
    from wirescrapy.config import WireConfig
    from wirescrapy.items import Fetch
    from wirescrapy.manager.batch import BatchSite


class Verdict(enum.Enum):
    """What a site's robots.txt says of one of its pages."""

    ALLOWED = "allowed"
    DISALLOWED = "disallowed"  # the rules forbid it: recorded so, no access made
    UNKNOWN = "unknown"  # robots.txt not fetched yet: the page waits for a later batch
    UNREACHABLE = (
        "unreachable"  # 5xx, 429 or no answer: the site is closed until the retry (RFC 9309 §2.3.1.4)
    )


@dataclass(frozen=True, slots=True)
class RobotsRecord:
    """What one robots.txt fetch writes into the collection. The gatherer's pipelines write it as it is."""

    url: str  # the site's /robots.txt: the document the fetch is recorded under, whatever URL answered
    body: bytes | None  # the rules as they are parsed, stored as the document's page; None: nothing to store
    state: RobotsState  # the site's state after the fetch
    fetched: float  # Unix time the state was settled (0: never)
    crawl_delay: float  # seconds asked between accesses (0: none)

    def site_fields(self, doc_id: int) -> dict:
        """The site record's robots.txt fields; ``doc_id``: the document of :attr:`url`, also when nothing is
        stored (the manager never puts it in a batch)."""
        return {
            "robots_state": int(self.state),
            "robots_fetched": self.fetched,
            "robots_docid": doc_id,
            "crawl_delay": self.crawl_delay,
        }

    def changes_rules(self, site, changed: bool) -> bool:
        """Whether the site's rules are no longer those of its record (``site``, before this fetch;
        ``changed``: the stored body changed): the manager leaves out the pages the old rules refused, so they
        must be let go. A first fetch changes nothing: no page was refused before it."""
        return site["robots_fetched"] > 0 and (changed or int(site["robots_state"]) != int(self.state))


class RobotsTxt:
    """Every site's robots.txt policy for one harvest; see the module docstring."""

    def __init__(self, config: WireConfig, user_agent: str, collection: Collection | None):
        self.config = config
        self.user_agent = user_agent
        self.collection = collection
        self._policies: dict[str, RobotsPolicy] = {}
        self._requested: set[str] = set()  # sites whose robots.txt is queued or in flight

    def policy(self, site: str, batch_site: BatchSite | None = None) -> RobotsPolicy:
        """The policy of a site (``scheme://host[:port]``); ``batch_site``: its record in the batch."""
        policy = self._policies.get(site)
        if policy is None:
            policy = self._policies[site] = self._load(site, batch_site)
        return policy

    def verdict(self, url: str) -> Verdict:
        """What the robots.txt of ``url``'s site says of it."""
        policy = self.policy(origin_of(url))
        if policy.allowed(url):
            return Verdict.ALLOWED
        if policy.state is RobotsState.VALID:
            return Verdict.DISALLOWED
        return Verdict.UNREACHABLE if policy.state is RobotsState.UNREACHABLE else Verdict.UNKNOWN

    # -- requests --------------------------------------------------------------------------------------------

    def new_batch(self) -> None:
        """A batch begins: a robots.txt is requested at most once in it."""
        self._requested.clear()

    def request_due(self, site: str, now: float) -> bool:
        """Whether a robots.txt request for ``site`` must be queued before its pages: it is due and none is
        queued yet. A yes marks it queued, until :meth:`fetched` or :meth:`failed`."""
        if site in self._requested or not self.policy(site).due(now):
            return False
        self._requested.add(site)
        return True

    def fetched(self, fetch: Fetch) -> RobotsPolicy:
        """The robots.txt request of ``fetch``'s site ended in this response (a redirect not followed
        included): the site's policy, settled."""
        site = fetch_origin(fetch)
        policy = self.policy(site)
        policy.fetched(fetch.status, fetch.body, fetch.ended)
        self._requested.discard(site)
        return policy

    def failed(self, fetch: Fetch) -> RobotsPolicy:
        """The robots.txt request of ``fetch``'s site got no response: the site's policy, unreachable — unless
        our WIRE_BLOCKED_IPS refused it before any access. That says nothing of the site: its policy stays as
        it was (not fetched yet: due again in the next batch, once the setting allows it), and it stays
        requested in this batch, whose pages of the site are refused as blocked too."""
        site = fetch_origin(fetch)
        policy = self.policy(site)
        if fetch.error is FetchError.BLOCKED_IP:
            return policy
        policy.failed(fetch.ended)
        self._requested.discard(site)
        return policy

    @staticmethod
    def keeps_hold(site: str, hop: str) -> bool:
        """Whether ``site`` stays held while its robots.txt chain goes on to ``hop``, a redirect target: yes
        when the hop is on another site, whose queue it waits in, or the site's pages would reach the
        robots.txt check before its rules; no on the site itself, where the hop goes to the front of the
        site's queue and holds the site in turn."""
        return origin_of(hop) != site

    # -- the collection --------------------------------------------------------------------------------------

    def record(self, fetch: Fetch) -> RobotsRecord:
        """What the robots.txt fetch ``fetch`` writes into the collection."""
        site = fetch_origin(fetch)
        policy = self.policy(site)
        # The body is stored exactly when it is the site's rules, and as they are parsed: on any 2xx, by the
        # policy's own rule, so that a later harvest loads the rules this one obeyed.
        body = limit_body(fetch.body) if response_state(fetch.status) is RobotsState.VALID else None
        return RobotsRecord(
            robots_txt_url(site), body, policy.state, policy.fetched_at, policy.crawl_delay or 0.0
        )

    def _load(self, site: str, batch_site: BatchSite | None) -> RobotsPolicy:
        collection = self.collection
        site_id = collection.urls.site_id(site) if collection is not None else 0
        record = collection.sites.records[site_id] if site_id else None
        state, body, fetched = RobotsState.UNKNOWN, b"", 0.0
        if record is not None and record["robots_fetched"] > 0:
            state, fetched = RobotsState(int(record["robots_state"])), float(record["robots_fetched"])
            if state is RobotsState.VALID and record["robots_docid"]:
                body = collection.load_page(int(record["robots_docid"])) or b""
        if batch_site is not None and batch_site.robots_fetched > fetched:
            state, fetched = batch_site.robots_state, batch_site.robots_fetched
            body = batch_site.robots_txt or b""
        return RobotsPolicy.from_config(self.config, self.user_agent, state, body, fetched)


def origin_of(url: str) -> str:
    """The site of a canonical URL; ``""`` if it has none."""
    try:
        return site_of(url)
    except BadURL:
        return ""


def fetch_origin(fetch: Fetch) -> str:
    """The site a fetch is for: a robots.txt's or sitemap's own (a redirect may have led elsewhere), else its
    URL's."""
    return fetch.origin or origin_of(fetch.url)
