"""Serializing like the input, and writing releases all-or-nothing."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from kanonym.errors import InputError
from kanonym.io import CsvDialect, format_for, serialize, write_atomic, write_table


def dialect(**changes: object) -> CsvDialect:
    settings: dict[str, object] = {
        "delimiter": ",",
        "line_terminator": "\n",
        "quote_all": False,
        "encoding": "utf-8",
        "final_newline": True,
    }
    settings.update(changes)
    return CsvDialect(**settings)  # type: ignore[arg-type]


FRAME = pl.DataFrame({"name": ["Doe, J", 'say "hi"', None], "zip": ["02138", "a\nb", "x"]})


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("out.parquet", "parquet"),
        ("out.PQ", "parquet"),
        (Path("dir.parquet/out.csv"), "csv"),
        ("out.tsv", "csv"),
        ("out", "csv"),
    ],
)
def test_format_follows_the_extension(path: str | Path, fmt: str) -> None:
    assert format_for(path) == fmt


def test_default_dialect_is_minimal_utf8_comma_lf() -> None:
    expected = b'name,zip\n"Doe, J",02138\n"say ""hi""","a\nb"\n,x\n'
    assert serialize(FRAME, fmt="csv", dialect=None) == expected
    assert serialize(FRAME, fmt="csv", dialect=dialect()) == expected


def test_quote_all_quotes_every_field_and_nulls() -> None:
    out = serialize(FRAME, fmt="csv", dialect=dialect(quote_all=True, line_terminator="\r\n"))
    expected = b'"name","zip"\r\n"Doe, J","02138"\r\n"say ""hi""","a\nb"\r\n"","x"\r\n'
    assert out == expected


def test_delimiter_and_missing_final_newline() -> None:
    frame = pl.DataFrame({"a": ["1;2", "3"], "b": ["x,y", None]})
    out = serialize(frame, fmt="csv", dialect=dialect(delimiter=";", final_newline=False))
    assert out == b'a;b\n"1;2";x,y\n3;'


def test_header_only_frame_without_final_newline() -> None:
    frame = pl.DataFrame(schema={"a": pl.String, "b": pl.String})
    assert serialize(frame, fmt="csv", dialect=dialect(final_newline=False)) == b"a,b"


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        ("utf-8", "Zoë\n€\n".encode()),
        ("utf-8-sig", b"\xef\xbb\xbf" + "Zoë\n€\n".encode()),
        ("cp1252", b"Zo\xeb\n\x80\n"),
    ],
)
def test_output_is_encoded_like_the_input(encoding: str, expected: bytes) -> None:
    frame = pl.DataFrame({"Zoë": ["€"]})
    assert serialize(frame, fmt="csv", dialect=dialect(encoding=encoding)) == expected


def test_unencodable_value_is_an_input_error_naming_it() -> None:
    frame = pl.DataFrame({"name": ["Zoë", None, "Łukasz"], "city": ["Kraków", "Oslo", "Łódź"]})
    with pytest.raises(InputError) as caught:
        serialize(frame, fmt="csv", dialect=dialect(encoding="latin-1"))
    assert str(caught.value) == (
        "column 'name': value 'Łukasz' cannot be encoded in latin-1, the encoding of the input"
    )


def test_unencodable_column_name_is_an_input_error_naming_it() -> None:
    with pytest.raises(InputError, match="column name 'Miasto€' cannot be encoded in latin-1"):
        serialize(pl.DataFrame({"Miasto€": ["x"]}), fmt="csv", dialect=dialect(encoding="latin-1"))


def test_parquet_ignores_the_dialect_and_keeps_dtypes() -> None:
    frame = pl.DataFrame({"age": [39, None], "zip": ["02138", None]})
    payload = serialize(frame, fmt="parquet", dialect=dialect(delimiter=";"))
    assert payload.startswith(b"PAR1")
    assert_frame_equal(pl.read_parquet(io.BytesIO(payload)), frame)


