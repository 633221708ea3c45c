"""The parse workers (``gatherer/workers.py``): real worker processes parsing as the crawl's own parser does,
and what a worker's death does to the pages it had (killed with SIGKILL, as the OOM killer would)."""

from __future__ import annotations

import dataclasses
import os
import queue
import signal
import time

import pytest
from scrapy.settings import Settings

from wirescrapy.config import WireConfig, default_settings
from wirescrapy.gatherer.parser import Parser
from wirescrapy.gatherer.workers import ParseWorkers, WorkerDied, parse_page
from wirescrapy.seeder.rules import SeederRules

CONFIG = WireConfig.from_settings(
    Settings({**default_settings(), "WIRE_ACCEPT_DOMAIN_SUFFIXES": ["site1.test"]})
)


def page(n: int, links: int = 50) -> bytes:
    anchors = "".join(f'<li><a href="/p/{n}/{i}.html#x">link {i}</a></li>' for i in range(links))
    anchors += (
        '<a href="/img.png">an image</a><a href="http://other.test/">elsewhere</a>'
        '<a href="/?PHPSESSID=1">s</a>'
    )
    text = "The quick brown fox jumps over the lazy dog, and the dog does not mind it at all. " * 3
    return (
        f"<html><head><title>Page {n}</title><meta name=description content='about {n}'></head>"
        f"<body><h1>Page {n}</h1><p>{text}</p><script>var x = {n};</script><ul>{anchors}</ul></body></html>"
    ).encode()


