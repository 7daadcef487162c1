"""The DuckDB engine: the embedded engine's release from a file or a DuckDB table, in DuckDB."""

from __future__ import annotations

import dataclasses
import gzip
import tempfile
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import kanonym
from kanonym.datasets import adult_hierarchies, adult_path
from kanonym.engine import ServerRelease
from kanonym.engine.base import Expected, Generalization
from kanonym.engine.choose import default_engine, is_location, open_engine
from kanonym.engine.duck import DuckDBEngine, DuckDBLocation, is_duckdb_url, memory_limit
from kanonym.errors import DestinationExistsError, InputError, VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.io import read_table, serialize

ZIP = Hierarchy(
    "zip",
    (
        ("02138", "02139", "02141", "02142"),
        ("0213*", "0213*", "0214*", "0214*"),
        ("*", "*", "*", "*"),
    ),
)
ADULT = {
    "quasi_identifiers": adult_hierarchies(),
    "k": 5,
    "max_suppression": 0.04,
    "metric": "dm-star",
    "seed": 3,
}


def _multiset(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(pl.all().cast(pl.String)).sort(frame.columns, nulls_last=True)


def _same_release(a: kanonym.Result, b: kanonym.Result) -> None:
    assert a.transformation == b.transformation
    assert a.suppressed_rows == b.suppressed_rows
    assert a.metrics == b.metrics
    assert a.table.columns == b.table.columns
    assert _multiset(a.table).equals(_multiset(b.table))


def _in_memory(path: Path, **options: object) -> kanonym.Result:
    return kanonym.anonymize(read_table(path).frame, **options)  # type: ignore[arg-type]


def _database(path: Path, frame: pl.DataFrame, table: str = "s.t") -> str:
    """A DuckDB database file holding ``frame`` as ``table``; its URL."""
    schema = table.split(".")[0]
    with duckdb.connect(str(path)) as connection:
        connection.register("frame", frame)
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        connection.execute(f"CREATE TABLE {table} AS SELECT * FROM frame")
    return f"duckdb://{path}?table={table}"


def test_a_url_names_a_table_of_a_database_file() -> None:
    assert is_duckdb_url("duckdb:///d/h.duckdb?table=t") and not is_duckdb_url("t.duckdb")
    found = DuckDBLocation.parse("duckdb:///d/my%20h.duckdb?table=visits")
    assert (found.path, found.schema, found.table) == (Path("/d/my h.duckdb"), "main", "visits")
    relative = DuckDBLocation.parse("duckdb://data/h.duckdb?table=s.v")
    assert (relative.path, relative.schema, relative.table) == (Path("data/h.duckdb"), "s", "v")
    for bad, reason in (
        ("duckdb:///d/h.duckdb", "name the input"),
        ("duckdb://?table=t", "name the input"),
        ("duckdb:///d/h.duckdb?table=a.b.c", r"not NAME or SCHEMA\.NAME"),
        ("duckdb:///d/h.duckdb?table=t&query=x", "unknown parameter 'query'"),
    ):
        with pytest.raises(InputError, match=reason):
            DuckDBLocation.parse(bad)
    # Chosen by the URL, kept as given in job files; other engines refuse it.
    assert default_engine("duckdb:///d/h.duckdb?table=t") == "duckdb"
    assert is_location("duckdb://data/h.duckdb?table=t")
    with pytest.raises(InputError, match="read by `engine='duckdb'`"):
        open_engine("duckdb:///d/h.duckdb?table=t", "embedded")
    with pytest.raises(InputError, match="`engine='duckdb'` reads `data` given as"):
        open_engine(pl.DataFrame({"a": ["1"]}), "duckdb")


@pytest.mark.parametrize("form", ["parquet", "csv.gz", "table"])
def test_adult_gives_the_embedded_release(tmp_path: Path, form: str) -> None:
    frame = read_table(adult_path()).frame
    if form == "parquet":
        data: str | Path = tmp_path / "adult.parquet"
        frame.write_parquet(data)
    elif form == "csv.gz":
        data = adult_path()  # gzip, `;`-separated, CRLF: the delimiter sniffed
    else:
        data = _database(tmp_path / "h.duckdb", frame, "health.adult")
    with kanonym.anonymize(data, engine="duckdb", **ADULT) as in_duckdb:  # type: ignore[arg-type]
        assert isinstance(in_duckdb.released, ServerRelease)
        assert in_duckdb.released.engine.name == "duckdb"
        _same_release(in_duckdb, kanonym.anonymize(frame, **ADULT))  # type: ignore[arg-type]
        assert in_duckdb.transformation["education"] == 3
        assert in_duckdb.suppressed_rows == 906
        assert in_duckdb.source == str(data)


_MODELS = {
    "distinct-l": lambda: [kanonym.DistinctLDiversity("salary-class", l=2)],
    "t-closeness": lambda: [kanonym.EqualDistanceTCloseness("salary-class", t=0.2)],
}


@pytest.mark.parametrize("models", sorted(_MODELS))
def test_models_on_sensitive_values_give_the_embedded_release(tmp_path: Path, models: str) -> None:
    path = tmp_path / "adult.parquet"
    read_table(adult_path()).frame.write_parquet(path)
    hierarchies = adult_hierarchies()
    del hierarchies["salary-class"]
    options = {
        **ADULT,
        "quasi_identifiers": hierarchies,
        "sensitive": ["salary-class"],
        "models": _MODELS[models](),
    }
    with kanonym.anonymize(path, engine="duckdb", **options) as in_duckdb:  # type: ignore[arg-type]
        _same_release(in_duckdb, _in_memory(path, **options))


@pytest.mark.parametrize("algorithm", ["mondrian", "mondrian-relaxed"])
def test_adult_mondrian_gives_the_embedded_release(tmp_path: Path, algorithm: str) -> None:
    path = tmp_path / "adult.parquet"
    read_table(adult_path()).frame.write_parquet(path)
    options = {"quasi_identifiers": adult_hierarchies(), "k": 5, "algorithm": algorithm, "seed": 3}
    with kanonym.anonymize(path, engine="duckdb", **options) as in_duckdb:  # type: ignore[arg-type]
        in_memory = _in_memory(path, **options)
        assert in_duckdb.transformation is None and in_duckdb.recoding == in_memory.recoding
        assert in_duckdb.metrics == in_memory.metrics
        assert _multiset(in_duckdb.table).equals(_multiset(in_memory.table))


# Quotes, delimiters and line breaks inside fields, quoted empty fields, a byte order mark,
# CRLF, no final newline, other delimiters (sniffed or given), gzip, cp1252 and latin-1.
_CSV_FILES = {
    "quoted.csv": (b'a,b,c\n1,,"x"\n"",2," y "\n"q""uote","multi\nline",3\n', None),
    "bom-crlf.csv": (b"\xef\xbb\xbfa;b\r\n1;2\r\n;x\r\n", None),
    "final.csv": (b"a\tb\n1\t2", None),
    "pipe.csv": (b"a|b\n1|2\n3|4\n", "pipe"),
    "one-column.csv": (b"a\n1\n\n2\n", None),
    "cp1252.csv.gz": (gzip.compress("name,city\nZoë,€uro\n".encode("cp1252")), None),
    "latin-1.csv": (b"name,code\nZo\xeb,\x81\n", None),
}


@pytest.mark.parametrize("name", sorted(_CSV_FILES))
def test_csv_is_read_as_the_in_memory_reader_reads_it(tmp_path: Path, name: str) -> None:
    content, delimiter = _CSV_FILES[name]
    path = tmp_path / name
    path.write_bytes(content)
    expected = read_table(path, delimiter=delimiter).frame
    engine = DuckDBEngine(path, delimiter=delimiter)
    try:
        assert engine.columns == tuple(expected.columns)
        grouped = engine.group(expected.columns)
        found = grouped.values.with_columns(n=pl.Series(grouped.counts))
        counted = expected.group_by(expected.columns).len("n")
        assert _multiset(found).equals(_multiset(counted.with_columns(pl.col("n").cast(pl.Int64))))
    finally:
        engine.close()


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    def refused(data: str | Path, match: str, **options: object) -> None:
        with pytest.raises(InputError, match=match) as raised:
            kanonym.anonymize(
                data,  # type: ignore[arg-type]
                engine="duckdb",
                quasi_identifiers={"zip": "mask"},
                k=1,
                keep_unlisted=True,
                **options,  # type: ignore[arg-type]
            )
        assert "\n" not in str(raised.value)

    refused(tmp_path / "absent.parquet", "absent.parquet: file not found")
    refused(tmp_path / "absent.csv", "absent.csv: file not found")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("zip,b\n1,2\n3\n")
    refused(ragged, "line 3 has 1 field, the header has 2")
    duplicate = tmp_path / "duplicate.csv"
    duplicate.write_text("zip,zip\n1,2\n")
    refused(duplicate, "duplicate column name 'zip'")
    table = tmp_path / "t.csv"
    table.write_text("zp;n\n02138;1\n")
    refused(table, "column 'zip' not found; did you mean 'zp'")
    parquet = tmp_path / "t.parquet"
    pl.DataFrame({"zip": ["02138"]}).write_parquet(parquet)
    refused(parquet, "`delimiter` applies to CSV input only", delimiter=";")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    refused(broken, "not a readable Parquet file")
    url = _database(tmp_path / "h.duckdb", pl.DataFrame({"zap": ["02138"]}), "s.t")
    refused(url, "column 'zip' not found; did you mean 'zap'")
    refused(url.replace("s.t", "s.nope"), r"no table s\.nope in .*h\.duckdb \(tables: s\.t\)")
    refused(url.replace("h.duckdb", "absent.duckdb"), "absent.duckdb: file not found")
    refused(tmp_path / "h.duckdb", r"is a DuckDB database file; name one of its tables: duckdb://")
    utf16 = tmp_path / "utf16.csv"
    utf16.write_bytes("zip,n\n02138,1\n".encode("utf-16"))
    refused(utf16, "contains NUL bytes")


@pytest.fixture
def zips(tmp_path: Path) -> Iterator[DuckDBEngine]:
    path = tmp_path / "z.parquet"
    pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"], "n": [1, 2, 3, 4]}).write_parquet(
        path
    )
    engine = DuckDBEngine(path)
    yield engine
    engine.close()


