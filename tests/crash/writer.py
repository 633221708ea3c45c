"""Writer for the kill test: applies ops (run, 0), (run, 1), ... and prints "ok k" after each one."""

import sys

from tests.crash.ops import apply, op
from wirescrapy.collection import Collection


def main(directory: str, run: int) -> None:
    collection = Collection(directory)
    print("open", flush=True)
    k = 0
    while True:
        apply(collection, op(run, k))
        print(f"ok {k}", flush=True)
        k += 1


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
