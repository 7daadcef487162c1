"""Encoding of sensitive attributes and their per-tuple histograms."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from kanonym.encode import encode, encode_sensitive
from kanonym.hierarchy import Hierarchy


def test_numeric_values_order_as_numbers_and_missing_comes_last() -> None:
    frame = pl.DataFrame({"s": ["10", "9", "2.5", None]})
    (attribute,) = encode_sensitive(frame, ["s"])
    assert attribute.labels == ("2.5", "9", "10", None)
    assert not attribute.numeric  # a missing value has no place on the number line
    (complete,) = encode_sensitive(frame.drop_nulls(), ["s"])
    assert complete.numeric and complete.labels == ("2.5", "9", "10")


def test_text_values_order_as_strings() -> None:
    (attribute,) = encode_sensitive(pl.DataFrame({"d": ["flu", "cold", "10"]}), ["d"])
    assert attribute.labels == ("10", "cold", "flu") and not attribute.numeric


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y", None])),
        min_size=1,
        max_size=30,
    )
)
def test_histograms_count_each_tuples_values(rows) -> None:
    frame = pl.DataFrame(rows, schema={"q": pl.String, "s": pl.String}, orient="row")
    hierarchy = Hierarchy("q", (("a", "b", "c"), ("*", "*", "*")))
    encoded = encode(frame, {"q": hierarchy})
    fs = encoded.frequency_set
    (attribute,) = encode_sensitive(frame, ["s"])
    histograms = attribute.histograms(fs)
    assert histograms.sum() == len(rows)
    assert np.array_equal(histograms.sum(axis=1), fs.counts)
    assert np.array_equal(histograms.sum(axis=0), attribute.overall())
    for t in range(len(fs.counts)):
        q = encoded.attributes[0].level_labels[0][fs.codes[t, 0]]
        for v, label in enumerate(attribute.labels):
            assert histograms[t, v] == sum(1 for r in rows if r == (q, label))