def entries(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_write_atomic_writes_every_file_and_replaces_old_content(tmp_path: Path) -> None:
    (tmp_path / "release.csv").write_bytes(b"old\n")
    write_atomic([(tmp_path / "release.csv", b"new\n"), (tmp_path / "report.json", b"{}")])
    assert (tmp_path / "release.csv").read_bytes() == b"new\n"
    assert (tmp_path / "report.json").read_bytes() == b"{}"
    assert entries(tmp_path) == ["release.csv", "report.json"]


@pytest.mark.parametrize("first_exists", [True, False])
def test_failure_on_second_file_leaves_everything_untouched(
    tmp_path: Path, first_exists: bool
) -> None:
    first = tmp_path / "release.csv"
    if first_exists:
        first.write_bytes(b"old\n")
    second = tmp_path / "missing" / "report.json"
    with pytest.raises(InputError) as caught:
        write_atomic([(first, b"new\n"), (second, b"{}")])
    assert str(caught.value) == (
        f"{second}: cannot write: directory {second.parent} does not exist"
    )
    assert entries(tmp_path) == (["release.csv"] if first_exists else [])
    if first_exists:
        assert first.read_bytes() == b"old\n"


def test_failure_while_syncing_removes_the_temporaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.csv").write_bytes(b"old\n")
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync_failing_second(descriptor: int) -> None:
        # Fail on b.csv's temporary, after a.csv's was synced.
        synced.append(descriptor)
        if Path(f"/proc/self/fd/{descriptor}").readlink().name.endswith(".1.tmp"):
            raise OSError(28, "No space left on device")
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync_failing_second)
    with pytest.raises(InputError, match=r"b\.csv: cannot write: No space left on device$"):
        write_atomic([(tmp_path / "a.csv", b"new\n"), (tmp_path / "b.csv", b"new\n")])
    assert entries(tmp_path) == ["a.csv"]
    assert (tmp_path / "a.csv").read_bytes() == b"old\n"


def test_permission_denied_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def refusing_open(path: str | Path, flags: int, mode: int = 0o777) -> int:
        if flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, mode)

    # Tests may run as root, whom directory modes do not stop: simulate the refusal.
    monkeypatch.setattr(os, "open", refusing_open)
    with pytest.raises(InputError, match=r"out\.csv: cannot write: permission denied$"):
        write_atomic([(tmp_path / "out.csv", b"x\n")])
    assert entries(tmp_path) == []


def test_directory_or_repeated_destination_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(InputError, match="out: cannot write: is a directory"):
        write_atomic([(tmp_path / "a.csv", b"x"), (tmp_path / "out", b"x")])
    with pytest.raises(InputError, match="listed twice"):
        write_atomic([(tmp_path / "a.csv", b"x"), (tmp_path / "sub" / ".." / "a.csv", b"y")])
    assert entries(tmp_path) == ["out"]


def test_permissions_are_kept_for_existing_and_umask_based_for_new(tmp_path: Path) -> None:
    existing = tmp_path / "existing.csv"
    existing.write_bytes(b"old\n")
    existing.chmod(0o640)
    write_atomic([(existing, b"new\n"), (tmp_path / "fresh.csv", b"new\n")])
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "fresh.csv").stat().st_mode) == 0o666 & ~umask


def test_write_table_picks_the_format_from_the_extension(tmp_path: Path) -> None:
    frame = pl.DataFrame({"age": ["30-39", None]})
    write_table(frame, tmp_path / "out.csv", dialect=dialect(delimiter=";", quote_all=True))
    assert (tmp_path / "out.csv").read_bytes() == b'"age"\n"30-39"\n""\n'
    write_table(frame, str(tmp_path / "out.parquet"), dialect=None)
    assert_frame_equal(pl.read_parquet(tmp_path / "out.parquet"), frame)


def test_issue15_p6_a_long_file_name_still_has_room_for_its_temporary(tmp_path: Path) -> None:
    """A 244-byte name was refused: its temporary added 22 bytes, past the 255-byte limit."""
    name = "r" * 240 + ".csv"
    write_atomic([(tmp_path / name, b"x\n")])
    assert entries(tmp_path) == [name]


def test_issue15_p6_an_output_ending_in_a_slash_is_refused(tmp_path: Path) -> None:
    from kanonym.io.paths import check_destinations

    with pytest.raises(InputError, match="ends with a '/', so it names a folder"):
        check_destinations({"output": f"{tmp_path}/new/"}, {})
    assert entries(tmp_path) == []
