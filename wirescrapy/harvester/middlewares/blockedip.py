"""Blocked addresses (WIRE's ``harvester/blocked-ip``), checked after DNS resolution."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.error import DNSLookupError

from wirescrapy.config import WireConfig
from wirescrapy.harvester.meta import IP, SPLASH_PROCESSED
from wirescrapy.url import request_host

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

# Verdicts kept per address: a crawl meets a few addresses per server, far fewer than this.
MAX_VERDICTS = 65536


class BlockedIP(IgnoreRequest):
    """The host resolves to an address in WIRE_BLOCKED_IPS."""


class BlockedIPMiddleware:
    """Resolves each request's host and refuses a blocked address. Each address's verdict is kept: a crawl
    meets the same few addresses again and again, and a verdict parses the address and tests every blocked
    network.

    ``process_request`` is a coroutine on purpose. On the asyncio reactor Scrapy ends it at a later turn of
    the event loop, so the downloader's work comes in fewer, larger turns; returning the resolver's Deferred
    at once costs more CPU per fetch at waits 0 (``benchmarks/README.md``, harvester)."""

    def __init__(self, networks: list[str]):
        parsed = [ipaddress.ip_network(n, strict=False) for n in networks]
        self.v4 = [n for n in parsed if n.version == 4]
        self.v6 = [n for n in parsed if n.version == 6]
        self.verdicts: dict[str, bool] = {}  # address -> blocked

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(WireConfig.from_crawler(crawler).blocked_ips)

    def blocked(self, address: str) -> bool:
        ip = ipaddress.ip_address(address)
        if ip.version == 6 and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in network for network in (self.v4 if ip.version == 4 else self.v6))

    async def process_request(self, request: Request, spider: Spider) -> None:
        from twisted.internet import reactor

        if request.meta.get(SPLASH_PROCESSED):
            return  # the request to Splash (SPLASH_URL): its page's host was checked before it was sent there
        host = request_host(request.url)
        if not host:
            return  # the download handler reports the bad URL
        try:
            address = await maybe_deferred_to_future(reactor.resolve(host))
        except DNSLookupError:
            raise
        except Exception as exc:
            raise DNSLookupError(f"{host}: {exc}") from exc
        request.meta[IP] = address
        verdicts = self.verdicts
        blocked = verdicts.get(address)
        if blocked is None:
            if len(verdicts) >= MAX_VERDICTS:
                verdicts.clear()
            blocked = verdicts[address] = self.blocked(address)
        if blocked:
            raise BlockedIP(f"{host} resolves to {address}, a blocked address (WIRE_BLOCKED_IPS)")
