from collections import deque
from math import inf

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wirescrapy.harvester.politeness import Counts, DocTable, PolitenessQueue, Waits
from wirescrapy.harvester.retryafter import retry_after


def queue(normal=15.0, large=5.0, pages=100):
    return PolitenessQueue(Waits(normal, large, pages))


def test_one_request_in_flight_per_site():
    q = queue()
    for doc in (1, 2, 3):
        q.add("http://a.cl", doc)
    assert q.pop_ready(0.0) == ("http://a.cl", 1)
    assert q.pop_ready(0.0) is None and q.pop_ready(1e9) is None  # fetching, however long
    assert q.is_fetching("http://a.cl") and q.next_ready_time() is None
    q.finished("http://a.cl", 2.0)
    assert q.pop_ready(16.999) is None
    assert q.pop_ready(17.0) == ("http://a.cl", 2)


def test_a_site_may_be_popped_a_lead_before_its_wait_ends_with_the_time_it_is_ready():
    q = queue()
    for item in (1, 2):
        q.add("http://a.cl", item)
    q.add("http://b.cl", 3)
    assert q.pop_due(0.0, 0.002) == ("http://a.cl", 1, -inf)  # never visited: ready since always
    assert q.pop_due(0.0, 0.002) == ("http://b.cl", 3, -inf)
    q.finished("http://a.cl", 2.0)
    assert q.pop_due(16.997, 0.002) is None  # ready at 17.0: more than the lead away
    assert q.pop_ready(16.998) is None
    assert q.pop_due(16.998, 0.002) == ("http://a.cl", 2, 17.0)
    assert q.is_fetching("http://a.cl")


def test_the_wait_starts_when_the_fetch_ends():
    q = queue()
    q.add("s", 1)
    q.add("s", 2)
    q.pop_ready(0.0)
    q.finished("s", 30.0)  # a 30-second download
    assert q.next_ready_time() == 45.0


@pytest.mark.parametrize(
    ("pages", "crawl_delay", "wait"),
    [
        (0, 0, 15),
        (100, 0, 15),
        (101, 0, 5),
        (101, 3, 5),
        (101, 8, 8),
        (0, 20, 20),
        (5000, 60, 60),
    ],
)
def test_waits_normal_large_site_and_crawl_delay(pages, crawl_delay, wait):
    q = queue()
    q.set_pages("s", pages)
    q.set_crawl_delay("s", crawl_delay)
    assert q.wait_of("s") == wait
    q.add("s", 1)
    q.add("s", 2)
    q.pop_ready(0.0)
    q.finished("s", 1.0)
    assert q.next_ready_time() == 1.0 + wait


def test_a_site_growing_large_gets_the_short_wait_at_once():
    q = queue()
    q.add("s", 1)
    q.add("s", 2)
    q.pop_ready(0.0)
    q.finished("s", 0.0)
    assert q.pop_ready(5.0) is None
    q.set_pages("s", 101)
    assert q.pop_ready(5.0) == ("s", 2)


def test_a_crawl_delay_learned_while_waiting_applies_to_that_wait():
    q = queue()
    q.add("s", "robots.txt", front=True)
    q.add("s", 1)
    assert q.pop_ready(0.0) == ("s", "robots.txt")
    q.finished("s", 1.0)
    q.set_crawl_delay("s", 60)
    assert q.pop_ready(16.0) is None and q.next_ready_time() == 61.0
    assert q.pop_ready(61.0) == ("s", 1)


def test_fifo_per_site_with_full_items_in_order_and_front_first():
    q = queue(normal=0.0, large=0.0)
    request = object()
    for item in (1, 2, request, 3):
        q.add("s", item)
    q.add("s", "robots", front=True)
    got = []
    while (popped := q.pop_ready(0.0)) is not None:
        got.append(popped[1])
        q.finished("s", 0.0)
    assert got == ["robots", 1, 2, request, 3]


def test_long_queues_compact_and_keep_their_order():
    q = queue(normal=0.0, large=0.0)
    for doc in range(20_000):
        q.add("s", doc)
    for doc in range(20_000):
        assert q.pop_ready(0.0) == ("s", doc)
        q.finished("s", 0.0)
        if doc == 10_000:
            q.add("s", 20_000)
    assert q.pop_ready(0.0) == ("s", 20_000)


def test_the_site_ready_first_is_visited_first_and_all_are_visited():
    q = queue(normal=10.0)
    for site in "abc":
        q.add(site, 1)
        q.add(site, 2)
    assert [q.pop_ready(0.0)[0] for _ in range(3)] == ["a", "b", "c"]
    q.finished("c", 1.0)
    q.finished("a", 2.0)
    q.finished("b", 3.0)
    assert q.pop_ready(100.0)[0] == "c" and q.pop_ready(100.0)[0] == "a" and q.pop_ready(100.0)[0] == "b"


