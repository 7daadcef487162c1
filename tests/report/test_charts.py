"""The report's figures as Vega-Lite specs (issue 14): histograms of numbers and dates,
merged bars, the lattice drawn only as far as the search checked it unless asked."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import polars as pl
import pytest
from tests.patients import patients

import kanonym
from kanonym.figures.render import to_svg
from kanonym.report import charts, figures, render_html
from kanonym.report.content import gather, lattice_view

RARE = "Xylotown"


def _values(spec: dict[str, Any]) -> list[dict[str, Any]]:
    values = spec["data"]["values"]
    assert isinstance(values, list)
    return values


def _people() -> pl.DataFrame:
    # Ages 20-69, two people aged 97 (fewer than k = 3), one rare town.
    ages = [str(20 + i % 50) for i in range(100)] + ["97", "97"]
    towns = ["Cambridge"] * 60 + ["Somerville"] * 40 + [RARE] * 2
    return pl.DataFrame({"age": ages, "town": towns})


def _release(**options: Any) -> kanonym.Result:
    return kanonym.anonymize(
        _people(),
        quasi_identifiers={"age": "interval:10,20", "town": "suppress"},
        k=3,
        max_suppressed_rows=2,
        seed=4,
        **options,
    )


def test_numbers_are_a_histogram_with_no_input_bin_under_k() -> None:
    drawn = figures(_release())["distribution:age"]
    before, after = drawn["hconcat"]
    bins = _values(before)
    assert before["encoding"]["x"]["type"] == "quantitative"
    # Contiguous bins covering every row, none under k.
    assert sum(b["rows"] for b in bins) == 102
    assert all(b["rows"] >= 3 for b in bins)
    assert all(a["high"] == b["low"] for a, b in itertools.pairwise(bins))
    # The two 97s are counted in the open last bin (">= b"), never placed: no edge, tick
    # or bar end reaches them.
    assert bins[-1]["interval"].startswith(">= ") and bins[-1]["open"]
    assert bins[0]["interval"].startswith("< ") and bins[0]["open"]
    assert max(b["high"] for b in bins) < 97
    assert max(before["encoding"]["x"]["axis"]["values"]) < 97
    # The release's intervals are drawn over the span they cover.
    released = {(b["low"], b["high"]): b["rows"] for b in _values(after)}
    table = _release().table
    for (low, high), rows in released.items():
        label = f"{int(low)}-{int(high) - 1}"
        assert (table["age"] == label).sum() == rows


def test_categorical_values_are_bars_with_rare_values_merged_and_never_named() -> None:
    result = _release()
    drawn = figures(result)["distribution:town"]
    bars = _values(drawn["hconcat"][0])
    # Two rows of the rare town are too few alone: with the least frequent other value
    # they make a merged bar of at least k rows, named by a count only.
    assert [(b["value"], b["rows"], b["merged"]) for b in bars] == [
        ("Cambridge", 60, 0),
        ("other (2 values)", 42, 2),
    ]
    assert RARE not in json.dumps(figures(result))
    svg = to_svg(drawn)
    assert "Cambridge" in svg and RARE not in svg


def test_dates_are_a_histogram_over_calendar_bins_and_released_months() -> None:
    result = kanonym.anonymize(
        patients(rows=200),
        quasi_identifiers={"birth_date": "date", "sex": "suppress"},
        identifying=["name", "ssn", "zip"],
        insensitive=["diagnosis", "admission_date", "length_of_stay"],
        k=3,
        max_suppression=0.1,
        seed=2,
    )
    content = gather(result)
    (birth,) = [d for d in content.distributions if d.column == "birth_date"]
    assert birth.histogram_before is not None and birth.histogram_before.scale == "date"
    assert sum(b.count for b in birth.histogram_before.bins) == 200
    assert all(b.count >= 3 for b in birth.histogram_before.bins)
    spec = charts.distribution_figure(birth, k=3)
    before = spec["hconcat"][0]
    assert before["encoding"]["x"]["type"] == "temporal"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", _values(before)[0]["low"])
    # The release (years, decades or months) is drawn over dates too, unless nothing is left.
    after = birth.histogram_after
    assert after is not None
    released = result.table["birth_date"]
    assert sum(b.count for b in after.bins) + after.not_drawn == released.len()


def test_masked_codes_stay_bars() -> None:
    table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"] * 3})
    result = kanonym.anonymize(table, quasi_identifiers={"zip": "mask"}, k=3, seed=1)
    (zip_codes,) = gather(result).distributions
    assert zip_codes.histogram_before is None
    assert "value" in _values(figures(result)["distribution:zip"]["hconcat"][0])[0]


def test_lattice_shows_what_the_search_checked_unless_asked_for_more() -> None:
    result = _release()
    trace = result.search
    assert trace is not None
    view = gather(result).lattice
    assert view is not None and view.whole and view.extra_checks == 0
    assert len(view.nodes) == trace.lattice.size
    statuses = [n.status for n in view.nodes]
    assert statuses.count("satisfies") + statuses.count("fails") == len(trace.checked)
    assert statuses.count("satisfies") == int(trace.satisfied.sum())
    # Edges join a node to a direct generalization: one level more on one attribute.
    for a, b in view.edges:
        low, high = view.nodes[a].levels, view.nodes[b].levels
        assert sum(high) - sum(low) == 1 and all(h >= lo for lo, h in zip(low, high, strict=True))
    asked = gather(result, check_lattice=True).lattice
    assert asked is not None and "not checked" not in {n.status for n in asked.nodes}
    assert asked.extra_checks == statuses.count("not checked")
    assert sum(n.checked_for_report for n in asked.nodes) == asked.extra_checks
    assert [n.levels for n in asked.nodes if n.optimum] == [
        n.levels for n in asked.nodes if n.released
    ]


def test_lattice_nodes_carry_levels_score_and_status_for_tooltips() -> None:
    result = _release()
    spec = figures(result)["lattice"]
    nodes = _values(spec)
    released = [n for n in nodes if n["released"]]
    assert len(released) == 1 and released[0]["status"] == "satisfies"
    assert isinstance(released[0]["score"], float)
    assert released[0]["levels"] == ", ".join(
        f"{name}={level}" for name, level in (result.transformation or {}).items()
    )
    titles = {t["title"] for layer in spec["layer"] for t in layer["encoding"].get("tooltip", [])}
    assert {"levels", "score", "status"} <= titles


def test_a_lattice_view_without_scores_or_checks() -> None:
    result = _release()
    assert result.search is not None
    trace = result.search
    view = lattice_view(trace)
    checked = {tuple(row) for row in trace.checked.tolist()}
    assert {n.levels for n in view.nodes if n.status != "not checked"} == checked


@pytest.mark.parametrize("check_lattice", [False, True])
def test_page_says_whether_the_lattice_was_checked_for_the_report(check_lattice: bool) -> None:
    page = render_html(_release(), check_lattice=check_lattice).decode("utf-8")
    assert ("Minimal satisfying nodes" in page) == check_lattice
    assert ("Only what the search checked is shown" in page) != check_lattice
    assert RARE not in page


@pytest.mark.parametrize(
    ("class_sizes", "log"),
    [
        ({5: 3, 6: 2, 9: 1}, False),  # a few close sizes: one bar each
        ({5: 40, 18_000: 1}, True),  # two sizes far apart: a bar one size wide would vanish
        (dict.fromkeys(range(5, 75), 1), True),  # more than 60 sizes
    ],
)
def test_class_sizes_are_bars_or_log_bins_that_count_every_class(
    class_sizes: dict[int, int], log: bool
) -> None:
    spec = charts.class_size_figure(class_sizes, k=5)
    bars = spec["layer"][0]
    assert (bars["encoding"]["x"]["scale"].get("type") == "log") is log
    values = _values(bars)
    assert sum(v["classes"] for v in values) == sum(class_sizes.values())
    for v in values:
        covered = [s for s in class_sizes if v["low"] <= s < v["high"]]
        assert sum(class_sizes[s] for s in covered) == v["classes"]
