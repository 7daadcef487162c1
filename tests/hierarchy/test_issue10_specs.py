"""Issue 10, point 10: hierarchy errors that say how to fix them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanonym.errors import InputError
from kanonym.hierarchy import DateBuilder, load_arx, parse_hierarchy


def _error(call: object) -> str:
    with pytest.raises(InputError) as caught:
        call()  # type: ignore[operator]
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("spec", "close"),
    [
        ("masking", "mask"),
        ("suppression", "suppress"),
        ("intervals:5,10", "interval"),
        ("dates", "date"),
    ],
)
def test_issue10_p10_an_unknown_builder_lists_the_builders(
    tmp_path: Path, spec: str, close: str
) -> None:
    message = _error(lambda: parse_hierarchy(spec, base_dir=tmp_path))
    keyword = spec.partition(":")[0]
    assert message.startswith(f"unknown hierarchy builder '{keyword}'"), message
    assert f"did you mean '{close}'" in message
    for builder in ("interval:W1,W2,...", "mask", "date[:FORMAT]", "suppress", "ARX"):
        assert builder in message
    assert "cannot read" not in message


def test_a_missing_hierarchy_file_is_still_a_missing_file(tmp_path: Path) -> None:
    message = _error(lambda: parse_hierarchy("zip.csv", base_dir=tmp_path))
    assert message.startswith(f"{tmp_path / 'zip.csv'}: cannot read hierarchy file")


def test_issue10_p10_a_hierarchy_file_with_a_header_row(tmp_path: Path) -> None:
    path = tmp_path / "zip.csv"
    path.write_text("zip;level1;level2\n02138;0213*;*\n02139;0213*;*\n02141;0214*;*\n")
    message = _error(lambda: load_arx(path))
    assert message.startswith(f"{path}: ")
    assert "header" in message and "no header row" in message and "line 1" in message


def test_issue10_p10_a_hierarchy_file_with_commas(tmp_path: Path) -> None:
    path = tmp_path / "zip.csv"
    path.write_text("02138,0213*,*\n02139,0213*,*\n")
    message = _error(lambda: load_arx(path))
    assert message.startswith(f"{path}: ")
    assert "';'" in message and "','" in message


@pytest.mark.parametrize(
    ("values", "suggestion"),
    [
        (["03/25/1961", "12/31/1999", "01/02/2000"], "'date:%m/%d/%Y'"),
        (["25/03/1961", "31/12/1999"], "'date:%d/%m/%Y'"),
        (["25.03.1961", "31.12.1999"], "'date:%d.%m.%Y'"),
        (["19610325", "19991231"], "'date:%Y%m%d'"),
    ],
)
def test_issue10_p10_dates_in_another_format_get_a_format_suggested(
    values: list[str], suggestion: str
) -> None:
    message = _error(lambda: DateBuilder().build(values, column="dob", source="p.csv"))
    assert message.startswith("p.csv: column 'dob': value ")
    assert suggestion in message


def test_issue10_p10_ambiguous_dates_get_both_formats() -> None:
    values = ["03/04/1961", "01/02/2000"]
    message = _error(lambda: DateBuilder().build(values, column="dob", source="p.csv"))
    assert "'date:%m/%d/%Y'" in message and "'date:%d/%m/%Y'" in message


def test_issue10_p10_a_wrong_format_gets_the_right_one_suggested() -> None:
    values = ["03/25/1961", "12/31/1999"]
    builder = DateBuilder(format="%d/%m/%Y")
    message = _error(lambda: builder.build(values, column="dob", source="p.csv"))
    assert "'date:%m/%d/%Y'" in message
