"""Issue 10, point 10: reading errors that say how to fix them (delimiters, workbooks)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from kanonym.errors import InputError
from kanonym.io import read_table

ROWS = [["name", "zip", "sex"], ["Ann", "02138", "F"], ["Bob", "02139", "M"]]


def _write(tmp_path: Path, delimiter: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_text("".join(delimiter.join(row) + "\n" for row in ROWS))
    return path


def _error(call: object) -> str:
    with pytest.raises(InputError) as caught:
        call()  # type: ignore[operator]
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("used", "actual"), [(";", ","), (",", "\t"), ("|", ";")])
def test_issue10_p10_wrong_delimiter_suggests_the_one_the_file_uses(
    tmp_path: Path, used: str, actual: str
) -> None:
    path = _write(tmp_path, actual)
    table = read_table(path, delimiter=used)
    message = _error(lambda: table.require(["zip"]))
    assert message.startswith(f"{path}: column 'zip' not found")
    assert f"looks {actual!r}-separated" in message and f"`delimiter={actual!r}`" in message
    assert "--" not in message  # the library names parameters, not flags


def test_issue10_p10_a_delimiter_outside_the_sniffed_ones_is_suggested(tmp_path: Path) -> None:
    path = _write(tmp_path, ":")
    table = read_table(path)
    assert "`delimiter=':'`" in _error(lambda: table.require(["zip"]))


def test_issue10_p10_a_missing_column_suggests_a_close_name(tmp_path: Path) -> None:
    table = read_table(_write(tmp_path, ","))
    assert "did you mean 'zip'" in _error(lambda: table.require(["zipp"]))


@pytest.mark.parametrize(
    ("name", "character"),
    [
        ("\\t", "\t"),
        ("tab", "\t"),
        ("TAB", "\t"),
        ("comma", ","),
        ("semicolon", ";"),
        ("pipe", "|"),
    ],
)
def test_issue10_p10_delimiters_by_name_and_escape(
    tmp_path: Path, name: str, character: str
) -> None:
    table = read_table(_write(tmp_path, character), delimiter=name)
    assert table.frame.columns == ["name", "zip", "sex"]
    assert table.dialect is not None and table.dialect.delimiter == character


@pytest.mark.parametrize("character", [";", "|", ","])
def test_a_delimiter_given_as_its_character_still_works(tmp_path: Path, character: str) -> None:
    table = read_table(_write(tmp_path, character), delimiter=character)
    assert table.frame.columns == ["name", "zip", "sex"]


def test_issue10_p10_an_unknown_delimiter_name_lists_the_names(tmp_path: Path) -> None:
    path = _write(tmp_path, ",")
    message = _error(lambda: read_table(path, delimiter="colon-ish"))
    assert "tab" in message and "semicolon" in message and "one character" in message


def _xlsx() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    return buffer.getvalue()


@pytest.mark.parametrize("name", ["patients.xlsx", "patients.csv"])
def test_issue10_p10_an_excel_workbook_is_named_whatever_its_extension(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    path.write_bytes(_xlsx())
    message = _error(lambda: read_table(path))
    assert message.startswith(f"{path}: ")
    assert "Excel workbook" in message and "save it as CSV or Parquet" in message
    assert "NUL" not in message


def test_issue10_p10_an_old_excel_workbook_is_named(tmp_path: Path) -> None:
    path = tmp_path / "patients.xls"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    message = _error(lambda: read_table(path))
    assert "Excel" in message and "save it as CSV or Parquet" in message


def test_issue10_p10_a_zip_archive_is_named(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("t.csv", "a,b\n1,2\n")
    path = tmp_path / "t.zip"
    path.write_bytes(buffer.getvalue())
    message = _error(lambda: read_table(path))
    assert "ZIP archive" in message and "unzip" in message
