"""Which errors are a failed write of the collection, and the one line that says so."""

import errno

import pytest

from wirescrapy.collection.writes import failure_message, is_write_failure, short_write


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EFBIG])
def test_a_full_or_failing_disk_is_a_write_failure(code):
    assert is_write_failure(OSError(code, "x"))


@pytest.mark.parametrize(
    "exc",
    [OSError(errno.ENOENT, "x"), PermissionError(errno.EACCES, "x"), ValueError("x"), OSError("no errno")],
)
def test_other_errors_are_not(exc):
    assert not is_write_failure(exc)


def test_the_line_says_disk_full_or_the_system_s_words():
    assert (
        failure_message("/c", OSError(errno.ENOSPC, "No space left on device")) == "collection /c: disk full"
    )
    assert failure_message("/c", OSError(errno.EDQUOT, "Disk quota exceeded")) == "collection /c: disk full"
    assert (
        failure_message("/c", OSError(errno.EIO, "Input/output error")) == "collection /c: Input/output error"
    )
    exc = short_write("/c/urls.log", 10, 30)
    assert exc.errno == errno.ENOSPC and exc.filename == "/c/urls.log" and "10 of 30 bytes" in str(exc)