def _everything(engine: DuckDBEngine, level: int, seed: int = 0) -> Generalization:
    encoded = engine.encode({"zip": ZIP})
    released = np.ones(len(encoded.frequency_set.counts), bool)
    return Generalization(encoded, (level,), released, (), seed)


def test_the_re_check_rejects_a_wrong_release(zips: DuckDBEngine, tmp_path: Path) -> None:
    plan = _everything(zips, 1)
    expected = Expected({"zip": ZIP}, 2, 0, 0, ())
    zips.verify(zips.generalize(plan), plan, expected)
    # Released at level 1 but checked as level 2: no released row matches its input.
    wrong = Generalization(plan.encoded, (2,), plan.released, (), 0)
    with pytest.raises(VerificationError, match="no input row generalized"):
        zips.verify(zips.generalize(plan), wrong, expected)
    # A class below k.
    with pytest.raises(VerificationError, match="fewer than k=3"):
        zips.verify(zips.generalize(plan), plan, Expected({"zip": ZIP}, 3, 0, 0, ()))
    # Rows missing that the search did not suppress.
    with pytest.raises(VerificationError, match="lacks 0 input rows; the search suppressed 1"):
        zips.verify(zips.generalize(plan), plan, Expected({"zip": ZIP}, 2, 1, 1, ()))
    # A value outside the quasi-identifiers changed in the release.
    release = zips.generalize(plan)
    zips.connection.execute(f"UPDATE {release.table} SET n = '9' WHERE n = '1'")
    with pytest.raises(VerificationError, match="1 released rows are no input row generalized"):
        zips.verify(release, plan, expected)
    # A released row gone.
    release = zips.generalize(plan)
    zips.connection.execute(f"DELETE FROM {release.table} WHERE n = '1'")
    with pytest.raises(VerificationError, match="lacks 1 input rows; the search suppressed 0"):
        zips.verify(release, plan, expected)
    # A model on sensitive values, counted in DuckDB: one class holds one disease.
    path = tmp_path / "zd.parquet"
    pl.DataFrame(
        {"zip": ["02138", "02139", "02141", "02142"], "d": ["flu", "flu", "flu", "hiv"]}
    ).write_parquet(path)
    engine = DuckDBEngine(path)
    try:
        plan = _everything(engine, 1)
        diverse = kanonym.DistinctLDiversity("d", l=2)
        expected = Expected({"zip": ZIP}, 2, 0, 0, (kanonym.KAnonymity(k=2), diverse))
        with pytest.raises(VerificationError, match=r"distinct-l-diversity .* in 1 of 2 classes"):
            engine.verify(engine.generalize(plan), plan, expected)
        at_root = Generalization(plan.encoded, (2,), plan.released, (), 0)
        engine.verify(engine.generalize(at_root), at_root, expected)
    finally:
        engine.close()


