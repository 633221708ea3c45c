"""The WARC writer's process (``wirescrapy.warc.process``): a real child over real pipes, as a harvest runs
it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from tests.test_warc import HTML, INFO, T0, not_modified, page
from tests.warcfiles import fastwarc_records, warcio_check
from wirescrapy.warc import index
from wirescrapy.warc.process import Frames, frame
from wirescrapy.warc.reader import read_fetches, warc_files
from wirescrapy.warc.records import IDENTICAL_PAYLOAD, NOT_MODIFIED


def child() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "wirescrapy.warc.process"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )


def answers(data: bytes) -> list[tuple]:
    return Frames().feed(data)


def test_frames_come_out_whole_however_the_pipe_cuts_them():
    messages = [("write", page()), ("begin", {"batch": 2}), ("written", 10, "")]
    data = b"".join(frame(message) for message in messages)
    for size in (1, 3, 7, len(data)):
        frames, out = Frames(), []
        for start in range(0, len(data), size):
            out += frames.feed(data[start : start + size])
        assert [m[0] for m in out] == ["write", "begin", "written"] and out[1] == ("begin", {"batch": 2})
        assert out[0][1].exchange.body == HTML


def test_the_child_answers_each_write_in_order_and_closes_its_file_when_its_input_ends(tmp_path):
    process = child()
    copy = page("http://site1.wire.test/copy.html", doc_id=4, started=T0 + 5, ended=T0 + 6)
    later = {"started": T0 + 86400, "ended": T0 + 86401}
    broken = page("http://site1.wire.test/b.html", doc_id=5)
    broken.kind = None  # not a fetch a harvester makes: the child says so and goes on
    messages = [
        ("start", str(tmp_path), 10**9, INFO, "", True),
        ("write", page()),
        ("write", broken),
        ("write", copy),
        ("write", not_modified(**later)),
        ("begin", {**INFO, "batch": 8}),
        ("write", page(**later)),
    ]
    out, _ = process.communicate(b"".join(frame(m) for m in messages), timeout=60)
    assert process.returncode == 0
    written, error, revisit, not_changed, next_batch, closed = answers(out)
    assert written[0] == "written" and written[1] > 0 and written[2] == ""
    assert error[0] == "error" and "AttributeError" in error[1]
    assert (
        revisit[2] == IDENTICAL_PAYLOAD
        and not_changed[2] == NOT_MODIFIED
        and next_batch[2] == IDENTICAL_PAYLOAD
    )
    fetches, size, files, cpu = closed[1:]
    assert fetches == 4 and size == sum(m[1] for m in (written, revisit, not_changed, next_batch)) and cpu > 0
    assert files == [str(f) for f in warc_files(tmp_path)] and len(files) == 2  # a new batch, a new file
    warcio_check(*files)
    for file in files:
        assert index.index_path(file).exists()
    assert [a.fields["url"] for f in files for a in read_fetches(f)] == [
        page().url,
        copy.url,
        page().url,
        page().url,
    ]


def test_a_harvest_killed_leaves_the_child_to_close_its_file_with_its_index(tmp_path):
    """The harvester's end of the pipe goes with it: the child reads the end of its input."""
    process = child()
    process.stdin.write(frame(("start", str(tmp_path), 10**9, INFO, "", True)) + frame(("write", page())))
    process.stdin.flush()
    os.close(process.stdout.fileno())  # nobody reads its answers any more
    process.stdin.close()
    assert process.wait(timeout=60) == 0
    (file,) = warc_files(tmp_path)
    warcio_check(file)
    assert index.index_path(file).exists() and [a.fields["url"] for a in read_fetches(file)] == [page().url]


def test_a_child_that_dies_fails_the_writes_that_wait_and_every_write_after(tmp_path):
    """The parent's end (``WarcProcess``) in a reactor of its own, its child killed after a first write."""
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {os.getcwd()!r})
        from twisted.internet import reactor
        from tests.test_warc import INFO, page
        from wirescrapy.warc.process import WarcProcess

        writer = WarcProcess({str(tmp_path)!r}, 10**9, INFO, None, True).spawn(reactor)
        said = []

        def kill(answer):
            said.append(f"written {{answer[0] > 0}}")
            os.kill(writer.transport.pid, signal.SIGKILL)
            writer.write(page()).addErrback(lambda f: said.append(f.getErrorMessage()))
            reactor.callLater(5, reactor.stop)
            writer.close().addCallback(lambda code: (said.append(f"ended {{code}}"), reactor.stop()))

        writer.write(page()).addCallback(kill)
        reactor.run()
        print("|".join(said))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    written, failed, ended = run.stdout.strip().split("|")
    assert (
        written == "written True"
        and failed == f"the WARC writer's process was killed by signal {signal.SIGKILL}"
    )
    assert ended == "ended None"
    assert [kind for kind, _, _ in fastwarc_records(warc_files(tmp_path)[0])][:2] == ["warcinfo", "request"]