def test_an_exhausted_site_leaves_the_heap_and_reenters_at_its_next_visit():
    q = queue()
    q.add("s", 1)
    q.pop_ready(0.0)
    q.finished("s", 10.0)
    assert q.next_ready_time() is None and len(q) == 0
    q.add("s", 2)  # a redirect follow-up, say
    assert q.next_ready_time() == 25.0 and q.pop_ready(24.0) is None
    assert q.pop_ready(25.0) == ("s", 2)
    q.finished("s", 26.0)
    q.add("s", 3)  # long after its wait: ready at once
    assert q.pop_ready(100.0) == ("s", 3)


def test_a_never_visited_site_is_ready_at_once():
    q = queue()
    q.add("s", 1)
    assert q.next_ready_time() == -inf
    assert q.pop_ready(0.0) == ("s", 1)


def test_a_request_that_never_reached_the_network_adds_no_wait():
    q = queue()
    for doc in (1, 2, 3):
        q.add("s", doc)
    q.pop_ready(0.0)
    q.finished("s", 1.0)
    assert q.pop_ready(16.0) == ("s", 2)
    q.finished("s", 16.5, fetched=False)  # refused by a middleware
    assert q.pop_ready(16.5) == ("s", 3)


def test_finishing_a_site_not_in_flight_is_an_error():
    q = queue()
    q.add("s", 1)
    with pytest.raises(ValueError, match="no fetch in flight"):
        q.finished("s", 0.0)
    with pytest.raises(ValueError, match="no fetch in flight"):
        q.finished("other", 0.0)
    q.pop_ready(0.0)
    q.finished("s", 0.0)
    with pytest.raises(ValueError):
        q.finished("s", 0.0)


def test_visited_makes_a_resumed_site_wait():
    q = queue()
    q.add("s", 1)
    q.visited("s", 100.0)
    assert q.pop_ready(114.0) is None and q.pop_ready(115.0) == ("s", 1)


def test_bad_parameters_are_refused():
    q = queue()
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="Crawl-delay"):
            q.set_crawl_delay("s", bad)
    with pytest.raises(ValueError):
        q.set_pages("s", -1)
    with pytest.raises(ValueError):
        Waits(5.0, 15.0)


def test_counts():
    q = queue()
    for site in "abcd":
        q.add(site, 1)
    q.add("a", 2)
    q.add("b", 2)
    assert q.counts(0.0) == Counts(fetching=0, ready=4, waiting=0, empty=0, urls=6, fetches=0)
    for _ in range(4):
        q.pop_ready(0.0)
    assert q.counts(0.0) == Counts(fetching=4, ready=0, waiting=0, empty=0, urls=2, fetches=0)
    for site in "abcd":
        q.finished(site, 1.0)
    assert q.counts(2.0) == Counts(fetching=0, ready=0, waiting=2, empty=2, urls=2, fetches=4)
    assert q.counts(16.0) == Counts(fetching=0, ready=2, waiting=0, empty=2, urls=2, fetches=4)
    assert sorted(q.pending()) == [("a", 2), ("b", 2)]


def test_doc_table_round_trip_and_refusal():
    table = DocTable()
    assert table.append(7, 3, 2, "/a?b=%20", 1) == 0
    assert table.append(2**40, 4, 0, "/é") == 1
    assert table.get(0) == (7, 3, 2, "/a?b=%20", 1) and table.get(1) == (2**40, 4, 0, "/é", 0)
    with pytest.raises(OverflowError):
        table.append(8, 3, 70_000, "/deep")
    assert len(table) == 2 and table.get(1)[3] == "/é"
    assert table.append(9, 3, 1, "") == 2 and table.get(2) == (9, 3, 1, "", 0)


# -- property: politeness holds for any sequence of operations ---------------------------------------------

