"""Work counted, not timed: the Python and C function calls a piece of code makes. Doubling an
input and comparing the counts proves linear work without a clock (tests/*/test_linear_*)."""

from __future__ import annotations

import sys
from collections.abc import Callable


def count_calls(run: Callable[[], object], *expected: type[BaseException]) -> int:
    """The calls `run` makes (Python functions and built-ins); `expected` exceptions end it
    like a return."""
    count = 0

    def profile(_frame: object, event: str, _arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        run()
    except expected:
        pass
    finally:
        sys.setprofile(None)
    return count
