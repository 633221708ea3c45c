"""A DNS resolver that maps chosen domains to fixed addresses, for offline crawls.

Set ``DNS_RESOLVER = "wirescrapy.resolver.MappedResolver"`` and, for example::

    WIRE_DNS_HOSTS = {"wire.test": "127.0.0.1"}

A name resolves to the mapped address when it equals a key or ends with
``"." + key`` (the longest matching key wins), without any DNS query; every
other name goes to Scrapy's default :class:`~scrapy.resolver.CachingThreadedResolver`
unchanged. This is how the sample web's ``siteN.wire.test`` hosts reach the
server on 127.0.0.1 while keeping one host name per site.

Scrapy installs ``DNS_RESOLVER`` in :meth:`CrawlerProcess.start` with
``reactor.installResolver()``, as an :class:`~twisted.internet.interfaces.IResolverSimple`.
Twisted then wraps it as the reactor's ``nameResolver``, which the HTTP/1.1
download handler's ``HostnameEndpoint`` uses, and ``connectTCP`` (proxies) uses
``getHostByName`` directly, so both paths see the mapping, under any reactor,
the asyncio one included. A bare :class:`CrawlerRunner` installs no resolver.
The addresses are IPv4, like the default resolver's.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer

from wirescrapy.url import host_name, mapped_address

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from scrapy.crawler import Crawler
    from twisted.internet.base import ReactorBase
    from twisted.internet.defer import Deferred

SETTING = "WIRE_DNS_HOSTS"


def parse_hosts(value: Any) -> dict[str, str]:
    """Validate a ``WIRE_DNS_HOSTS`` value: domain names to IPv4 addresses."""
    if not isinstance(value, dict):
        raise ValueError(f"{SETTING} must be a dict of domain -> IPv4 address, got {type(value).__name__}")
    hosts = {}
    for domain, address in value.items():
        if not isinstance(domain, str) or not isinstance(address, str):
            raise ValueError(f"{SETTING} keys and values must be strings, got {domain!r}: {address!r}")
        name = host_name(domain)
        if not name or any(not label for label in name.split(".")):
            raise ValueError(f"{SETTING} has an invalid domain name: {domain!r}")
        try:
            ipaddress.IPv4Address(address)
        except ValueError:
            raise ValueError(f"{SETTING}[{domain!r}] is not an IPv4 address: {address!r}") from None
        hosts[name] = address
    return hosts


class MappedResolver(CachingThreadedResolver):
    """Scrapy's default resolver, with the ``WIRE_DNS_HOSTS`` names answered locally."""

    def __init__(self, reactor: ReactorBase, cache_size: int, timeout: float, hosts: Mapping[str, str]):
        super().__init__(reactor, cache_size, timeout)
        self.hosts = parse_hosts(dict(hosts))

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: ReactorBase) -> MappedResolver:
        settings = crawler.settings
        cache_size = settings.getint("DNSCACHE_SIZE") if settings.getbool("DNSCACHE_ENABLED") else 0
        try:
            # getdict also accepts the JSON that "-s WIRE_DNS_HOSTS=..." gives.
            hosts = settings.getdict(SETTING)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{SETTING} must be a dict or a JSON object: {error}") from None
        return cls(reactor, cache_size, settings.getfloat("DNS_TIMEOUT"), hosts)

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        address = mapped_address(self.hosts, name)
        if address is not None:
            return defer.succeed(address)
        return super().getHostByName(name, timeout)