def test_the_order_is_a_seeded_permutation(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    zips = ["02138", "02139", "02141", "02142"]
    pl.DataFrame({"zip": zips * 50, "n": range(200)}).write_parquet(path)

    def release(seed: int) -> list[int]:
        engine = DuckDBEngine(path)
        try:
            frame = engine.fetch(engine.generalize(_everything(engine, 1, seed)))
            return frame.get_column("n").cast(pl.Int64).to_list()
        finally:
            engine.close()

    first = release(7)
    assert first == release(7) and sorted(first) == list(range(200))
    assert first != list(range(200)) and first != release(8)


def test_publish_writes_files_and_tables_and_refuses_what_exists(
    zips: DuckDBEngine, tmp_path: Path
) -> None:
    release = zips.generalize(_everything(zips, 1, seed=4))
    rows = zips.fetch(release)
    # Files: Parquet, and CSV byte for byte as kanonym writes the fetched rows.
    for name in ("out.parquet", "out.csv"):
        target = tmp_path / name
        target.write_bytes(b"old")
        with pytest.raises(DestinationExistsError, match="file exists; choose another"):
            zips.publish(release, str(target), replace=False)
        assert target.read_bytes() == b"old"
        zips.publish(release, str(target), replace=True)
    assert pl.read_parquet(tmp_path / "out.parquet").equals(rows)
    assert (tmp_path / "out.csv").read_bytes() == serialize(rows, fmt="csv", dialect=None)
    with pytest.raises(InputError, match="is the input table"):
        zips.publish(release, str(zips.path), replace=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "out.parquet", "z.parquet"]
    # A table of a DuckDB database file, created in one transaction.
    url = f"duckdb://{tmp_path / 'out.duckdb'}?table=released"
    zips.publish(release, url, replace=False)
    with pytest.raises(DestinationExistsError, match=r"table main\.released exists"):
        zips.publish(release, url, replace=False)
    zips.publish(release, url, replace=True)
    with duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True) as connection:
        assert connection.sql("SELECT * FROM released").pl().equals(rows)


