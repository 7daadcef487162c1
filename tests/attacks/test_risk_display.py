"""How kanonym.risk's RiskSummary shows itself: print() lines and notebook HTML."""

from __future__ import annotations

import polars as pl

import kanonym

EVIL = "</table><script>alert(1)</script>"
TABLE = pl.DataFrame({EVIL: ["a", "a", "b", "b", "b", "c"]})


def test_print_gives_the_text_lines() -> None:
    summary = kanonym.risk(TABLE, [EVIL])
    assert str(summary) == summary.text()
    assert str(summary).splitlines()[0] == (
        f"6 records, 3 classes on {EVIL}; 1 sample uniques (16.67%)"
    )


def test_html_holds_the_measures_and_escapes_the_columns() -> None:
    summary = kanonym.risk(TABLE, [EVIL])
    page = summary._repr_html_()
    assert "<script" not in page and "&lt;/table&gt;&lt;script&gt;" in page
    assert page.count("<table>") == page.count("</table>") == 2
    assert "<td>sample uniques</td><td>1</td><td>16.67%</td>" in page
    assert "<td>prosecutor risk: highest</td><td>1</td>" in page
    assert f"<td>prosecutor risk: average</td><td>{3 / 6:.6g}</td>" in page
    assert "<td>journalist risk</td><td>n/a</td><td>no population table given</td>" in page
    assert "<td>class size: classes</td><td>1: 1, 2: 1, 3: 1</td>" in page