SITES = ["a", "b", "c"]
# Steps of the clock: often just short of, or just at, a wait (4 s large site, 10 s normal, Crawl-delays).
_STEPS = st.one_of(
    st.sampled_from([0.0, 0.01, 1.0, 1.99, 2.0, 3.99, 4.0, 8.99, 9.0, 9.99, 10.0]), st.floats(0, 31)
)
# The clock moved to just before, at, or just after when the model lets a site be visited.
_POP_NEAR = st.tuples(st.just("pop_near"), st.sampled_from(SITES), st.sampled_from([-0.01, 0.0, 0.01]))
_FINISH = st.tuples(st.just("finish"), st.integers(0, 2), _STEPS, st.booleans())
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(SITES), st.booleans(), st.integers(1, 3)),
        st.tuples(st.just("pop"), _STEPS),
        _POP_NEAR,
        _POP_NEAR,
        _FINISH,
        _FINISH,
        st.tuples(st.just("delay"), st.sampled_from(SITES), st.sampled_from([0, 2, 9, 30])),
        st.tuples(st.just("pages"), st.sampled_from(SITES), st.sampled_from([0, 100, 101, 500])),
    ),
    max_size=120,
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_OPS)
def test_no_site_is_fetched_twice_at_once_nor_before_its_wait(ops):
    waits = Waits(10.0, 4.0, 100)
    q = PolitenessQueue(waits)
    now = 0.0
    expected = {site: deque() for site in SITES}
    in_flight: list[str] = []
    last_end = dict.fromkeys(SITES, -inf)
    pages = dict.fromkeys(SITES, 0)
    delay = dict.fromkeys(SITES, 0)
    serial = 0

    def wait(site):
        return waits.of(pages[site], delay[site])

    for op in ops:
        kind = op[0]
        if kind == "add":
            for _ in range(op[3]):
                serial += 1
                item = serial if serial % 3 else ("full", serial)  # some full items among the compact ones
                q.add(op[1], item, front=op[2])
                (expected[op[1]].appendleft if op[2] else expected[op[1]].append)(item)
        elif kind in ("pop", "pop_near"):
            if kind == "pop":
                now += op[1]
            elif last_end[op[1]] > -inf:
                now = max(now, last_end[op[1]] + wait(op[1]) + op[2])
            popped = q.pop_ready(now)
            ready = [s for s in SITES if expected[s] and s not in in_flight and now >= last_end[s] + wait(s)]
            if popped is None:
                assert not ready, "a ready site was passed over"
                continue
            site, item = popped
            assert site not in in_flight, "two requests in flight for one site"
            assert now >= last_end[site] + wait(site), "visited before its wait was over"
            assert item == expected[site].popleft(), "not FIFO"
            in_flight.append(site)
        elif kind == "finish" and in_flight:
            site = in_flight.pop(op[1] % len(in_flight))
            now += op[2]
            q.finished(site, now, fetched=op[3])
            if op[3]:
                last_end[site] = now
        elif kind == "delay":
            q.set_crawl_delay(op[1], op[2])
            delay[op[1]] = op[2]
        elif kind == "pages":
            q.set_pages(op[1], op[2])
            pages[op[1]] = op[2]
        assert q.fetching == len(in_flight)
        assert len(q) == sum(map(len, expected.values()))


# -- server groups -------------------------------------------------------------------------------------------


def grouped(sites, normal=10.0, max_backoff=600.0):
    """A queue of ``sites`` (site -> group), two items each."""
    q = PolitenessQueue(Waits(normal, normal, 100), max_backoff=max_backoff)
    for site, group in sites.items():
        q.set_group(site, group)
        q.add(site, site + "/1")
        q.add(site, site + "/2")
    return q


def drain(q, now=0.0):
    """Fetch everything, each fetch taking no time: [(time, site)]."""
    fetched = []
    while len(q):
        ready = q.next_ready_time()
        now = max(now, ready)
        site, _ = q.pop_ready(now)
        fetched.append((now, site))
        q.finished(site, now)
    return fetched


def test_a_group_has_one_fetch_at_a_time_with_the_wait_after_each_and_its_sites_take_turns():
    q = grouped({"http://a.cl": "ip:10.0.0.1", "http://b.cl": "ip:10.0.0.1", "http://c.cl": "ip:10.0.0.2"})
    site, _ = q.pop_ready(0.0)
    assert site == "http://a.cl"
    assert q.pop_ready(0.0) == ("http://c.cl", "http://c.cl/1")  # another server
    assert q.pop_ready(1e9) is None  # b.cl shares a.cl's server, which is fetching
    q.finished("http://a.cl", 1.0)
    q.finished("http://c.cl", 1.0)
    shared = [(t, s) for t, s in drain(q, 1.0) if s != "http://c.cl"]
    assert shared == [(11.0, "http://b.cl"), (21.0, "http://a.cl"), (31.0, "http://b.cl")]


def test_a_group_of_one_site_keeps_the_site_s_politeness():
    assert drain(grouped({"http://a.cl": "host:a.cl"})) == [(0.0, "http://a.cl"), (10.0, "http://a.cl")]