def test_a_release_is_published_into_the_input_database(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {"zip": ["02138", "02139", "02141", "02142"] * 3, "n": [str(i) for i in range(12)]}
    )
    url = _database(tmp_path / "h.duckdb", frame, "s.visits")
    output = url.replace("s.visits", "s.released")
    options = {"quasi_identifiers": {"zip": ZIP}, "k": 2, "keep_unlisted": True, "seed": 1}
    with kanonym.anonymize(url, **options) as in_duckdb:  # type: ignore[arg-type]
        in_duckdb.write(output, report=tmp_path / "report.json")
        with pytest.raises(DestinationExistsError, match=r"table s\.released exists"):
            in_duckdb.write(output)
        released = in_duckdb.table
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as connection:
        assert connection.sql("SELECT * FROM s.released").pl().equals(released)
        assert connection.sql("SELECT count(*) FROM s.visits").fetchall() == [(12,)]
    assert (tmp_path / "report.json").is_file()


_TEXT = st.text(
    alphabet=st.sampled_from(["a", "é", ",", '"', "\n", "\r", " ", "#", ";", "'", "\t", "\\"]),
    min_size=1,
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.tuples(_TEXT, st.none() | _TEXT), min_size=1, max_size=20))
def test_a_published_csv_is_what_kanonym_writes(values: list[tuple[str, str | None]]) -> None:
    frame = pl.DataFrame(values, schema={"zip": pl.String, "x, y": pl.String}, orient="row")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.parquet"
        frame.write_parquet(path)
        engine = DuckDBEngine(path)
        try:
            leaves = tuple(frame["zip"].unique())
            hierarchy = Hierarchy("zip", (leaves, ("*",) * len(leaves)))
            encoded = engine.encode({"zip": hierarchy})
            released = np.ones(len(encoded.frequency_set.counts), bool)
            release = engine.generalize(Generalization(encoded, (0,), released, (), 2))
            target = Path(folder) / "out.csv"
            engine.publish(release, str(target), replace=False)
            expected = serialize(engine.fetch(release), fmt="csv", dialect=None)
            assert target.read_bytes() == expected
        finally:
            engine.close()


