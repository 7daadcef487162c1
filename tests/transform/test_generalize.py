"""Full-domain transform: the released rows and the input row each comes from."""

from __future__ import annotations

import numpy as np
import polars as pl

from kanonym.encode import encode
from kanonym.hierarchy import Hierarchy
from kanonym.transform import generalize

ZIP = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"), ("*",) * 3))


def test_generalize_returns_the_input_row_of_each_released_row() -> None:
    frame = pl.DataFrame(
        {"name": list("abcdef"), "zip": ["02138", "02139", "02141"] * 2, "n": range(6)}
    )
    keep = np.array([True, False, True, True, False, True])
    released, rows = generalize(frame, encode(frame, {"zip": ZIP}), (1,), keep=keep,
                                drop=["name"], seed=9)  # fmt: skip
    assert released.columns == ["zip", "n"] and rows.dtype == np.int64
    # Every kept row once, none of the removed ones, in the shuffle's order.
    assert sorted(rows.tolist()) == [0, 2, 3, 5]
    assert released["n"].to_list() == rows.tolist()
    labels = {"02138": "0213*", "02139": "0213*", "02141": "0214*"}
    assert released["zip"].to_list() == [labels[frame["zip"][r]] for r in rows.tolist()]
    # The seed fixes the order.
    again = generalize(frame, encode(frame, {"zip": ZIP}), (1,), keep=keep, drop=["name"], seed=9)
    assert again[1].tolist() == rows.tolist()
