"""Server groups: which sites one politeness slot serves (``WIRE_POLITENESS_GROUP``).

WIRE is polite per site: one connection at a time, and a wait after each access. Many sites share one server,
though: virtual hosts on one address, or the names of one registered domain. A *group* is the unit the
harvester is polite to, and the unit the manager counts capacity by and splits batches by. It is one of:

* ``host``: the site's host name (a site's http and https origins are one group);
* ``ip``: the address the resolver gave for the site (the site record's ``ip``); a site not resolved yet is a
  group of its own host until it is;
* ``domain``: the registered domain by the Public Suffix List (``a.example.cl`` and ``b.example.cl`` are
  ``example.cl``), from the list that ships with ``tldextract``, never fetched; a host under no known suffix
  (an address, a name under a private test domain) is its own group.

Everything here is pure: the harvester and the manager call the same function, and so agree on the groups.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from wirescrapy.config import POLITENESS_GROUPS
from wirescrapy.url import host_of

if TYPE_CHECKING:
    from collections.abc import Sequence

MODES = POLITENESS_GROUPS


def check_mode(mode: str) -> str | None:
    """An error message if ``mode`` is no group mode, else None (for the setting's check)."""
    return None if mode in MODES else f"{mode!r} is not one of {', '.join(MODES)}"


def group_key(mode: str, site: str, ip: str = "") -> str:
    """The group of one site: ``site`` is its origin (``scheme://host[:port]``) or its bare host name, ``ip``
    the address it resolved to as text (``""``: not known). Keys of different modes never collide."""
    host = host_of(site) if "://" in site else site
    if mode == "ip":
        return f"ip:{ip}" if ip else f"host:{host}"
    if mode == "domain":
        return f"domain:{registered_domain(host)}"
    if mode == "host":
        return f"host:{host}"
    raise ValueError(check_mode(mode))


@lru_cache(maxsize=1)
def _extract():
    """The Public Suffix List as tldextract ships it: no download, no cache written. Loaded on first use,
    by the ``domain`` mode only."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The registered domain of ``host`` by the Public Suffix List, or ``host`` itself when it has none."""
    return _extract()(host).top_domain_under_public_suffix or host


def ip_text(raw: bytes) -> str:
    """A site record's 16-byte ``ip`` as text (IPv4-mapped addresses as dotted quads); ``""`` if unknown."""
    data = bytes(raw).ljust(16, b"\0")  # numpy drops the trailing NUL bytes of an S16 value
    if not any(data):
        return ""
    address = ipaddress.IPv6Address(data)
    return str(address.ipv4_mapped or address)


def server_groups(site_records: np.ndarray, hostnames: Sequence[str], mode: str) -> np.ndarray:
    """The group of every site, as dense ids: ``out[site_id]`` is in ``0 .. groups - 1``, and two sites share
    an id exactly when they share a group.

    ``site_records``: the site records indexed by site-id (``SITE_DTYPE``; only ``ip`` is read);
    ``hostnames``: each site-id's origin or host name, as long as ``site_records`` (``""`` for a site-id
    that names no site: each such id is a group of its own, so it never joins a real one)."""
    if len(hostnames) != len(site_records):
        raise ValueError(f"{len(hostnames)} host names for {len(site_records)} site records")
    check = check_mode(mode)
    if check:
        raise ValueError(check)
    ips = site_records["ip"] if mode == "ip" else None
    keys = [
        group_key(mode, name, ip_text(ips[site_id]) if ips is not None else "") if name else f"none:{site_id}"
        for site_id, name in enumerate(hostnames)
    ]
    if not keys:
        return np.zeros(0, np.int64)
    _, inverse = np.unique(np.array(keys, dtype=object), return_inverse=True)
    return inverse.astype(np.int64)