_CELLS = st.sampled_from(["a", "b", "c", "é", None])


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(
        st.tuples(_CELLS, _CELLS, st.sampled_from(["x", "y, z", 'q"r', ""])),
        min_size=2,
        max_size=30,
    ),
    k=st.integers(1, 3),
    fraction=st.sampled_from([0.0, 0.2]),
    how=st.sampled_from(["parquet", "csv", "table"]),
    diverse=st.booleans(),
)
def test_random_tables_give_the_embedded_release(
    rows: list[tuple[str | None, ...]], k: int, fraction: float, how: str, diverse: bool
) -> None:
    assume(k <= len(rows))
    frame = pl.DataFrame(
        rows, schema={"p": pl.String, "q": pl.String, "r": pl.String}, orient="row"
    )
    options = {
        "quasi_identifiers": {"p": "suppress", "q": "suppress"},
        "k": k,
        "max_suppression": fraction,
        "seed": 5,
        "metric": "loss",
        "sensitive": ["r"],
        "models": [kanonym.DistinctLDiversity("r", l=2)] if diverse else [],
    }
    with tempfile.TemporaryDirectory() as folder:
        data: str | Path = Path(folder) / ("t.parquet" if how == "parquet" else "t.csv")
        if how == "parquet":
            frame.write_parquet(data)
        elif how == "csv":
            Path(data).write_bytes(serialize(frame, fmt="csv", dialect=None))
        else:
            data = _database(Path(folder) / "h.duckdb", frame)
        in_memory_frame = read_table(data).frame if how != "table" else frame
        try:
            in_memory = kanonym.anonymize(in_memory_frame, **options)  # type: ignore[arg-type]
        except kanonym.NoSolutionError:
            with pytest.raises(kanonym.NoSolutionError):
                kanonym.anonymize(data, engine="duckdb", **options)  # type: ignore[arg-type]
            return
        with kanonym.anonymize(data, engine="duckdb", **options) as in_duckdb:  # type: ignore[arg-type]
            _same_release(in_duckdb, in_memory)


def test_duckdb_spills_to_the_engines_folder_and_leaves_nothing(zips: DuckDBEngine) -> None:
    settings = dict(
        zips.connection.sql(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('memory_limit', 'temp_directory', 'preserve_insertion_order')"
        ).fetchall()
    )
    assert settings["temp_directory"].startswith(str(zips._work))
    assert settings["preserve_insertion_order"] == "true"
    assert memory_limit(16 * 2**30) == 4 * 2**30 and memory_limit(0) == 2**28
    work = zips._work
    zips.close()
    assert not work.exists()


