"""Differentially private releases (SafePub) through the pipeline: the guarantees, measured apart.

A release under :class:`kanonym.DifferentialPrivacy` must release only rows of
the sample its report records (redrawn here from the recorded seed), each
generalized at the scheme's levels, no class below the derived k, and every
class of the sample below k suppressed: nothing else. The sample's size must
behave as a binomial draw with p = beta (a fixed list of seeds, so the test
is deterministic).
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kanonym
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.differential_privacy import bernoulli_sample
from kanonym.errors import InputError, VerificationError
from kanonym.hierarchy import Hierarchy

ADULT_QIS = ("sex", "age", "race", "marital-status", "education")


@cache
def _adult() -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    hierarchies = adult_hierarchies()
    table = load_adult()
    return table, {n: hierarchies[n] for n in ADULT_QIS}


def _release(
    table: pl.DataFrame,
    hierarchies: dict[str, Hierarchy],
    model: kanonym.DifferentialPrivacy,
    seed: int | None,
) -> kanonym.Result:
    return kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        insensitive=[c for c in table.columns if c not in hierarchies],
        k=1,
        models=[model],
        seed=seed,
    )


def _reported(result: kanonym.Result) -> dict[str, object]:
    (found,) = [m for m in result.report()["models"] if m["model"] == "differential-privacy"]
    return found


def _check_release(
    table: pl.DataFrame,
    hierarchies: dict[str, Hierarchy],
    model: kanonym.DifferentialPrivacy,
    result: kanonym.Result,
) -> int:
    """Everything a release must be, computed apart from kanonym's pipeline; the drawn rows."""
    reported = _reported(result)
    sample = reported["sample"]
    assert isinstance(sample, dict)
    assert sample["generator"] == "numpy.random.Generator(PCG64)"
    assert (reported["k"], reported["beta"]) == (model.k, model.beta)
    assert (reported["epsilon"], reported["delta"]) == (model.epsilon, model.delta)
    # The sample, redrawn from the record.
    drawn = bernoulli_sample(table.height, model.beta, int(sample["seed"]))
    # Its stream is the job seed's own, apart from the row shuffle's (the job seed itself).
    words = np.random.SeedSequence([sample["job_seed"], 0]).generate_state(2, np.uint64)
    assert sample["seed"] == (int(words[0]) << 64) | int(words[1])
    assert sample["rows"] == table.height and sample["rows_drawn"] == int(drawn.sum())
    # The scheme's levels, as ARX rounds them (floor(share * height + 0.5)).
    share = {"low-medium": 0.4, "medium": 0.5, "high": 0.8}[str(model.generalization)]
    levels = {n: math.floor(share * h.height + 0.5) for n, h in hierarchies.items()}
    assert result.transformation == levels
    # The drawn rows generalized at those levels, grouped: classes of k or more are released
    # whole, the others not at all.
    names = list(hierarchies)
    generalized = table.filter(pl.Series(drawn)).select(
        pl.col(n).replace_strict(
            list(hierarchies[n].leaves), list(hierarchies[n].levels[levels[n]])
        )
        for n in names
    )
    sizes = Counter(generalized.iter_rows())
    expected = {key: size for key, size in sizes.items() if size >= model.k}
    released = Counter(result.table.select(names).iter_rows())
    assert released == expected
    assert result.suppressed_rows == sum(sizes.values()) - sum(expected.values())
    assert all(size >= model.k for size in released.values())
    assert reported.get("reached") == (min(released.values()) if released else None)
    assert result.input_rows == table.height
    return int(drawn.sum())


SEEDS = list(range(1000, 1020))


def test_releases_over_many_seeds() -> None:
    """Twenty seeds: each release is exactly the sample's classes of k rows or more, and the
    sample sizes are binomial(n, beta) draws (each within 4.5 standard deviations of n beta,
    their mean within 4 standard errors)."""
    table, hierarchies = _adult()
    model = kanonym.DifferentialPrivacy(2.0, 1e-5, generalization="medium")
    sizes = [
        _check_release(table, hierarchies, model, _release(table, hierarchies, model, seed))
        for seed in SEEDS
    ]
    n, p = table.height, model.beta
    mean, deviation = n * p, math.sqrt(n * p * (1 - p))
    assert all(abs(size - mean) <= 4.5 * deviation for size in sizes), sizes
    assert abs(np.mean(sizes) - mean) <= 4 * deviation / math.sqrt(len(sizes))
    assert len(set(sizes)) > 1  # the seeds draw different samples


def test_sample_sizes_are_binomial_over_a_fixed_list_of_seeds() -> None:
    """The sampler behind the release, over 400 seeds: mean and variance of a binomial."""
    n, p = 5_000, kanonym.DifferentialPrivacy(1.0, 1e-6).beta
    sizes = np.array([bernoulli_sample(n, p, seed).sum() for seed in range(400)])
    mean, variance = n * p, n * p * (1 - p)
    assert abs(sizes.mean() - mean) <= 4 * math.sqrt(variance / len(sizes))
    # The sample variance of 400 draws is within 25% of the binomial's (about 5 standard errors).
    assert 0.75 * variance <= sizes.var(ddof=1) <= 1.25 * variance


