"""Dictionary encoding and the frequency set."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from kanonym.encode import FrequencySet, encode, pack_codes
from kanonym.hierarchy import Hierarchy


def test_only_present_leaves_are_encoded_in_hierarchy_order(samarati) -> None:
    table, hs = samarati
    encoded = encode(table.filter(pl.col("zip") != "94138"), hs)
    zip_attribute = encoded.attributes[1]
    assert zip_attribute.level_labels[0] == ("94139", "94141", "94142")
    assert zip_attribute.level_labels[1] == ("9413*", "9414*")
    assert zip_attribute.level_maps[1].tolist() == [0, 1, 1]
    assert encoded.heights == (1, 2)


def test_missing_is_a_value_of_its_own() -> None:
    h = Hierarchy("h", (("a", None), ("*", "*")))
    encoded = encode(pl.DataFrame({"x": ["a", None, None]}, schema={"x": pl.String}), {"x": h})
    attribute = encoded.attributes[0]
    assert encoded.row_codes(0).tolist() == [0, 1, 1]
    assert attribute.level_labels[0] == ("a", None)


def test_frequency_set_counts_distinct_tuples(samarati) -> None:
    table, hs = samarati
    encoded = encode(table, hs)
    fs = encoded.frequency_set
    assert fs.n_rows == 9
    assert len(fs.counts) == 7  # 9 rows, (asian, 94139) x3 collapse to one tuple
    assert sorted(fs.counts.tolist()) == [1, 1, 1, 1, 1, 1, 3]
    # Grouping raw values first gives the same set as grouping the rows' codes.
    rows = np.column_stack([encoded.row_codes(j) for j in range(len(hs))])
    again = FrequencySet.from_codes(rows)
    assert np.array_equal(again.codes, fs.codes) and np.array_equal(again.counts, fs.counts)
    for j, name in enumerate(hs):
        labels = encoded.attributes[j].level_labels[0]
        assert [labels[c] for c in encoded.row_codes(j)] == table.get_column(name).to_list()


@given(
    st.lists(
        st.tuples(st.integers(0, 2**20), st.integers(0, 2**20), st.integers(0, 2**20)),
        min_size=1,
        max_size=40,
    )
)
def test_packing_never_merges_distinct_rows(rows) -> None:
    matrix = np.array(rows, dtype=np.int64)
    # Radices this large force the re-numbering path (product above 2**62).
    keys, _ = pack_codes([matrix[:, j] for j in range(3)], (2**21, 2**21, 2**21))
    distinct_rows = {tuple(r) for r in rows}
    assert len(set(keys.tolist())) == len(distinct_rows)
    for a, b in zip(rows, keys.tolist(), strict=True):
        for c, d in zip(rows, keys.tolist(), strict=True):
            assert (a == c) == (b == d)