def test_the_re_check_of_a_local_recoding_rejects_a_wrong_release(tmp_path: Path) -> None:
    from kanonym.encode import encode_grouped
    from kanonym.engine import TupleRecoding
    from kanonym.recoding import Mondrian
    from kanonym.release.local import tuple_recoding

    frame = pl.DataFrame(
        {"age": ["31", "34", "38", "52", "55", "58"], "note": ["a", "b", "c", "d", "e", "f"]}
    )
    path = tmp_path / "ages.parquet"
    frame.write_parquet(path)
    age = Hierarchy("age", (tuple(frame["age"]), ("*",) * 6))
    engine = DuckDBEngine(path)
    try:
        grouped = engine.group(["age"])
        encoded, tuples = encode_grouped(grouped, {"age": age})
        partitioning = Mondrian().partition_grouped(
            encoded, [kanonym.KAnonymity(k=3)], tuples=tuples, counts=grouped.counts
        )
        plan = tuple_recoding(
            grouped, partitioning, keys=["age"], numeric=frozenset({"age"}), drop=(), seed=0
        )
        expected = Expected({"age": age}, 3, 0, 0, ())
        engine.verify_recoding(engine.recode(plan), plan, expected)
        released = engine.fetch(engine.recode(plan))
        assert sorted(released["age"]) == ["30-49"] * 3 + ["50-59"] * 3
        # 38 and 52 swap labels: classes stay of 3, but neither label covers its value.
        label = TupleRecoding.label(0)
        swapped = plan.tuples.with_columns(
            pl.when(pl.col(TupleRecoding.key(0)).is_in(["38", "52"]))
            .then(
                pl.when(pl.col(label) == "30-49").then(pl.lit("50-59")).otherwise(pl.lit("30-49"))
            )
            .otherwise(pl.col(label))
            .alias(label)
        )
        wrong = dataclasses.replace(plan, tuples=swapped)
        with pytest.raises(VerificationError, match="'30-49' does not cover the input value '52'"):
            engine.verify_recoding(engine.recode(wrong), plan, expected)
        # A tuple left out of the plan: its row is not released.
        missing = dataclasses.replace(plan, tuples=plan.tuples.head(5))
        with pytest.raises(VerificationError, match="holds 5 rows, the input 6"):
            engine.verify_recoding(engine.recode(missing), plan, expected)
        # A value outside the quasi-identifiers changed in the release.
        release = engine.recode(plan)
        engine.connection.execute(f"UPDATE {release.table} SET note = 'z' WHERE note = 'a'")
        with pytest.raises(VerificationError, match="1 released rows are no input row"):
            engine.verify_recoding(release, plan, expected)
        # A class below k.
        with pytest.raises(VerificationError, match="fewer than k=4"):
            engine.verify_recoding(engine.recode(plan), plan, Expected({"age": age}, 4, 0, 0, ()))
    finally:
        engine.close()


def test_parquet_values_are_the_text_polars_casts_them_to(tmp_path: Path) -> None:
    import datetime
    import decimal

    # The types whose text DuckDB and Polars agree on (floating point, timestamps and
    # times may be spelled differently: docs, Engines).
    frame = pl.DataFrame(
        {
            "text": ["a", "", None],
            "count": pl.Series([1, -20, None], dtype=pl.Int64),
            "small": pl.Series([3, 0, 255], dtype=pl.UInt8),
            "flag": [True, False, None],
            "day": [datetime.date(2020, 1, 2), None, datetime.date(1, 1, 1)],
            "price": pl.Series(
                [decimal.Decimal("12.50"), None, decimal.Decimal("-1.05")], dtype=pl.Decimal(5, 2)
            ),
        }
    )
    path = tmp_path / "typed.parquet"
    frame.write_parquet(path)
    engine = DuckDBEngine(path)
    try:
        expected = read_table(path).frame
        for column in frame.columns:
            found = sorted(engine.distinct_values(column), key=str)
            text = expected[column].cast(pl.String).unique().to_list()
            assert found == sorted(text, key=str), column
    finally:
        engine.close()
