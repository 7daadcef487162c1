"""The ledger's policies (kanonym.ledger.policy) on records in memory: no ledger file, no SQLite.

Each test builds the earlier releases as :class:`LedgerEntry` values and
checks what the policy decides for the next release (Sweeney 2002, §4.1-4.3).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import polars as pl
import pytest

from kanonym.config import AnonymizationConfig
from kanonym.engine import EmbeddedEngine
from kanonym.errors import InputError, VerificationError
from kanonym.hierarchy import Hierarchy, MaskBuilder, SuppressBuilder
from kanonym.io import Table
from kanonym.ledger import policy
from kanonym.ledger.fingerprints import KEY_HASH
from kanonym.ledger.records import HierarchyRecord, LedgerEntry
from kanonym.ledger.sources import SourceRows

SOURCE, FINGERPRINT = "/data/patients.csv", "a" * 64
ZIP = Hierarchy("zip", (("02138", "02139"), ("0213*", "0213*"), ("*", "*")))
AGE = Hierarchy("age", (("30", "40"), ("*", "*")))


@pytest.fixture(autouse=True)
def no_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    """The policies are pure: any SQLite connection fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a policy opened an SQLite database")

    monkeypatch.setattr(sqlite3, "connect", refuse)


def record(spec: str) -> HierarchyRecord:
    return HierarchyRecord(source=spec, height=1, sha256="0" * 64)


def entry(release_id: int, **changes: object) -> LedgerEntry:
    """A recorded release of the patients table: zip masked at level 1, k=2."""
    fields: dict[str, object] = {
        "id": release_id,
        "created": "2025-01-01T00:00:00+00:00",
        "kanonym_version": "0.0.0",
        "source": SOURCE,
        "source_sha256": FINGERPRINT,
        "source_rows": 4,
        "quasi_identifiers": {"zip": record("mask")},
        "models": ({"model": "k-anonymity", "k": 2},),
        "transformation": {"zip": 1},
        "recoding": None,
        "seed": 100 + release_id,
        "released_columns": ("zip", "disease"),
        "released_rows": 4,
        "release_sha256": f"{release_id}" * 64,
        "key": None,
        "based_on": None,
        "replay_of": None,
        "complementary": (),
        "output": f"/out/r{release_id}.csv",
        "report": None,
    }
    fields.update(changes)
    return LedgerEntry(**fields)  # type: ignore[arg-type]


def patients(**extra: list[str]) -> SourceRows:
    frame = pl.DataFrame(
        {
            "id": ["p1", "p2", "p3", "p4"],
            "zip": ["02138", "02139", "02138", "02139"],
            "age": ["30", "30", "40", "40"],
            "disease": ["flu", "cold", "flu", "cold"],
            **extra,
        }
    )
    return SourceRows(EmbeddedEngine(Table(frame=frame, source="patients.csv", dialect=None)))


def plan(config: AnonymizationConfig, **options: object) -> policy.ReleasePlan:
    arguments: dict[str, object] = {
        "same": (),
        "key": None,
        "base": None,
        "replayed": None,
        "last_id": 0,
        "earlier_hierarchies": {},
    }
    arguments.update(options)
    return policy.plan_release(patients(), config, **arguments)  # type: ignore[arg-type]


def config(**options: object) -> AnonymizationConfig:
    fields: dict[str, object] = {
        "quasi_identifiers": {"zip": "mask"},
        "k": 2,
        "identifying": ("id",),
        "insensitive": ("age", "disease"),
    }
    fields.update(options)
    return AnonymizationConfig(**fields)  # type: ignore[arg-type]


# Complementary release (§4.2).


def test_a_column_an_earlier_release_published_joins_the_qi_with_the_earlier_hierarchy() -> None:
    earlier = entry(1, released_columns=("zip", "age", "disease"))
    made = plan(config(), same=[earlier], last_id=1, earlier_hierarchies={"age": AGE})
    assert made.complementary == ("age", "disease")
    assert made.config.hierarchies["age"] is AGE
    # Nothing recorded for disease: suppression, the only generalization that needs none.
    assert isinstance(made.config.hierarchies["disease"], SuppressBuilder)
    assert "age" not in made.config.insensitive and "disease" not in made.config.insensitive


def test_a_first_release_or_another_source_adds_nothing() -> None:
    assert plan(config()).complementary == ()
    made = plan(config(), same=[], last_id=3, earlier_hierarchies={"age": AGE})
    assert made.complementary == () and set(made.config.hierarchies) == {"zip"}


def test_a_replay_sees_only_the_releases_before_its_original() -> None:
    first = entry(1, released_columns=("zip", "disease"))
    later = entry(2, released_columns=("zip", "age"))
    made = plan(config(seed=101), same=[first, later], replayed=first, last_id=2)
    assert made.complementary == ()
    assert made.config.seed == 101


