"""Import of ARX hierarchy files, from small files written for each test."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanonym.errors import HierarchyError, InputError
from kanonym.hierarchy import Hierarchy, load_arx

AGE_LEVELS = (
    ("33", "34", "41"),
    ("30-34", "30-34", "40-44"),
    ("30-39", "30-39", "40-49"),
    ("20-39", "20-39", "40-59"),
    ("*", "*", "*"),
)
AGE_LF = b"33;30-34;30-39;20-39;*\n34;30-34;30-39;20-39;*\n41;40-44;40-49;40-59;*\n"


def write(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "age.csv"
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    "content",
    [
        AGE_LF,
        AGE_LF.replace(b"\n", b"\r\n"),
        AGE_LF.rstrip(b"\n"),
        b"\xef\xbb\xbf" + AGE_LF,
        AGE_LF + b"\n\n\r\n",
        b"\xef\xbb\xbf" + AGE_LF.replace(b"\n", b"\r\n").rstrip(b"\r\n"),
    ],
    ids=["lf", "crlf", "no-final-newline", "bom", "trailing-empty-lines", "bom-crlf-no-newline"],
)
def test_line_ends_bom_and_trailing_lines(tmp_path: Path, content: bytes) -> None:
    h = load_arx(write(tmp_path, content))
    assert h.levels == AGE_LEVELS
    assert h.height == 4
    assert h.name == str(tmp_path / "age.csv")


def test_accepts_a_str_path(tmp_path: Path) -> None:
    assert load_arx(str(write(tmp_path, AGE_LF))).levels == AGE_LEVELS


def test_cp1252_file(tmp_path: Path) -> None:
    path = write(tmp_path, "Zürich;Schweiz €;*\nGenève;Schweiz €;*\n".encode("cp1252"))
    assert load_arx(path).leaves == ("Zürich", "Genève")


def test_latin1_file_undecodable_as_cp1252(tmp_path: Path) -> None:
    # 0x81 is undefined in cp1252 and invalid alone in UTF-8, so only latin-1 reads it.
    path = write(tmp_path, b"a\x81;*\nb\xe9;*\n")
    assert load_arx(path).leaves == ("a\x81", "bé")


def test_utf8_file(tmp_path: Path) -> None:
    path = write(tmp_path, "Zürich;Schweiz;*\n東京;日本;*\n".encode())
    assert load_arx(path).levels[1] == ("Schweiz", "日本")


def test_quoted_cells(tmp_path: Path) -> None:
    path = write(tmp_path, b'"a;b";"say ""hi""";*\n"multi\nline";x;*\n')
    h = load_arx(path)
    assert h.leaves == ("a;b", "multi\nline")
    assert h.levels[1] == ('say "hi"', "x")


def test_empty_cell_is_the_missing_value(tmp_path: Path) -> None:
    h = load_arx(write(tmp_path, b"a;x;*\n;;*\n"))
    assert h.levels == (("a", None), ("x", None), ("*", "*"))


def test_other_delimiter(tmp_path: Path) -> None:
    h = load_arx(write(tmp_path, b"a,x,*\nb,x,*\n"), delimiter=",")
    assert h.levels == (("a", "b"), ("x", "x"), ("*", "*"))


def test_ragged_rows_name_file_line_and_value(tmp_path: Path) -> None:
    path = write(tmp_path, b"33;30-34;*\n\n41;40-44;40-49;*\n")
    with pytest.raises(HierarchyError) as caught:
        load_arx(path)
    assert str(caught.value) == f"{path}: line 3: value '41' has 4 columns but line 1 has 3"


def test_line_numbers_count_lines_inside_quoted_cells(tmp_path: Path) -> None:
    path = write(tmp_path, b'"two\nlines";x;*\nb;*\n')
    with pytest.raises(HierarchyError, match=r": line 3: value 'b' has 2 columns"):
        load_arx(path)


def test_exact_duplicate_rows_are_kept_once(tmp_path: Path) -> None:
    h = load_arx(write(tmp_path, b"a;x;*\nb;x;*\na;x;*\n"))
    assert h.leaves == ("a", "b")


def test_same_leaf_with_different_rows_is_two_parents(tmp_path: Path) -> None:
    path = write(tmp_path, b"94;[1,94];*\n95;[95,99];*\n94;[90,94];*\n")
    with pytest.raises(HierarchyError) as caught:
        load_arx(path)
    assert str(caught.value) == (
        f"hierarchy {path}: level 0 value '94' has two parents at level 1: '[1,94]' and "
        "'[90,94]' (lines 1 and 3); keep one line per value, or pass `duplicates='last'` to keep "
        "each value's last line, as ARX does"
    )


def test_missing_file_is_an_input_error_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "absent.csv"
    with pytest.raises(InputError) as caught:
        load_arx(path)
    assert type(caught.value) is InputError
    assert str(caught.value) == f"{path}: cannot read hierarchy file: No such file or directory"


def test_directory_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=f"^{tmp_path}: cannot read hierarchy file"):
        load_arx(tmp_path)


@pytest.mark.parametrize("content", [b"", b"\n\r\n\n", b"\xef\xbb\xbf"])
def test_file_without_rows(tmp_path: Path, content: bytes) -> None:
    with pytest.raises(HierarchyError, match="hierarchy file has no rows"):
        load_arx(write(tmp_path, content))


def test_unterminated_quote_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, b'a;*\n"b;*\n')
    with pytest.raises(HierarchyError, match=rf"^{path}: line \d+: unexpected end of data$"):
        load_arx(path)


def test_bad_delimiter_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="delimiter"):
        load_arx(write(tmp_path, AGE_LF), delimiter=";;")


def test_round_trip_through_to_arx_csv(tmp_path: Path) -> None:
    original = Hierarchy(
        name="h",
        levels=(
            ("a;b", 'q"uote', "cr\rlf\r\n", " spaced ", None, "Zürich"),
            ("x", "x", "y", "y", None, "z"),
            ("*",) * 6,
        ),
    )
    path = tmp_path / "h.csv"
    path.write_text(original.to_arx_csv(), encoding="utf-8", newline="")
    assert load_arx(path).levels == original.levels


def test_round_trip_with_another_delimiter(tmp_path: Path) -> None:
    original = Hierarchy(name="h", levels=(("a,b", "c;d"), ("*", "*")))
    path = tmp_path / "h.csv"
    path.write_text(original.to_arx_csv(delimiter=","), encoding="utf-8", newline="")
    assert load_arx(path, delimiter=",").levels == original.levels


def test_duplicate_leaves_are_an_error_unless_the_last_row_wins(tmp_path) -> None:
    file = tmp_path / "age.csv"
    file.write_text("94;[1,94];*\n95;[90,99];*\n94;[90,99];*\n")
    with pytest.raises(HierarchyError, match="two parents"):
        load_arx(file)
    hierarchy = load_arx(file, duplicates="last")
    assert hierarchy.levels == (("94", "95"), ("[90,99]", "[90,99]"), ("*", "*"))
