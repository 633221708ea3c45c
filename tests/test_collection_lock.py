"""A writer waiting for the collection (WIRE_COLLECTION_WAIT): it takes it when the holder closes it, or
fails with the holder's name when the wait is over."""

from __future__ import annotations

import logging
import threading

import pytest

from wirescrapy.collection import Collection, CollectionLockedError
from wirescrapy.collection.lock import POLL, CollectionLock


class FakeTime:
    """A clock that moves only when slept on."""

    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_wait_over_names_the_holder_and_the_wait(tmp_path, caplog):
    holder = CollectionLock(tmp_path)
    holder.acquire()
    fake = FakeTime()
    waiter = CollectionLock(tmp_path)
    with (
        caplog.at_level(logging.INFO, logger="wirescrapy.collection.lock"),
        pytest.raises(
            CollectionLockedError,
            match=r"open for writing by pid \d+ .*\(waited 0.1 s, WIRE_COLLECTION_WAIT\)",
        ),
    ):
        waiter.acquire(0.1, clock=fake.clock, sleep=fake.sleep)
    assert fake.now == pytest.approx(0.1)
    assert all(0 < seconds <= POLL for seconds in fake.sleeps)
    assert len(fake.sleeps) == pytest.approx(0.1 / POLL, abs=1)
    waiting = [r.getMessage() for r in caplog.records if "waiting up to" in r.getMessage()]
    assert len(waiting) == 1 and "0.1 s" in waiting[0]  # said once, not at every try
    holder.release()
    waiter.acquire(0.1, clock=fake.clock, sleep=fake.sleep)  # free: taken at once, no sleep
    assert fake.now == pytest.approx(0.1)
    waiter.release()


def test_no_wait_fails_at_once(tmp_path):
    holder = CollectionLock(tmp_path)
    holder.acquire()
    fake = FakeTime()
    with pytest.raises(CollectionLockedError) as failed:
        CollectionLock(tmp_path).acquire(0.0, clock=fake.clock, sleep=fake.sleep)
    assert fake.sleeps == [] and "waited" not in str(failed.value)
    holder.release()


class Waiting(logging.Handler):
    """Sets ``event`` when a writer says it waits for the collection."""

    def __init__(self):
        super().__init__()
        self.event = threading.Event()

    def emit(self, record):
        if "waiting up to" in record.getMessage():
            self.event.set()


def test_waiting_writer_takes_the_collection_when_the_holder_closes_it(tmp_path):
    """flock locks belong to open file descriptions, so a second open in this process is a second writer."""
    first = Collection(tmp_path)
    first.add_url("http://example.com/a")
    with pytest.raises(CollectionLockedError):
        Collection(tmp_path, wait=0.02)  # held: the wait is over first
    waiting = Waiting()
    lock_logger = logging.getLogger("wirescrapy.collection.lock")
    lock_logger.addHandler(waiting)
    level = lock_logger.level
    lock_logger.setLevel(logging.INFO)

    def close_once_waited_for():  # the holder closes only once the second writer waits
        if waiting.event.wait(10):
            first.close()

    closer = threading.Thread(target=close_once_waited_for)
    closer.start()
    try:
        second = Collection(tmp_path, wait=10)
    finally:
        closer.join()
        lock_logger.removeHandler(waiting)
        lock_logger.setLevel(level)
    try:
        assert waiting.event.is_set() and first.urls is None  # it waited, and got in once the first closed
        assert second.lookup("http://example.com/a") == 1  # and it sees what the first wrote
    finally:
        second.close()