def test_a_parked_site_is_not_fetched_until_it_has_a_group_and_a_site_moves_when_its_fetch_ends():
    q = grouped({"http://a.cl": "ip:10.0.0.1", "http://b.cl": None})
    assert q.pop_ready(0.0)[0] == "http://a.cl"
    assert q.pop_ready(0.0) is None and len(q) == 3  # b.cl waits for its address
    q.set_group("http://b.cl", "ip:10.0.0.1")
    assert q.pop_ready(0.0) is None  # now behind a.cl's fetch
    q.set_group("http://a.cl", "ip:10.0.0.9")  # a.cl's address changed meanwhile
    assert q.group_of("http://a.cl") == "ip:10.0.0.1"
    q.finished("http://a.cl", 1.0)
    assert q.group_of("http://a.cl") == "ip:10.0.0.9"
    # b.cl waits a.cl's wait, which its server just served; a.cl its own wait on its new server.
    assert sorted(q.site_times(1.0)) == ["http://a.cl", "http://b.cl"]
    assert sorted(drain(q, 1.0)) == [(11.0, "http://a.cl"), (11.0, "http://b.cl"), (21.0, "http://b.cl")]


def test_a_hold_keeps_the_whole_group_until_its_time_and_is_new_once():
    q = grouped({"http://a.cl": "ip:1", "http://b.cl": "ip:1", "http://c.cl": "ip:2"})
    site, _ = q.pop_ready(0.0)
    q.finished(site, 1.0)
    assert q.hold("http://a.cl", 100.0, 1.0) is True
    assert q.hold("http://b.cl", 50.0, 2.0) is False  # the group is held already: one hold, logged once
    assert q.pop_ready(99.0)[0] == "http://c.cl"
    assert q.pop_ready(99.9) is None
    assert q.pop_ready(100.0)[0] == "http://b.cl"
    assert q.hold("http://c.cl", 10.0, 200.0) is True  # a hold long over does not count as held


def test_5xx_answers_back_a_group_off_up_to_the_cap_and_successes_bring_it_back():
    q = grouped({"http://a.cl": "ip:1"}, normal=10.0, max_backoff=35.0)
    assert q.wait_of("http://a.cl") == 10.0
    q.strike("http://a.cl")
    assert q.wait_of("http://a.cl") == 20.0
    q.strike("http://a.cl")
    q.strike("http://a.cl")
    assert q.wait_of("http://a.cl") == 35.0  # capped
    site, _ = q.pop_ready(0.0)
    q.finished(site, 0.0)
    assert q.next_ready_time() == 35.0
    q.success(site)
    assert q.wait_of(site) == 35.0 and q.next_ready_time() == 35.0  # 40 s, capped
    q.success(site)
    q.success(site)
    q.success(site)
    assert q.wait_of(site) == 10.0 and q.next_ready_time() == 10.0


def test_softmin_drops_the_pages_of_a_group_s_sites_and_their_turns():
    q = grouped({"http://a.cl": "ip:1", "http://b.cl": "ip:1"})
    assert sorted(q.drop_rows()) == [] and len(q) == 4  # str items are no rows
    q = PolitenessQueue(Waits(10.0, 10.0, 100))
    for site in ("http://a.cl", "http://b.cl"):
        q.set_group(site, "ip:1")
        q.add(site, 1)
    assert sorted(q.drop_rows()) == [1, 1] and q.next_ready_time() is None and q.pop_ready(1e9) is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 2)), min_size=1, max_size=40),
    st.lists(st.floats(0.0, 3.0), min_size=1, max_size=40),
)
def test_every_gap_in_a_group_is_at_least_the_wait_of_the_site_before(adds, durations):
    q = PolitenessQueue(Waits(2.0, 1.0, 3))
    for site, group in adds:
        q.set_group(f"s{site}", f"g{group}")
        q.add(f"s{site}", 0)
        q.set_pages(f"s{site}", site)  # some large sites, with the short wait
    now, last = 0.0, {}
    durations = deque(durations)
    while len(q):
        now = max(now, q.next_ready_time())
        site, _ = q.pop_ready(now)
        group = q.group_of(site)
        if group in last:
            end, wait = last[group]
            assert now >= end + wait - 1e-9
        end = now + durations[0]
        durations.rotate()
        q.finished(site, end)
        last[group] = (end, q.wait_of(site))
        now = end


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (b"3", 3.0),
        ("120", 120.0),
        (b"Wed, 21 Oct 2015 07:28:00 GMT", 10.0),  # an HTTP date, 10 s after "now"
        (b"Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # a date gone by: no wait
        (b"-5", None),
        (b"soon", None),
        (b"Wed, 21 Oct 2015 07:28:00", None),  # a date without its zone is no HTTP date
        (None, None),
    ],
)
def test_retry_after_is_seconds_or_an_http_date(value, seconds):
    assert retry_after(value, 1445412470.0) == seconds
