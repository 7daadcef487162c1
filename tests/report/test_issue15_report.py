"""Issue 15, point 2: the HTML page holds no fingerprint computed from the input.

A SHA-256 of the input lets whoever knows every other byte of it confirm a
guessed value (the 99-year-old's diagnosis): the JSON report (for the
reviewer) and the ledger keep it, the page that travels with the release does
not. Both reports say what each fingerprint lets its holder do.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import polars as pl
import pytest
from tests.patients import patients

import kanonym
from kanonym.cli import main
from kanonym.io import read_table, serialize
from kanonym.ledger import table_fingerprint

pytest.importorskip("vl_convert")

ROLES = [
    "--qi", "birth_date=date", "sex=suppress", "zip=mask",
    "--identifying", "name", "ssn",
    "--insensitive", "diagnosis", "admission_date", "length_of_stay",
    "--k", "3", "--max-suppression", "10%", "--seed", "5", "--quiet",
]  # fmt: skip


def _planted(folder: Path) -> Path:
    """The patients with a 99-year-old whose diagnosis is the secret to guess."""
    table = patients(rows=60).with_columns(
        pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.lit("1925-01-02"))
        .otherwise(pl.col("birth_date"))
        .alias("birth_date"),
        pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.lit("angina"))
        .otherwise(pl.col("diagnosis"))
        .alias("diagnosis"),
    )
    path = folder / "patients.csv"
    table.write_csv(path)
    return path


def _input_digests(source: Path) -> set[str]:
    """The input's SHA-256 over its bytes and over its canonical CSV (as the ledger hashes it)."""
    frame = read_table(source).frame
    return {
        hashlib.sha256(source.read_bytes()).hexdigest(),
        table_fingerprint(frame),
        hashlib.sha256(serialize(frame, fmt="csv", dialect=None)).hexdigest(),
    }


def test_issue15_p2_the_html_page_holds_no_input_sha256(tmp_path: Path) -> None:
    source = _planted(tmp_path)
    digests = _input_digests(source)
    out = tmp_path / "out"
    argv = [
        "anonymize", str(source), *ROLES,
        "--output", f"{out}.csv", "--report", f"{out}.json", "--report-html", f"{out}.html",
    ]  # fmt: skip
    assert main(argv) == 0
    page = Path(f"{out}.html").read_text(encoding="utf-8")
    for digest in digests:
        assert digest not in page and digest.upper() not in page
    # Hierarchies built from the input's values are private too (they list its values).
    report = json.loads(Path(f"{out}.json").read_text(encoding="utf-8"))
    entries = {entry["what"]: entry for entry in report["fingerprints"]}
    for name in ("birth_date", "sex", "zip"):
        built = entries[f"hierarchy {name}"]
        assert built["on_html_page"] is False and built["sha256"] not in page
    # The published files' fingerprints are on the page, each with what it lets one do.
    release_digest = hashlib.sha256(Path(f"{out}.csv").read_bytes()).hexdigest()
    json_digest = hashlib.sha256(Path(f"{out}.json").read_bytes()).hexdigest()
    assert release_digest in page and json_digest in page
    assert "lets its holder" in page and "the release is published" in page
    assert "Not shown: the fingerprints of input" in page
    # The reviewer's JSON keeps the input's, and says what each one lets a holder do.
    assert entries["input"]["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    assert entries["input"]["on_html_page"] is False
    assert entries["release"]["sha256"] == release_digest
    assert all(entry["lets_a_holder"] for entry in report["fingerprints"])
    assert "test guesses" in entries["input"]["lets_a_holder"]
    assert "never on the HTML page" in report["fingerprints_note"]


def test_issue15_p2_a_ledger_release_page_holds_no_input_sha256(tmp_path: Path) -> None:
    source = _planted(tmp_path)
    digests = _input_digests(source)
    ledger = tmp_path / "ledger.db"
    argv = [
        "release", str(source), *ROLES, "--ledger", str(ledger),
        "--output", str(tmp_path / "r.csv"), "--report", str(tmp_path / "r.json"),
        "--report-html", str(tmp_path / "r.html"),
    ]  # fmt: skip
    assert main(argv) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    for digest in digests:
        assert digest not in page
    # The ledger still fingerprints the source, for the reviewer.
    with sqlite3.connect(ledger) as connection:
        (recorded,) = connection.execute("SELECT source_sha256 FROM releases").fetchone()
    assert recorded in digests
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["ledger"]["source_sha256"] == recorded


def test_issue15_p2_a_dataframe_input_is_not_fingerprinted_on_the_page() -> None:
    table = patients(rows=40)
    result = kanonym.anonymize(
        table,
        quasi_identifiers={"zip": "mask", "sex": "suppress", "birth_date": "date"},
        identifying=["name", "ssn"],
        insensitive=["diagnosis", "admission_date", "length_of_stay"],
        k=3,
        max_suppression=0.1,
        seed=2,
    )
    page = kanonym.report.render_html(result).decode("utf-8")
    canonical = serialize(table, fmt="csv", dialect=None)
    for digest in (hashlib.sha256(canonical).hexdigest(), table_fingerprint(table)):
        assert digest not in page