def test_an_earlier_published_column_cannot_be_sensitive() -> None:
    with pytest.raises(InputError, match=r"complementary release.*cannot be sensitive"):
        plan(config(insensitive=("age",), sensitive=("disease",)), same=[entry(1)], last_id=1)


def test_earlier_hierarchies_keep_the_latest_one_that_covers_the_values() -> None:
    ages = {"transformation": {"age": 1}}
    old = entry(1, quasi_identifiers={"age": record("suppress")}, **ages)
    new = entry(2, quasi_identifiers={"age": record("mask")}, **ages)
    table = patients()
    found = policy.earlier_hierarchies(table, [new, old], {1: {}, 2: {"age": AGE}})
    assert found == {"age": AGE}
    # A grown table holds a value the stored hierarchy lacks: its spec is rebuilt.
    assert isinstance(table.engine, EmbeddedEngine)
    grown = table.engine.table.frame.with_columns(pl.Series("age", ["30", "40", "50", "50"]))
    rebuilt = policy.earlier_hierarchies(
        SourceRows(EmbeddedEngine(Table(frame=grown, source="patients.csv", dialect=None))),
        [old, new],
        {2: {"age": AGE}},
    )
    assert isinstance(rebuilt["age"], MaskBuilder)


def test_resolve_prefers_what_was_stored_then_the_release_being_made() -> None:
    release = entry(1)
    assert policy.resolve_hierarchies(release, {"zip": ZIP}, []) == {"zip": ZIP}
    fallback = Hierarchy("mask", ZIP.levels)
    assert policy.resolve_hierarchies(release, {}, [], {"zip": fallback}) == {"zip": fallback}


# Temporal release (§4.3).


def test_based_on_starts_the_search_at_the_levels_the_base_published() -> None:
    base = entry(1, key="id", transformation={"zip": 2})
    made = plan(config(min_levels={"zip": 1}), same=[base], key="id", base=base, last_id=1)
    assert made.config.min_levels == {"zip": 2}
    assert made.complementary == ()
    assert made.config.identifying == () and made.config.insensitive[-1] == "id"


def test_based_on_refuses_a_max_level_below_the_base() -> None:
    base = entry(1, key="id", transformation={"zip": 2})
    with pytest.raises(InputError, match=r"`max_levels` 1 of 'zip' is below level 2"):
        plan(config(max_levels={"zip": 1}), same=[base], key="id", base=base, last_id=1)


def test_based_on_needs_the_base_key() -> None:
    with pytest.raises(InputError, match="made without `key`"):
        plan(config(), same=[entry(1)], key="id", base=entry(1), last_id=1)
    with pytest.raises(InputError, match="identifies records by 'id', not 'None'"):
        plan(config(), same=[entry(1, key="id")], base=entry(1, key="id"), last_id=1)


def test_the_key_must_be_unique_and_never_released() -> None:
    with pytest.raises(InputError, match="2 rows share their key"):
        policy.plan_release(
            patients(ssn=["1", "1", "2", "3"]),
            config(identifying=("id",), insensitive=("age", "disease")),
            same=(),
            key="ssn",
            base=None,
            replayed=None,
            last_id=0,
            earlier_hierarchies={},
        )
    with pytest.raises(InputError, match="cannot be a released role"):
        plan(config(insensitive=("age",), sensitive=("disease",)), key="disease")


def test_a_record_published_more_specifically_than_before_is_refused() -> None:
    base = entry(1, key="id")
    previous = pl.DataFrame({KEY_HASH: [b"a", b"b"], "zip": ["0213*", "02139"]})
    same_or_coarser = pl.DataFrame({KEY_HASH: [b"a", b"b"], "zip": ["0213*", "*"]})
    policy.check_temporal(same_or_coarser, previous, base, {"zip": ZIP})
    finer = pl.DataFrame({KEY_HASH: [b"a", b"b"], "zip": ["02138", "02139"]})
    with pytest.raises(VerificationError, match=r"1 record.*more specific"):
        policy.check_temporal(finer, previous, base, {"zip": ZIP})


# Unsorted matching (§4.1): seeds and replays.


def test_a_seed_used_for_the_source_is_refused_unless_replayed() -> None:
    first = entry(1, seed=7)
    with pytest.raises(InputError, match=r"seed 7 was already used .* release 1"):
        policy.choose_seed(7, [first], None)
    assert policy.choose_seed(8, [first], None) == 8
    assert policy.choose_seed(None, [first], first) == 7
    with pytest.raises(InputError, match="`seed=8` contradicts it"):
        policy.choose_seed(8, [first], first)


def test_a_drawn_seed_skips_the_used_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    draws = iter([101, 102, 5])
    monkeypatch.setattr(policy.secrets, "randbits", lambda bits: next(draws))
    assert policy.choose_seed(None, [entry(1), entry(2)], None) == 5


