"""Issue 10, point 12: a Result shows itself in one line and summarizes itself in a few."""

from __future__ import annotations

import kanonym
from kanonym.datasets import adult_hierarchies, load_adult


def test_issue10_p12_repr_is_one_short_line_and_summary_a_few() -> None:
    table = load_adult()
    result = kanonym.anonymize(
        table, quasi_identifiers=adult_hierarchies(), k=5, max_suppression=0.04, seed=3
    )
    shown = repr(result)
    assert "\n" not in shown and len(shown) < 300
    assert shown.startswith(f"<kanonym.Result: {result.table.height} of 30162 rows released")
    assert "loss 0." in shown and "seed 3" in shown
    summary = result.summary()
    assert len(summary) < 1000 and summary.count("\n") < 10
    assert "proven optimal" in summary and "released unchanged: no column" in summary
    assert str(result) == shown  # print(result) no longer dumps the table and the search
