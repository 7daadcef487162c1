"""Fidelity: what is read and written back unchanged comes out byte for byte."""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from tests.meaningful import assume_meaningful

from kanonym.io import CsvDialect, Table, read_table, serialize, write_table

ADULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult" / "adult.csv"

FILES = {
    "lf": b"zip,age\n02138,39\n02139,\n",
    "crlf": b"zip,age\r\n02138,39\r\n02139,\r\n",
    "semicolon": b"zip;income\n02138;1,50\n",
    "tab": b"name\tcity\nDoe, J\tParis\n",
    "no_final_newline": b"zip,age\r\n02138,39\r\n02139,",
    "quote_all": b'"name","note"\r\n"Doe, J",""\r\n"Roe","said ""hi"""\r\n',
    "quote_all_multiline": b'"name","note"\n"Doe","line 1\nline 2"\n',
    "minimal_quoting": b'name,note\n"Doe, J","said ""hi"""\nRoe,"line 1\r\nline 2"\nPoe,\n',
    "cp1252": "name;city\nZoë;Besançon\nJosé;€uro\n".encode("cp1252"),
    "latin1": b"name;city\nZo\xeb;\x81\n",
    "utf8_bom": "\ufeffname,city\nZoë,Kraków\n".encode(),
    "empty_fields": b"a,b,c\n,,\n1,,\n,,3\n",
    "one_column_with_blank": b"a\n1\n\n2\n",
    "header_only": b"a;b",
}


@pytest.mark.parametrize("content", FILES.values(), ids=FILES.keys())
def test_csv_round_trips_byte_for_byte(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "input.csv"
    path.write_bytes(content)
    table = read_table(path)
    assert serialize(table.frame, fmt="csv", dialect=table.dialect) == content


def test_write_table_reproduces_the_input(tmp_path: Path) -> None:
    source, target = tmp_path / "in.csv", tmp_path / "out.csv"
    source.write_bytes(FILES["cp1252"])
    table = read_table(source)
    write_table(table.frame, target, dialect=table.dialect)
    assert target.read_bytes() == FILES["cp1252"]


def test_gzip_input_serializes_to_its_decompressed_bytes(tmp_path: Path) -> None:
    path = tmp_path / "input.csv.gz"
    path.write_bytes(gzip.compress(FILES["crlf"]))
    table = read_table(path)
    assert serialize(table.frame, fmt="csv", dialect=table.dialect) == FILES["crlf"]


@pytest.mark.shared
@pytest.mark.skipif(not ADULT.is_file(), reason=f"{ADULT} is absent")
def test_adult_round_trips_byte_for_byte() -> None:
    table = read_table(ADULT)
    assert table.dialect is not None
    assert (table.dialect.delimiter, table.dialect.line_terminator) == (";", "\r\n")
    assert serialize(table.frame, fmt="csv", dialect=table.dialect) == ADULT.read_bytes()


def test_parquet_round_trip_keeps_dtypes(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "age": pl.Series([39, None], dtype=pl.Int16),
            "income": [1.5, None],
            "zip": ["02138", None],
            "born": [dt.date(1985, 1, 2), None],
            "smoker": [True, None],
            "sex": pl.Series(["F", None], dtype=pl.Categorical),
        }
    )
    write_table(frame, tmp_path / "t.parquet", dialect=None)
    table = read_table(tmp_path / "t.parquet")
    assert table.frame.schema == frame.schema
    assert_frame_equal(table.frame, frame)


UTF8_CHARS = list("ab ,;\t|\"\n\r'#éß€Ł中😀")
# No character whose cp1252 byte is 0x80-0xBF: such bytes after é could form
# valid UTF-8, and the file would then rightly be read as UTF-8.
CP1252_CHARS = list("ab ,;\t|\"\n\r'#éßüÀ")


@st.composite
def tables(draw: st.DrawFn) -> tuple[pl.DataFrame, CsvDialect]:
    """A small String table and a dialect able to encode it."""
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "cp1252"]))
    text = st.text(
        alphabet=CP1252_CHARS if encoding == "cp1252" else UTF8_CHARS, min_size=0, max_size=6
    )
    names = draw(st.lists(text.filter(bool), min_size=1, max_size=4, unique=True))
    rows = draw(st.integers(min_value=0, max_value=6))
    columns = {
        name: draw(st.lists(st.none() | text, min_size=rows, max_size=rows)) for name in names
    }
    dialect = CsvDialect(
        delimiter=draw(st.sampled_from([",", ";", "\t", "|"])),
        line_terminator=draw(st.sampled_from(["\n", "\r\n"])),
        quote_all=draw(st.booleans()),
        encoding=encoding,
        final_newline=draw(st.booleans()),
    )
    return pl.DataFrame(columns, schema=dict.fromkeys(names, pl.String)), dialect


def read_back(folder: Path, payload: bytes, delimiter: str) -> Table:
    path = folder / "table.csv"
    path.write_bytes(payload)
    return read_table(path, delimiter=delimiter)


@settings(deadline=None)
@given(tables())
def test_serialized_tables_read_back_unchanged(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[pl.DataFrame, CsvDialect]
) -> None:
    frame, dialect = case
    ends_in_empty_line = (
        frame.shape[1] == 1 and frame.height > 0 and frame.item(-1, 0) is None
    ) and not dialect.quote_all
    # Without a final newline, a last empty line cannot be told from no line.
    assume_meaningful(
        dialect.final_newline or not ends_in_empty_line, "a last empty line without newline"
    )
    folder = tmp_path_factory.mktemp("property")
    back = read_back(folder, serialize(frame, fmt="csv", dialect=dialect), dialect.delimiter)
    # Empty strings come back as null: kanonym's one meaning of missing.
    expected = frame.with_columns(pl.when(pl.all() != "").then(pl.all()))
    assert_frame_equal(back.frame, expected)
    # Once missing values are null, the detected layout reproduces the file.
    payload = serialize(expected, fmt="csv", dialect=dialect)
    again = read_back(folder, payload, dialect.delimiter)
    assert serialize(again.frame, fmt="csv", dialect=again.dialect) == payload
