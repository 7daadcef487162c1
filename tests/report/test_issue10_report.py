"""Issue 10 in the HTML report: progress while it is drawn (point 8), the
definition of precision when weights are given (point 14)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import polars as pl
import pytest

import kanonym
from kanonym.release import Ledger
from kanonym.report import render_html
from kanonym.search import Progress

pytest.importorskip("vl_convert")

TABLE = pl.DataFrame(
    {
        "zip": ["94139", "94139", "94141", "94142", "94142", "94138"],
        "age": ["30", "31", "30", "31", "33", "32"],
    }
)


def _release(**options: object) -> kanonym.Result:
    return kanonym.anonymize(
        TABLE, quasi_identifiers={"zip": "mask", "age": "interval:2,4"}, k=2, seed=1, **options
    )


def _section(page: str, name: str) -> str:
    found = re.search(rf'<section id="{name}">(.*?)</section>', page, re.S)
    assert found is not None
    return html.unescape(found.group(1))


def test_issue10_p8_drawing_the_report_reports_each_figure() -> None:
    seen: list[Progress] = []
    render_html(_release(), on_progress=seen.append)
    assert seen and {p.stage for p in seen} == {"drawing report"}
    assert seen[0].detail == "risk before and after"
    # The lattice's unchecked nodes are checked for the report only when asked (issue 14).
    assert not any(p.detail.startswith("lattice: checking") for p in seen)
    asked: list[Progress] = []
    render_html(_release(), on_progress=asked.append, check_lattice=True)
    assert any(p.detail.startswith("lattice: checking") for p in asked)
    figures = [p for p in seen if p.total is not None]
    count = figures[0].total
    assert count is not None and count >= 4
    # Figure i of n, in order, then the page: done goes 0, 1, ..., n.
    assert [p.done for p in figures] == list(range(count + 1))
    assert [p.detail for p in figures[:2]] == ["figure distribution:zip", "figure distribution:age"]


def test_issue10_p8_writing_reports_to_the_callback_the_release_was_made_with(
    tmp_path: Path,
) -> None:
    # The command line writes inside its progress bar: Result.write reports
    # writing and drawing to the callback given to anonymize.
    seen: list[Progress] = []
    result = _release(on_progress=seen.append)
    made = len(seen)
    result.write(tmp_path / "out.csv", report_html=tmp_path / "out.html")
    stages = [p.stage for p in seen[made:]]
    assert stages[0] == "writing" and "drawing report" in stages and stages[-1] == "writing"


def test_issue10_p8_a_ledger_release_reports_drawing_its_report(tmp_path: Path) -> None:
    # The ledger (kanonym release) makes the release with anonymize_table and
    # writes it with Result.payloads: the same callback hears both.
    seen: list[Progress] = []
    Ledger(tmp_path / "ledger.db").release(
        TABLE,
        kanonym.AnonymizationConfig(
            quasi_identifiers={"zip": "mask", "age": "interval:2,4"}, k=2, seed=1
        ),
        output=tmp_path / "out.csv",
        report_html=tmp_path / "out.html",
        on_progress=seen.append,
    )
    stages = list(dict.fromkeys(p.stage for p in seen))
    assert "searching" in stages and "drawing report" in stages


def test_issue10_p14_report_states_the_weighted_precision_it_shows() -> None:
    weighted = _release(weights={"zip": 2.0})
    utility = _section(render_html(weighted).decode(), "utility")
    assert "1 − weighted mean over quasi-identifiers of level / height" in utility
    assert "with weights zip 2, age 1" in utility
    # Its value is that weighted mean, not the plain one.
    levels, heights = weighted.transformation, weighted.hierarchies
    assert levels is not None
    share = {name: levels[name] / heights[name].height for name in levels}
    expected = 1 - (2 * share["zip"] + share["age"]) / 3
    assert expected != pytest.approx(1 - (share["zip"] + share["age"]) / 2)
    assert weighted.metrics["precision"] == pytest.approx(expected)
    plain = _section(render_html(_release()).decode(), "utility")
    assert "1 − mean over quasi-identifiers of level / height" in plain
    assert "weighted mean" not in plain and "with weights" not in plain
