"""The release ledger (kanonym.Ledger): seed 000's policies, records, transactions.

The tests taking ``either`` run twice: with the ledger in an SQLite file and in a
PostgreSQL schema (the session's server), which must behave alike.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests import sweeney2002 as seed
from tests.strategies import problems

import kanonym
from kanonym.attacks.complementary import audit
from kanonym.config import AnonymizationConfig, SuppressionLimit
from kanonym.engine import embedded
from kanonym.errors import InputError, VerificationError
from kanonym.ledger import (
    LEDGER_SCHEMA_VERSION,
    LedgerRelease,
    policy,
    row_fingerprints,
    storage,
    table_fingerprint,
)
from kanonym.release.recorded import Ledger


class Setting:
    """PT and PT_t1 of seed 000 with record keys, their hierarchies and a ledger."""

    def __init__(self, folder: Path, ledger: str | None = None) -> None:
        self.folder = folder
        self.hierarchies = seed.write_hierarchies(folder)
        self.pt = seed.write_table(folder, "pt.csv", seed.keyed(seed.PT))
        self.pt_t1 = seed.write_table(folder, "pt_t1.csv", seed.keyed(seed.PT + seed.T1_ADDITIONS))
        self.ledger = Ledger(folder / "ledger.sqlite" if ledger is None else ledger)

    def config(self, **fields: object) -> AnonymizationConfig:
        # Problem is released unchanged unless a test makes it sensitive.
        sensitive = fields.get("sensitive", ())
        insensitive = () if "Problem" in sensitive else ("Problem",)  # type: ignore[operator]
        return AnonymizationConfig(
            quasi_identifiers=self.hierarchies,
            **{"k": 2, "insensitive": insensitive, **fields},  # type: ignore[arg-type]
        )

    def release(self, source: Path, name: str, **options: object) -> LedgerRelease:
        config_fields = {
            k: options.pop(k)
            for k in ("seed", "k", "sensitive", "min_levels", "technique")
            if k in options
        }
        if "max_suppressed_rows" in options:
            config_fields["suppression"] = SuppressionLimit(rows=options.pop("max_suppressed_rows"))
        if "key" not in options and "based_on" not in options:
            # Released without a key, the record number is an ordinary unchanged column.
            config_fields.setdefault("insensitive", ("Problem", "id"))
        return self.ledger.release(
            source,
            self.config(**config_fields),
            output=self.folder / f"{name}.csv",
            report=self.folder / f"{name}.json",
            **options,  # type: ignore[arg-type]
        )

    def files(self) -> set[str]:
        return {p.name for p in self.folder.iterdir() if p.name.startswith("out")}


@pytest.fixture
def setting(tmp_path: Path) -> Setting:
    return Setting(tmp_path)


@pytest.fixture(params=["sqlite", "postgresql"])
def either(request: pytest.FixtureRequest, tmp_path: Path) -> Setting:
    """A setting whose ledger is an SQLite file, then a schema of the session's PostgreSQL."""
    if request.param == "sqlite":
        return Setting(tmp_path)
    url = request.getfixturevalue("postgres_url")
    return Setting(tmp_path, f"{url}?schema={request.getfixturevalue('postgres_schema')}")


def test_a_release_is_recorded_with_everything(either: Setting) -> None:
    made = either.release(either.pt, "out1", key="id", seed=1)
    entry = made.entry
    assert entry.id == 1 and entry.seed == 1 and entry.key == "id"
    assert entry.source == str(either.pt.resolve())
    assert entry.source_sha256 == table_fingerprint(pl.read_csv(either.pt, infer_schema=False))
    assert tuple(entry.quasi_identifiers) == seed.QUASI_IDENTIFIERS
    assert entry.transformation == made.result.transformation
    assert entry.released_columns == ("Race", "BirthDate", "Gender", "ZIP", "Problem")
    zip_record = entry.quasi_identifiers["ZIP"]
    assert zip_record.height == 3 and len(zip_record.sha256) == 64
    assert entry.models == ({"model": "k-anonymity", "k": 2},)
    assert (entry.based_on, entry.replay_of, entry.complementary) == (None, None, ())
    assert either.ledger.entries() == (entry,)
    released = pl.read_csv(either.folder / "out1.csv", infer_schema=False)
    assert "id" not in released.columns  # the key is never released
    assert table_fingerprint(released) == entry.release_sha256
    report = json.loads((either.folder / "out1.json").read_text())
    assert report["ledger"]["release_id"] == 1 and report["ledger"]["key"] == "id"
    assert report["seed"] == 1 and "id" in report["identifying"]
    published = either.ledger.published(1)
    assert published.height == 12 and published.columns == ["key_hash", *seed.QUASI_IDENTIFIERS]
    assert published.select(pl.col("key_hash").bin.size().unique()).item() == 32
    assert Counter(published.drop("key_hash").rows()) == Counter(released.drop("Problem").rows())


