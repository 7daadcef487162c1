"""``kanonym anonymize`` through the PostgreSQL and Spark engines: a PostgreSQL input and
table output (flags, a TOML job, bad input refused before the search, a release killed
midway leaves no table); a Parquet input released as Parquet by Spark."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import psycopg
import pytest
from tests.postgres_server import run_sql

from kanonym.cli import main
from kanonym.datasets import ADULT_COLUMNS, adult_hierarchy_path, adult_path
from kanonym.io import read_table
from kanonym.io.write import recover

Loader = Callable[[pl.DataFrame, str], str]


def _qi() -> list[str]:
    return [f"{c}={adult_hierarchy_path(c)}" for c in ADULT_COLUMNS]


def _job(input_url: str, output: str, *extra: str) -> list[str]:
    return [
        "anonymize",
        input_url,
        "--qi",
        *_qi(),
        "--k",
        "5",
        "--max-suppression",
        "4%",
        "--metric",
        "dm-star",
        "--seed",
        "3",
        "--output",
        output,
        *extra,
    ]


def _count(url: str, name: str) -> int:
    return int(run_sql(url, f"SELECT count(*) FROM {name}")[0][0])


@pytest.fixture
def adult_table(postgres_url: str, postgres_schema: str, load_postgres_table: Loader) -> str:
    load_postgres_table(read_table(adult_path()).frame, "adult")
    return f"{postgres_url}?table={postgres_schema}.adult"


def test_the_command_line_publishes_a_table_and_refuses_an_existing_one_before_the_search(
    adult_table: str,
    postgres_url: str,
    postgres_schema: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = f"{postgres_url}?table={postgres_schema}.released"
    report = tmp_path / "r.json"
    assert main(_job(adult_table, target, "--report", str(report), "--quiet")) == 0
    assert _count(postgres_url, f"{postgres_schema}.released") == 30162 - 906
    assert json.loads(report.read_text())["transformation"]["education"] == 3
    report.unlink()
    started = time.perf_counter()
    capsys.readouterr()
    assert main(_job(adult_table, target, "--report", str(report))) == 2
    err = capsys.readouterr().err
    assert "exists; choose another or give --replace" in err and "replace=True" not in err
    assert err.count("\n") == 1 and not report.exists()
    # Refused after connecting, before the search (which takes longer than this).
    assert time.perf_counter() - started < 5
    assert main(_job(adult_table, target, "--replace", "--quiet")) == 0


def test_a_toml_job_names_the_engine_and_the_table(
    adult_table: str, postgres_url: str, postgres_schema: str, tmp_path: Path
) -> None:
    qi = "\n".join(f'{c} = "{adult_hierarchy_path(c)}"' for c in ADULT_COLUMNS)
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "{adult_table}"\n'
        f'output = "{postgres_url}?table={postgres_schema}.from_toml"\n'
        'engine = "postgres"\nk = 5\nmax-suppression = "4%"\nmetric = "dm-star"\nseed = 3\n'
        'report = "r.json"\n'
        f"[qi]\n{qi}\n"
    )
    assert main(["anonymize", "--config", str(job), "--quiet"]) == 0
    assert _count(postgres_url, f"{postgres_schema}.from_toml") == 30162 - 906
    assert (tmp_path / "r.json").exists()


def test_bad_database_input_exits_2_with_one_line_and_writes_nothing(
    adult_table: str,
    postgres_url: str,
    postgres_schema: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = tmp_path / "r.json"
    cases = {
        "no such table": (f"{postgres_url}?table={postgres_schema}.nothing", "does not exist"),
        "wrong password": (
            postgres_url.replace("//kanonym@", "//kanonym:wr0ng-pw@", 1)
            + f"?table={postgres_schema}.adult",
            "password authentication failed",
        ),
        "unreachable": ("postgresql://kanonym@127.0.0.1:1/kanonym?table=t", "cannot connect"),
    }
    capsys.readouterr()
    for name, (url, message) in cases.items():
        output = str(tmp_path / "out.csv")
        assert main(_job(url, output, "--report", str(report))) == 2, name
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "wr0ng-pw" not in err, name
        assert list(tmp_path.iterdir()) == [], name
    # A column the table lacks.
    args = _job(adult_table, str(tmp_path / "out.csv"))
    args[args.index("--qi") + 1] = "nothing=mask"
    assert main(args) == 2
    assert "no column 'nothing'" in capsys.readouterr().err
    # A table output from a file input.
    assert main(_job(str(adult_path()), f"{postgres_url}?table={postgres_schema}.x")) == 2
    assert "give a postgresql:// input there too" in capsys.readouterr().err
    assert run_sql(postgres_url, "SELECT to_regclass(%s)", [f"{postgres_schema}.x"])[0][0] is None


def test_a_release_killed_midway_leaves_no_table(
    adult_table: str, postgres_url: str, postgres_schema: str, tmp_path: Path
) -> None:
    target = f"{postgres_schema}.kept"
    run_sql(postgres_url, f"CREATE TABLE {target} (old text)")
    report = tmp_path / "r.json"
    # The test holds the target locked: the release waits in its transaction, to be killed.
    holder = psycopg.connect(postgres_url)
    holder.execute(f"LOCK TABLE {target} IN ACCESS EXCLUSIVE MODE")
    args = _job(adult_table, f"{postgres_url}?table={target}", "--replace", "--report", str(report))
    process = subprocess.Popen(
        [sys.executable, "-m", "kanonym", *args, "--quiet"],
        env={**os.environ},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        backend = None
        deadline = time.monotonic() + 120
        while backend is None and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
            # Another connection: the holder's transaction sees one snapshot of the view.
            waiting = run_sql(
                postgres_url,
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query ILIKE %s",
                ["DROP TABLE%"],
            )
            backend = waiting[0][0] if waiting else None
        assert backend is not None, "the release never reached its DROP TABLE"
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        holder.rollback()
        holder.close()
    # The server ends the dead client's transaction: its backend goes, its work with it.
    deadline = time.monotonic() + 30
    while run_sql(postgres_url, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", [backend]):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    columns = run_sql(
        postgres_url,
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0",
        [target],
    )
    assert columns == [("old",)]
    assert _count(postgres_url, target) == 0
    # The report was only prepared: the next write to its folder undoes the group.
    assert not report.exists()
    recover(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_spark_releases_parquet_from_the_command_line(
    spark_session: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = read_table(adult_path()).frame
    source = tmp_path / "adult.parquet"
    frame.write_parquet(source)
    output = tmp_path / "released.parquet"
    args = _job(str(source), str(output), "--engine", "spark", "--report", str(tmp_path / "r.json"))
    assert main([*args, "--quiet"]) == 0
    released = pl.read_parquet(output / "*.parquet")
    assert released.height == 30162 - 906
    assert json.loads((tmp_path / "r.json").read_text())["transformation"]["education"] == 3
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "released.parquet: directory exists; choose another or give --replace" in err
    assert main([*args, "--replace", "--quiet"]) == 0
    assert pl.read_parquet(output / "*.parquet").height == released.height


def test_the_same_job_file_runs_under_spark_submit(spark_session: Any, tmp_path: Path) -> None:
    import kanonym

    frame = read_table(adult_path()).frame
    frame.write_parquet(tmp_path / "adult.parquet")
    qi = "\n".join(f'{c} = "{adult_hierarchy_path(c)}"' for c in ADULT_COLUMNS)
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "adult.parquet"\noutput = "released.parquet"\nengine = "spark"\nk = 5\n'
        'max-suppression = "4%"\nmetric = "dm-star"\nseed = 3\nreport = "r.json"\n'
        f"[qi]\n{qi}\n"
    )
    bin_dir = Path(sys.executable).parent
    main_py = Path(kanonym.__file__).with_name("__main__.py")
    submit = [str(bin_dir / "spark-submit"), "--master", "local[2]", str(main_py)]
    done = subprocess.run(
        [*submit, "anonymize", "--config", str(job), "--quiet"],
        env={
            **os.environ,
            "PYSPARK_PYTHON": sys.executable,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert pl.read_parquet(tmp_path / "released.parquet" / "*.parquet").height == 30162 - 906
    assert json.loads((tmp_path / "r.json").read_text())["transformation"]["education"] == 3
