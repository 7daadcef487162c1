"""Counting the examples a property test throws away, so that a test cannot pass on few.

``hypothesis.assume(False)`` discards an example silently: a test whose
strategy mostly draws examples it then discards passes while checking almost
nothing, and nobody sees it (hypothesis' own ``filter_too_much`` health check
fires only when it can hardly find any valid example at all). Property tests
therefore discard examples through :func:`assume_meaningful`, which counts them
per test with the reason. ``tests/conftest.py`` runs every test inside
:func:`counting`, which also counts the examples the test ran (by wrapping the
test's ``.hypothesis.inner_test``, the hook hypothesis documents for wrapping
what runs each example), and fails a test that passed while discarding more
than :data:`MAX_DISCARDED_SHARE` of its examples; the report names each reason
and its count.

The counts are ours, not hypothesis' statistics (``--hypothesis-show-statistics``),
whose format hypothesis documents as unstable. Every test's share is far below
the limit (strategies are built to draw meaningful examples; the few discards
are edge cases), so hypothesis' random draws do not make the check flaky.

Example (the verdict on a test's tally):
    >>> Tally(examples=40, discarded=Counter({"k above the rows": 3})).problem()
    >>> print(Tally(examples=4, discarded=Counter({"k above the rows": 3})).problem())
    discarded 3 of its 4 examples as not meaningful (limit 50%): k above the rows: 3
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hypothesis import assume

# More than this share of discarded examples fails the test.
MAX_DISCARDED_SHARE = 0.5


@dataclass
class Tally:
    """The examples one test ran, and those it discarded, by reason."""

    examples: int = 0
    discarded: Counter[str] = field(default_factory=Counter)

    def problem(self) -> str | None:
        """Why the test checked too few examples, or None when most were meaningful."""
        dropped = sum(self.discarded.values())
        if dropped <= MAX_DISCARDED_SHARE * self.examples:
            return None
        reasons = ", ".join(f"{why}: {n}" for why, n in self.discarded.most_common())
        return (
            f"discarded {dropped} of its {self.examples} examples as not meaningful "
            f"(limit {MAX_DISCARDED_SHARE:.0%}): {reasons}"
        )


_current: Tally | None = None


@contextmanager
def counting(test: object) -> Iterator[Tally]:
    """Count the examples ``test`` runs inside the block, and the discarded ones."""
    global _current
    previous, _current = _current, Tally()
    tally = _current
    handle = getattr(test, "hypothesis", None)
    inner = getattr(handle, "inner_test", None)
    if handle is not None and inner is not None:

        @functools.wraps(inner)
        def counted(*args: Any, **kwargs: Any) -> Any:
            tally.examples += 1
            return inner(*args, **kwargs)

        handle.inner_test = counted
    try:
        yield tally
    finally:
        if handle is not None and inner is not None:
            handle.inner_test = inner
        _current = previous


def assume_meaningful(condition: object, reason: str) -> None:
    """``hypothesis.assume(condition)``, counted: ``reason`` says what a discarded draw lacks."""
    if _current is not None and not condition:
        _current.discarded[reason] += 1
    assume(condition)
