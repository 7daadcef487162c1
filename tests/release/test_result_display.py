"""Issue 10, point 12: a Result shows itself in one line and summarizes itself in a few."""

from __future__ import annotations

import dataclasses
import importlib.util
import re

import polars as pl

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
    # print(result) gives the summary: never the table nor the search.
    assert str(result) == summary


# The notebook view: Result._repr_html_ and print(result).

EVIL = "<script>alert(1)</script>"
# Every value is unique in the input (classes of 1 < k): none may be shown.
NOTEBOOK = pl.DataFrame(
    {
        EVIL: ["Q31", "Q33", "Q35", "Q38", "Q42", "Q44", "Q46", "Q48"],
        "zip": ["Z02138", "Z02139", "Z02141", "Z02142", "Z02143", "Z02144", "Z02145", "Z02146"],
        "visits": ["V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8"],
    }
)


def _cell(name: object, value: object) -> str:
    return f"<td>{name}</td><td>{value}</td>"


def test_the_html_summary_gives_the_release_numbers_and_escapes_every_name() -> None:
    result = kanonym.anonymize(
        NOTEBOOK,
        quasi_identifiers={EVIL: "suppress", "zip": "mask"},
        insensitive=["visits"],
        k=2,
        seed=1,
    )
    page = result._repr_html_()
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    sizes = result.value_counts([EVIL, "zip"]).get_column("len")
    assert _cell("rows released", "8 of 8") in page
    assert _cell("rows suppressed", "0 (limit 0)") in page
    assert _cell("classes", sizes.len()) in page
    assert _cell("smallest class", sizes.min()) in page
    assert result.transformation is not None
    for name, level in result.transformation.items():
        height = result.hierarchies[name].height
        escaped = name.replace("<", "&lt;").replace(">", "&gt;")
        assert f"<td>{escaped}</td><td>{level}</td><td>{height}</td>" in page
    # k-anonymity holds, reached by the smallest class.
    assert f"<td>k-anonymity</td><td>k=2</td><td>yes</td><td>{sizes.min()}</td>" in page
    assert _cell("loss", f"{result.metrics['loss']:.6g}") in page
    # Risk before (every input row unique) and after, as kanonym.risk measures them.
    after = kanonym.risk(result.table, [EVIL, "zip"]).prosecutor
    assert f"<td>highest risk</td><td>1</td><td>{after.highest:.6g}</td>" in page
    assert f"<td>average risk</td><td>1</td><td>{after.average:.6g}</td>" in page


def test_the_html_summary_shows_no_value_of_the_table() -> None:
    result = kanonym.anonymize(
        NOTEBOOK,
        quasi_identifiers={"zip": "mask"},
        identifying=[EVIL],
        insensitive=["visits"],
        k=2,
        seed=1,
    )
    page = result._repr_html_()
    released = set(result.table.get_column("zip"))
    for value in [*NOTEBOOK.get_column("zip"), *NOTEBOOK.get_column("visits"), *released]:
        assert value not in page, value


def test_the_figures_are_inline_svg_and_left_out_without_a_drawer() -> None:
    result = kanonym.anonymize(
        NOTEBOOK,
        quasi_identifiers={"zip": "mask"},
        k=2,
        seed=1,
        identifying=[EVIL],
        insensitive=["visits"],
    )
    drawn = result._repr_html_().count("<svg")
    assert drawn == (2 if importlib.util.find_spec("vl_convert") else 0)
    plain = dataclasses.replace(result, figure_maker=None)._repr_html_()
    assert "<svg" not in plain and "<h4>measures</h4>" in plain


def test_a_local_recoding_shows_its_partitions() -> None:
    result = kanonym.anonymize(
        NOTEBOOK,
        quasi_identifiers={"zip": "mask"},
        k=2,
        seed=1,
        identifying=[EVIL],
        insensitive=["visits"],
        algorithm="mondrian",
    )
    page = result._repr_html_()
    assert _cell("local recoding", "mondrian") in page
    assert re.search(r"<td>partitions</td><td>\d+</td>", page)


def test_print_gives_a_dozen_lines_at_most() -> None:
    result = kanonym.anonymize(
        NOTEBOOK,
        quasi_identifiers={EVIL: "suppress", "zip": "mask"},
        insensitive=["visits"],
        k=2,
        seed=1,
    )
    lines = str(result).splitlines()
    assert 3 <= len(lines) <= 12
    assert lines[0] == "released 8 of 8 rows (0 suppressed, limit 0); k=2"
    assert "V1" not in str(result)
