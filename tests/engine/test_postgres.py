"""The PostgreSQL engine against a real server: the same release as the embedded engine."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import kanonym
from kanonym.datasets import adult_hierarchies, adult_path
from kanonym.engine.base import Expected
from kanonym.engine.postgres import PostgresEngine, PostgresLocation, is_postgres_url, redact
from kanonym.errors import InputError, VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.io import read_table
from kanonym.recoding import Mondrian

Loader = Callable[[pl.DataFrame, str], object]


def _multiset(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(pl.all().cast(pl.String)).sort(frame.columns, nulls_last=True)


def _same_release(a: kanonym.Result, b: kanonym.Result) -> None:
    assert a.transformation == b.transformation
    assert a.suppressed_rows == b.suppressed_rows
    assert a.metrics == b.metrics
    assert _multiset(a.table).equals(_multiset(b.table))


def test_a_url_names_a_table_or_a_query_and_hides_its_password() -> None:
    assert is_postgres_url("postgresql://a@h/db?table=t") and not is_postgres_url("t.csv")
    shown = redact("postgresql://ann:s3cret@h:5/db?table=s.t")
    assert "s3cret" not in shown and shown.startswith("postgresql://ann:***@h:5/db")
    location = PostgresLocation.parse("postgresql://ann@h/db?table=visits&sslmode=require")
    assert location.table == ("public", "visits") and "sslmode=require" in location.conninfo
    assert "table=" not in location.conninfo
    query = PostgresLocation.parse("postgresql://ann@h/db?query=SELECT+1")
    assert query.query == "SELECT 1" and query.table is None
    for bad in ("postgresql://h/db", "postgresql://h/db?table=t&query=SELECT+1"):
        with pytest.raises(InputError, match="one of the two"):
            PostgresLocation.parse(bad)
    with pytest.raises(InputError, match=r"not NAME or SCHEMA\.NAME"):
        PostgresLocation.parse("postgresql://h/db?table=a.b.c")


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    with pytest.raises(InputError) as raised:
        kanonym.anonymize(
            "postgresql://ann:s3cret@127.0.0.1:1/db?table=t", quasi_identifiers={"x": "mask"}, k=2
        )
    assert "cannot connect" in str(raised.value) and "s3cret" not in str(raised.value)
    assert "\n" not in str(raised.value)


def test_adult_gives_the_embedded_release(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    frame = read_table(adult_path()).frame
    load_postgres_table(frame, "adult")
    options = {
        "quasi_identifiers": adult_hierarchies(),
        "k": 5,
        "max_suppression": 0.04,
        "metric": "dm-star",
        "seed": 3,
    }
    url = f"{postgres_url}?table={postgres_schema}.adult"
    in_database = kanonym.anonymize(url, **options)  # type: ignore[arg-type]
    in_memory = kanonym.anonymize(frame, **options)  # type: ignore[arg-type]
    _same_release(in_database, in_memory)
    assert in_database.transformation["education"] == 3 and in_database.suppressed_rows == 906
    assert in_database.source == url


def test_a_query_is_an_input_and_nothing_is_left_in_the_database(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    frame = pl.DataFrame(
        {
            "zip": ["02138", "02139", "02141", "02142", None, None, "02138"],
            "note": ["a", "", None, "b,c", 'd"e', "f\ng", "h"],
            "age": ["30", "31", "40", "41", "50", "52", "99"],
        }
    )
    load_postgres_table(frame, "visits")
    hierarchies = {"zip": "mask"}
    query = f"SELECT zip, note FROM {postgres_schema}.visits WHERE age <> '99'"
    url = f"{postgres_url}?query={query}"
    options = {"quasi_identifiers": hierarchies, "k": 2, "keep_unlisted": True, "seed": 1}
    in_database = kanonym.anonymize(url, **options)  # type: ignore[arg-type]
    in_memory = kanonym.anonymize(frame.filter(pl.col("age") != "99").drop("age"), **options)  # type: ignore[arg-type]
    _same_release(in_database, in_memory)
    engine = PostgresEngine(f"{postgres_url}?table={postgres_schema}.visits")
    try:
        tables = engine.connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            [postgres_schema],
        ).fetchall()
        assert tables == [("visits",)]
    finally:
        engine.close()


def test_what_the_engine_does_not_serve_is_refused_before_any_work(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    load_postgres_table(pl.DataFrame({"zip": ["02138", "02139"], "s": ["a", "b"]}), "t")
    url = f"{postgres_url}?table={postgres_schema}.t"
    for options, reason in (
        ({"technique": "_CS"}, "cell suppression"),
        ({"technique": "_AS", "algorithm": "optimal"}, "attribute suppression"),
    ):
        with pytest.raises(InputError, match=reason):
            kanonym.anonymize(
                url, quasi_identifiers={"zip": "mask"}, k=1, keep_unlisted=True, **options
            )  # type: ignore[arg-type]
    with pytest.raises(InputError, match="does not exist"):
        kanonym.anonymize(
            f"{postgres_url}?table={postgres_schema}.nope", quasi_identifiers={"zip": "mask"}, k=1
        )
    with pytest.raises(InputError, match="no column 'zap'"):
        kanonym.anonymize(url, quasi_identifiers={"zap": "mask"}, k=1, keep_unlisted=True)


def test_the_re_check_in_sql_rejects_a_wrong_release(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    from kanonym.engine.base import Generalization

    frame = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
    load_postgres_table(frame, "z")
    hierarchy = Hierarchy(
        "zip",
        (
            ("02138", "02139", "02141", "02142"),
            ("0213*", "0213*", "0214*", "0214*"),
            ("*", "*", "*", "*"),
        ),
    )
    engine = PostgresEngine(f"{postgres_url}?table={postgres_schema}.z")
    try:
        encoded = engine.encode({"zip": hierarchy})
        everything = [True] * len(encoded.frequency_set.counts)
        plan = Generalization(encoded, (1,), pl.Series(everything).to_numpy(), (), 0)
        expected = Expected({"zip": hierarchy}, 2, 0, 0, ())
        engine.verify(engine.generalize(plan), plan, expected)
        # Released at level 1 but checked as level 2: no released row matches its input.
        wrong = Generalization(encoded, (2,), plan.released, (), 0)
        with pytest.raises(VerificationError, match="no input row generalized"):
            engine.verify(engine.generalize(plan), wrong, expected)
        # A class below k.
        with pytest.raises(VerificationError, match="fewer than k=3"):
            engine.verify(engine.generalize(plan), plan, Expected({"zip": hierarchy}, 3, 0, 0, ()))
        # Rows missing that the search did not suppress.
        with pytest.raises(VerificationError, match="lacks 0 input rows; the search suppressed 1"):
            engine.verify(engine.generalize(plan), plan, Expected({"zip": hierarchy}, 2, 1, 1, ()))
    finally:
        engine.close()
    # A model on sensitive values, counted in the server: one class holds one disease.
    load_postgres_table(frame.with_columns(d=pl.Series(["flu", "flu", "flu", "hiv"])), "zd")
    engine = PostgresEngine(f"{postgres_url}?table={postgres_schema}.zd")
    try:
        encoded = engine.encode({"zip": hierarchy})
        plan = Generalization(encoded, (1,), pl.Series(everything).to_numpy(), (), 0)
        diverse = kanonym.DistinctLDiversity("d", l=2)
        expected = Expected({"zip": hierarchy}, 2, 0, 0, (kanonym.KAnonymity(k=2), diverse))
        with pytest.raises(VerificationError, match=r"distinct-l-diversity .* in 1 of 2 classes"):
            engine.verify(engine.generalize(plan), plan, expected)
        at_root = Generalization(encoded, (2,), plan.released, (), 0)
        engine.verify(engine.generalize(at_root), at_root, expected)
    finally:
        engine.close()


_SENSITIVE_MODELS = {
    "distinct-l": lambda: [kanonym.DistinctLDiversity("salary-class", l=2)],
    "t-closeness": lambda: [kanonym.EqualDistanceTCloseness("salary-class", t=0.2)],
    "beta": lambda: [kanonym.EnhancedBetaLikeness("salary-class", beta=1.0)],
}


@pytest.mark.parametrize("models", sorted(_SENSITIVE_MODELS))
def test_models_on_sensitive_values_give_the_embedded_release(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader, models: str
) -> None:
    frame = read_table(adult_path()).frame
    load_postgres_table(frame, "adult")
    hierarchies = adult_hierarchies()
    del hierarchies["salary-class"]
    options = {
        "quasi_identifiers": hierarchies,
        "sensitive": ["salary-class"],
        "models": _SENSITIVE_MODELS[models](),
        "k": 5,
        "max_suppression": 0.04,
        "metric": "dm-star",
        "seed": 3,
    }
    url = f"{postgres_url}?table={postgres_schema}.adult"
    with kanonym.anonymize(url, **options) as in_database:  # type: ignore[arg-type]
        _same_release(in_database, kanonym.anonymize(frame, **options))  # type: ignore[arg-type]


_CELLS = st.sampled_from(["a", "b", "c", None])
# One table per example: the schema lives as long as the test function.
_TABLES = itertools.count()


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(st.tuples(_CELLS, _CELLS, st.sampled_from(["x", "y"])), min_size=2, max_size=25),
    k=st.integers(1, 3),
    fraction=st.sampled_from([0.0, 0.2]),
)
def test_random_tables_give_the_embedded_release(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader, rows, k, fraction
) -> None:
    assume(k <= len(rows))
    frame = pl.DataFrame(
        rows, schema={"p": pl.String, "q": pl.String, "r": pl.String}, orient="row"
    )
    name = f"random_{next(_TABLES)}"
    load_postgres_table(frame, name)
    options = {
        "quasi_identifiers": {"p": "suppress", "q": "suppress"},
        "k": k,
        "max_suppression": fraction,
        "keep_unlisted": True,
        "seed": 5,
        "metric": "loss",
    }
    url = f"{postgres_url}?table={postgres_schema}.{name}"
    try:
        in_memory = kanonym.anonymize(frame, **options)  # type: ignore[arg-type]
    except kanonym.NoSolutionError:
        with pytest.raises(kanonym.NoSolutionError):
            kanonym.anonymize(url, **options)  # type: ignore[arg-type]
        return
    _same_release(kanonym.anonymize(url, **options), in_memory)  # type: ignore[arg-type]


def test_a_wrong_password_is_one_line_that_does_not_show_it(postgres_url: str) -> None:
    wrong = postgres_url.replace("kanonym@", "kanonym:not-the-password@", 1)
    with pytest.raises(InputError) as raised:
        kanonym.anonymize(f"{wrong}?table=public.t", quasi_identifiers={"x": "mask"}, k=2)
    message = str(raised.value)
    assert "cannot connect" in message and "password" in message
    assert "not-the-password" not in message and "\n" not in message


def _same_recoding(a: kanonym.Result, b: kanonym.Result) -> None:
    """Two local recodings alike: no transformation, the same report and released multiset."""
    assert a.transformation is None and b.transformation is None
    assert a.recoding == b.recoding
    assert a.suppressed_rows == b.suppressed_rows == 0
    assert a.metrics == b.metrics
    assert a.released_rows == b.released_rows
    assert _multiset(a.table).equals(_multiset(b.table))


@pytest.mark.parametrize("algorithm", ["mondrian", "mondrian-relaxed"])
def test_adult_mondrian_gives_the_embedded_release(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader, algorithm: str
) -> None:
    frame = read_table(adult_path()).frame
    load_postgres_table(frame, "adult")
    options = {"quasi_identifiers": adult_hierarchies(), "k": 5, "algorithm": algorithm, "seed": 3}
    url = f"{postgres_url}?table={postgres_schema}.adult"
    with kanonym.anonymize(url, **options) as in_database:  # type: ignore[arg-type]
        in_memory = kanonym.anonymize(frame, **options)  # type: ignore[arg-type]
        _same_recoding(in_database, in_memory)
        assert in_database.recoding is not None and in_database.recoding["partitions"] > 1000
        assert in_database.metrics["ncp"] == in_memory.metrics["ncp"]


def test_adult_mondrian_with_a_model_on_sensitive_values_gives_the_embedded_release(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    frame = read_table(adult_path()).frame
    load_postgres_table(frame, "adult")
    hierarchies = adult_hierarchies()
    del hierarchies["occupation"]
    options = {
        "quasi_identifiers": hierarchies,
        "sensitive": ["occupation"],
        "models": [kanonym.DistinctLDiversity("occupation", l=3)],
        "k": 5,
        "algorithm": "mondrian-relaxed",
        "seed": 3,
    }
    url = f"{postgres_url}?table={postgres_schema}.adult"
    with kanonym.anonymize(url, **options) as in_database:  # type: ignore[arg-type]
        _same_recoding(in_database, kanonym.anonymize(frame, **options))  # type: ignore[arg-type]


# Few ages, so that relaxed cuts split the rows equal to a median between partitions;
# 20 and 20.0 are one number (one unit of the partitioning, two raw values).
_AGES = st.sampled_from(["18", "19", "20", "20.0", "25.5"])
_NOTES = st.sampled_from(["n", "m", None])


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(
        st.tuples(_AGES, _CELLS, st.sampled_from(["x", "y"]), _NOTES), min_size=6, max_size=40
    ),
    missing_age=st.booleans(),
    k=st.integers(1, 4),
    algorithm=st.sampled_from(["mondrian", "mondrian-relaxed"]),
    diverse=st.booleans(),
)
def test_random_tables_give_the_embedded_local_recoding(
    postgres_url: str,
    postgres_schema: str,
    load_postgres_table: Loader,
    rows,
    missing_age,
    k,
    algorithm,
    diverse,
) -> None:
    assume(k <= len(rows))
    frame = pl.DataFrame(
        rows,
        schema={"age": pl.String, "q": pl.String, "s": pl.String, "note": pl.String},
        orient="row",
    )
    if missing_age:
        # A missing age makes the column categorical: cut along its hierarchy.
        frame = frame.with_columns(age=pl.when(pl.int_range(pl.len()) > 0).then(pl.col("age")))
    name = f"recoded_{next(_TABLES)}"
    load_postgres_table(frame, name)
    options = {
        "quasi_identifiers": {"age": "interval:5,10", "q": "suppress"},
        "k": k,
        "algorithm": algorithm,
        "sensitive": ["s"],
        "insensitive": ["note"],
        "models": [kanonym.DistinctLDiversity("s", l=2)] if diverse else [],
        "seed": 5,
    }
    url = f"{postgres_url}?table={postgres_schema}.{name}"
    try:
        in_memory = kanonym.anonymize(frame, **options)  # type: ignore[arg-type]
    except kanonym.NoSolutionError:
        with pytest.raises(kanonym.NoSolutionError):
            kanonym.anonymize(url, **options)  # type: ignore[arg-type]
        return
    with kanonym.anonymize(url, **options) as in_database:  # type: ignore[arg-type]
        _same_recoding(in_database, in_memory)


def test_the_rows_of_a_split_unit_go_by_their_values(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    # Relaxed: the median is the third row, an 18; three of the four 18s go left. They
    # are equal in what the partitioning read, and go by the released values (as text,
    # missing first), not by where they are stored: both (x, n) rows and one (y, m).
    frame = pl.DataFrame(
        {
            "age": ["18", "18", "18", "18", "19", "19"],
            "s": ["y", "x", "y", "x", "x", "y"],
            "note": ["m", "n", "m", "n", None, "n"],
        }
    )
    load_postgres_table(frame, "split")
    options = {
        "quasi_identifiers": {"age": "interval:5,10"},
        "k": 2,
        "algorithm": "mondrian-relaxed",
        "sensitive": ["s"],
        "insensitive": ["note"],
        "seed": 5,
    }
    url = f"{postgres_url}?table={postgres_schema}.split"
    with kanonym.anonymize(url, **options) as in_database:  # type: ignore[arg-type]
        in_memory = kanonym.anonymize(frame.reverse(), **options)  # type: ignore[arg-type]
        _same_recoding(in_database, in_memory)
        assert _multiset(in_database.table).rows() == [
            ("15-19", "x", None),
            ("15-19", "y", "m"),
            ("15-19", "y", "n"),
            ("18", "x", "n"),
            ("18", "x", "n"),
            ("18", "y", "m"),
        ]


def test_the_re_check_of_a_local_recoding_rejects_a_wrong_release(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    from kanonym.encode import encode_grouped
    from kanonym.engine import TupleRecoding
    from kanonym.release.local import tuple_recoding

    frame = pl.DataFrame(
        {"age": ["31", "34", "38", "52", "55", "58"], "note": ["a", "b", "c", "d", "e", "f"]}
    )
    load_postgres_table(frame, "ages")
    age = Hierarchy("age", (tuple(frame["age"]), ("*",) * 6))
    engine = PostgresEngine(f"{postgres_url}?table={postgres_schema}.ages")
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
        missing = dataclasses.replace(
            plan, tuples=plan.tuples.filter(pl.col(label).is_not_null()).head(5)
        )
        with pytest.raises(VerificationError, match="holds 5 rows, the input 6"):
            engine.verify_recoding(engine.recode(missing), plan, expected)
        # A class below k.
        with pytest.raises(VerificationError, match="fewer than k=4"):
            engine.verify_recoding(engine.recode(plan), plan, Expected({"age": age}, 4, 0, 0, ()))
    finally:
        engine.close()
