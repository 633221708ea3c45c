"""robots.txt: a site's state and rules, as a pure state machine over fetch outcomes (RFC 9309).

The caller fetches ``/robots.txt`` (following up to 5 redirects, RFC 9309 §2.3.1.2), then tells the site's
``RobotsPolicy`` what came back, with the time::

    policy.fetched(status, body, now)   # an HTTP response, any status
    policy.failed(now)                  # DNS, connection, timeout: no HTTP response

and the policy decides the site's ``RobotsState``:

============  =================================================  ==============  ===================
state         when                                               pages allowed   fetched again after
============  =================================================  ==============  ===================
UNKNOWN       never fetched                                      none            (now)
VALID         2xx: the body is parsed (Protego)                  as it says      VALID_PERIOD
MISSING       4xx but 429, or a 3xx the fetcher did not follow   all (§2.3.1.3)  VALID_PERIOD
UNREACHABLE   5xx, 429, any other status, or a network error     none (§2.3.1.4) INVALID_PERIOD
============  =================================================  ==============  ===================

A 3xx reaches the policy when the fetcher stops following it: no usable ``Location``, a loop, or more
than 5 hops. RFC 9309 §2.3.1.2 lets the crawler then take the robots.txt as unavailable, the 4xx case, so
the fetcher hands over the 3xx status as the server sent it (its redirect error kept apart, on the fetch).

A missing robots.txt is a definite answer, so it is trusted as long as a valid one; only the failures are
retried sooner (``WIRE_ROBOTS_TXT_INVALID_PERIOD``). 429 (Too Many Requests) is the server asking us to back
off, so it is a failure, not permission to crawl everything (Google does the same).

Rules are those of the group for our user-agent token (the first word of ``USER_AGENT``, ``wirescrapy``),
or of ``*``. Only the first 500 KiB of a body are parsed (§2.5), cut at the last line break so no rule is
truncated into a shorter, wider one. The body is decoded as UTF-8 (a BOM dropped, bad bytes replaced), so
binary junk, HTML served as robots.txt, CRLF line ends or rules without a ``User-agent`` line parse
without error — into the rules they contain, usually none (everything allowed).

The policy is rebuilt from what the collection keeps — ``RobotsState``, the stored body and the fetch time
(``robots_state``, the page store, ``robots_fetched``) — with ``RobotsPolicy(state, body, fetched, …)``.
"""

from __future__ import annotations

import logging
import math
import urllib.parse

from protego import Protego

# Protego's own reading of a line (field and value, with its tolerance of misspelled fields), so that the
# lines handed to it are judged as it would judge them (protego is pinned in requirements.txt).
from protego._protego import _ALL_DIRECTIVES, _USER_AGENT_DIRECTIVE, _extract_directive

from wirescrapy.collection.metadata import RobotsState

logger = logging.getLogger(__name__)

MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309 §2.5: parse at least 500 KiB
DEFAULT_USER_AGENT = "wirescrapy"
DAY = 86400


def user_agent_token(user_agent: str) -> str:
    """The robots.txt product token of a User-Agent header: ``wirescrapy/0.1 (+https://…)`` →
    ``wirescrapy``."""
    words = (user_agent or "").split()
    token = words[0].split("/")[0] if words else ""
    return token or DEFAULT_USER_AGENT


def limit_body(body: bytes) -> bytes:
    """The part of ``body`` that is parsed and stored: at most ``MAX_ROBOTS_BYTES``, whole lines."""
    if len(body) <= MAX_ROBOTS_BYTES:
        return body
    head = body[:MAX_ROBOTS_BYTES]
    cut = max(head.rfind(b"\n"), head.rfind(b"\r"))
    return head[: cut + 1] if cut != -1 else b""


def response_state(status: int) -> RobotsState:
    """The state an HTTP response to a robots.txt request gives its site (the table above); its body is the
    site's rules only when that is ``VALID``."""
    if 200 <= status < 300:
        return RobotsState.VALID
    if 300 <= status < 500 and status != 429:
        return (
            RobotsState.MISSING
        )  # a 3xx here is a redirect the fetcher did not follow (too many, no Location)
    return RobotsState.UNREACHABLE


