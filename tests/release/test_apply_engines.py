"""Issue 12, point 5: ``apply`` re-applies a report's transformation where the rows live.

A report fitted in memory is applied to the same batch held in PostgreSQL (or
Spark): the engine generalizes and re-checks it there, and the release is the
one applied in memory (same levels, metrics, suppressed rows and released
multiset).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from tests.postgres_server import run_sql

import kanonym
from kanonym.datasets import adult_hierarchies, adult_path
from kanonym.errors import InputError, StaleTransformationError
from kanonym.io import read_table
from kanonym.release.apply import apply_transformation

Loader = Callable[[pl.DataFrame, str], str]


def _multiset(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(pl.all().cast(pl.String)).sort(frame.columns, nulls_last=True)


@pytest.fixture
def adult(postgres_url: str, load_postgres_table: Loader) -> tuple[pl.DataFrame, str]:
    frame = read_table(adult_path()).frame
    return frame, f"{postgres_url}?table={load_postgres_table(frame, 'adult')}"


def test_adult_is_applied_in_the_database_as_in_memory(
    adult: tuple[pl.DataFrame, str], postgres_url: str, postgres_schema: str, tmp_path: Path
) -> None:
    frame, url = adult
    fitted = kanonym.anonymize(
        frame, quasi_identifiers=adult_hierarchies(), k=5, max_suppression=0.04,
        metric="dm-star", seed=3,
    )  # fmt: skip
    report = fitted.report()
    in_memory = apply_transformation(frame, report, seed=7)
    with apply_transformation(url, report, seed=7) as in_database:
        assert in_database.transformation == in_memory.transformation == fitted.transformation
        assert in_database.suppressed_rows == in_memory.suppressed_rows == 906
        assert in_database.metrics == in_memory.metrics
        assert in_database.applied_from == "<Mapping>" and in_database.source == url
        assert _multiset(in_database.table).equals(_multiset(in_memory.table))
        # Published where the rows are, in one transaction.
        target = f"{postgres_url}?table={postgres_schema}.applied"
        in_database.write(target, report=tmp_path / "applied.json")
    count = run_sql(postgres_url, f"SELECT count(*) FROM {postgres_schema}.applied")[0][0]
    assert count == frame.height - 906
    written = json.loads((tmp_path / "applied.json").read_text())
    assert written["transformation"] == fitted.transformation


def test_what_the_database_cannot_apply_is_refused_and_leaves_nothing_open(
    postgres_url: str, load_postgres_table: Loader, tmp_path: Path
) -> None:
    fitted_on = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
    report = kanonym.anonymize(fitted_on, quasi_identifiers={"zip": "mask"}, k=2, seed=1).report()
    batch = f"{postgres_url}?table=" + load_postgres_table(
        pl.DataFrame({"zip": ["02138", "02139", "02141", "12345"]}), "batch"
    )

    def connections() -> int:
        found = run_sql(postgres_url, "SELECT count(*) FROM pg_stat_activity WHERE backend_type "
                        "= 'client backend' AND pid <> pg_backend_pid()")  # fmt: skip
        return int(found[0][0])

    before = connections()
    with pytest.raises(StaleTransformationError, match=r"needs 2 of 4 rows suppressed"):
        apply_transformation(batch, report, seed=1)
    cells = {**report, "technique": "AG_CS"}
    with pytest.raises(InputError, match=r"does not serve cell suppression"):
        apply_transformation(batch, cells, seed=1)
    assert connections() == before


def test_a_spark_batch_is_applied_in_spark(spark_session: Any, tmp_path: Path) -> None:
    frame = read_table(adult_path()).frame.head(500).select("age", "sex", "race", "salary-class")
    hierarchies = {c: h for c, h in adult_hierarchies().items() if c in ("age", "sex", "race")}
    fitted = kanonym.anonymize(
        frame, quasi_identifiers=hierarchies, k=5, max_suppression=0.04, seed=3,
        insensitive=["salary-class"],
    )  # fmt: skip
    in_memory = apply_transformation(frame, fitted.report(), seed=7)
    batch = spark_session.createDataFrame(frame.to_arrow())
    with apply_transformation(batch, fitted.report(), seed=7) as in_spark:
        assert in_spark.transformation == in_memory.transformation
        assert in_spark.suppressed_rows == in_memory.suppressed_rows
        assert _multiset(in_spark.table).equals(_multiset(in_memory.table))
