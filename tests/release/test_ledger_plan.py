"""Ledger.plan and Ledger.record: the result reviewed between the search and the record is
the one recorded (the workbench files releases so)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanonym.config import AnonymizationConfig
from kanonym.errors import InputError
from kanonym.ledger import table_fingerprint
from kanonym.release.pipeline import anonymize
from kanonym.release.recorded import Ledger

ROWS = "zip,disease\n02138,flu\n02139,cold\n02141,flu\n02142,cold\n"


def _setting(folder: Path, seed: int | None = 7) -> tuple[Path, Ledger, AnonymizationConfig]:
    source = folder / "t.csv"
    source.write_text(ROWS)
    config = AnonymizationConfig(
        quasi_identifiers={"zip": "mask"}, k=2, seed=seed, insensitive=("disease",)
    )
    return source, Ledger(folder / "ledger.sqlite"), config


def test_the_reviewed_result_is_recorded_once(tmp_path: Path) -> None:
    source, ledger, config = _setting(tmp_path)
    plan = ledger.plan(source, config)
    result = anonymize(source, plan.config)
    recorded = ledger.record(source, plan, result, output=tmp_path / "r.csv")
    assert recorded.entry.seed == 7
    assert recorded.entry.release_sha256 == table_fingerprint(result.table)
    assert (tmp_path / "r.csv").exists()
    # Recorded once: the same plan again, or a new plan with its seed, is refused.
    with pytest.raises(InputError, match="seed 7 was already used"):
        ledger.record(source, plan, result, output=tmp_path / "r2.csv")
    with pytest.raises(InputError, match="seed 7 was already used"):
        ledger.plan(source, config)
    assert not (tmp_path / "r2.csv").exists()
    assert len(ledger.entries()) == 1


def test_a_source_changed_since_its_plan_is_refused(tmp_path: Path) -> None:
    source, ledger, config = _setting(tmp_path)
    plan = ledger.plan(source, config)
    result = anonymize(source, plan.config)
    source.write_text(ROWS.replace("02142", "02143"))
    with pytest.raises(InputError, match="content changed since the release was planned"):
        ledger.record(source, plan, result, output=tmp_path / "r.csv")
    assert not (tmp_path / "r.csv").exists()
    assert ledger.entries() == ()


def test_a_plan_without_a_seed_records_the_seed_it_drew(tmp_path: Path) -> None:
    source, ledger, config = _setting(tmp_path, seed=None)
    plan = ledger.plan(source, config)
    assert plan.config.seed is not None and plan.asked.seed == plan.config.seed
    result = anonymize(source, plan.config)
    recorded = ledger.record(source, plan, result, output=tmp_path / "r.csv")
    assert recorded.entry.seed == plan.config.seed


def test_the_ledger_is_not_a_destination(tmp_path: Path) -> None:
    source, ledger, config = _setting(tmp_path)
    plan = ledger.plan(source, config)
    result = anonymize(source, plan.config)
    with pytest.raises(InputError, match="ledger"):
        ledger.record(source, plan, result, output=tmp_path / "ledger.sqlite")
