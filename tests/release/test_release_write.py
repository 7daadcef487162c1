"""Writing a release: to a PostgreSQL table of the input's database, committed after the
re-check, or refused with nothing left."""

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
from kanonym.errors import InputError
from kanonym.io import read_table

Loader = Callable[[pl.DataFrame, str], str]

ADULT_JOB = {
    "quasi_identifiers": adult_hierarchies(),
    "k": 5,
    "max_suppression": 0.04,
    "metric": "dm-star",
    "seed": 3,
}


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(pl.all().cast(pl.String)).sort(frame.columns, nulls_last=True)


def _table(url: str, name: str) -> pl.DataFrame:
    rows = run_sql(url, f"SELECT * FROM {name}")
    names = [
        r[0]
        for r in run_sql(
            url,
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
            "ORDER BY attnum",
            [name],
        )
    ]
    return pl.DataFrame(rows, schema=dict.fromkeys(names, pl.String), orient="row")


def _exists(url: str, name: str) -> bool:
    return bool(run_sql(url, "SELECT to_regclass(%s) IS NOT NULL", [name])[0][0])


def test_a_release_is_published_as_a_table_of_the_same_database(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader, tmp_path: Path
) -> None:
    frame = read_table(adult_path()).frame
    load_postgres_table(frame, "adult")
    target = f"{postgres_schema}.adult_k5"
    result = kanonym.anonymize(f"{postgres_url}?table={postgres_schema}.adult", **ADULT_JOB)  # type: ignore[arg-type]
    assert not _exists(postgres_url, target)
    result.write(f"{postgres_url}?table={target}", report=tmp_path / "r.json")
    result.close()
    published = _table(postgres_url, target)
    expected = kanonym.anonymize(frame, **ADULT_JOB).table  # type: ignore[arg-type]
    assert published.height == 30162 - 906
    assert _sorted(published).equals(_sorted(expected))
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["output"] == f"{postgres_url}?table={target}"
    assert report["released_rows"] == published.height
    assert [f["what"] for f in report["fingerprints"]][:1] != ["release"]


def test_an_existing_table_is_refused_unless_replaced_and_nothing_is_written(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader, tmp_path: Path
) -> None:
    frame = read_table(adult_path()).frame.head(2000)
    load_postgres_table(frame, "adult")
    target = f"{postgres_schema}.taken"
    run_sql(postgres_url, f"CREATE TABLE {target} (old text)")
    result = kanonym.anonymize(f"{postgres_url}?table={postgres_schema}.adult", **ADULT_JOB)  # type: ignore[arg-type]
    with pytest.raises(
        InputError, match=r"exists; choose another or replace it \(replace=True\)"
    ) as raised:
        result.write(f"{postgres_url}?table={target}", report=tmp_path / "r.json")
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "r.json").exists() and list(tmp_path.iterdir()) == []
    result.close()
    result = kanonym.anonymize(f"{postgres_url}?table={postgres_schema}.adult", **ADULT_JOB)  # type: ignore[arg-type]
    result.write(f"{postgres_url}?table={target}", report=tmp_path / "r.json", replace=True)
    result.close()
    assert "old" not in _table(postgres_url, target).columns
    assert _table(postgres_url, target).height == result.released_rows


def test_a_table_output_needs_a_release_of_that_database(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    frame = read_table(adult_path()).frame.head(500)
    in_memory = kanonym.anonymize(frame, **ADULT_JOB)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="PostgreSQL engine that made it"):
        in_memory.write(f"{postgres_url}?table={postgres_schema}.out")
    load_postgres_table(frame, "adult")
    result = kanonym.anonymize(f"{postgres_url}?table={postgres_schema}.adult", **ADULT_JOB)  # type: ignore[arg-type]
    other = postgres_url.rsplit("/", 1)[0] + "/postgres"
    with pytest.raises(InputError, match="must be in the input's database"):
        result.write(f"{other}?table=public.out")
    with pytest.raises(InputError, match=r"the output is a table"):
        result.write(f"{postgres_url}?query=SELECT+1")
    result.close()
    assert not _exists(postgres_url, f"{postgres_schema}.out")


def test_no_permission_to_create_is_refused_and_leaves_nothing(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    frame = read_table(adult_path()).frame.head(500)
    load_postgres_table(frame, "adult")
    role = f"reader_{postgres_schema}"
    run_sql(postgres_url, f"CREATE ROLE {role} LOGIN PASSWORD 'r3ader-secret'")
    run_sql(postgres_url, f"GRANT USAGE ON SCHEMA {postgres_schema} TO {role}")
    run_sql(postgres_url, f"GRANT SELECT ON {postgres_schema}.adult TO {role}")
    reader = postgres_url.replace("//kanonym@", f"//{role}:r3ader-secret@", 1)
    assert reader != postgres_url
    result = kanonym.anonymize(f"{reader}?table={postgres_schema}.adult", **ADULT_JOB)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no permission to create tables") as raised:
        result.write(f"{reader}?table={postgres_schema}.out")
    assert "r3ader-secret" not in str(raised.value)
    result.close()
    assert not _exists(postgres_url, f"{postgres_schema}.out")


def test_a_spark_release_is_written_as_parquet_by_spark_and_as_csv_from_the_driver(
    spark_session: Any, tmp_path: Path
) -> None:
    frame = read_table(adult_path()).frame
    expected = kanonym.anonymize(frame, **ADULT_JOB).table  # type: ignore[arg-type]
    data = spark_session.createDataFrame(frame.to_arrow())
    with kanonym.anonymize(data, **ADULT_JOB) as result:  # type: ignore[arg-type]
        result.write(tmp_path / "release.parquet", report=tmp_path / "r.json")
        result.write(tmp_path / "release.csv")
        with pytest.raises(InputError, match="exists"):
            result.write(tmp_path / "release.parquet")
    parts = pl.read_parquet(tmp_path / "release.parquet" / "*.parquet")
    assert _sorted(parts).equals(_sorted(expected))
    assert _sorted(pl.read_csv(tmp_path / "release.csv", infer_schema=False)).equals(
        _sorted(expected)
    )
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["output"] == str(tmp_path / "release.parquet")
    assert "release" not in [f["what"] for f in report["fingerprints"]]


def test_a_file_is_replaced_whoever_writes_it_and_a_table_url_needs_its_engine(
    tmp_path: Path,
) -> None:
    frame = read_table(adult_path()).frame.head(3000)
    source = tmp_path / "adult.parquet"
    frame.write_parquet(source)
    output = tmp_path / "out.csv"
    output.write_text("an older release\n")
    for engine in ("streaming", "duckdb", None):
        with kanonym.anonymize(source, engine=engine, **ADULT_JOB) as result:  # type: ignore[arg-type]
            result.write(output)
            released = result.table
        written = pl.read_csv(output, infer_schema=False)
        assert _sorted(written).equals(_sorted(released)), engine
        if engine is not None:
            with pytest.raises(InputError, match="the release was closed"):
                result.write(tmp_path / "again.csv")
    with kanonym.anonymize(frame, **ADULT_JOB) as in_memory:  # type: ignore[arg-type]
        for url in (f"duckdb:///{tmp_path}/db.duckdb?table=main.r", "spark-table:db.r"):
            with pytest.raises(InputError, match="written by the engine that reads") as raised:
                in_memory.write(url)
            assert "\n" not in str(raised.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adult.parquet", "out.csv"]
