"""Writer for the kill test: applies ops (run, 0), (run, 1), ... and writes "ok k" after each one."""

import os

from tests.crash.ops import apply, op
from wirescrapy.collection import Collection


def main(directory: str, run: int, out: int) -> None:
    """Runs until killed; ``out``: a file descriptor for the acknowledgements."""
    collection = Collection(directory)
    os.write(out, b"open\n")
    k = 0
    while True:
        apply(collection, op(run, k))
        os.write(out, b"ok %d\n" % k)
        k += 1
