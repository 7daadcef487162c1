"""The Spark engine on a local session: the same release as the embedded engine."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import kanonym
from kanonym.datasets import adult_hierarchies, adult_path
from kanonym.engine.base import Expected, Generalization
from kanonym.engine.choose import default_engine
from kanonym.engine.spark import SparkEngine, SparkRelease, spark_format
from kanonym.errors import InputError, VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.io import read_table

ADULT_JOB: dict[str, Any] = {
    "quasi_identifiers": adult_hierarchies(),
    "k": 5,
    "max_suppression": 0.04,
    "metric": "dm-star",
    "seed": 3,
}
ZIP = Hierarchy(
    "zip",
    (
        ("02138", "02139", "02141", "02142"),
        ("0213*", "0213*", "0214*", "0214*"),
        ("*", "*", "*", "*"),
    ),
)


def _multiset(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(pl.all().cast(pl.String)).sort(frame.columns, nulls_last=True)


def _same_release(a: kanonym.Result, b: kanonym.Result) -> None:
    assert a.transformation == b.transformation
    assert a.suppressed_rows == b.suppressed_rows
    assert a.metrics == b.metrics
    assert _multiset(a.table).equals(_multiset(b.table))


def _spark_frame(spark: Any, frame: pl.DataFrame) -> Any:
    """``frame`` as a Spark DataFrame (through Arrow; every column a string)."""
    return spark.createDataFrame(frame.cast(pl.String).to_arrow())


def test_kanonym_imports_no_pyspark_until_the_engine_is_used() -> None:
    # A fresh interpreter tells: this one may have loaded PySpark for other tests.
    code = (
        "import sys, kanonym, polars as pl; "
        "kanonym.anonymize(pl.DataFrame({'zip': ['02138', '02139']}), "
        "quasi_identifiers={'zip': 'mask'}, k=2); "
        "print(sorted(m for m in sys.modules if m.startswith(('pyspark', 'py4j'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_adult_gives_the_embedded_release_from_a_dataframe_and_a_parquet_path(
    spark_session: Any, tmp_path: Path
) -> None:
    frame = read_table(adult_path()).frame
    in_memory = kanonym.anonymize(frame, **ADULT_JOB)
    data = _spark_frame(spark_session, frame)
    assert default_engine(data) == "spark"
    in_spark = kanonym.anonymize(data, **ADULT_JOB)
    _same_release(in_spark, in_memory)
    assert in_spark.transformation is not None
    assert in_spark.transformation["education"] == 3 and in_spark.suppressed_rows == 906
    assert in_spark.source == "<Spark DataFrame>"
    path = tmp_path / "adult.parquet"
    frame.write_parquet(path)
    from_path = kanonym.anonymize(path, engine="spark", **ADULT_JOB)
    _same_release(from_path, in_memory)
    assert from_path.source == str(path)


def test_a_csv_path_is_read_as_text_with_the_empty_string_missing(
    spark_session: Any, tmp_path: Path
) -> None:
    path = tmp_path / "visits.csv"
    path.write_text(
        'zip,note,age\n02138,a,030\n02139,"",31\n02141,,40\n02142,"b,c",41\n'
        ',"d""e",50\n,"f\ng",52\n02138,h,99\n'
    )
    assert spark_format(str(path)) == "csv" and spark_format(str(tmp_path)) == "csv"
    options: dict[str, Any] = {
        "quasi_identifiers": {"zip": "mask"},
        "k": 2,
        "keep_unlisted": True,
        "seed": 1,
    }
    in_spark = kanonym.anonymize(path, engine="spark", **options)
    _same_release(in_spark, kanonym.anonymize(path, **options))
    assert "030" in in_spark.table.get_column("age").to_list()


def test_a_release_is_not_written_over_its_input(spark_session: Any, tmp_path: Path) -> None:
    path = tmp_path / "visits.parquet"
    pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]}).write_parquet(path)
    engine = SparkEngine(path)
    try:
        encoded = engine.encode({"zip": ZIP})
        released = engine.generalize(Generalization(encoded, (1,), np.ones(4, bool), (), 0))
        with pytest.raises(InputError, match=r"is the input .*: writing it would destroy it"):
            engine.publish(released, str(tmp_path / "." / "visits.parquet"), replace=True)
        assert pl.read_parquet(path).height == 4
    finally:
        engine.close()


def test_the_same_seed_gives_the_same_order_and_close_keeps_the_session(
    spark_session: Any,
) -> None:
    frame = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"] * 5, "n": list("abcde") * 4})
    engine = SparkEngine(_spark_frame(spark_session, frame))
    encoded = engine.encode({"zip": ZIP})
    everything = np.ones(len(encoded.frequency_set.counts), bool)

    def order(seed: int) -> list[tuple[Any, ...]]:
        plan = Generalization(encoded, (1,), everything, (), seed)
        return engine.fetch(engine.generalize(plan)).rows()

    first = order(7)
    assert first == order(7) and first != order(8)
    assert sorted(first) == sorted(
        zip(["0213*", "0213*", "0214*", "0214*"] * 5, frame["n"], strict=True)
    )
    engine.close()
    assert not spark_session.sparkContext._jsc.sc().isStopped()
    assert spark_session.sparkContext._jsc.getPersistentRDDs().isEmpty()


def test_the_re_check_in_spark_rejects_a_wrong_release(spark_session: Any) -> None:
    frame = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
    engine = SparkEngine(_spark_frame(spark_session, frame))
    try:
        encoded = engine.encode({"zip": ZIP})
        everything = np.ones(len(encoded.frequency_set.counts), bool)
        plan = Generalization(encoded, (1,), everything, (), 0)
        expected = Expected({"zip": ZIP}, 2, 0, 0, ())
        engine.verify(engine.generalize(plan), plan, expected)
        # Released at level 1 but checked as level 2: no released row matches its input.
        wrong = Generalization(encoded, (2,), everything, (), 0)
        with pytest.raises(VerificationError, match="4 rows are not their input rows"):
            engine.verify(engine.generalize(plan), wrong, expected)
        # A class below k.
        with pytest.raises(VerificationError, match="fewer than k=3"):
            engine.verify(engine.generalize(plan), plan, Expected({"zip": ZIP}, 3, 0, 0, ()))
        # Rows missing that the search did not suppress.
        with pytest.raises(VerificationError, match="lacks 0 input rows; the search suppressed 1"):
            engine.verify(engine.generalize(plan), plan, Expected({"zip": ZIP}, 2, 1, 1, ()))
    finally:
        engine.close()
    # A value outside the quasi-identifiers changed, the class's size unchanged.
    import dataclasses

    from pyspark.sql import functions as sf

    noted = frame.with_columns(n=pl.Series(["1", "2", "3", "4"]))
    engine = SparkEngine(_spark_frame(spark_session, noted))
    try:
        encoded = engine.encode({"zip": ZIP})
        plan = Generalization(encoded, (1,), np.ones(4, bool), (), 0)
        released = engine.generalize(plan)
        n = released.internal[released.columns.index("n")]
        changed = released.unordered.withColumn(
            n, sf.when(sf.col(n) == "1", sf.lit("9")).otherwise(sf.col(n))
        )
        stray = "holding 2 rows are not their input rows generalized"
        with pytest.raises(VerificationError, match=stray):
            engine.verify(dataclasses.replace(released, unordered=changed), plan, expected)
        engine.verify(released, plan, expected)
    finally:
        engine.close()


def test_publish_writes_parquet_and_refuses_an_existing_destination(
    spark_session: Any, tmp_path: Path
) -> None:
    frame = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"], "id": list("abcd")})
    engine = SparkEngine(_spark_frame(spark_session, frame))
    try:
        encoded = engine.encode({"zip": ZIP})
        plan = Generalization(encoded, (1,), np.ones(4, bool), ("id",), 0)
        released = engine.generalize(plan)
        engine.verify(released, plan, Expected({"zip": ZIP}, 2, 0, 0, ()))
        counted = engine.counts(released, ["zip"])
        assert sorted(zip(counted.values["zip"], counted.counts.tolist(), strict=True)) == [
            ("0213*", 2),
            ("0214*", 2),
        ]
        destination = tmp_path / "release.parquet"
        engine.publish(released, str(destination), replace=False)
        written = pl.read_parquet(destination / "*.parquet")
        assert written.columns == ["zip"]
        assert sorted(written["zip"]) == ["0213*", "0213*", "0214*", "0214*"]
        with pytest.raises(InputError, match=r"release\.parquet: exists; .*replace=True"):
            engine.publish(released, str(destination), replace=False)
        top = Generalization(encoded, (2,), np.ones(4, bool), ("id",), 0)
        engine.publish(engine.generalize(top), str(destination), replace=True)
        assert pl.read_parquet(destination / "*.parquet")["zip"].to_list() == ["*"] * 4
        engine.publish(released, "spark-table:kanonym_release", replace=False)
        assert spark_session.table("kanonym_release").count() == 4
        with pytest.raises(InputError, match="spark-table:kanonym_release: exists"):
            engine.publish(released, "spark-table:kanonym_release", replace=False)
        spark_session.sql("DROP TABLE kanonym_release")
        with pytest.raises(InputError, match="writes Parquet"):
            engine.publish(released, str(tmp_path / "release.csv"), replace=False)
    finally:
        engine.close()


def test_a_failed_write_leaves_no_output(spark_session: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as sf

    frame = pl.DataFrame({"zip": ["02138", "02139"]})
    engine = SparkEngine(_spark_frame(spark_session, frame))
    failing = engine.input.select(
        sf.when(sf.col("c0") == "02139", sf.raise_error(sf.lit("disk full"))).otherwise("x")
    )
    destination = tmp_path / "release.parquet"
    with pytest.raises(
        InputError, match=r"release\.parquet: cannot write the release: .*disk full"
    ):
        engine.publish(
            SparkRelease(failing, failing, ("zip",), ("c0",), 2), str(destination), replace=False
        )
    assert not destination.exists()


def test_what_the_engine_does_not_serve_is_refused_before_any_work(spark_session: Any) -> None:
    data = _spark_frame(spark_session, pl.DataFrame({"zip": ["02138", "02139"], "s": ["a", "b"]}))
    for options, reason in (
        ({"technique": "_CS"}, "cell suppression"),
        ({"technique": "_AS", "algorithm": "optimal"}, "attribute suppression"),
    ):
        with pytest.raises(InputError, match=f"spark engine does not serve.*{reason}"):
            kanonym.anonymize(
                data,
                quasi_identifiers={"zip": "mask"},
                k=1,
                keep_unlisted=True,
                **options,  # type: ignore[arg-type]
            )
    with pytest.raises(InputError, match="read by `engine='spark'`, not 'embedded'"):
        kanonym.anonymize(data, quasi_identifiers={"zip": "mask"}, k=1, engine="embedded")
    with pytest.raises(InputError, match="`engine='spark'` reads"):
        kanonym.anonymize(
            pl.DataFrame({"zip": ["1"]}), quasi_identifiers={"zip": "mask"}, k=1, engine="spark"
        )


def test_bad_input_is_one_line(spark_session: Any, tmp_path: Path) -> None:
    data = _spark_frame(spark_session, pl.DataFrame({"zip": ["02138", "02139"]}))
    cases: list[tuple[object, str, str]] = [
        (data, "zap", r"<Spark DataFrame>: column 'zap' not found; did you mean 'zip'\?"),
        (tmp_path / "nope.parquet", "zip", r"nope\.parquet: no such file or directory"),
        ("spark-table:nowhere.nothing", "zip", r"spark-table:nowhere\.nothing: .*cannot be found"),
    ]
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really parquet")
    cases.append((broken, "zip", r"broken\.parquet: .*not a Parquet file"))
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("zip,note\n02138,a,secret\n")
    cases.append((ragged, "zip", r"ragged\.csv: .*Malformed CSV record$"))
    for source, column, message in cases:
        with pytest.raises(InputError, match=message) as raised:
            kanonym.anonymize(
                source,  # type: ignore[arg-type]
                quasi_identifiers={column: "mask"},
                k=1,
                keep_unlisted=True,
                engine="spark",
            )
        assert "\n" not in str(raised.value) and "secret" not in str(raised.value)


_CELLS = st.sampled_from(["a", "b", "c", None])


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(st.tuples(_CELLS, _CELLS, st.sampled_from(["x", "y"])), min_size=2, max_size=25),
    k=st.integers(1, 3),
    fraction=st.sampled_from([0.0, 0.2]),
)
def test_random_tables_give_the_embedded_release(
    spark_session: Any, rows: list[tuple[str | None, ...]], k: int, fraction: float
) -> None:
    assume(k <= len(rows))
    frame = pl.DataFrame(
        rows, schema={"p": pl.String, "q": pl.String, "r": pl.String}, orient="row"
    )
    options: dict[str, Any] = {
        "quasi_identifiers": {"p": "suppress", "q": "suppress"},
        "k": k,
        "max_suppression": fraction,
        "keep_unlisted": True,
        "seed": 5,
        "metric": "loss",
    }
    data = _spark_frame(spark_session, frame)
    try:
        in_memory = kanonym.anonymize(frame, **options)
    except kanonym.NoSolutionError:
        with pytest.raises(kanonym.NoSolutionError):
            kanonym.anonymize(data, **options)
        return
    _same_release(kanonym.anonymize(data, **options), in_memory)


def test_models_on_sensitive_values_give_the_embedded_release(spark_session: Any) -> None:
    frame = read_table(adult_path()).frame
    hierarchies = adult_hierarchies()
    del hierarchies["salary-class"]
    options: dict[str, Any] = {
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
    with kanonym.anonymize(_spark_frame(spark_session, frame), **options) as in_spark:
        _same_release(in_spark, kanonym.anonymize(frame, **options))


def _same_recoding(a: kanonym.Result, b: kanonym.Result) -> None:
    """Two local recodings alike: no transformation, the same report and released multiset."""
    assert a.transformation is None and b.transformation is None
    assert a.recoding == b.recoding
    assert a.suppressed_rows == b.suppressed_rows == 0
    assert a.metrics == b.metrics
    assert _multiset(a.table).equals(_multiset(b.table))


def test_adult_mondrian_gives_the_embedded_release(spark_session: Any) -> None:
    frame = read_table(adult_path()).frame
    data = _spark_frame(spark_session, frame)
    options: dict[str, Any] = {"quasi_identifiers": adult_hierarchies(), "k": 5, "seed": 3}
    with kanonym.anonymize(data, algorithm="mondrian", **options) as in_spark:
        _same_recoding(in_spark, kanonym.anonymize(frame, algorithm="mondrian", **options))
    # Relaxed, with occupation sensitive (3-diverse): tuples told apart by it too.
    del options["quasi_identifiers"]["occupation"]
    options |= {
        "sensitive": ["occupation"],
        "models": [kanonym.DistinctLDiversity("occupation", l=3)],
    }
    with kanonym.anonymize(data, algorithm="mondrian-relaxed", **options) as in_spark:
        _same_recoding(in_spark, kanonym.anonymize(frame, algorithm="mondrian-relaxed", **options))


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["18", "19", "20", "20.0", "25.5"]),
            _CELLS,
            st.sampled_from(["x", "y"]),
            st.sampled_from(["n", "m", None]),
        ),
        min_size=6,
        max_size=30,
    ),
    k=st.integers(1, 4),
    algorithm=st.sampled_from(["mondrian", "mondrian-relaxed"]),
)
# Three of the four 18s go left, by their values: both (x, n) rows, then one (y, m).
@example(
    rows=[("18", "a", "y", "m"), ("18", "a", "x", "n")] * 2
    + [("19", "a", "x", None), ("19", "a", "y", "n")],
    k=2,
    algorithm="mondrian-relaxed",
)
def test_random_tables_give_the_embedded_local_recoding(
    spark_session: Any, rows: list[tuple[str | None, ...]], k: int, algorithm: str
) -> None:
    frame = pl.DataFrame(
        rows,
        schema={"age": pl.String, "q": pl.String, "s": pl.String, "note": pl.String},
        orient="row",
    )
    options: dict[str, Any] = {
        "quasi_identifiers": {"age": "interval:5,10", "q": "suppress"},
        "k": k,
        "algorithm": algorithm,
        "sensitive": ["s"],
        "insensitive": ["note"],
        "seed": 5,
    }
    with kanonym.anonymize(_spark_frame(spark_session, frame), **options) as in_spark:
        _same_recoding(in_spark, kanonym.anonymize(frame, **options))


def test_the_re_check_of_a_local_recoding_rejects_a_wrong_release(spark_session: Any) -> None:
    from kanonym.encode import encode_grouped
    from kanonym.engine import TupleRecoding
    from kanonym.recoding import Mondrian
    from kanonym.release.local import tuple_recoding

    frame = pl.DataFrame(
        {"age": ["31", "34", "38", "52", "55", "58"], "note": ["a", "b", "c", "d", "e", "f"]}
    )
    age = Hierarchy("age", (tuple(frame["age"]), ("*",) * 6))
    engine = SparkEngine(_spark_frame(spark_session, frame))
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
        # A tuple left out of the plan: its row is not released.
        missing = dataclasses.replace(plan, tuples=plan.tuples.head(5))
        with pytest.raises(VerificationError, match="holds 5 rows, the input 6"):
            engine.verify_recoding(engine.recode(missing), plan, expected)
        with pytest.raises(VerificationError, match="fewer than k=4"):
            engine.verify_recoding(engine.recode(plan), plan, Expected({"age": age}, 4, 0, 0, ()))
    finally:
        engine.close()
