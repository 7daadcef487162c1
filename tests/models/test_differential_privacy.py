"""DifferentialPrivacy (SafePub): derived parameters, the scheme's levels, the spec, the checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import kanonym
from kanonym.differential_privacy import derive_parameters
from kanonym.errors import InputError
from kanonym.models import ClassStatistics, DifferentialPrivacy, model_spec, parse_model
from kanonym.models.differential_privacy import DEGREES


def test_beta_and_k_are_arxs() -> None:
    model = DifferentialPrivacy(2.0, 1e-5, generalization="low-medium")
    assert (model.k, model.beta, model.epsilon_anonymization) == (114, 0.8646647167633871, 2.0)
    # With a search, the search's budget comes off epsilon first (ARX: 2.0 - 1.0 -> k 62).
    searched = DifferentialPrivacy(2.0, 1e-5, generalization=None, search_budget=1.0)
    assert searched.k == 62 and searched.epsilon_anonymization == math.nextafter(1.0, 0.0)
    assert searched.data_dependent and not model.data_dependent


def test_classes_below_k_fail() -> None:
    model = DifferentialPrivacy(1.0, 1e-6)
    assert model.k == 75
    sizes = ClassStatistics(np.array([74, 75, 200, 1]))
    assert model.satisfied_classes(sizes).tolist() == [False, True, True, False]


def test_declarations() -> None:
    model = DifferentialPrivacy(1.0, 1e-6, generalization="high")
    assert model.name == "differential-privacy"
    assert not model.monotone_with_suppression and not model.monotone_without_suppression
    assert model.sensitive_attributes == ()
    assert not kanonym.models.needs_population(model)
    described = model.describe()
    assert described == {
        "model": "differential-privacy",
        "epsilon": 1.0,
        "delta": 1e-6,
        "generalization": "high",
        "epsilon_anonymization": 1.0,
        "epsilon_search": 0.0,
        "beta": model.beta,
        "k": 75,
        "randomness": "kanonym",
    }
    bound = model.with_sample({"rows": 3, "rows_drawn": 2})
    assert bound == model and bound.describe()["sample"] == {"rows": 3, "rows_drawn": 2}
    assert model.sample is None  # the copy reports it; the job's model is unchanged


@pytest.mark.parametrize(
    ("degree", "heights", "levels"),
    [
        ("none", (1, 4, 2), (0, 0, 0)),
        ("low", (1, 4, 5), (0, 1, 1)),  # 0.8 -> 1: floor(x + 0.5)
        ("low-medium", (1, 4, 2, 3), (0, 2, 1, 1)),
        ("medium", (1, 3, 5), (1, 2, 3)),  # Java's Math.round: 0.5 -> 1, 1.5 -> 2, 2.5 -> 3
        ("medium-high", (1, 4, 2), (1, 2, 1)),
        ("high", (1, 4, 2), (1, 3, 2)),
        ("complete", (1, 4, 2), (1, 4, 2)),
    ],
)
def test_scheme_levels_round_as_java(degree: str, heights: tuple[int, ...], levels) -> None:
    model = DifferentialPrivacy(1.0, 1e-6, generalization=degree)  # type: ignore[arg-type]
    assert model.levels(heights) == levels


def test_scheme_levels_stay_within_the_bounds() -> None:
    model = DifferentialPrivacy(1.0, 1e-6, generalization="medium")
    assert model.levels((4, 4, 4), lower=(3, 0, 0), upper=(4, 1, 4)) == (3, 1, 2)
    with pytest.raises(InputError, match="the search chooses the levels"):
        DifferentialPrivacy(1.0, 1e-6, generalization=None).levels((1,))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"epsilon": 0.0, "delta": 1e-6}, r"^differential-privacy: epsilon must be .* > 0"),
        ({"epsilon": -1.0, "delta": 1e-6}, r"^differential-privacy: epsilon must be"),
        ({"epsilon": math.inf, "delta": 1e-6}, r"^differential-privacy: epsilon must be"),
        ({"epsilon": True, "delta": 1e-6}, r"^differential-privacy: epsilon must be a number"),
        ({"epsilon": 1.0, "delta": 0.0}, r"^differential-privacy: delta must be .* > 0"),
        ({"epsilon": 1.0, "delta": 1.0}, r"^differential-privacy: delta must be .* < 1"),
        ({"epsilon": 10.0, "delta": 1e-6}, r"^differential-privacy: epsilon = 10 leaves 10"),
        ({"epsilon": 0.005, "delta": 1e-6}, r"^differential-privacy: epsilon must be at least"),
        (
            {"epsilon": 0.1, "delta": 1e-6, "generalization": None, "search_budget": 0.095},
            r"^differential-privacy: epsilon less search_budget must be at least 0\.01",
        ),
        (
            {"epsilon": 1.0, "delta": 1e-6, "generalization": "mid"},
            r"^differential-privacy: generalization must be one of none, low",
        ),
        (
            {"epsilon": 1.0, "delta": 1e-6, "generalization": None, "search_budget": 1.0},
            r"^differential-privacy: search_budget must be > 0 and below epsilon = 1",
        ),
        (
            {"epsilon": 1.0, "delta": 1e-6, "search_steps": 0},
            r"^differential-privacy: search_steps must be a whole number >= 1",
        ),
        (
            {"epsilon": 1.0, "delta": 1e-6, "randomness": "java"},
            r"^differential-privacy: randomness must be 'kanonym' or 'arx'",
        ),
    ],
)
def test_bad_parameters_are_refused_in_one_line(arguments: dict[str, object], message) -> None:
    with pytest.raises(InputError, match=message) as refused:
        DifferentialPrivacy(**arguments)  # type: ignore[arg-type]
    assert "\n" not in str(refused.value)


@given(
    epsilon=st.floats(0.05, 4.0),
    exponent=st.integers(3, 9),
    degree=st.sampled_from([*DEGREES, None]),
)
def test_the_model_derives_what_the_parameters_module_derives(
    epsilon: float, exponent: int, degree: str | None
) -> None:
    budget = 0.1
    assume(degree is not None or epsilon > budget + 0.011)
    model = DifferentialPrivacy(
        epsilon,
        10.0**-exponent,
        generalization=degree,
        search_budget=budget,  # type: ignore[arg-type]
    )
    expected = derive_parameters(
        epsilon, 10.0**-exponent, search_epsilon=0.0 if degree is not None else budget
    )
    assert (model.k, model.beta) == (expected.k, expected.beta)


@pytest.mark.parametrize(
    ("spec", "model"),
    [
        ("differential-privacy:2:1e-05:medium", DifferentialPrivacy(2.0, 1e-5)),
        (
            "differential-privacy:1:1e-06:high",
            DifferentialPrivacy(1.0, 1e-6, generalization="high"),
        ),
        (
            "differential-privacy:2:1e-05:search:0.5:20",
            DifferentialPrivacy(2.0, 1e-5, generalization=None, search_budget=0.5, search_steps=20),
        ),
    ],
)
def test_spec_round_trip(spec: str, model: DifferentialPrivacy) -> None:
    assert parse_model(spec) == model
    assert model_spec(model) == spec
    assert parse_model("differential-privacy:2:1e-5") == DifferentialPrivacy(2.0, 1e-5)
    assert parse_model("differential-privacy:2:1e-5:search") == DifferentialPrivacy(
        2.0, 1e-5, generalization=None
    )


def test_arxs_deterministic_sample_has_no_spec() -> None:
    assert model_spec(DifferentialPrivacy(2.0, 1e-5, randomness="arx")) is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("differential-privacy:1", "expected the form differential-privacy:EPS:DELTA"),
        ("differential-privacy:1:1e-6:medium:0.1", "only search takes a BUDGET"),
        ("differential-privacy:1:1e-6:hgh", r"SCHEME 'hgh' is not one of .*did you mean 'high'"),
        ("differential-privacy:x:1e-6", "EPS 'x' is not a number"),
        ("differential-privacy:1:1e-6:search:0.1:1.5", "STEPS '1.5' is not a whole number"),
        ("differential-privacy:1:2", "delta must be a number > 0 and < 1"),
        ("differntial-privacy:1:1e-6", "did you mean 'differential-privacy'"),
    ],
)
def test_bad_specs_are_refused_in_one_line(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as refused:
        parse_model(spec)
    assert str(refused.value).startswith(f"model '{spec}': ")
    assert "\n" not in str(refused.value)
