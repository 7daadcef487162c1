"""Every release under every technique class is protected, and changes only what it may.

Each random table gets an ``id`` column released as it is, so every released row can be
traced to its input row; cells are then compared one by one with the hierarchy.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from tests import oracle
from tests.meaningful import assume_meaningful
from tests.strategies import problems

import kanonym
from kanonym.models import parse_model

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
            models=[parse_model(model)] if model else [],
            max_suppressed_rows=limit or None,
            technique=technique,
            algorithm=algorithm,
            seed=0,
        )
    except (kanonym.InputError, kanonym.NoSolutionError) as error:
        if k > n:
            event("refused: k above the rows")
            assert "larger than" in str(error)
            return
        assert isinstance(error, kanonym.NoSolutionError), str(error)
        # Refused only when brute force finds no node of the technique's lattice either.
        found = oracle.satisfying_nodes(
            table,
            hs,
            k,
            limit,
            models=[oracle.Model(model)] if model else [],
            suppression=oracle.technique_suppression(technique),
            levels=oracle.technique_levels(technique, hs),
        )
        if found and oracle.technique_suppression(technique) == "cell":
            # kanonym's cell conversion is a heuristic that can miss a conversion
            # (test_cell_suppression_refuses_only_without_a_conversion, strict xfail).
            event("refused by the cell heuristic although a conversion exists")
            assume_meaningful(False, "the cell heuristic missed a conversion")
        assert not found, f"refused, yet {found} satisfy"
        event("refused: no node satisfies (brute force)")
        return
    released = result.table
    report = result.report()
    assert report["technique"] == technique
    # Protected, measured on the released table alone.
    if released.height:
        summary = kanonym.check(released, list(hs), k=k, sensitive=["s"]).as_dict()
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


@pytest.mark.xfail(
    strict=True,
    reason="the cell conversion (kanonym.evaluation.cell_choice) is a heuristic: it does not "
    "take rows from a passing class, so _CS refuses although a conversion exists",
)
def test_cell_suppression_refuses_only_without_a_conversion() -> None:
    # Three q00 rows and one q01 row, k = 2, two rows may be touched: blanking q01
    # and one q00 releases [q00, q00, *, *], 2-anonymous.
    hs = {"q0": kanonym.Hierarchy("q0", (("q00", "q01"), ("*", "*")))}
    table = pl.DataFrame({"q0": ["q00", "q00", "q00", "q01"]})
    assert oracle.cells_within(table, hs, (0,), k=2, limit=2)
    result = kanonym.anonymize(
        table, quasi_identifiers=hs, k=2, max_suppressed_rows=2, technique="_CS"
    )
    assert sorted(result.table["q0"].to_list()) == ["*", "*", "q00", "q00"]