def test_without_a_seed_one_is_drawn_and_recorded_and_redraws_the_release() -> None:
    table, hierarchies = _adult()
    model = kanonym.DifferentialPrivacy(1.0, 1e-6, generalization="high")
    first = _release(table, hierarchies, model, None)
    _check_release(table, hierarchies, model, first)
    sample = _reported(first)["sample"]
    assert isinstance(sample, dict)
    again = _release(table, hierarchies, model, int(sample["job_seed"]))
    names = list(hierarchies)
    assert Counter(again.table.select(names).iter_rows()) == Counter(
        first.table.select(names).iter_rows()
    )


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(40, 300),
    values=st.integers(1, 6),
    epsilon=st.floats(0.3, 3.0),
    degree=st.sampled_from(["low-medium", "medium", "high"]),
    seed=st.integers(0, 2**32),
    data=st.data(),
)
def test_every_release_satisfies_the_model_measured_apart(
    rows: int, values: int, epsilon: float, degree: str, seed: int, data: st.DataObject
) -> None:
    delta = 0.5 / rows  # below 1/n
    model = kanonym.DifferentialPrivacy(epsilon, delta, generalization=degree)  # type: ignore[arg-type]
    assume(model.k <= rows)
    ages = data.draw(st.lists(st.integers(0, 99), min_size=rows, max_size=rows))
    kinds = data.draw(st.lists(st.integers(0, values - 1), min_size=rows, max_size=rows))
    table = pl.DataFrame({"age": [str(a) for a in ages], "kind": [f"v{v}" for v in kinds]})
    age = Hierarchy(
        "age",
        (
            tuple(str(a) for a in range(100)),
            tuple(f"{a // 10 * 10}-{a // 10 * 10 + 9}" for a in range(100)),
            tuple("<50" if a < 50 else ">=50" for a in range(100)),
            ("*",) * 100,
        ),
    )
    kind = Hierarchy("kind", (tuple(f"v{v}" for v in range(6)), ("*",) * 6))
    hierarchies = {"age": age, "kind": kind}
    result = _release(table, hierarchies, model, seed)
    _check_release(table, hierarchies, model, result)


def test_the_search_releases_a_node_chosen_privately() -> None:
    table, hierarchies = _adult()
    model = kanonym.DifferentialPrivacy(
        2.0, 1e-5, generalization=None, search_budget=1.0, search_steps=10
    )
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        insensitive=[c for c in table.columns if c not in hierarchies],
        k=1,
        models=[model],
        seed=5,
        metric="loss",
    )
    reported = _reported(result)
    search = reported["search"]
    assert isinstance(search, dict)
    assert reported["k"] == 62 and reported["epsilon_search"] == 1.0
    assert search["algorithm"] == "safepub" and search["epsilon"] == 1.0
    assert search["steps_taken"] == 10 and search["score_function"] == "granularity"
    assert list(result.transformation.values()) == search["transformation"]
    released = Counter(result.table.select(list(hierarchies)).iter_rows())
    assert all(size >= 62 for size in released.values())
    sample = reported["sample"]
    assert isinstance(sample, dict)
    assert result.table.height + result.suppressed_rows == sample["rows_drawn"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_suppression": 0.04}, r"^`max_suppression`: differential privacy suppresses"),
        ({"max_suppressed_rows": 10}, r"^`max_suppressed_rows`: differential privacy"),
        ({"technique": "_TS"}, r"^`technique`: differential privacy releases a full-domain"),
        ({"algorithm": "mondrian"}, r"^`algorithm`: differential privacy releases"),
        ({"engine": "streaming"}, r"differential privacy is served by the embedded engine"),
        (
            {"models": [kanonym.DistinctLDiversity(attribute="salary-class", l=2)]},
            r"^`models`: differential privacy \(SafePub\) is not combined with distinct-l",
        ),
        (
            {"population": "adult"},
            r"`population` is read only by delta-presence and by k-map",
        ),
    ],
)
def test_what_it_does_not_serve_is_refused_in_one_line(
    options: dict[str, object], message: str, tmp_path
) -> None:
    table, hierarchies = _adult()
    model = kanonym.DifferentialPrivacy(1.0, 1e-6)
    path = tmp_path / "adult.csv"
    table.write_csv(path)
    if options.get("population") == "adult":
        options = {**options, "population": path}
    extra = list(options.pop("models", []))  # type: ignore[call-overload]
    with pytest.raises(InputError, match=message) as refused:
        kanonym.anonymize(
            path,
            quasi_identifiers=hierarchies,
            insensitive=[
                c
                for c in table.columns
                if c not in hierarchies and not (extra and c == "salary-class")
            ],
            sensitive=["salary-class"] if extra else [],
            k=1,
            models=[model, *extra],
            **options,  # type: ignore[arg-type]
        )
    assert "\n" not in str(refused.value)


def test_a_delta_of_1_over_n_or_more_is_refused() -> None:
    table, hierarchies = _adult()
    model = kanonym.DifferentialPrivacy(1.0, 1 / 30_000)
    with pytest.raises(InputError, match=r"^differential-privacy: delta = 3\.33333e-05 must be"):
        _release(table, hierarchies, model, 1)


def test_a_release_is_not_re_applied_to_a_batch() -> None:
    """``apply`` would release a batch's rows unsampled: refused in one line."""
    table, hierarchies = _adult()
    result = _release(table, hierarchies, kanonym.DifferentialPrivacy(1.0, 1e-6), 2)
    with pytest.raises(InputError, match="a differentially private release is not re-applied"):
        kanonym.apply_transformation(table, result.report())


def test_a_wrong_k_cannot_pass_the_re_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model whose k is one short (the search and the release use it) fails the re-check's
    own tail bound: nothing is released."""
    table, hierarchies = _adult()
    model = kanonym.DifferentialPrivacy(2.0, 1e-5, generalization="medium")
    short = property(lambda self: self.parameters.k - 1)
    monkeypatch.setattr(kanonym.DifferentialPrivacy, "k", short)
    with pytest.raises(VerificationError, match=r"classes of 113 rows give delta .* not below"):
        _release(table, hierarchies, model, 4)
