"""The re-check of (epsilon, delta)-differential privacy: its own tail bound, k and classes."""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kanonym.differential_privacy import derive_parameters, safepub_delta
from kanonym.errors import VerificationError
from kanonym.verify.differential_privacy import li_delta, scheme_levels, sufficient_k
from kanonym.verify.models import verify_models

# ARX's TestAnonymizationDifferentialPrivacy parameters, and more.
PARAMETERS = [
    (2.0, 1e-5),
    (1.5, 1e-6),
    (math.log(2), 1e-7),
    (math.log(3), 1e-8),
    (1.0, 1e-6),
    (0.5, 1e-6),
    (3.0, 1e-7),
    (6.0, 1e-7),
    (0.1, 1e-5),
]


@pytest.mark.parametrize(("epsilon", "delta"), PARAMETERS)
def test_the_derived_k_is_the_smallest_arx_would_take(epsilon: float, delta: float) -> None:
    """ARX's k is one more than the first k meeting delta: k - 1 meets it, k - 2 does not."""
    derived = derive_parameters(epsilon, delta)
    beta, k = derived.beta, derived.k
    assert sufficient_k(k, beta, epsilon, delta)
    assert not sufficient_k(k - 1, beta, epsilon, delta)


@pytest.mark.parametrize(("epsilon", "delta"), PARAMETERS)
def test_the_tail_bound_agrees_with_the_parameters_module(epsilon: float, delta: float) -> None:
    """ARX rounds gamma * n down before its sums start (one term more where gamma * n is a
    whole number, as for epsilon = ln 3): its d is never below the exact one."""
    derived = derive_parameters(epsilon, delta)
    for k in (derived.k - 2, derived.k - 1, derived.k):
        ours, arxs = li_delta(k, derived.beta, epsilon), safepub_delta(k, epsilon)
        assert ours <= arxs * (1 + 1e-12)
        assert ours >= arxs * 0.5


@given(k=st.integers(1, 400), epsilon=st.floats(0.05, 3.0), step=st.integers(1, 20))
def test_the_tail_bound_falls_as_k_grows(k: int, epsilon: float, step: int) -> None:
    beta = -math.expm1(-epsilon)
    assume(beta > 0)
    assert li_delta(k + step, beta, epsilon) <= li_delta(k, beta, epsilon)


def test_scheme_levels() -> None:
    assert scheme_levels("medium", [1, 3, 5]) == [1, 2, 3]
    assert scheme_levels("complete", [2, 4]) == [2, 4]
    with pytest.raises(KeyError):
        scheme_levels("middle", [1])


@dataclass
class Declared:
    """A model as the re-check reads it (by name and public parameters)."""

    k: int
    beta: float
    epsilon: float = 2.0
    delta: float = 1e-5
    epsilon_anonymization: float = 2.0
    generalization: str | None = "medium"
    search_budget: float = 0.1
    name: str = "differential-privacy"


BETA = derive_parameters(2.0, 1e-5).beta
TABLE = pl.DataFrame({"zip": ["0213*"] * 114 + ["0214*"] * 120})


def test_classes_of_k_rows_pass() -> None:
    verify_models(TABLE, columns=["zip"], source=TABLE, models=[Declared(114, BETA)])


def test_a_class_below_k_fails() -> None:
    small = TABLE.head(233)  # 0214* keeps 119 rows, 0213* 114: passes; one fewer fails
    verify_models(small, columns=["zip"], source=small, models=[Declared(114, BETA)])
    with pytest.raises(VerificationError, match=r"differential-privacy .* in 1 of 2 classes"):
        verify_models(TABLE, columns=["zip"], source=TABLE, models=[Declared(115, BETA)])


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (Declared(113, BETA), r"classes of 113 rows give delta 1\.1\d*e-05, not below 1e-05"),
        (Declared(114, 0.9), r"beta exceeds 1 - e\^-2\.0"),
        (
            Declared(62, BETA, generalization=None, search_budget=1.0),
            "the anonymization's epsilon 2.0 and the search's 1.0 exceed epsilon",
        ),
        (Declared(114, BETA, delta=0.0), "a parameter is out of range"),
    ],
)
def test_a_wrong_declaration_fails_even_on_an_empty_release(
    declared: Declared, message: str
) -> None:
    empty = TABLE.head(0)
    with pytest.raises(VerificationError, match=message):
        verify_models(empty, columns=["zip"], source=TABLE, models=[declared])
