"""Roll-up partitions equal a direct grouping, on every counting path.

The dense counter, the hash table (key spaces over 2**20) and int32 per-level
codes (levels with over 65,536 values) are each forced here, and every
partition is compared with grouping the generalized code rows by NumPy.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import problems

from kanonym.encode import encode
from kanonym.encode.grouping import HashTable, count_hashed, count_into
from kanonym.evaluation.partition import Partition, Rollup
from kanonym.hierarchy import Hierarchy


def _reference(rollup: Rollup, node: tuple[int, ...]) -> dict[tuple[int, ...], int]:
    """Class sizes of ``node`` by NumPy: generalized code rows, grouped."""
    fs = rollup.base
    codes = np.stack(
        [rollup.generalized[a, level, fs.members].astype(np.int64) for a, level in enumerate(node)],
        axis=1,
    )
    rows, inverse = np.unique(codes, axis=0, return_inverse=True)
    sizes = np.bincount(inverse.reshape(-1), weights=fs.sizes).astype(np.int64)
    return {tuple(r.tolist()): int(s) for r, s in zip(rows, sizes, strict=True)}


def _as_dict(rollup: Rollup, partition: Partition) -> dict[tuple[int, ...], int]:
    codes = rollup.codes(partition)
    return {tuple(c.tolist()): int(s) for c, s in zip(codes, partition.sizes, strict=True)}


def _rollup(frame: pl.DataFrame, hierarchies: dict[str, Hierarchy]) -> Rollup:
    encoded = encode(frame, hierarchies)
    return Rollup(encoded, encoded.frequency_set)


@settings(max_examples=60, deadline=None)
@given(problems(), st.data())
def test_partitions_equal_direct_grouping_from_base_and_from_a_specialization(
    problem: tuple[pl.DataFrame, dict[str, Hierarchy]], data: st.DataObject
) -> None:
    frame, hierarchies = problem
    rollup = _rollup(frame, hierarchies)
    heights = [h.height for h in hierarchies.values()]
    low = tuple(data.draw(st.integers(0, h)) for h in heights)
    high = tuple(data.draw(st.integers(level, h)) for level, h in zip(low, heights, strict=True))
    below = rollup.partition(low, rollup.base)
    assert _as_dict(rollup, below) == _reference(rollup, low)
    # Rolled up from the specialization, and with each row's class.
    above, class_of = rollup.group(high, below)
    assert _as_dict(rollup, above) == _reference(rollup, high)
    assert int(above.sizes.sum()) == frame.height
    source = below if below.n_classes * 2 < rollup.base.n_classes else rollup.base
    assert np.array_equal(np.bincount(class_of, weights=source.sizes), above.sizes)


def _wide(columns: int, values: int, rows: int, seed: int) -> tuple[pl.DataFrame, dict]:
    """``columns`` attributes of ``values`` leaves each (two levels and a root)."""
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {f"c{j}": [f"v{x}" for x in rng.integers(0, values, rows)] for j in range(columns)}
    )
    hierarchies = {}
    for j in range(columns):
        leaves = tuple(f"v{i}" for i in range(values))
        hierarchies[f"c{j}"] = Hierarchy(
            f"c{j}", (leaves, tuple(f"g{i % 7}" for i in range(values)), ("*",) * values)
        )
    return frame, hierarchies


def test_hashed_path_for_key_spaces_beyond_the_dense_counter() -> None:
    frame, hierarchies = _wide(columns=3, values=200, rows=3000, seed=1)
    rollup = _rollup(frame, hierarchies)
    for node in [(0, 0, 0), (0, 1, 0), (1, 0, 2)]:  # 8e6, 2.8e5 and 1.4e3 slots
        assert _as_dict(rollup, rollup.partition(node, rollup.base)) == _reference(rollup, node)
    # The reused table is left empty: the same call twice gives the same classes.
    first = rollup.partition((0, 0, 0), rollup.base)
    again = rollup.partition((0, 0, 0), rollup.base)
    assert np.array_equal(first.sizes, again.sizes)


def test_int32_codes_when_a_level_has_over_65536_values() -> None:
    # About 75,000 of the 100,000 leaves occur (codes count the values present).
    frame, hierarchies = _wide(columns=2, values=100_000, rows=140_000, seed=2)
    rollup = _rollup(frame, hierarchies)
    assert rollup.generalized.dtype == np.int32
    for node in [(0, 0), (0, 1), (1, 2)]:
        assert _as_dict(rollup, rollup.partition(node, rollup.base)) == _reference(rollup, node)


@settings(deadline=None)  # the first example may pay compilation
@given(st.lists(st.integers(0, 40), min_size=0, max_size=200))
def test_count_into_groups_like_unique_and_leaves_its_table_empty(values: list[int]) -> None:
    keys = np.array(values, dtype=np.int64)
    sizes = np.arange(1, len(keys) + 1, dtype=np.int64)
    table = HashTable(len(keys))
    group = np.empty(len(keys), dtype=np.int64)
    members, totals = count_into(
        keys, sizes, np.arange(len(keys)), table.slots, table.scratch, group
    )
    assert (table.slots[:, 0] == -1).all() and (table.slots[:, 1] == 0).all()
    expected = {k: int(sizes[keys == k].sum()) for k in set(values)}
    assert {int(keys[m]): int(t) for m, t in zip(members, totals, strict=True)} == expected
    assert [int(keys[members[g]]) for g in group] == values
    first, again, _ = count_hashed(keys, sizes, np.arange(len(keys)))
    assert np.array_equal(first, members) and np.array_equal(again, totals)
