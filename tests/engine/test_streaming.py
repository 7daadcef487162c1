"""The streaming engine: the embedded engine's release from a file, the rows kept on disk."""

from __future__ import annotations

import dataclasses
import gzip
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import kanonym
from kanonym.datasets import adult_hierarchies, adult_path
from kanonym.engine import ServerRelease, choose
from kanonym.engine.base import Expected, Generalization
from kanonym.engine.choose import open_engine, streams
from kanonym.engine.streaming import StreamingEngine
from kanonym.errors import InputError, VerificationError
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


@pytest.fixture
def always_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file streams, however small (the threshold set to nothing)."""
    monkeypatch.setattr(choose, "PEAK_FACTOR", 2**60)


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


@pytest.mark.usefixtures("always_stream")
def test_adult_gives_the_embedded_release_from_parquet_and_csv(tmp_path: Path) -> None:
    parquet = tmp_path / "adult.parquet"
    read_table(adult_path()).frame.write_parquet(parquet)
    options = {
        "quasi_identifiers": adult_hierarchies(),
        "k": 5,
        "max_suppression": 0.04,
        "metric": "dm-star",
        "seed": 3,
    }
    for path in (parquet, adult_path()):
        with kanonym.anonymize(path, **options) as streamed:  # type: ignore[arg-type]
            assert isinstance(streamed.released, ServerRelease)
            assert streamed.released.engine.name == "streaming"
            _same_release(streamed, _in_memory(path, **options))
            assert streamed.transformation["education"] == 3
            assert streamed.suppressed_rows == 906


def test_the_order_is_a_seeded_permutation(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"] * 50, "n": range(200)}).write_parquet(
        path
    )

    def release(seed: int) -> list[int]:
        engine = StreamingEngine(path)
        try:
            encoded = engine.encode({"zip": ZIP})
            released = np.ones(len(encoded.frequency_set.counts), bool)
            plan = Generalization(encoded, (1,), released, (), seed)
            return engine.fetch(engine.generalize(plan)).get_column("n").to_list()
        finally:
            engine.close()

    first = release(7)
    assert first == release(7) and sorted(first) == list(range(200))
    assert first != list(range(200)) and first != release(8)


def _write(frame: pl.DataFrame, path: Path, how: str) -> None:
    if how == "parquet":
        frame.write_parquet(path)
    elif how == "csv":
        path.write_bytes(serialize(frame, fmt="csv", dialect=None))
    else:  # gzip-compressed, semicolon-separated CSV in cp1252 with CRLF line ends
        text = frame.write_csv(separator=";", line_terminator="\r\n", null_value="")
        path.write_bytes(gzip.compress(text.encode("cp1252")))


_CELLS = st.sampled_from(["a", "b", "c", "é", None])


@pytest.mark.usefixtures("always_stream")
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
    how=st.sampled_from(["parquet", "csv", "gzip"]),
)
def test_random_tables_give_the_embedded_release(
    rows: list[tuple[str | None, ...]], k: int, fraction: float, how: str
) -> None:
    assume(k <= len(rows))
    frame = pl.DataFrame(
        rows, schema={"p": pl.String, "q": pl.String, "r": pl.String}, orient="row"
    )
    options = {
        "quasi_identifiers": {"p": "suppress", "q": "suppress"},
        "k": k,
        "max_suppression": fraction,
        "keep_unlisted": True,
        "seed": 5,
        "metric": "loss",
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("t.parquet" if how == "parquet" else "t.csv")
        _write(frame, path, how)
        with kanonym.anonymize(path, **options) as streamed:  # type: ignore[arg-type]
            assert isinstance(streamed.released, ServerRelease)
            _same_release(streamed, _in_memory(path, **options))
            # Published as CSV: byte for byte what the embedded engine writes for these rows.
            out = Path(folder) / "out.csv"
            streamed.released.publish(str(out), replace=False)
            dialect = read_table(path).dialect
            assert out.read_bytes() == serialize(streamed.table, fmt="csv", dialect=dialect)


@pytest.fixture
def zips(tmp_path: Path) -> Iterator[StreamingEngine]:
    path = tmp_path / "z.parquet"
    pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"], "n": [1, 2, 3, 4]}).write_parquet(
        path
    )
    engine = StreamingEngine(path)
    yield engine
    engine.close()


def test_the_re_check_rejects_a_wrong_release(zips: StreamingEngine) -> None:
    encoded = zips.encode({"zip": ZIP})
    plan = Generalization(encoded, (1,), np.ones(len(encoded.frequency_set.counts), bool), (), 0)
    expected = Expected({"zip": ZIP}, 2, 0, 0, ())
    zips.verify(zips.generalize(plan), plan, expected)
    # Released at level 1 but checked as level 2: no released row matches its input.
    wrong = Generalization(encoded, (2,), plan.released, (), 0)
    with pytest.raises(VerificationError, match="no input row generalized"):
        zips.verify(zips.generalize(plan), wrong, expected)
    # A class below k.
    with pytest.raises(VerificationError, match="fewer than k=3"):
        zips.verify(zips.generalize(plan), plan, Expected({"zip": ZIP}, 3, 0, 0, ()))
    # Rows missing that the search did not suppress.
    with pytest.raises(VerificationError, match="lacks 0 input rows; the search suppressed 1"):
        zips.verify(zips.generalize(plan), plan, Expected({"zip": ZIP}, 2, 1, 1, ()))
    # A value outside the quasi-identifiers changed on disk.
    release = zips.generalize(plan)
    part = release.buckets[0][1][0]
    pl.read_parquet(part).with_columns(pl.col("n") + 10).write_parquet(part)
    with pytest.raises(VerificationError, match="no input row generalized"):
        zips.verify(release, plan, expected)
    # A released row gone.
    release = zips.generalize(plan)
    part = release.buckets[0][1][0]
    pl.read_parquet(part).slice(1).write_parquet(part)
    with pytest.raises(VerificationError, match="lacks 1 input rows"):
        zips.verify(release, plan, expected)


def test_publish_refuses_an_existing_destination_and_the_input(
    zips: StreamingEngine, tmp_path: Path
) -> None:
    encoded = zips.encode({"zip": ZIP})
    plan = Generalization(encoded, (1,), np.ones(len(encoded.frequency_set.counts), bool), (), 0)
    release = zips.generalize(plan)
    target = tmp_path / "out.parquet"
    target.write_bytes(b"old")
    with pytest.raises(InputError, match="exists; choose another or replace it"):
        zips.publish(release, str(target), replace=False)
    assert target.read_bytes() == b"old"
    with pytest.raises(InputError, match="is the input table"):
        zips.publish(release, str(zips.path), replace=True)
    zips.publish(release, str(target), replace=True)
    assert pl.read_parquet(target).equals(zips.fetch(release))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet", "z.parquet"]


def test_temporary_files_are_removed_after_close_and_after_a_failure(tmp_path: Path) -> None:
    path = tmp_path / "z.parquet"
    pl.DataFrame({"zip": ["02138", "02139"]}).write_parquet(path)
    engine = StreamingEngine(path)
    work = engine._work
    encoded = engine.encode({"zip": ZIP})
    plan = Generalization(encoded, (1,), np.ones(2, bool), (), 0)
    release = engine.generalize(plan)
    assert any(work.rglob("*.parquet"))
    with pytest.raises(VerificationError):
        engine.verify(release, plan, Expected({"zip": ZIP}, 3, 0, 0, ()))
    engine.close()
    assert not work.exists()
    before = set(Path(tempfile.gettempdir()).glob("kanonym-streaming-*"))
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        StreamingEngine(broken)
    assert set(Path(tempfile.gettempdir()).glob("kanonym-streaming-*")) == before


def test_a_file_streams_when_reading_it_would_not_fit(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pl.DataFrame({"zip": ["02138"] * 1000}).write_parquet(path)
    assert not streams(path, available=2**40)
    assert streams(path, available=2**10)
    assert not streams(tmp_path / "absent.csv", available=2**10)
    engine = open_engine(path)
    assert engine.name == "embedded"


@pytest.mark.usefixtures("always_stream")
def test_bad_input_is_refused_as_in_memory(tmp_path: Path) -> None:
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n3\n")
    with pytest.raises(InputError, match="line 3 has 1 field, the header has 2"):
        StreamingEngine(ragged)
    with pytest.raises(InputError, match="file not found"):
        StreamingEngine(tmp_path / "absent.csv")
    table = tmp_path / "t.csv"
    table.write_text("zip;n\n02138;1\n")
    with pytest.raises(InputError, match="did you mean 'zip'"):
        kanonym.anonymize(table, quasi_identifiers={"zp": "mask"}, k=1, keep_unlisted=True)


def _same_recoding(a: kanonym.Result, b: kanonym.Result) -> None:
    """Two local recodings alike: no transformation, the same report and released multiset."""
    assert a.transformation is None and b.transformation is None
    assert a.recoding == b.recoding
    assert a.suppressed_rows == b.suppressed_rows == 0
    assert a.metrics == b.metrics
    assert a.table.columns == b.table.columns
    assert _multiset(a.table).equals(_multiset(b.table))


@pytest.mark.usefixtures("always_stream")
@pytest.mark.parametrize("algorithm", ["mondrian", "mondrian-relaxed"])
def test_adult_mondrian_gives_the_embedded_release(tmp_path: Path, algorithm: str) -> None:
    parquet = tmp_path / "adult.parquet"
    read_table(adult_path()).frame.write_parquet(parquet)
    options = {"quasi_identifiers": adult_hierarchies(), "k": 5, "algorithm": algorithm, "seed": 3}
    with kanonym.anonymize(parquet, **options) as streamed:  # type: ignore[arg-type]
        assert isinstance(streamed.released, ServerRelease)
        assert streamed.released.engine.name == "streaming"
        _same_recoding(streamed, _in_memory(parquet, **options))


@pytest.mark.usefixtures("always_stream")
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([18, 19, 20, 25]),
            _CELLS,
            st.sampled_from(["x", "y"]),
            st.sampled_from([1, 2, 10, None]),
        ),
        min_size=6,
        max_size=40,
    ),
    k=st.integers(1, 4),
    algorithm=st.sampled_from(["mondrian", "mondrian-relaxed"]),
    diverse=st.booleans(),
)
# Three of the four 18s go left: both (x, 10) rows, then one (y, 2).
@example(
    rows=[(18, "a", "y", 2), (18, "a", "x", 10)] * 2 + [(19, "a", "x", None), (19, "a", "y", 10)],
    k=2,
    algorithm="mondrian-relaxed",
    diverse=False,
)
def test_random_typed_tables_give_the_embedded_local_recoding(
    rows: list[tuple[object, ...]], k: int, algorithm: str, diverse: bool
) -> None:
    # Integer columns in Parquet: split units are ranked by their values as text ("10"
    # before "2"), as the embedded engine ranks them.
    frame = pl.DataFrame(
        rows,
        schema={"age": pl.Int64, "q": pl.String, "s": pl.String, "visits": pl.Int64},
        orient="row",
    )
    options = {
        "quasi_identifiers": {"age": "interval:5,10", "q": "suppress"},
        "k": k,
        "algorithm": algorithm,
        "sensitive": ["s"],
        "insensitive": ["visits"],
        "models": [kanonym.DistinctLDiversity("s", l=2)] if diverse else [],
        "seed": 5,
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.parquet"
        frame.write_parquet(path)
        try:
            in_memory = _in_memory(path, **options)
        except kanonym.NoSolutionError:
            with pytest.raises(kanonym.NoSolutionError):
                kanonym.anonymize(path, **options)  # type: ignore[arg-type]
            return
        with kanonym.anonymize(path, **options) as streamed:  # type: ignore[arg-type]
            _same_recoding(streamed, in_memory)


def test_the_re_check_of_a_local_recoding_rejects_a_wrong_release(tmp_path: Path) -> None:
    from kanonym.encode import encode_grouped
    from kanonym.engine import TupleRecoding
    from kanonym.recoding import Mondrian
    from kanonym.release.local import tuple_recoding

    path = tmp_path / "ages.parquet"
    frame = pl.DataFrame({"age": [31, 34, 38, 52, 55, 58], "n": [1, 2, 3, 4, 5, 6]})
    frame.write_parquet(path)
    age = Hierarchy("age", (("31", "34", "38", "52", "55", "58"), ("*",) * 6))
    engine = StreamingEngine(path)
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
        assert sorted(engine.fetch(engine.recode(plan))["age"]) == ["30-49"] * 3 + ["50-59"] * 3
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
        # A value outside the quasi-identifiers changed on disk.
        release = engine.recode(plan)
        part = release.buckets[0][1][0]
        pl.read_parquet(part).with_columns(pl.col("n") + 10).write_parquet(part)
        with pytest.raises(VerificationError, match="no input row with its quasi-identifiers"):
            engine.verify_recoding(release, plan, expected)
        # A class below k.
        with pytest.raises(VerificationError, match="fewer than k=4"):
            engine.verify_recoding(engine.recode(plan), plan, Expected({"age": age}, 4, 0, 0, ()))
    finally:
        engine.close()


def test_models_on_sensitive_values_are_served_and_re_checked(tmp_path: Path) -> None:
    parquet = tmp_path / "adult.parquet"
    read_table(adult_path()).frame.write_parquet(parquet)
    hierarchies = adult_hierarchies()
    del hierarchies["salary-class"]
    options = {
        "quasi_identifiers": hierarchies,
        "sensitive": ["salary-class"],
        "models": [
            kanonym.DistinctLDiversity("salary-class", l=2),
            kanonym.EqualDistanceTCloseness("salary-class", t=0.2),
        ],
        "k": 5,
        "max_suppression": 0.04,
        "metric": "dm-star",
        "seed": 3,
    }
    with kanonym.anonymize(parquet, engine="streaming", **options) as streamed:  # type: ignore[arg-type]
        assert isinstance(streamed.released, ServerRelease)
        _same_release(streamed, _in_memory(parquet, **options))


def test_the_re_check_judges_models_on_sensitive_values(tmp_path: Path) -> None:
    path = tmp_path / "zd.parquet"
    pl.DataFrame(
        {"zip": ["02138", "02139", "02141", "02142"], "d": ["flu", "flu", "flu", "hiv"]}
    ).write_parquet(path)
    engine = StreamingEngine(path)
    try:
        encoded = engine.encode({"zip": ZIP})
        everything = np.ones(len(encoded.frequency_set.counts), bool)
        plan = Generalization(encoded, (1,), everything, (), 0)
        models = (kanonym.KAnonymity(k=2), kanonym.DistinctLDiversity("d", l=2))
        expected = Expected({"zip": ZIP}, 2, 0, 0, models)
        with pytest.raises(VerificationError, match=r"distinct-l-diversity .* in 1 of 2 classes"):
            engine.verify(engine.generalize(plan), plan, expected)
        at_root = Generalization(encoded, (2,), everything, (), 0)
        engine.verify(engine.generalize(at_root), at_root, expected)
    finally:
        engine.close()
