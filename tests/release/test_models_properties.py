"""Every release made under sensitive-attribute models satisfies them.

Checked through ``kanonym.check``'s measurements (regrouped from the released
table, independent of the search). Those measurements take the reference
distribution P from the table they read, the search from the input: the two
agree when nothing is suppressed, so the models comparing with P run with
MaxSup = 0, the l-diversity variants with any MaxSup.
"""

from __future__ import annotations

from collections import Counter

import polars as pl
from hypothesis import event, given, settings
from hypothesis import strategies as st
from tests import oracle
from tests.meaningful import assume_meaningful
from tests.strategies import problems

import kanonym
from kanonym.models import parse_model
from kanonym.verify import verify_models

# (spec, measurement key, passes(measured value) -> bool, MaxSup allowed)
CASES = [
    ("l-diversity:distinct:2:s", "l_distinct", lambda v: v >= 2, True),
    ("l-diversity:entropy:1.5:s", "l_entropy", lambda v: v >= 1.5 - 1e-9, True),
    ("t-closeness:equal:0.4:s", "t_equal", lambda v: v <= 0.4 + 1e-9, False),
    ("t-closeness:ordered:0.4:s", "t_ordered", lambda v: v <= 0.4 + 1e-9, False),
    ("beta-likeness:basic:2:s", "beta_basic", lambda v: v <= 2 + 1e-9, False),
]


@settings(max_examples=60, deadline=None)
@given(
    problem=problems(),
    data=st.data(),
    case=st.sampled_from(CASES),
    algorithm=st.sampled_from(["optimal", "datafly", "greedy"]),
)
def test_every_release_satisfies_its_models(problem, data, case, algorithm) -> None:
    table, hs = problem
    spec, key, passes, suppression_allowed = case
    values = data.draw(
        st.lists(st.sampled_from(["1", "2", "3"]), min_size=table.height, max_size=table.height)
    )
    table = table.with_columns(pl.Series("s", values))
    max_sup = data.draw(st.integers(0, 3)) if suppression_allowed else 0
    try:
        result = kanonym.anonymize(
            table,
            quasi_identifiers=hs,
            k=1,
            models=[parse_model(spec)],
            max_suppressed_rows=max_sup,
            algorithm=algorithm,
            metric="loss",
            seed=0,
        )
    except (kanonym.InputError, kanonym.NoSolutionError) as error:
        assert isinstance(error, kanonym.NoSolutionError), str(error)
        # Refused only when brute force finds no node either.
        assert not oracle.satisfying_nodes(table, hs, 1, max_sup, models=[oracle.Model(spec)])
        event("refused: no node satisfies (brute force)")
        return
    assert table.height - result.table.height <= max_sup
    assume_meaningful(result.table.height > 0, "every row suppressed")
    measured = kanonym.check(result.table, list(hs), k=1, sensitive=["s"]).as_dict()
    value = measured["sensitive"]["s"][key]
    assert value is not None and passes(value), (spec, value)


S_HIERARCHY = kanonym.Hierarchy("s", (("1", "2", "3"), ("12", "12", "3"), ("*", "*", "*")))
ALL_SPECS = [
    "l-diversity:distinct:2:s",
    "l-diversity:entropy:1.5:s",
    "l-diversity:recursive:3:2:s",
    "t-closeness:equal:0.4:s",
    "t-closeness:ordered:0.4:s",
    "t-closeness:hierarchical:0.4:s",
    "beta-likeness:basic:2:s",
    "beta-likeness:enhanced:2:s",
    "delta-disclosure:1.5:s",
]


@settings(max_examples=60, deadline=None)
@given(
    problem=problems(),
    data=st.data(),
    spec=st.sampled_from(ALL_SPECS),
    algorithm=st.sampled_from(["optimal", "datafly", "greedy", "mondrian"]),
)
def test_every_release_satisfies_every_kind_of_model(problem, data, spec, algorithm) -> None:
    """All nine models, with suppression where the algorithm allows it, re-checked on
    the released table by the models' own definitions (``verify_models``, which
    regroups the rows itself) against the input's distribution."""
    table, hs = problem
    values = data.draw(
        st.lists(st.sampled_from(["1", "2", "3"]), min_size=table.height, max_size=table.height)
    )
    table = table.with_columns(pl.Series("s", values))
    local = algorithm == "mondrian"
    max_sup = 0 if local else data.draw(st.integers(0, 3))
    try:
        result = kanonym.anonymize(
            table,
            quasi_identifiers=hs,
            k=1,
            models=[parse_model(spec, sensitive_hierarchies={"s": S_HIERARCHY})],
            max_suppressed_rows=max_sup,
            algorithm=algorithm,
            metric=None if local else "loss",
            seed=0,
        )
    except (kanonym.InputError, kanonym.NoSolutionError) as error:
        expected = oracle.Model(spec, S_HIERARCHY)
        if local:
            assert isinstance(error, kanonym.NoSolutionError), str(error)
            assert "no local recoding" in str(error), str(error)
            # Mondrian starts from the whole table as one class: refused only when it fails.
            p = Counter(table["s"].to_list())
            assert not oracle.class_passes(p, 1, [expected], p)
        else:
            assert isinstance(error, kanonym.NoSolutionError), str(error)
            found = oracle.satisfying_nodes(table, hs, 1, max_sup, models=[expected])
            assert not found, f"refused, yet {found} satisfy"
        event("refused: no node satisfies (brute force)")
        return
    assert table.height - result.table.height <= max_sup
    event(f"released: {algorithm}")
    model = parse_model(spec, sensitive_hierarchies={"s": S_HIERARCHY})
    verify_models(result.table, columns=list(hs), source=table, models=[model])
