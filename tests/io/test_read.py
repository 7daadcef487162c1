"""Reading CSV, Parquet and data frames: values, detection of the layout, errors."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from kanonym.errors import InputError
from kanonym.io import from_dataframe, load, read_table


def write(tmp_path: Path, content: bytes, name: str = "input.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def read_error(path: Path, **options: Any) -> str:
    """The message of the InputError reading ``path`` raises, checked to be one line."""
    with pytest.raises(InputError) as caught:
        read_table(path, **options)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    return message


def test_values_are_the_text_of_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, b"zip,price,note,flag\n02138,1.50, padded ,TRUE\n00501,1e3,-0,nan\n")
    frame = read_table(path).frame
    assert frame.schema == pl.Schema(dict.fromkeys(["zip", "price", "note", "flag"], pl.String))
    assert frame.rows() == [("02138", "1.50", " padded ", "TRUE"), ("00501", "1e3", "-0", "nan")]


def test_empty_fields_quoted_or_not_are_null(tmp_path: Path) -> None:
    path = write(tmp_path, b'a,b,c\n,"",x\n"",,""\n')
    assert read_table(path).frame.rows() == [(None, None, "x"), (None, None, None)]


def test_quoted_fields_hold_delimiters_quotes_and_newlines(tmp_path: Path) -> None:
    path = write(tmp_path, b'name,remark\r\n"Doe, J","said ""hi""\r\nand left"\r\nRoe,x\r\n')
    table = read_table(path)
    assert table.frame.rows() == [("Doe, J", 'said "hi"\r\nand left'), ("Roe", "x")]
    assert table.dialect is not None
    assert table.dialect.line_terminator == "\r\n"


@pytest.mark.parametrize(
    ("content", "delimiter"),
    [
        (b"a,b\n1,2\n", ","),
        (b"a;b\n1,5;2\n3,0;4\n", ";"),
        (b"name\tcity\nDoe, J\tParis\n", "\t"),
        (b"a|b|c\n1|2|3\n", "|"),
        # Both split every record in two: the tie goes to the comma.
        (b"a,b;c\n1,2;3\n", ","),
        # Nothing splits a one-column file.
        (b"name\nDoe\n", ","),
        # A delimiter inside quotes does not count: otherwise ";" would split the
        # row in three and lose to "|".
        (b'a;b|c\n"x;y";1|2\n', ";"),
    ],
)
def test_delimiter_is_sniffed(tmp_path: Path, content: bytes, delimiter: str) -> None:
    dialect = read_table(write(tmp_path, content)).dialect
    assert dialect is not None
    assert dialect.delimiter == delimiter


def test_one_ragged_row_does_not_outweigh_a_consistent_split(tmp_path: Path) -> None:
    # Read as ";"-separated, so the short row is reported rather than the file
    # taken as one column.
    path = write(tmp_path, b"a;b;c\n1;2;3\n4;5\n6;7;8\n")
    assert read_error(path).endswith("line 3 has 2 fields, the header has 3")


def test_sniffing_a_large_file_samples_its_first_records(tmp_path: Path) -> None:
    rows = b"".join(b"%d;value %d, more\n" % (i, i) for i in range(20_000))
    path = write(tmp_path, b"id;text\n" + rows)
    table = read_table(path)
    assert table.dialect is not None
    assert table.dialect.delimiter == ";"
    assert table.frame.height == 20_000


def test_explicit_delimiter_wins_over_sniffing(tmp_path: Path) -> None:
    path = write(tmp_path, b"a;b,c\n1;2,3\n")
    assert read_table(path, delimiter=";").frame.columns == ["a", "b,c"]
    assert read_table(path, delimiter="!").frame.rows() == [("1;2,3",)]


@pytest.mark.parametrize(
    ("content", "encoding", "value"),
    [
        ("a\nZoë €\n".encode(), "utf-8", "Zoë €"),
        ("a\nZoë €\n".encode("utf-8-sig"), "utf-8-sig", "Zoë €"),
        ("a\nZoë €\n".encode("cp1252"), "cp1252", "Zoë €"),
        # 0x81 is undefined in cp1252, so only latin-1 can decode it.
        (b"a\nZo\xeb \x81\n", "latin-1", "Zoë \x81"),
        (b"a\nplain\n", "utf-8", "plain"),
    ],
)
def test_encoding_is_detected(tmp_path: Path, content: bytes, encoding: str, value: str) -> None:
    table = read_table(write(tmp_path, content))
    assert table.dialect is not None
    assert table.dialect.encoding == encoding
    assert table.frame.columns == ["a"]
    assert table.frame["a"].to_list() == [value]


@pytest.mark.parametrize(
    ("content", "line_terminator", "final_newline", "quote_all"),
    [
        (b"a,b\n1,2\n", "\n", True, False),
        (b"a,b\r\n1,2\r\n", "\r\n", True, False),
        (b"a,b\r\n1,2", "\r\n", False, False),
        (b'"a","b"\n"1",""\n', "\n", True, True),
        # A field spanning lines is still one quoted field.
        (b'"a","b"\n"1\n2","x"\n', "\n", True, True),
        # An unquoted empty field breaks "every field quoted".
        (b'"a","b"\n"1",\n', "\n", True, False),
        # So does an unquoted header over quoted data.
        (b'a,b\n"1","2"\n', "\n", True, False),
        (b'"a","b"\n"1","2"\n3,"4"\n', "\n", True, False),
    ],
)
def test_layout_is_detected(
    tmp_path: Path, content: bytes, line_terminator: str, final_newline: bool, quote_all: bool
) -> None:
    dialect = read_table(write(tmp_path, content)).dialect
    assert dialect is not None
    assert (dialect.line_terminator, dialect.final_newline, dialect.quote_all) == (
        line_terminator,
        final_newline,
        quote_all,
    )


def test_header_only_file_has_no_rows(tmp_path: Path) -> None:
    frame = read_table(write(tmp_path, b"a;b\n")).frame
    assert frame.columns == ["a", "b"]
    assert frame.height == 0


def test_blank_line_in_one_column_file_is_a_missing_value(tmp_path: Path) -> None:
    assert read_table(write(tmp_path, b"a\n1\n\n2\n")).frame["a"].to_list() == ["1", None, "2"]


def test_gzip_is_detected_by_content(tmp_path: Path) -> None:
    content = b"zip;age\r\n02138;39\r\n"
    for name in ("data.csv.gz", "data.csv"):
        table = read_table(write(tmp_path, gzip.compress(content), name))
        assert table.frame.rows() == [("02138", "39")]
        assert table.dialect is not None
        assert table.dialect.delimiter == ";"


def test_parquet_is_detected_by_content_or_name(tmp_path: Path) -> None:
    frame = pl.DataFrame({"age": [39, None], "zip": ["02138", ""]})
    frame.write_parquet(tmp_path / "data.bin")
    table = read_table(tmp_path / "data.bin")
    assert table.dialect is None
    assert table.source == str(tmp_path / "data.bin")
    # Empty strings are missing values in Parquet input too.
    expected = pl.DataFrame({"age": [39, None], "zip": ["02138", None]})
    assert_frame_equal(table.frame, expected)
    write(tmp_path, b"a,b\n1,2\n", "data.parquet")
    assert "not a readable Parquet file" in read_error(tmp_path / "data.parquet")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "empty file, expected a header row"),
        (b"\xef\xbb\xbf", "empty file, expected a header row"),
        (b"a,b\n1,2\n3\n", "line 3 has 1 field, the header has 2"),
        (b"a,b\n1,2\n3,4,5\n", "line 3 has 3 fields, the header has 2"),
        # A trailing delimiter is an extra (empty) field.
        (b"a,b\n1,2,\n", "line 2 has 3 fields, the header has 2"),
        (b"a,b\n1,2\n\n", "line 3 has 1 field, the header has 2"),
        # Line numbers count the lines inside quoted fields.
        (b'a,b\n"x\ny\nz",1\n2\n', "line 5 has 1 field, the header has 2"),
        (b'a,b\nx"y,2\n', "line 2: misplaced quote"),
        (b'a,b\n"x"y,2\n', "line 2: misplaced quote"),
        (b'a,b\n1,2\n"x\ny,2\n3,4\n', "line 3: a quoted field is never closed"),
        (b"a,a\n1,2\n", "duplicate column name 'a'"),
        (b"a,,b\n1,2,3\n", "column 2 has an empty name"),
        (b'a,""\n1,2\n', "column 2 has an empty name"),
        (b"a,b\n1,\x002\n", "contains NUL bytes"),
        (b"a,b\r1,2\r", "bare CR"),
        (b"\xef\xbb\xbfa\n\xff\n", "starts with a UTF-8 byte order mark but is not UTF-8"),
    ],
)
def test_bad_csv_is_an_input_error(tmp_path: Path, content: bytes, expected: str) -> None:
    assert expected in read_error(write(tmp_path, content))


def test_corrupt_gzip_is_an_input_error(tmp_path: Path) -> None:
    path = write(tmp_path, gzip.compress(b"a,b\n1,2\n")[:-8], "data.csv.gz")
    assert "corrupt gzip data" in read_error(path)


def test_unreadable_paths_are_input_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert read_error(tmp_path / "absent.csv").endswith("file not found")
    assert read_error(tmp_path).endswith("is a directory, not a file")
    path = write(tmp_path, b"a\n1\n")

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    # Tests may run as root, whom file modes do not stop: simulate the refusal.
    monkeypatch.setattr(Path, "read_bytes", refuse)
    assert read_error(path).endswith("permission denied")


@pytest.mark.parametrize("delimiter", ["", ";;", "§", '"', "\n"])
def test_unusable_delimiter_is_an_input_error(tmp_path: Path, delimiter: str) -> None:
    path = write(tmp_path, b"a,b\n1,2\n")
    assert f"`delimiter` {delimiter!r} must be" in read_error(path, delimiter=delimiter)


def test_delimiter_with_parquet_is_an_input_error(tmp_path: Path) -> None:
    pl.DataFrame({"a": [1]}).write_parquet(tmp_path / "t.parquet")
    assert "CSV input only" in read_error(tmp_path / "t.parquet", delimiter=",")


def test_polars_failure_becomes_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, b"a,b\n1,2\n")
    original = pl.read_csv

    def failing(source: bytes, **options: Any) -> pl.DataFrame:
        if options.get("quote_char") == '"':
            raise pl.exceptions.ComputeError("something odd\n\nhints on more lines")
        return original(source, **options)

    monkeypatch.setattr(pl, "read_csv", failing)
    assert read_error(path).endswith("malformed CSV: something odd")


def test_polars_dataframe_is_taken_as_is_but_for_empty_strings() -> None:
    frame = pl.DataFrame({"age": [39, None], "zip": ["", "02138"]})
    table = from_dataframe(frame)
    assert (table.source, table.dialect) == ("<DataFrame>", None)
    assert_frame_equal(table.frame, pl.DataFrame({"age": [39, None], "zip": [None, "02138"]}))


def test_pandas_dataframe_is_converted_with_nulls() -> None:
    data = pd.DataFrame({"zip": ["02138", None, float("nan"), ""], "age": [39.0, None, 1, 2]})
    frame = from_dataframe(data).frame
    assert frame.schema == pl.Schema({"zip": pl.String, "age": pl.Float64})
    assert frame.rows() == [("02138", 39.0), (None, None), (None, 1.0), (None, 2.0)]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"a": [1]}, "expected a Polars or pandas DataFrame, got dict"),
        (pl.Series("a", [1]), "expected a Polars or pandas DataFrame, got Series"),
        (pl.DataFrame({"": [1]}), "column 1 has an empty name"),
        (pd.DataFrame([[1, 2]], columns=["a", "a"]), "duplicate column name 'a'"),
        (pd.DataFrame({"a": [1, "x"]}, dtype=object), "cannot convert the pandas DataFrame"),
    ],
)
def test_bad_dataframe_is_an_input_error(data: Any, expected: str) -> None:
    with pytest.raises(InputError, match=expected) as caught:
        from_dataframe(data)
    assert str(caught.value).startswith("<DataFrame>: ")


def test_load_dispatches_on_the_kind_of_input(tmp_path: Path) -> None:
    path = write(tmp_path, b"a;b\n1;2\n")
    assert load(path).frame.rows() == [("1", "2")]
    assert load(str(path), delimiter=",").frame.columns == ["a;b"]
    assert load(pl.DataFrame({"a": ["x"]})).source == "<DataFrame>"
    with pytest.raises(InputError, match="`delimiter` applies to CSV input only"):
        load(pl.DataFrame({"a": ["x"]}), delimiter=";")


def test_importing_and_using_kanonym_io_does_not_import_pandas(tmp_path: Path) -> None:
    path = write(tmp_path, b"a\n1\n")
    script = (
        "import sys, polars as pl, kanonym.io as kio\n"
        f"kio.read_table({str(path)!r})\n"
        "kio.from_dataframe(pl.DataFrame({'a': ['1']}))\n"
        "print('pandas' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