class Loop:
    """The owner's thread: what ``call_soon`` hands over runs here, in ``run_until``."""

    def __init__(self):
        self.calls: queue.Queue = queue.Queue()
        self.results: dict[str, object] = {}

    def call_soon(self, function, *args) -> None:
        self.calls.put((function, args))

    def done(self, url: str):
        return lambda parsed: self.results.__setitem__(url, parsed)

    def run_until(self, condition, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            function, args = self.calls.get(timeout=max(0.01, deadline - time.monotonic()))
            function(*args)


@pytest.fixture
def loop():
    return Loop()


def workers_of(loop: Loop, n: int = 1) -> ParseWorkers:
    return ParseWorkers(n, CONFIG, loop.call_soon)


def kill_a_worker(workers: ParseWorkers, loop: Loop) -> None:
    deadline = time.monotonic() + 30
    while not workers.pids:
        assert time.monotonic() < deadline, "no worker started"
        time.sleep(0.005)
    os.kill(workers.pids[0], signal.SIGKILL)


def test_workers_parse_as_the_crawls_parser_does(loop):
    """The page, its language and its links' decisions as the crawl's own thread makes them."""
    local, rules = Parser.from_config(CONFIG), SeederRules(CONFIG)
    workers = workers_of(loop, 2)
    try:
        workers.start()
        urls = [f"http://site{n}.test/dir/page.html" for n in range(12)]
        for n, url in enumerate(urls):
            workers.parse(page(n), url, "text/html", page(n + 100) if n % 3 == 0 else None, n, loop.done(url))
        workers.parse(
            b"\xff\xfeplain", "http://t.test/a.txt", "text/plain; charset=utf-16", None, 0, loop.done("t")
        )
        loop.run_until(lambda: len(loop.results) == 13)
    finally:
        workers.close()
    for n, url in enumerate(urls):
        expected = parse_page(
            local, page(n), url, "text/html", page(n + 100) if n % 3 == 0 else None, rules, n
        )
        assert loop.results[url] == expected
        page_, _, decisions = expected
        assert decisions == [rules.classify(link.url, n) for link in page_.links]
    assert loop.results["t"] == parse_page(
        local, b"\xff\xfeplain", "http://t.test/a.txt", "text/plain; charset=utf-16", None, rules, 0
    )
    first, _, decisions = loop.results[urls[1]]
    assert first.links[0].url == "http://site1.test/p/1/0.html" and first.language == "en"
    assert [d.fetch for d in decisions[-3:]] == [False, False, True]  # an image, another domain; a session id
    assert decisions[-1].url == "http://site1.test/" and decisions[0].depth == 2
    assert workers.breaks == 0


def test_a_parser_error_comes_back_as_the_pages_result(loop):
    workers = workers_of(loop)
    try:
        workers.parse(
            b"<p>x", "http://a.test/", "text/html; charset=no-such-charset", None, 0, loop.done("a")
        )
        workers.parse(page(1), "http://b.test/", "text/html", None, 0, loop.done("b"))
        loop.run_until(lambda: len(loop.results) == 2)
    finally:
        workers.close()
    local = Parser.from_config(CONFIG)
    try:
        expected = parse_page(
            local,
            b"<p>x",
            "http://a.test/",
            "text/html; charset=no-such-charset",
            None,
            SeederRules(CONFIG),
            0,
        )
    except Exception as exc:  # noqa: BLE001 - whatever the parser raises, the worker hands back
        assert type(loop.results["a"]) is type(exc)
    else:
        assert loop.results["a"] == expected
    assert loop.results["b"][0].title == "Page 1"


def test_pages_of_a_killed_worker_are_parsed_again(loop):
    workers = workers_of(loop)
    try:
        urls = [f"http://k.test/{n}.html" for n in range(6)]
        for n, url in enumerate(urls):
            workers.parse(page(n, links=2000), url, "text/html", None, 1, loop.done(url))
        kill_a_worker(workers, loop)
        loop.run_until(lambda: len(loop.results) == len(urls))
        workers.parse(page(99), "http://k.test/after.html", "text/html", None, 1, loop.done("after"))
        loop.run_until(lambda: "after" in loop.results)
    finally:
        workers.close()
    local, rules = Parser.from_config(CONFIG), SeederRules(CONFIG)
    for n, url in enumerate(urls):
        assert loop.results[url] == parse_page(local, page(n, links=2000), url, "text/html", None, rules, 1)
    assert loop.results["after"][0].title == "Page 99"
    assert workers.breaks == 1 and workers.given_up == 0


def test_a_page_its_worker_dies_on_twice_is_given_up_and_the_others_go_on(loop):
    workers = workers_of(loop)
    try:
        workers.parse(page(1, links=2000), "http://d.test/1.html", "text/html", None, 0, loop.done("dies"))
        kill_a_worker(workers, loop)  # its first pool: tried again alone ...
        loop.run_until(lambda: workers.breaks == 1 or "dies" in loop.results)
        workers.parse(page(2), "http://d.test/2.html", "text/html", None, 0, loop.done("waits"))
        assert "dies" not in loop.results and "waits" not in loop.results  # ... before any other page
        kill_a_worker(workers, loop)  # ... and alone, it dies again: given up
        loop.run_until(lambda: len(loop.results) == 2)
    finally:
        workers.close()
    assert isinstance(loop.results["dies"], WorkerDied)
    assert loop.results["waits"][0].title == "Page 2"
    assert workers.breaks == 2 and workers.given_up == 1


def test_bad_options_fail_in_the_crawls_process(loop):
    with pytest.raises(ValueError, match="charset"):
        ParseWorkers(1, dataclasses.replace(CONFIG, default_charset="no-such-charset"), loop.call_soon)
    with pytest.raises(ValueError, match="workers"):
        ParseWorkers(0, CONFIG, loop.call_soon)


TIMEOUT = 3.0  # seconds a page may take (a new pool's start gets as long again)


def stop_a_worker(workers: ParseWorkers) -> None:
    """SIGSTOP a worker: it hangs as a parser in an endless loop would, holding its page."""
    deadline = time.monotonic() + 30
    while not workers.pids:
        assert time.monotonic() < deadline, "no worker started"
        time.sleep(0.005)
    os.kill(workers.pids[0], signal.SIGSTOP)


def run_checking(loop: Loop, workers: ParseWorkers, condition, timeout: float = 60.0) -> None:
    """``Loop.run_until`` with the parse step's timer: ``check`` between the calls handed over."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        workers.check()
        try:
            function, args = loop.calls.get(timeout=0.05)
        except queue.Empty:
            continue
        function(*args)


def test_a_hung_worker_is_stopped_and_its_pages_parsed_again(loop):
    workers = ParseWorkers(1, CONFIG, loop.call_soon, timeout=TIMEOUT)
    try:
        urls = [f"http://h.test/{n}.html" for n in range(4)]
        for n, url in enumerate(urls):
            workers.parse(page(n), url, "text/html", None, 1, loop.done(url))
        stop_a_worker(workers)
        run_checking(loop, workers, lambda: len(loop.results) == len(urls))
    finally:
        workers.close()
    local, rules = Parser.from_config(CONFIG), SeederRules(CONFIG)
    for n, url in enumerate(urls):
        assert loop.results[url] == parse_page(local, page(n), url, "text/html", None, rules, 1)
    assert (workers.hangs, workers.breaks, workers.given_up) == (1, 1, 0)


def test_a_page_that_hangs_its_worker_alone_is_given_up_and_the_others_go_on(loop):
    workers = ParseWorkers(1, CONFIG, loop.call_soon, timeout=TIMEOUT)
    try:
        workers.parse(page(1), "http://h.test/1.html", "text/html", None, 0, loop.done("hangs"))
        stop_a_worker(workers)  # stopped as hung, and tried again alone ...
        run_checking(loop, workers, lambda: workers.breaks == 1)
        workers.parse(page(2), "http://h.test/2.html", "text/html", None, 0, loop.done("waits"))
        stop_a_worker(workers)  # ... where it hangs again: given up
        run_checking(loop, workers, lambda: len(loop.results) == 2)
    finally:
        workers.close()
    assert isinstance(loop.results["hangs"], WorkerDied)
    assert f"hung over {TIMEOUT:g} s" in str(loop.results["hangs"])
    assert loop.results["waits"][0].title == "Page 2"
    assert (workers.hangs, workers.breaks, workers.given_up) == (2, 2, 1)


def test_no_timeout_no_check_and_closing_kills_a_hung_worker(loop):
    workers = ParseWorkers(1, CONFIG, loop.call_soon)  # timeout 0: no limit
    workers.parse(page(1), "http://h.test/1.html", "text/html", None, 0, loop.done("hangs"))
    stop_a_worker(workers)
    workers.check(time.monotonic() + 1e6)
    assert workers.hangs == 0 and workers.breaks == 0
    workers.close()  # returns: the hung worker is killed, not waited for
    assert not loop.results


def test_workers_started_ahead_are_the_ones_the_crawl_takes(loop):
    """``prestart`` (a harvester waiting for the collection) starts the pool; the crawl's ``ParseWorkers``
    with the same config and count takes it, once; other workers start their own."""
    from wirescrapy.gatherer import workers as module

    module.prestart(CONFIG, 1)
    try:
        ahead = module._prestarted[2]
        ahead_pids = {process.pid for process in ahead._processes.values()}
        other = ParseWorkers(1, dataclasses.replace(CONFIG, parse_timeout=5.0), loop.call_soon)
        other.start()  # another config: its own pool, the one ahead stays for its crawl
        assert other._pool is not ahead and module._prestarted is not None
        other.close()
        workers = workers_of(loop)
        workers.start()
        assert workers._pool is ahead and module._prestarted is None and set(workers.pids) == ahead_pids
        workers.parse(page(1), "http://site1.test/1.html", "text/html", None, 0, loop.done("1"))
        loop.run_until(lambda: "1" in loop.results)
        assert loop.results["1"][0].title == "Page 1"
        workers.close()
    finally:
        if module._prestarted is not None:
            module._prestarted[2].shutdown()
            module._prestarted = None
