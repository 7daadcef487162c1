"""Dictionary coding of columns, and the frequency set built from looked-up codes."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from kanonym.encode import FrequencySet, dictionary_codes

_VALUES = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "", "0", "α"]))


@given(st.lists(st.tuples(_VALUES, _VALUES), max_size=30))
def test_codes_index_the_distinct_values(rows) -> None:
    frame = pl.DataFrame(rows, schema={"x": pl.String, "y": pl.String}, orient="row")
    coded = dictionary_codes(frame, ["x", "y"])
    assert coded.codes.shape == (len(rows), 2) and coded.codes.flags.f_contiguous
    for j, name in enumerate(["x", "y"]):
        values = coded.values[j]
        assert len(set(values)) == len(values) == frame.get_column(name).n_unique()
        decoded = [values[code] for code in coded.codes[:, j]]
        assert decoded == frame.get_column(name).to_list()


def test_known_values_are_used_and_numbers_compare_as_strings() -> None:
    frame = pl.DataFrame({"n": [3, 1, 3, None]})
    coded = dictionary_codes(frame, ["n"], known={"n": ["1", None, "3"]})
    assert coded.values == (("1", "3", None),)
    assert coded.codes[:, 0].tolist() == [1, 0, 1, 2]


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=40),
    st.permutations([0, 1, 2, 3]),
)
def test_looked_up_frequency_set_equals_the_one_of_the_code_matrix(rows, permutation) -> None:
    codes = np.asfortranarray(np.array(rows, dtype=np.uint32))
    lookups = [np.array(permutation, dtype=np.int64), np.array([2, 0, 1], dtype=np.int64)]
    looked_up = np.column_stack([lookups[j][codes[:, j]] for j in range(2)])
    expected = FrequencySet.from_codes(looked_up, (4, 3))
    got = FrequencySet.from_lookups(codes, lookups, (4, 3))
    assert np.array_equal(got.codes, expected.codes)
    assert np.array_equal(got.counts, expected.counts)
    assert np.array_equal(got.rows(), expected.rows())
    # Radices whose product passes the key limit take the code-matrix path.
    wide = FrequencySet.from_lookups(codes, lookups, (2**40, 2**40))
    assert np.array_equal(wide.counts, expected.counts)
