"""The job-file writer: what it writes, tomllib reads back unchanged."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kanonym.errors import InputError
from kanonym.io.toml import toml_document

_scalars = st.one_of(
    st.text(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
)
_values = st.one_of(_scalars, st.lists(st.text(), max_size=4))
_options = st.dictionaries(
    st.text(min_size=1),
    st.one_of(_values, st.dictionaries(st.text(min_size=1), _values, max_size=4)),
    max_size=6,
)


@given(options=_options)
def test_tomllib_reads_back_what_is_written(options) -> None:
    assert tomllib.loads(toml_document(options)) == options


def test_tables_come_after_every_other_key() -> None:
    text = toml_document({"qi": {"zip": "mask"}, "k": 5})
    assert text.index("k = 5") < text.index("[qi]")
    assert tomllib.loads(text) == {"qi": {"zip": "mask"}, "k": 5}


def test_a_comment_heads_the_file() -> None:
    text = toml_document({"k": 2}, comment="made by\nthe sweep")
    assert text.startswith("# made by\n# the sweep\n")


def test_other_values_are_refused() -> None:
    with pytest.raises(InputError, match="cannot write"):
        toml_document({"k": object()})


@given(
    whole=st.integers(-(2**63), 2**63 - 1),
    number=st.floats(allow_nan=False, allow_infinity=False, width=32),
    width=st.sampled_from([np.float64, np.float32]),
)
def test_numpy_numbers_are_written_as_numbers(whole, number, width) -> None:
    # repr of a NumPy number is np.float64(2.0), which TOML cannot read.
    options = {"k": np.int64(whole), "limit": width(number), "on": np.bool_(True).item()}
    assert tomllib.loads(toml_document(options)) == {
        "k": whole,
        "limit": float(width(number)),
        "on": True,
    }


@given(comment=st.text())
def test_any_comment_keeps_the_file_valid(comment) -> None:
    # TOML forbids control characters (but tab) in comments: they are escaped.
    text = toml_document({"k": 2}, comment=comment)
    assert tomllib.loads(text) == {"k": 2}


def test_a_control_character_in_a_comment_is_escaped() -> None:
    text = toml_document({"k": 2}, comment="picked\x01 by the sweep")
    assert text.startswith("# picked\\u0001 by the sweep\n")