def test_a_replay_must_reproduce_its_original() -> None:
    original = entry(1)
    policy.check_replay(original, original.release_sha256)
    policy.check_replay(None, "f" * 64)
    with pytest.raises(InputError, match="does not reproduce release 1"):
        policy.check_replay(original, "f" * 64)
    with pytest.raises(InputError, match="release 2 is of another source"):
        plan(config(), same=[original], replayed=entry(2), last_id=2)


# Which releases are of the same source, and which key they were made with.


def test_same_source_by_content_path_or_shared_keys() -> None:
    moved = entry(1, source="/elsewhere.csv")
    edited = entry(2, source_sha256="c" * 64)
    other = entry(3, source="/other.csv", source_sha256="d" * 64)
    found = policy.releases_of_source([moved, edited, other], {3}, SOURCE, FINGERPRINT)
    assert [e.id for e in found] == [1, 2, 3]
    assert [e.id for e in policy.releases_of_source([other], set(), SOURCE, FINGERPRINT)] == []
    # A DataFrame has no path: only its content tells.
    frame = entry(4, source=policy.DATAFRAME_SOURCE, source_sha256="e" * 64)
    assert not policy.same_source(frame, policy.DATAFRAME_SOURCE, FINGERPRINT)


def test_a_key_of_an_earlier_release_stays_a_key() -> None:
    entries = [entry(1, key="ssn"), entry(2, key="id"), entry(3, key="id")]
    assert policy.earlier_keys(entries, ["id", "zip", "ssn"]) == ["id", "ssn"]
    assert policy.earlier_keys(entries, ["zip"]) == []
    assert policy.keyed_before(entries, "id", set(), SOURCE, FINGERPRINT)
    stranger = [entry(1, key="id", source="/x.csv", source_sha256="d" * 64)]
    assert not policy.keyed_before(stranger, "id", set(), SOURCE, FINGERPRINT)
    assert policy.keyed_before(stranger, "id", {1}, SOURCE, FINGERPRINT)


# Linking a new release with the earlier ones (§4.2).


def _ages_and_zips() -> tuple[LedgerEntry, pl.DataFrame, pl.DataFrame]:
    """Release 1 publishes age and hides zip; the new one the reverse; both publish disease."""
    earlier = entry(
        1,
        quasi_identifiers={"age": record("age"), "zip": record("zip")},
        transformation={"age": 0, "zip": 1},
        released_columns=("age", "zip", "disease"),
    )
    first = pl.DataFrame(
        {"age": ["30", "30", "40", "40"], "zip": ["*"] * 4, "disease": ["a", "b", "c", "d"]}
    )
    new = pl.DataFrame(
        {
            "age": ["*"] * 4,
            "zip": ["02138", "02139", "02138", "02139"],
            "disease": ["a", "b", "c", "d"],
        }
    )
    return earlier, first, new


def test_a_release_that_links_below_k_with_an_earlier_one_is_refused() -> None:
    earlier, first, new = _ages_and_zips()
    zip_ = Hierarchy("zip", (("02138", "02139"), ("*", "*")))
    hierarchies = {"age": AGE, "zip": zip_}
    with pytest.raises(VerificationError, match=r"release\(s\) 1 on disease.*4 class\(es\).*k=2"):
        policy.check_links(
            new, hierarchies, 2, [earlier], (), released={1: first}, stored={1: hierarchies}
        )
    # Generalizing the shared attribute's partner as release 1 did leaves classes of 2.
    safe = new.with_columns(pl.lit("*").alias("zip"))
    policy.check_links(
        safe, hierarchies, 2, [earlier], (), released={1: first}, stored={1: hierarchies}
    )


def test_releases_sharing_no_exact_column_cannot_be_linked() -> None:
    earlier, first, new = _ages_and_zips()
    hierarchies = {"age": AGE, "zip": Hierarchy("zip", (("02138", "02139"), ("*", "*")))}
    assert (
        policy.link_releases(
            [first.drop("disease"), new.drop("disease")],
            ["release 1", "this release"],
            [hierarchies, hierarchies],
            2,
            declared={"age", "zip"},
        )
        is None
    )
    policy.check_links(
        new.drop("disease"),
        hierarchies,
        2,
        [earlier],
        (),
        released={1: first.drop("disease")},
        stored={1: hierarchies},
    )


def test_declared_leaves_out_complementary_attributes() -> None:
    grown = entry(
        2,
        quasi_identifiers={"zip": record("mask"), "age": record("suppress")},
        complementary=("age",),
        transformation={"zip": 1, "age": 0},
    )
    assert policy.declared([entry(1), grown]) == {"zip"}
    assert policy.declared([dataclasses.replace(grown, complementary=())]) == {"zip", "age"}


def test_the_source_name_is_an_absolute_path_or_dataframe(tmp_path: Path) -> None:
    assert policy.source_name(tmp_path / "t.csv") == str((tmp_path / "t.csv").resolve())
    assert policy.source_name(pl.DataFrame({"a": [1]})) == policy.DATAFRAME_SOURCE