class RobotsPolicy:
    """One site's robots.txt state and rules; see the module docstring."""

    def __init__(
        self,
        state: RobotsState = RobotsState.UNKNOWN,
        body: bytes = b"",
        fetched: float = 0.0,
        *,
        user_agent: str = DEFAULT_USER_AGENT,
        valid_period: float = 7 * DAY,
        invalid_period: float = DAY,
    ):
        self.user_agent = user_agent_token(user_agent)
        self.valid_period = valid_period
        self.invalid_period = invalid_period
        self._set(RobotsState(state), body, fetched)

    @classmethod
    def from_config(
        cls,
        config,
        user_agent: str,
        state: RobotsState = RobotsState.UNKNOWN,
        body: bytes = b"",
        fetched: float = 0.0,
    ) -> RobotsPolicy:
        """A policy with the periods of a ``WireConfig`` and the token of a ``USER_AGENT``."""
        return cls(
            state,
            body,
            fetched,
            user_agent=user_agent,
            valid_period=config.robots_txt_valid_period,
            invalid_period=config.robots_txt_invalid_period,
        )

    # -- transitions ---------------------------------------------------------------------------------

    def fetched(self, status: int, body: bytes, now: float) -> RobotsState:
        """An HTTP response to the robots.txt request, after redirects; returns the new state."""
        state = response_state(status)
        self._set(state, body or b"", now)
        return state

    def failed(self, now: float) -> RobotsState:
        """The request got no HTTP response (DNS, connection refused, timeout …)."""
        self._set(RobotsState.UNREACHABLE, b"", now)
        return self.state

    def _set(self, state: RobotsState, body: bytes, fetched: float) -> None:
        self.state = state
        self.fetched_at = float(fetched)
        self.body = limit_body(body) if state is RobotsState.VALID else b""
        self._rules = _parse(self.body) if state is RobotsState.VALID else None

    # -- questions -----------------------------------------------------------------------------------

    @property
    def next_fetch(self) -> float:
        """When the robots.txt should be fetched again (0 = now)."""
        if self.state is RobotsState.UNKNOWN:
            return 0.0
        period = self.invalid_period if self.state is RobotsState.UNREACHABLE else self.valid_period
        return self.fetched_at + period

    def due(self, now: float) -> bool:
        """Whether the robots.txt should be fetched (again) before the site's pages."""
        return now >= self.next_fetch

    def allowed(self, url: str) -> bool:
        """Whether ``url``, on this site, may be fetched."""
        if self.state is RobotsState.MISSING:
            return True
        if self.state is not RobotsState.VALID:
            return False
        try:
            return self._rules.can_fetch(url, self.user_agent)
        except Exception:
            logger.exception("robots.txt rules failed on %(url)s; allowing it", {"url": url})
            return True

    @property
    def crawl_delay(self) -> float | None:
        """Seconds between requests asked for our user agent (or ``*``); None when not given."""
        if self._rules is None:
            return None
        try:
            delay = self._rules.crawl_delay(self.user_agent)
        except Exception:  # noqa: BLE001
            return None
        if delay is None or not math.isfinite(delay) or delay < 0:
            return None
        return float(delay)

    def sitemaps(self, base_url: str | None = None) -> list[str]:
        """The ``Sitemap:`` URLs, resolved against ``base_url`` (the robots.txt URL) when given."""
        if self._rules is None:
            return []
        urls = []
        for url in self._rules.sitemaps:
            if base_url:
                try:
                    url = urllib.parse.urljoin(base_url, url)
                except ValueError:
                    continue
            urls.append(url)
        return urls

    def __repr__(self) -> str:
        return (
            f"<RobotsPolicy {self.state.name} fetched={self.fetched_at:.0f} "
            f"bytes={len(self.body)} ua={self.user_agent!r}>"
        )


class _AllowAll:
    sitemaps = ()

    def can_fetch(self, url, user_agent):
        return True

    def crawl_delay(self, user_agent):
        return None


def rfc9309_text(text: str) -> str:
    """``text`` as Protego must see it to read it as RFC 9309 says (Google's robots.txt tests check it):

    - a line that is no rule (``Invalid-Unknown-Line: x``, junk) is dropped: RFC 9309 §2.2 ignores it, and
      Protego would take it as the end of the ``User-agent`` lines that start a group, splitting the group;
    - a ``User-agent`` value is its first word, the product token (§2.2.1 allows no space in it):
      ``User-agent: FOO BAR`` is the group of ``foo``.
    """
    lines = []
    for line in text.splitlines():
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        directive = _extract_directive(content)
        if directive is None or directive[0] not in _ALL_DIRECTIVES:
            continue
        field, value = directive
        if field in _USER_AGENT_DIRECTIVE:
            words = value.split()
            content = f"user-agent: {words[0] if words else ''}"
        lines.append(content)
    return "\n".join(lines)


def _parse(body: bytes):
    text = body.decode("utf-8", errors="replace").lstrip("\ufeff").replace("\x00", "")
    try:
        return Protego.parse(rfc9309_text(text))
    except Exception:
        logger.exception("robots.txt could not be parsed; allowing everything")
        return _AllowAll()
