"""The embedded engine keeps the engine contract (kanonym.engine.base)."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from kanonym.encode import encode, encode_grouped, group_frame
from kanonym.engine import EmbeddedEngine, Engine, Generalization
from kanonym.hierarchy import Hierarchy
from kanonym.io import load

ZIP = Hierarchy("zip", (("02138", "02139", "02141", None), ("0213*", "0213*", "0214*", None),
                        ("*", "*", "*", "*")))  # fmt: skip
SEX = Hierarchy("sex", (("f", "m"), ("*", "*")))

rows = st.lists(
    st.tuples(st.sampled_from(["02138", "02139", "02141", None]), st.sampled_from(["f", "m"])),
    min_size=1,
    max_size=40,
)


def frame_of(drawn: list[tuple[str | None, str]]) -> pl.DataFrame:
    names = [f"p{i}" for i in range(len(drawn))]
    return pl.DataFrame(
        {"name": names, "zip": [z for z, _ in drawn], "sex": [s for _, s in drawn]},
        schema={"name": pl.String, "zip": pl.String, "sex": pl.String},
    )


@given(rows)
def test_grouping_raw_values_first_gives_the_same_frequency_set(drawn) -> None:
    frame = frame_of(drawn)
    hierarchies = {"zip": ZIP, "sex": SEX}
    in_memory = encode(frame, hierarchies)
    grouped, row_group = group_frame(frame, ["zip", "sex"])
    assert int(grouped.counts.sum()) == frame.height
    by_groups, group_tuple = encode_grouped(grouped, hierarchies)
    assert np.array_equal(in_memory.frequency_set.codes, by_groups.frequency_set.codes)
    assert np.array_equal(in_memory.frequency_set.counts, by_groups.frequency_set.counts)
    assert np.array_equal(in_memory.frequency_set.rows(), group_tuple[row_group])
    for a, b in zip(in_memory.attributes, by_groups.attributes, strict=True):
        assert a.level_labels == b.level_labels
        assert all(np.array_equal(x, y) for x, y in zip(a.level_maps, b.level_maps, strict=True))


@given(rows, st.integers(0, 2), st.integers(0, 1), st.integers(0, 2**32))
def test_generalize_releases_exactly_the_planned_rows(drawn, zip_level, sex_level, seed) -> None:
    frame = frame_of(drawn)
    engine: Engine = EmbeddedEngine(load(frame))
    encoded = engine.encode({"zip": ZIP, "sex": SEX})
    n_tuples = len(encoded.frequency_set.counts)
    released = np.random.default_rng(seed).random(n_tuples) < 0.6
    plan = Generalization(encoded, (zip_level, sex_level), released, ("name",), seed)
    out = engine.generalize(plan)
    # Counted on the released table itself: rows of suppressed tuples are gone.
    suppressed = set(plan.suppressed_tuples())
    expected = [r for r in drawn if r not in suppressed]
    assert out.table.height == len(expected)
    assert out.table.columns == ["zip", "sex"]
    zip_labels, sex_labels = plan.labels(0), plan.labels(1)
    assert sorted(out.table.iter_rows(), key=str) == sorted(
        ((zip_labels[z], sex_labels[s]) for z, s in expected), key=str
    )
    # Each released row comes from the input row the engine names.
    for (z, s), source in zip(out.table.iter_rows(), out.source_rows.tolist(), strict=True):
        assert (zip_labels[drawn[source][0]], sex_labels[drawn[source][1]]) == (z, s)


def test_the_shuffle_follows_the_seed() -> None:
    frame = frame_of([("02138", "f"), ("02139", "m"), ("02141", "f"), (None, "m")] * 5)
    engine = EmbeddedEngine(load(frame))
    encoded = engine.encode({"zip": ZIP})
    keep = np.ones(len(encoded.frequency_set.counts), dtype=bool)
    first = engine.generalize(Generalization(encoded, (0,), keep, ("name",), 1)).source_rows
    again = engine.generalize(Generalization(encoded, (0,), keep, ("name",), 1)).source_rows
    other = engine.generalize(Generalization(encoded, (0,), keep, ("name",), 2)).source_rows
    assert first.tolist() == again.tolist() != other.tolist()
    assert sorted(first.tolist()) == list(range(20))


def test_engine_reads_columns_rows_and_values() -> None:
    frame = frame_of([("02138", "f"), (None, "m"), ("02138", "m")])
    engine = EmbeddedEngine(load(frame))
    assert engine.name == "embedded" and engine.rows == 3
    assert engine.columns == ("name", "zip", "sex")
    assert sorted(engine.distinct_values("zip"), key=str) == ["02138", None]
    grouped = engine.group(["zip"])
    assert dict(zip(grouped.values.get_column("zip").to_list(), grouped.counts.tolist(),
                    strict=True)) == {"02138": 2, None: 1}  # fmt: skip
