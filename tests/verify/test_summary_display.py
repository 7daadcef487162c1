"""How kanonym.check's summaries show themselves: print() lines and notebook HTML."""

from __future__ import annotations

import polars as pl

import kanonym
from kanonym.verify import ClassSizeSummary

EVIL = "<img src=x onerror=alert(1)>"
TABLE = pl.DataFrame(
    {EVIL: ["a", "a", "b", "b", "b", "c"], "disease": ["flu", "cold", "flu", "flu", "flu", "x"]}
)


def test_class_size_summary_lines() -> None:
    summary = kanonym.check(TABLE, [EVIL], k=2)
    assert isinstance(summary, ClassSizeSummary)
    assert str(summary).splitlines() == [
        "2-anonymous: no",
        "6 rows in 3 classes, smallest 1 rows; 1 rows in classes smaller than 2",
    ]


def test_class_size_summary_html_holds_the_counts() -> None:
    page = ClassSizeSummary(
        rows=1200, classes=7, smallest_class=3, rows_below_k=0, k=3
    )._repr_html_()
    assert "<strong>3-anonymous: yes</strong>" in page
    assert "<td>rows</td><td>1,200</td>" in page
    assert "<td>smallest class</td><td>3</td>" in page
    assert "<td>rows in classes smaller than 3</td><td>0</td>" in page


def test_check_summary_adds_the_sensitive_measures_escaped() -> None:
    table = TABLE.rename({"disease": EVIL + "2"})
    summary = kanonym.check(table, [EVIL], k=2, sensitive=[EVIL + "2"])
    lines = str(summary).splitlines()
    assert len(lines) == 3 and lines[2].startswith(EVIL + "2: l distinct 1")
    page = summary._repr_html_()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;2" in page
    assert "<td>l distinct</td><td>1</td>" in page
