"""A defect in a model's measure cannot pass both the search and the re-check.

For each model, one of its measures in :mod:`kanonym.models` is broken (an EMD
1e-3 too small, one distinct value too many, l off by one, the enhanced cap
forgotten, ...) so that the search accepts the bottom node, whose classes truly
fail the model. Without the defect the release succeeds at a higher node; with
it, :func:`kanonym.anonymize` must raise VerificationError from the re-check.

The table: four ZIP codes, each class at the bottom homogeneous in ``s``
(``1`` … ``4``); ZIPs pair up at level 1, where each class holds two values.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import kanonym
from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.models import (
    BasicBetaLikeness,
    DeltaDisclosurePrivacy,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceTCloseness,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    OrderedDistanceTCloseness,
    PrivacyModel,
    RecursiveCLDiversity,
)
from kanonym.models import distribution as measures

ZIP = Hierarchy("zip", (("z1", "z2", "z3", "z4"), ("za", "za", "zb", "zb"), ("*",) * 4))
S = Hierarchy("s", (("1", "2", "3", "4"), ("12", "12", "34", "34"), ("*",) * 4))
TABLE = pl.DataFrame(
    {"zip": ["z1", "z1", "z2", "z2", "z3", "z3", "z4", "z4"], "s": list("11223344")}
)
# P = 1/4 for each value. At the bottom, a class {v, v} is 3/4 away with equal
# distance, at most 1/2 with ordered distance (1 and 4), 5/8 with the
# hierarchical (½ (3/4 + 1/2)); its gain is 3, above the cap −ln(1/4) ≈ 1.386;
# |ln(q / p)| = ln 4. Just below each, the true measure fails and the measure
# 1e-3 too small passes.
JUST_BELOW = 5e-4


def shifted(function: Callable[..., Any], by: float) -> Callable[..., Any]:
    """``function`` returning its value plus ``by``: a defect in a measure."""
    return lambda *args: function(*args) + by


# (model, module of the model, name of the measure there, the broken measure)
MUTANTS: list[tuple[PrivacyModel, str, str, Callable[..., Any]]] = [
    (
        KAnonymity(k=3),
        "kanonym.models.k_anonymity",
        "KAnonymity.satisfied_classes",
        lambda self, classes: classes.sizes >= self.k - 1,
    ),
    (
        DistinctLDiversity(attribute="s", l=2),
        "kanonym.models.distinct_l_diversity",
        "distinct_values",
        shifted(measures.distinct_values, 1),
    ),
    (
        EntropyLDiversity(attribute="s", l=2),
        "kanonym.models.entropy_l_diversity",
        "entropy",
        shifted(measures.entropy, 1),
    ),
    (
        RecursiveCLDiversity(attribute="s", c=2, l=2),
        "kanonym.models.recursive_l_diversity",
        "recursive_c",
        lambda counts, size: measures.recursive_c(counts, size - 1),
    ),
    (
        EqualDistanceTCloseness(attribute="s", t=3 / 4 - JUST_BELOW),
        "kanonym.models.equal_t_closeness",
        "emd_equal",
        shifted(measures.emd_equal, -1e-3),
    ),
    (
        OrderedDistanceTCloseness(attribute="s", t=1 / 2 - JUST_BELOW),
        "kanonym.models.ordered_t_closeness",
        "emd_ordered",
        shifted(measures.emd_ordered, -1e-3),
    ),
    (
        HierarchicalDistanceTCloseness(attribute="s", t=5 / 8 - JUST_BELOW, hierarchy=S),
        "kanonym.models.hierarchical_t_closeness",
        "emd_hierarchical",
        shifted(measures.emd_hierarchical, -1e-3),
    ),
    (
        BasicBetaLikeness(attribute="s", beta=3 - JUST_BELOW),
        "kanonym.models.basic_beta_likeness",
        "basic_beta",
        shifted(measures.basic_beta, -1e-3),
    ),
    (
        # The gain 3 is within beta but beyond its cap: forgetting the cap passes it.
        EnhancedBetaLikeness(attribute="s", beta=3),
        "kanonym.models.enhanced_beta_likeness",
        "enhanced_beta",
        measures.basic_beta,
    ),
    (
        DeltaDisclosurePrivacy(attribute="s", delta=math.log(4) - JUST_BELOW),
        "kanonym.models.delta_disclosure",
        "delta_disclosure",
        shifted(measures.delta_disclosure, -1e-3),
    ),
]


def release(model: PrivacyModel) -> kanonym.Result:
    k = model.k if isinstance(model, KAnonymity) else 1
    others = [] if isinstance(model, KAnonymity) else [model]
    return kanonym.anonymize(
        TABLE,
        quasi_identifiers={"zip": ZIP},
        k=k,
        sensitive=["s"],
        models=others,
        max_suppressed_rows=0,
        metric="loss",
        seed=0,
    )


def model_k(model: PrivacyModel) -> int:
    return model.k if isinstance(model, KAnonymity) else 0


@pytest.mark.parametrize(
    ("model", "module", "measure", "broken"), MUTANTS, ids=[m[0].name for m in MUTANTS]
)
def test_a_broken_measure_is_caught_by_the_re_check(
    monkeypatch: pytest.MonkeyPatch,
    model: PrivacyModel,
    module: str,
    measure: str,
    broken: Callable[..., Any],
) -> None:
    # Sound, the model refuses the bottom node: the release generalizes.
    assert release(model).transformation == {"zip": 1}
    monkeypatch.setattr(f"{module}.{measure}", broken)
    with pytest.raises(VerificationError, match=rf"{model.name}|not {model_k(model)}-anonymous"):
        release(model)


def test_the_table_fails_each_model_at_the_bottom() -> None:
    """The premise: at the bottom node every class fails every model above."""
    for model, *_ in MUTANTS:
        with pytest.raises(kanonym.NoSolutionError):
            kanonym.anonymize(
                TABLE,
                quasi_identifiers={"zip": ZIP},
                k=model.k if isinstance(model, KAnonymity) else 1,
                sensitive=["s"],
                models=[] if isinstance(model, KAnonymity) else [model],
                max_suppressed_rows=0,
                max_levels={"zip": 0},
                metric="loss",
                seed=0,
            )