def test_the_html_report_is_written_with_the_release(setting: Setting) -> None:
    made = setting.release(
        setting.pt, "out1", key="id", seed=1, report_html=setting.folder / "p.html"
    )
    page = (setting.folder / "p.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and made.entry.id == 1
    # The page fingerprints the release it was written with.
    assert hashlib.sha256((setting.folder / "out1.csv").read_bytes()).hexdigest() in page


def test_a_key_once_used_is_never_released(either: Setting) -> None:
    either.release(either.pt, "out1", key="id", seed=1)
    # The same source, and a grown copy sharing its records, without --key.
    for source, name in ((either.pt, "out2"), (either.pt_t1, "out3")):
        made = either.release(source, name, seed=int(name[-1]))
        released = pl.read_csv(either.folder / f"{name}.csv", infer_schema=False)
        assert "id" not in released.columns and made.entry.key == "id"


def test_a_failed_first_release_leaves_no_ledger(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "new.sqlite")
    config = AnonymizationConfig(quasi_identifiers={"a": "mask"}, k=2)
    with pytest.raises(InputError, match="not found"):
        ledger.release(tmp_path / "missing.csv", config, output=tmp_path / "out.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_every_release_records_its_row_fingerprints(setting: Setting) -> None:
    made = setting.release(setting.pt, "out1", seed=3)  # no key
    released = pl.read_csv(setting.folder / "out1.csv", infer_schema=False)
    with sqlite3.connect(setting.folder / "ledger.sqlite") as connection:
        stored = connection.execute(
            "SELECT row_sha256, occurrences FROM released_rows WHERE release_id = ?",
            (made.entry.id,),
        ).fetchall()
    expected = row_fingerprints(released)
    assert sorted(stored) == sorted(expected.rows())
    assert sum(n for _, n in stored) == released.height == made.result.table.height


def test_a_temporal_release_keeps_cells_its_base_blanked(either: Setting) -> None:
    # Release 1 blanks the two white records that have no partner (cell suppression).
    first = either.release(
        either.pt, "out1", key="id", seed=1, technique="AG_CS", max_suppressed_rows=6
    )
    blanked = first.result.table.filter(pl.col("ZIP") == "*").get_column("Problem").to_list()
    assert sorted(blanked) == ["hypertension", "short of breath"]
    # New rows give both records partners, so a fresh search would publish them
    # specifically; based on release 1 they keep their blanks.
    partners = [r for r in seed.PT if r[4] in blanked for _ in range(2)]
    grown = seed.write_table(
        either.folder,
        "grown.csv",
        seed.keyed(seed.PT + [(*r[:4], f"new {i}") for i, r in enumerate(partners)]),
    )
    second = either.release(
        grown, "out2", key="id", seed=2, based_on=1, technique="AG_CS", max_suppressed_rows=6
    )
    table = second.result.table
    kept = table.filter(pl.col("Problem").is_in(blanked) & (pl.col("Race") == "white"))
    assert kept.get_column("ZIP").to_list() == ["*", "*"]
    report = json.loads((either.folder / "out2.json").read_text())
    assert report["ledger"]["kept_from_base_cells"] > 0
    assert kanonym.check(table, list(seed.QUASI_IDENTIFIERS), k=2).k_anonymous


def test_keys_are_stored_only_hashed(setting: Setting) -> None:
    keyed = seed.keyed(seed.PT).with_columns(("ssn-" + pl.col("id")).alias("id"))
    setting.ledger.release(keyed, setting.config(seed=1), output=setting.folder / "o.csv", key="id")
    assert b"ssn-" not in (setting.folder / "ledger.sqlite").read_bytes()


def test_seed_reuse_is_refused_and_replay_allowed(either: Setting) -> None:
    first = either.release(either.pt, "out1", key="id", seed=1)
    with pytest.raises(InputError, match="seed 1 was already used for this source by release 1"):
        either.release(either.pt, "out2", key="id", seed=1)
    replay = either.release(either.pt, "out2", replay=1)
    assert replay.entry.replay_of == 1 and replay.entry.seed == 1 and replay.entry.key == "id"
    assert (either.folder / "out1.csv").read_bytes() == (either.folder / "out2.csv").read_bytes()
    assert replay.entry.release_sha256 == first.entry.release_sha256


def test_replay_must_reproduce_its_release(either: Setting) -> None:
    either.release(either.pt, "out1", key="id", seed=1)
    with pytest.raises(InputError, match="does not reproduce release 1"):
        either.release(either.pt, "out2", replay=1, k=3)
    with pytest.raises(InputError, match="re-uses seed 1; `seed=2` contradicts it"):
        either.release(either.pt, "out2", replay=1, seed=2)
    with pytest.raises(InputError, match="release 1 is of another source"):
        either.release(either.pt_t1, "out2", replay=1, key="other")
    assert either.files() == {"out1.csv", "out1.json"}
    assert len(either.ledger.entries()) == 1


def test_a_drawn_seed_avoids_used_ones(setting: Setting, monkeypatch) -> None:
    setting.release(setting.pt, "out1", seed=5)
    draws = iter([5, 6])
    monkeypatch.setattr(policy.secrets, "randbits", lambda bits: next(draws))
    assert setting.release(setting.pt, "out2").entry.seed == 6


def test_same_source_by_content_and_by_shared_keys(either: Setting) -> None:
    either.release(either.pt, "out1", key="id", seed=1)
    # The same content as a DataFrame is the same source.
    with pytest.raises(InputError, match="already used"):
        either.ledger.release(
            seed.keyed(seed.PT), either.config(seed=1), output=either.folder / "o.csv"
        )
    # A table at another path sharing record keys with release 1 is the same source too.
    with pytest.raises(InputError, match="already used"):
        either.release(either.pt_t1, "out2", key="id", seed=1)
    other = seed.write_table(either.folder, "other.csv", seed.keyed(seed.PT, first_id=100))
    assert either.release(other, "out3", key="id", seed=1).entry.complementary == ()


def test_complementary_release_enlarges_the_quasi_identifier(either: Setting) -> None:
    either.release(either.pt, "out1", key="id", seed=1)
    second = either.release(either.pt, "out2", key="id", seed=2, k=2)
    entry = second.entry
    assert entry.complementary == ("Problem",)
    assert tuple(entry.quasi_identifiers) == (*seed.QUASI_IDENTIFIERS, "Problem")
    assert entry.quasi_identifiers["Problem"].source == "suppress"
    # Every problem is rare, so k=2 leaves Problem suppressed: nothing left to link on.
    assert entry.transformation["Problem"] == 1
    # Linked without Problem as a quasi-identifier nothing matches: an error, not a pass.
    with pytest.raises(InputError, match="nothing linked"):
        audit([either.folder / "out1.csv", either.folder / "out2.csv"], either.hierarchies, k=2)
    # The ledger links them as it did before recording release 2: it passes.
    result = either.ledger.audit([1, 2])
    assert result.k_anonymous and result.join_columns == ("Gender",)


def test_complementary_attribute_named_by_the_user_keeps_its_hierarchy(setting: Setting) -> None:
    qi = {**setting.hierarchies, "Problem": "suppress"}
    first = setting.ledger.release(
        setting.pt,
        AnonymizationConfig(quasi_identifiers=qi, k=2, seed=1, insensitive=("id",)),
        output=setting.folder / "out1.csv",
    )
    # At least release 1's levels, so that linking the two refines nothing.
    levels = dict(first.entry.transformation or {})
    made = setting.ledger.release(
        setting.pt,
        AnonymizationConfig(
            quasi_identifiers=qi, k=2, seed=2, insensitive=("id",), min_levels=levels
        ),
        output=setting.folder / "out2.csv",
    )
    # 'id' was released by release 1 (no key then), so it joins the quasi-identifier.
    assert made.entry.complementary == ("id",)
    assert made.entry.quasi_identifiers["Problem"].source == "suppress"


def test_complementary_attribute_cannot_stay_sensitive(setting: Setting) -> None:
    setting.release(setting.pt, "out1", key="id", seed=1)
    with pytest.raises(InputError, match="'Problem' was published by an earlier release"):
        setting.release(setting.pt, "out2", key="id", seed=2, sensitive=("Problem",))


def test_temporal_release_based_on_an_earlier_one(either: Setting) -> None:
    """Seed 000, Example 7: PT_t1 released from the release of PT plus the two new rows."""
    first = either.release(either.pt, "out1", key="id", seed=1)
    second = either.release(either.pt_t1, "out2", based_on=1, seed=2)
    assert second.entry.based_on == 1 and second.entry.key == "id"
    assert second.entry.complementary == ()
    for name, level in first.entry.transformation.items():
        assert second.entry.transformation[name] >= level
    old = either.ledger.published(1)
    new = either.ledger.published(2)
    assert new.height == 14
    both = old.join(new, on="key_hash", suffix="_new")
    assert both.height == 12
    result = audit(
        [either.folder / "out1.csv", either.folder / "out2.csv"], either.hierarchies, k=2
    )
    assert result.k_anonymous


def test_without_the_ledger_the_temporal_attack_is_flagged(setting: Setting) -> None:
    """Seed 000, Example 7: a release of PT_t1 at levels incomparable to release 1 links."""
    first = setting.release(setting.pt, "out1", key="id", seed=1)
    assert first.entry.transformation == {"Race": 1, "BirthDate": 1, "Gender": 0, "ZIP": 1}
    levels = {"Race": 0, "BirthDate": 2, "Gender": 1, "ZIP": 0}
    kanonym.anonymize(
        setting.pt_t1,
        quasi_identifiers=setting.hierarchies,
        identifying=["id"],
        insensitive=["Problem"],
        k=2,
        min_levels=levels,
        max_levels=levels,
        seed=3,
    ).write(setting.folder / "alt.csv")
    result = audit(
        [setting.folder / "out1.csv", setting.folder / "alt.csv"], setting.hierarchies, k=2
    )
    assert not result.k_anonymous


def test_based_on_needs_a_keyed_release_and_consistent_options(setting: Setting) -> None:
    setting.release(setting.pt, "out1", seed=1)
    with pytest.raises(InputError, match="made without `key`"):
        setting.release(setting.pt_t1, "out2", based_on=1, key="id")
    setting.release(setting.pt_t1, "out2", key="id", seed=2)
    with pytest.raises(InputError, match="identifies records by 'id', not 'Problem'"):
        setting.release(setting.pt_t1, "out3", based_on=2, key="Problem")
    with pytest.raises(InputError, match="`based_on=7`: no such release"):
        setting.release(setting.pt_t1, "out3", based_on=7)
    config = setting.config(max_levels={"Race": 0})
    with pytest.raises(InputError, match="`max_levels` 0 of 'Race' is below level 1"):
        setting.ledger.release(setting.pt_t1, config, output=setting.folder / "o.csv", based_on=2)


def test_a_temporal_release_more_specific_than_its_base_is_never_written(either: Setting) -> None:
    either.release(either.pt, "out1", key="id", seed=1)
    # A ZIP hierarchy whose level-1 values are not generalizations of '0213*'.
    other_zip = either.folder / "zip2.csv"
    other_zip.write_text("02138;A;021**;*\n02139;B;021**;*\n02141;C;021**;*\n")
    qi = {**either.hierarchies, "ZIP": str(other_zip)}
    with pytest.raises(VerificationError, match=r"more specific than .*release 1"):
        either.ledger.release(
            either.pt_t1,
            AnonymizationConfig(
                quasi_identifiers=qi, k=2, seed=2, max_levels={"ZIP": 1}, insensitive=("Problem",)
            ),
            output=either.folder / "out2.csv",
            based_on=1,
        )
    assert either.files() == {"out1.csv", "out1.json"}
    assert [e.id for e in either.ledger.entries()] == [1]


def test_key_errors(setting: Setting) -> None:
    with pytest.raises(InputError, match="key column 'nope' not found"):
        setting.release(setting.pt, "out1", key="nope")
    duplicated = seed.keyed(seed.PT).with_columns(pl.lit("7").alias("id"))
    with pytest.raises(InputError, match="key column 'id': 12 rows share their key") as error:
        setting.ledger.release(
            duplicated, setting.config(), output=setting.folder / "o.csv", key="id"
        )
    assert "'7'" not in str(error.value)
    # Refused before the keys were hashed: no ledger was created for it.
    assert not setting.ledger.path.exists()
    with pytest.raises(InputError, match="key column 'Race' is never released"):
        setting.release(setting.pt, "out1", key="Race")
    with pytest.raises(InputError, match=r"is the ledger .*: writing it would destroy it"):
        setting.ledger.release(setting.pt, setting.config(), output=setting.ledger.path)
    assert setting.ledger.entries() == ()


def test_failed_verification_records_and_writes_nothing(either: Setting, monkeypatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise VerificationError("injected")

    monkeypatch.setattr(embedded, "verify_release", fail)
    with pytest.raises(VerificationError, match="injected"):
        either.release(either.pt, "out1", key="id", seed=1)
    assert either.files() == set() and either.ledger.entries() == ()


def test_unwritable_output_records_nothing(setting: Setting) -> None:
    with pytest.raises(InputError, match="does not exist"):
        setting.ledger.release(
            setting.pt, setting.config(seed=1), output=setting.folder / "no" / "o.csv", key="id"
        )
    assert setting.ledger.entries() == ()
    assert not setting.ledger.path.exists()  # created by the first release recorded
    # The seed was not used up: nothing was released with it.
    assert setting.release(setting.pt, "out1", key="id", seed=1).entry.id == 1


def test_issue10_p6_failed_recording_keeps_the_previous_files(
    setting: Setting, monkeypatch
) -> None:
    """Issue 10, point 6: a failed record used to delete the files already at the paths."""
    (setting.folder / "out1.csv").write_text("previous release\n")

    def fail(connection: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(storage, "_commit", fail)
    with pytest.raises(InputError, match=r"cannot record the release .*nothing written"):
        setting.release(setting.pt, "out1", key="id", seed=1)
    assert (setting.folder / "out1.csv").read_text() == "previous release\n"
    # Only the ledger's lock file (empty, kept) may stay: no temporary.
    assert [p.name for p in setting.folder.iterdir() if p.name.startswith(".")] == [
        ".ledger.sqlite.lock"
    ]
    (setting.folder / "out1.csv").unlink()
    monkeypatch.undo()
    assert setting.ledger.entries() == ()
    assert setting.release(setting.pt, "out1", key="id", seed=1).entry.id == 1


def test_files_that_are_not_ledgers(tmp_path: Path) -> None:
    (tmp_path / "noise.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(InputError, match="not a kanonym ledger \\(not an SQLite database\\)"):
        Ledger(tmp_path / "noise.sqlite")
    with sqlite3.connect(tmp_path / "other.sqlite") as connection:
        connection.execute("CREATE TABLE t (x)")
    with pytest.raises(InputError, match="an SQLite database of another application"):
        Ledger(tmp_path / "other.sqlite")
    with Ledger(tmp_path / "newer.sqlite").database.connect():
        pass  # creates it
    with sqlite3.connect(tmp_path / "newer.sqlite") as connection:
        connection.execute(f"PRAGMA user_version = {LEDGER_SCHEMA_VERSION + 1}")
    with pytest.raises(InputError, match=f"schema version {LEDGER_SCHEMA_VERSION + 1} is newer"):
        Ledger(tmp_path / "newer.sqlite")
    with pytest.raises(InputError, match="is a directory"):
        Ledger(tmp_path)
    with pytest.raises(InputError, match="ledger not found"):
        Ledger(tmp_path / "absent.sqlite", create=False)
    assert not (tmp_path / "absent.sqlite").exists()
    with pytest.raises(InputError, match="cannot open ledger"):
        Ledger(tmp_path / "no" / "such" / "dir.sqlite")


@settings(max_examples=20, deadline=None)
@given(problem=problems(), data=st.data())
def test_a_temporal_release_never_publishes_a_more_specific_value(problem, data) -> None:
    table, hs = problem
    n = table.height
    table = table.with_columns(pl.Series("id", [f"r{i}" for i in range(n)]))
    cut = data.draw(st.integers(1, n))
    k = data.draw(st.integers(1, cut))
    with tempfile.TemporaryDirectory() as folder:
        ledger = Ledger(Path(folder) / "l.sqlite")
        config = AnonymizationConfig(
            quasi_identifiers=hs, k=k, suppression=kanonym.SuppressionLimit(fraction=1.0)
        )
        first = ledger.release(table.head(cut), config, output=Path(folder) / "a.csv", key="id")
        second = ledger.release(table, config, output=Path(folder) / "b.csv", based_on=1)
        old = ledger.published(1)
        new = ledger.published(2)
    for name in hs:
        assert second.entry.transformation[name] >= first.entry.transformation[name]
    # Independently of the ledger's check: each shared record's new value is its old
    # value or above it, read off the hierarchy's rows.
    for row in old.join(new, on="key_hash", suffix="_new").iter_rows(named=True):
        for name, h in hs.items():
            above = {
                h.levels[m][i]
                for i in range(len(h.leaves))
                for low in range(h.height + 1)
                if h.levels[low][i] == row[name]
                for m in range(low, h.height + 1)
            }
            assert row[f"{name}_new"] in above


PATIENT_QI = {"birth_date": "date", "sex": "suppress", "zip": "mask"}
PATIENT_REST = ("diagnosis", "admission_date", "length_of_stay")


def _patient_release(
    ledger: Ledger,
    folder: Path,
    name: str,
    *,
    seed: int,
    levels: dict[str, int],
    also_qi: tuple[str, ...] = (),
) -> object:
    """A release of 300 patients (k=3): the first at least at ``levels``, later ones at most."""
    from tests.patients import patients

    config = AnonymizationConfig(
        quasi_identifiers={**PATIENT_QI, **dict.fromkeys(also_qi, "suppress")},
        identifying=("name", "ssn"),
        insensitive=tuple(c for c in PATIENT_REST if c not in also_qi),
        k=3,
        seed=seed,
        **({"min_levels": levels} if seed == 1 else {"max_levels": levels}),  # type: ignore[arg-type]
        suppression=SuppressionLimit(fraction=0.1 if seed == 1 else 0.5),
    )
    return ledger.release(patients(300), config, output=folder / f"{name}.csv")


def test_issue10_p4_a_release_that_links_below_k_is_refused(tmp_path: Path) -> None:
    """Issue 10, point 4: birth dates fine in release 1, ZIP codes fine in release 2.

    Each release is 3-anonymous, but linked on sex and diagnosis (published by
    both) the ZIP of one and the birth date of the other narrow records down;
    the ledger used to record release 2, which its own audit then rejected.
    """
    ledger = Ledger(tmp_path / "ledger.sqlite")
    _patient_release(ledger, tmp_path, "r1", seed=1, levels={"birth_date": 1, "zip": 3})
    with pytest.raises(
        VerificationError, match=r"linked with release\(s\) 1 on sex, diagnosis, .* below k=3"
    ):
        _patient_release(ledger, tmp_path, "r2", seed=2, levels={"birth_date": 4, "zip": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".ledger.sqlite.lock",
        "ledger.sqlite",
        "r1.csv",
    ]
    assert [e.id for e in ledger.entries()] == [1]


@pytest.mark.parametrize(
    ("first", "second", "also_qi"),
    [
        ({"birth_date": 1, "zip": 3}, {"birth_date": 4, "zip": 1}, ()),
        ({"birth_date": 1, "zip": 3}, {"birth_date": 2, "zip": 5}, ()),
        ({"birth_date": 2, "zip": 2}, {"birth_date": 3, "zip": 1}, ()),
        ({"birth_date": 2, "zip": 2}, {"birth_date": 4, "zip": 5}, ("diagnosis",)),
        ({"birth_date": 1, "zip": 3}, {"birth_date": 4, "zip": 1}, ("length_of_stay",)),
        ({"birth_date": 0, "zip": 1}, {"birth_date": 4, "zip": 1}, ("length_of_stay",)),
    ],
)
def test_issue10_p4_every_release_the_ledger_records_passes_its_audit(
    tmp_path: Path, first: dict[str, int], second: dict[str, int], also_qi: tuple[str, ...]
) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    _patient_release(ledger, tmp_path, "r1", seed=1, levels=first)
    try:
        _patient_release(ledger, tmp_path, "r2", seed=2, levels=second, also_qi=also_qi)
    except VerificationError:
        assert len(ledger.entries()) == 1 and not (tmp_path / "r2.csv").exists()
        return
    assert ledger.audit([1, 2]).k_anonymous


def test_issue10_p4_complementary_release_keeps_the_earlier_hierarchy(tmp_path: Path) -> None:
    from tests.patients import patients

    table = patients(200)
    ledger = Ledger(tmp_path / "ledger.sqlite")
    unchanged = ("diagnosis", "admission_date", "length_of_stay")
    first = AnonymizationConfig(
        quasi_identifiers={"birth_date": "date", "sex": "suppress", "zip": "mask"},
        identifying=("name", "ssn"),
        insensitive=unchanged,
        k=5,
        seed=1,
    )
    ledger.release(table, first, output=tmp_path / "r1.csv")
    second = AnonymizationConfig(
        quasi_identifiers={"zip": "mask"},
        identifying=("name", "ssn"),
        insensitive=("birth_date", "sex", *unchanged),
        k=5,
        seed=2,
    )
    made = ledger.release(table, second, output=tmp_path / "r2.csv")
    records = made.entry.quasi_identifiers
    assert records["birth_date"].source == "date" and records["sex"].source == "suppress"
    assert made.result.hierarchies["birth_date"] == ledger.release_hierarchies(1)["birth_date"]
    # The ledger's audit needs no hierarchy given again, date builders included.
    result = ledger.audit([1, 2])
    assert result.k == 5 and result.k_anonymous and result.linked_rows > 0
    assert set(result.columns) == {"birth_date", "sex", "zip"}


def test_issue10_p4_a_version_1_ledger_is_upgraded_and_read_back(setting: Setting) -> None:
    setting.release(setting.pt, "out1", key="id", seed=1)
    with sqlite3.connect(setting.folder / "ledger.sqlite") as connection:
        connection.execute("DROP TABLE release_content")
        connection.execute("DROP TABLE pending_files")
        connection.execute("DROP TABLE pending_tables")
        connection.execute("DROP TABLE budgets")
        connection.execute("ALTER TABLE releases DROP COLUMN dp_epsilon")
        connection.execute("ALTER TABLE releases DROP COLUMN dp_delta")
        connection.execute("PRAGMA user_version = 1")
    ledger = Ledger(setting.folder / "ledger.sqlite")
    assert ledger.release_table(1).equals(
        pl.read_csv(setting.folder / "out1.csv", infer_schema=False)
    )
    assert ledger.release_hierarchies(1) == {}
    second = setting.release(setting.pt, "out2", key="id", seed=2)
    assert set(ledger.release_hierarchies(second.entry.id)) == set(second.entry.quasi_identifiers)


def test_issue10_p4_groups_joinable_on_one_column_are_audited_together(tmp_path: Path) -> None:
    """Review finding: releases 1, 2 and 4 linked on 'j' broke k; release 3 hid that group.

    Releases 1, 2 and 4 each publish one of a, b, c exactly and j; release 3
    publishes only a, so 'all earlier releases at once' shares no exact
    column and pairs alone stay k-anonymous. Release 4 must be refused.
    """
    rows = [
        "1,0,1,p", "0,0,1,q", "0,0,1,q", "0,1,0,r", "1,0,0,q", "0,1,0,r", "1,1,0,p", "0,0,1,q",
        "0,0,0,r", "1,0,0,q", "1,1,0,r", "0,1,0,r", "0,0,1,p", "0,0,0,r", "1,1,0,p", "0,0,0,r",
    ]  # fmt: skip
    source = tmp_path / "t.csv"
    source.write_text("a,b,c,j\n" + "\n".join(rows) + "\n")
    ledger = Ledger(tmp_path / "ledger.sqlite")
    qi = {"a": "suppress", "b": "suppress", "c": "suppress"}

    def release(number: int, exact: str) -> object:
        hidden = {q: 1 for q in qi if q != exact}
        config = AnonymizationConfig(
            quasi_identifiers=qi,  # type: ignore[arg-type]
            k=2,
            seed=number,
            min_levels=hidden,
            max_levels={exact: 0},
            insensitive=("j",),
        )
        return ledger.release(source, config, output=tmp_path / f"r{number}.csv")

    release(1, "a")
    release(2, "b")
    ledger.release(
        source,
        AnonymizationConfig(
            quasi_identifiers={"a": "suppress"}, k=2, seed=3, identifying=("b", "c", "j")
        ),
        output=tmp_path / "r3.csv",
    )
    with pytest.raises(VerificationError, match=r"linked with release\(s\) 1 2 on j"):
        release(4, "c")
    assert [e.id for e in ledger.entries()] == [1, 2, 3]
