"""``kanonym release``, ``ledger``, ``audit`` and ``apply`` with a PostgreSQL input, a table
output and a ledger in PostgreSQL (issue 12, points 2, 5 and 7), from flags and a job file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from tests import sweeney2002 as seed
from tests.postgres_server import run_sql

from kanonym.cli import main
from kanonym.io import read_table
from kanonym.release.recorded import Ledger

Loader = Callable[[pl.DataFrame, str], str]
QI = ["--qi", "Race=race.csv", "BirthDate=birthdate.csv", "Gender=gender.csv", "ZIP=zip.csv"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    seed.write_hierarchies(tmp_path)
    return tmp_path


@pytest.fixture
def pt(postgres_url: str, load_postgres_table: Loader) -> str:
    return f"{postgres_url}?table={load_postgres_table(seed.keyed(seed.PT), 'pt')}"


def _release(source: str, ledger: str, output: str, *extra: str) -> list[str]:
    return ["release", source, "--ledger", ledger, *QI, "--insensitive", "Problem",
            "--key", "id", "--k", "2", "--output", output, *extra]  # fmt: skip


def test_releases_of_a_database_table_recorded_in_postgresql(
    folder: Path,
    pt: str,
    postgres_ledger: str,
    postgres_url: str,
    postgres_schema: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = f"{postgres_url}?table={postgres_schema}.gt1"
    assert main(_release(pt, postgres_ledger, first, "--seed", "1", "--report", "r1.json")) == 0
    out = capsys.readouterr().out
    assert f"recorded as release 1 in {postgres_ledger} (seed 1)" in out
    released = run_sql(postgres_url, f"SELECT * FROM {postgres_schema}.gt1")
    assert len(released) == 12 and len(released[0]) == 5  # the key is not released
    assert json.loads(Path("r1.json").read_text())["ledger"]["release_id"] == 1
    # The same job as a file: the ledger and the table are URLs, kept as they are.
    qi = "\n".join(f'{c} = "{folder / (c.lower() + ".csv")}"' for c in seed.QUASI_IDENTIFIERS)
    Path("job.toml").write_text(
        f'input = "{pt}"\noutput = "{postgres_url}?table={postgres_schema}.gt2"\n'
        f'ledger = "{postgres_ledger}"\nkey = "id"\nk = 2\nseed = 2\ninsensitive = ["Problem"]\n'
        f"[qi]\n{qi}\n"
    )
    assert main(["release", "--config", "job.toml", "--quiet"]) == 0
    assert main(["ledger", "list", postgres_ledger, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(e["id"], e["source"]) for e in listed] == [(1, pt), (2, pt)]
    assert listed[1]["complementary"] == ["Problem"]
    assert main(["ledger", "show", postgres_ledger, "2"]) == 0
    assert f"{postgres_schema}.gt2" in capsys.readouterr().out
    assert main(["audit", "--ledger", postgres_ledger, "1", "2"]) == 0
    # Re-run as a file: the same rows, in the same (seeded) order.
    assert main(_release(pt, postgres_ledger, "again.csv", "--replay", "1", "--quiet")) == 0
    assert Ledger(postgres_ledger).entry(3).replay_of == 1


def test_refusals_leave_no_table_and_no_entry(
    folder: Path,
    pt: str,
    postgres_ledger: str,
    postgres_url: str,
    postgres_schema: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_sql(postgres_url, f"CREATE TABLE {postgres_schema}.taken (old text)")
    taken = f"{postgres_url}?table={postgres_schema}.taken"
    assert main(_release(pt, postgres_ledger, taken, "--seed", "1", "--report", "r.json")) == 2
    err = capsys.readouterr().err
    assert "exists; choose another or give --replace" in err and err.count("\n") == 1
    elsewhere = f"{postgres_url.rsplit('/', 1)[0]}/postgres?table=public.x"
    assert main(_release(pt, postgres_ledger, elsewhere, "--seed", "1")) == 2
    assert "must be in the input's database" in capsys.readouterr().err
    assert main(_release("pt.parquet", postgres_ledger, "o.csv", "--engine", "spark")) == 2
    assert "the ledger records releases of files" in capsys.readouterr().err
    wrong = pt.replace("//kanonym@", "//kanonym:wr0ng-pw@", 1)
    assert main(_release(wrong, postgres_ledger, "o.csv", "--seed", "1")) == 2
    err = capsys.readouterr().err
    assert "password authentication failed" in err and "wr0ng-pw" not in err
    assert not Path("r.json").exists() and Ledger(postgres_ledger).entries() == ()
    assert not Ledger(postgres_ledger).database.exists()


def test_apply_reads_a_database_batch(
    folder: Path, postgres_url: str, load_postgres_table: Loader, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = read_table(seed.write_table(folder, "pt.csv", seed.frame(seed.PT))).frame
    args = ["anonymize", "pt.csv", *QI, "--insensitive", "Problem", "--k", "2", "--seed", "1"]
    assert main([*args, "--output", "fit.csv", "--report", "fit.json", "--quiet"]) == 0
    batch = f"{postgres_url}?table={load_postgres_table(frame, 'batch')}"
    assert (
        main(["apply", batch, "--from-report", "fit.json", "--output", "b.csv", "--seed", "1"]) == 0
    )
    assert "applied [Race=1, BirthDate=1, Gender=0, ZIP=1]" in capsys.readouterr().out
    assert pl.read_csv("b.csv").height == 12


def test_apply_writes_a_table_of_the_batch_database(
    folder: Path, postgres_url: str, load_postgres_table: Loader, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = read_table(seed.write_table(folder, "pt.csv", seed.frame(seed.PT))).frame
    args = ["anonymize", "pt.csv", *QI, "--insensitive", "Problem", "--k", "2", "--seed", "1"]
    assert main([*args, "--output", "fit.csv", "--report", "fit.json", "--quiet"]) == 0
    name = load_postgres_table(frame, "batch")
    batch, target = f"{postgres_url}?table={name}", f"{postgres_url}?table={name}_released"
    apply = ["apply", batch, "--from-report", "fit.json", "--seed", "1", "--output", target]
    assert main([*apply, "--quiet"]) == 0
    assert run_sql(postgres_url, f"SELECT count(*) FROM {name}_released")[0][0] == 12
    capsys.readouterr()
    assert main(apply) == 2
    assert "exists; choose another or give --replace" in capsys.readouterr().err
    assert main([*apply, "--replace", "--quiet"]) == 0
