"""What reading a data file did, told on stderr as it happens (before a long evaluation starts)."""

from __future__ import annotations

import sys


def print_reading(source, read, max_skipped: float | None = None) -> None:
    """The counts of ``read`` (a ReadReport), then each skipped item's line, on stderr; with ``max_skipped``,
    fail in one line (DataSetShrunk) when more than that share was skipped or nothing is usable."""
    print(f"{source}: {read.summary()}", file=sys.stderr)
    for problem in read.problems:
        print(f"  skipped: {problem}", file=sys.stderr)
    if max_skipped is not None:
        read.check(max_skipped, str(source))
