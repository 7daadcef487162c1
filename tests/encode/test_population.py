"""A sample's frequency set over its population's tuples."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kanonym.encode import encode, encode_with_population, group_frame
from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy

SEX = Hierarchy("sex", (("F", "M"), ("*", "*")))
AGE = Hierarchy("age", (("30", "40", "50"), ("<45", "<45", ">=45"), ("*",) * 3))


def _encode(sample: pl.DataFrame, population: pl.DataFrame):
    hierarchies = {"sex": SEX, "age": AGE}
    grouped, _ = group_frame(population, list(hierarchies))
    return encode_with_population(encode(sample, hierarchies), grouped, hierarchies)


def test_counts_rows_and_population_per_population_tuple() -> None:
    population = pl.DataFrame(
        {"sex": ["F", "M", "F", "M", "F"], "age": ["30", "40", "30", "50", "50"]}
    )
    sample = pl.DataFrame({"sex": ["F", "F"], "age": ["30", "50"]})
    fs = _encode(sample, population).frequency_set
    tuples = [tuple(row) for row in fs.codes.tolist()]
    assert len(tuples) == 4  # the population's distinct tuples
    by_tuple = dict(
        zip(tuples, zip(fs.counts.tolist(), fs.population.tolist(), strict=True), strict=True)
    )
    assert sorted(by_tuple.values()) == [(0, 1), (0, 1), (1, 1), (1, 2)]
    # Each sample row points at its population tuple.
    assert fs.counts[fs.row_tuple].tolist() == [1, 1]


def test_a_sample_value_absent_from_the_population_is_refused() -> None:
    population = pl.DataFrame({"sex": ["F", "F"], "age": ["30", "30"]})
    sample = pl.DataFrame({"sex": ["M"], "age": ["30"]})
    with pytest.raises(InputError, match="column 'sex' holds 'M', which no row of"):
        _encode(sample, population)


def test_a_sample_tuple_absent_from_the_population_is_refused() -> None:
    population = pl.DataFrame({"sex": ["F", "M"], "age": ["30", "40"]})
    sample = pl.DataFrame({"sex": ["F"], "age": ["40"]})
    with pytest.raises(InputError, match="a row with sex=F, age=40 is in no row of"):
        _encode(sample, population)


def test_a_population_smaller_than_the_sample_is_refused() -> None:
    population = pl.DataFrame({"sex": ["F"], "age": ["30"]})
    sample = pl.DataFrame({"sex": ["F", "F"], "age": ["30", "30"]})
    with pytest.raises(InputError, match="2 rows hold sex=F, age=30 but the population only 1"):
        _encode(sample, population)


@given(
    st.lists(
        st.tuples(st.sampled_from("FM"), st.sampled_from(["30", "40", "50"])),
        min_size=1,
        max_size=30,
    ),
    st.data(),
)
def test_sample_counts_add_up_to_the_sample(
    rows: list[tuple[str, str]], data: st.DataObject
) -> None:
    population = pl.DataFrame({"sex": [r[0] for r in rows], "age": [r[1] for r in rows]})
    chosen = data.draw(st.lists(st.integers(0, len(rows) - 1), unique=True, min_size=1))
    sample = population[chosen]
    fs = _encode(sample, population).frequency_set
    assert fs.counts.sum() == sample.height and fs.population.sum() == population.height
    assert (fs.counts <= fs.population).all()
    # The row index maps each sample row to the population tuple of its values.
    assert np.bincount(fs.row_tuple, minlength=len(fs.counts)).tolist() == fs.counts.tolist()
