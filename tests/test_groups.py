import numpy as np
import pytest

from wirescrapy.collection.groups import group_key, ip_text, registered_domain, server_groups
from wirescrapy.collection.metadata import SITE_DTYPE


def records(*ips):
    out = np.zeros(len(ips), SITE_DTYPE)
    for site_id, ip in enumerate(ips):
        if ip:
            out[site_id]["ip"] = b"\0" * 10 + b"\xff\xff" + bytes(int(p) for p in ip.split("."))
    return out


SITES = ["", "http://a.example.cl", "https://b.example.cl", "http://a.example.cl:8080", "http://c.other.cl"]


def test_groups_by_address_fall_back_to_the_host_until_it_is_known():
    ids = server_groups(records("", "10.0.0.1", "10.0.0.1", "", "10.0.0.2"), SITES, "ip")
    assert ids[1] == ids[2] and len({ids[0], ids[1], ids[3], ids[4]}) == 4
    assert ids.dtype == np.int64 and sorted(set(ids)) == list(range(4))  # dense


def test_groups_by_host_join_a_host_s_origins_and_by_domain_a_registered_domain_s_hosts():
    ips = records("", "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.1")
    host = server_groups(ips, SITES, "host")
    assert host[1] == host[3] and len({host[0], host[1], host[2], host[4]}) == 4
    domain = server_groups(ips, SITES, "domain")
    assert domain[1] == domain[2] == domain[3] and len({domain[0], domain[1], domain[4]}) == 3


def test_the_harvester_s_key_and_the_manager_s_ids_agree():
    assert group_key("ip", "http://a.example.cl", "10.0.0.1") == group_key("ip", "https://b.cl", "10.0.0.1")
    assert group_key("ip", "http://a.example.cl") == group_key("host", "a.example.cl")
    assert group_key("domain", "http://x.y.gob.cl") == "domain:y.gob.cl"  # gob.cl is a public suffix


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("www.uchile.cl", "uchile.cl"),
        ("a.b.example.co.uk", "example.co.uk"),
        ("site3.wire.test", "site3.wire.test"),  # no public suffix: its own group
        ("127.0.0.1", "127.0.0.1"),
    ],
)
def test_registered_domains_come_from_the_shipped_public_suffix_list(host, domain):
    assert registered_domain(host) == domain


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(ValueError, match="not one of host, ip, domain"):
        server_groups(records(""), [""], "server")
    with pytest.raises(ValueError, match="2 host names for 1 site records"):
        server_groups(records(""), ["", "http://a.cl"], "ip")
    assert ip_text(b"") == "" and ip_text(records("10.1.2.3")[0]["ip"]) == "10.1.2.3"
