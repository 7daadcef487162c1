"""Every release under every technique class is protected, and changes only what it may.

Each random table gets an ``id`` column released as it is, so every released row can be
traced to its input row; cells are then compared one by one with the hierarchy.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import problems

import kanonym

# (technique, algorithm, suppression allowed)
RUNS = [
    ("AG_TS", "optimal", True),
    ("AG_", "optimal", False),
    ("AG_AS", "datafly", False),
    ("AG_CS", "optimal", True),
    ("AG_CS", "greedy", True),
    ("AG_CS", "mu-argus", True),
    ("_TS", "optimal", True),
    ("_AS", "optimal", False),
    ("_AS", "minimal", False),
    ("_CS", "optimal", True),
    ("_CS", "mu-argus", True),
]
MODELS = [None, "l-diversity:distinct:2:s", "t-closeness:equal:0.5:s"]


@pytest.mark.parametrize(("technique", "algorithm", "suppresses"), RUNS)
@settings(max_examples=25, deadline=None)
@given(problem=problems(), data=st.data())
def test_every_release_is_protected_and_only_generalized_or_blanked(
    technique: str, algorithm: str, suppresses: bool, problem, data
) -> None:
    table, hs = problem
    n = table.height
    k = data.draw(st.integers(1, 3))
    model = data.draw(st.sampled_from(MODELS))
    # t-closeness compares with the table's distribution: removing rows changes it.
    tuple_suppression = technique.endswith("_TS")
    limit = data.draw(st.integers(0, n)) if suppresses and not (model and tuple_suppression) else 0
    values = data.draw(st.lists(st.sampled_from(["1", "2", "3"]), min_size=n, max_size=n))
    table = table.with_columns(pl.Series("s", values), pl.Series("id", list(range(n))))
    try:
        result = kanonym.anonymize(
            table,
            quasi_identifiers=hs,
            k=k,
            insensitive=["id", *([] if model else ["s"])],
            models=[model] if model else [],
            max_suppressed_rows=limit or None,
            technique=technique,
            algorithm=algorithm,
            seed=0,
        )
    except kanonym.InputError as error:
        assert "no generalization satisfies" in str(error) or "larger than" in str(error)
        return
    released = result.table
    report = result.report()
    assert report["technique"] == technique
    # Protected, measured on the released table alone.
    if released.height:
        summary = kanonym.check(released, list(hs), k, sensitive=["s"]).as_dict()
        assert summary["k_anonymous"]
        if model and model.startswith("l-diversity"):
            assert summary["sensitive"]["s"]["l_distinct"] >= 2
        if model and model.startswith("t-closeness") and not tuple_suppression:
            assert summary["sensitive"]["s"]["t_equal"] <= 0.5 + 1e-9
    # Only generalization to the chosen level, or the root in a blanked cell.
    levels = result.transformation
    if technique.startswith("_"):
        assert all(level in (0, hs[q].height) for q, level in levels.items())
        if technique != "_AS":
            assert set(levels.values()) == {0}
    source = {row["id"]: row for row in table.iter_rows(named=True)}
    blanked_cells, touched = 0, 0
    for row in released.iter_rows(named=True):
        original = source[row["id"]]
        assert row["s"] == original["s"]
        blanked_here = 0
        for q, h in hs.items():
            label = dict(zip(h.levels[0], h.levels[levels[q]], strict=True))[original[q]]
            if row[q] != label:
                assert row[q] == h.levels[-1][0], (q, row[q], label)
                blanked_here += 1
        blanked_cells += blanked_here
        touched += blanked_here > 0
    cells = report["suppressed_cells"]
    assert (cells["total"], cells["rows"]) == (blanked_cells, touched)
    if kanonym.technique.TECHNIQUES[technique].cells:
        assert released.height == n and result.suppressed_rows == 0
        assert touched <= limit
    else:
        assert blanked_cells == 0
        assert n - released.height == result.suppressed_rows <= limit
    assert (cells["by_phase"] is not None) == (algorithm == "mu-argus")
