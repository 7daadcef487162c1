"""kanonym's own row sample for SafePub (PCG64) and the record a report keeps of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kanonym.differential_privacy import (
    JAVA_GENERATOR,
    PCG64_GENERATOR,
    bernoulli_sample,
    record_of_randomness,
)
from kanonym.differential_privacy.sampling import _bernoulli_blocks
from kanonym.errors import InputError


def test_row_i_is_drawn_iff_its_uniform_is_below_the_probability() -> None:
    uniforms = np.random.Generator(np.random.PCG64(2024)).random(5_000)
    assert np.array_equal(bernoulli_sample(5_000, 0.37, seed=2024), uniforms < 0.37)


def test_blocks_do_not_change_the_draws() -> None:
    whole = bernoulli_sample(10_000, 0.6, seed=9)
    assert np.array_equal(_bernoulli_blocks(10_000, 0.6, 9, 7), whole)
    assert np.array_equal(_bernoulli_blocks(10_000, 0.6, 9, 10_000), whole)


def test_the_same_seed_draws_the_same_rows() -> None:
    assert np.array_equal(
        bernoulli_sample(1_000, 0.5, seed=3), bernoulli_sample(1_000, 0.5, seed=3)
    )
    assert not np.array_equal(
        bernoulli_sample(1_000, 0.5, seed=3), bernoulli_sample(1_000, 0.5, seed=4)
    )


def test_share_drawn_is_the_probability() -> None:
    # Fixed seeds, so the check is deterministic; the bound is 5 standard deviations.
    rows, probability = 20_000, 0.3
    bound = 5 * math.sqrt(probability * (1 - probability) / rows)
    for seed in range(50):
        share = bernoulli_sample(rows, probability, seed=seed).mean()
        assert abs(share - probability) <= bound


def test_edges() -> None:
    assert bernoulli_sample(0, 0.5, seed=0).shape == (0,)
    assert bernoulli_sample(50, 0.5, seed=0).dtype == np.bool_
    assert bernoulli_sample(50, 1.0, seed=0).all()
    assert not bernoulli_sample(50, 0.0, seed=0).any()


@pytest.mark.parametrize(
    ("rows", "probability", "seed", "named"),
    [
        (-1, 0.5, 0, "`rows`"),
        (1.5, 0.5, 0, "`rows`"),
        (10, -0.1, 0, "`probability`"),
        (10, 1.1, 0, "`probability`"),
        (10, math.nan, 0, "`probability`"),
        (10, 0.5, -1, "`seed`"),
        (10, 0.5, True, "`seed`"),
    ],
)
def test_bad_arguments(rows: object, probability: object, seed: object, named: str) -> None:
    with pytest.raises(InputError, match=named):
        bernoulli_sample(rows, probability, seed)  # type: ignore[arg-type]


def test_record_of_randomness() -> None:
    sample = bernoulli_sample(1_000, 0.25, seed=11)
    record = record_of_randomness(sample, probability=0.25, seed=11)
    assert record == {
        "step": "Bernoulli sampling of rows (Li, Qardaji & Su 2012)",
        "generator": PCG64_GENERATOR,
        "seed": 11,
        "probability": 0.25,
        "comparison": "row i drawn iff uniform_i < probability",
        "rows": 1_000,
        "rows_drawn": int(sample.sum()),
        "numpy": np.__version__,
    }
    # The record is enough to draw the sample again.
    again = bernoulli_sample(record["rows"], record["probability"], seed=record["seed"])  # type: ignore[arg-type]
    assert np.array_equal(again, sample)
    java = record_of_randomness(sample, probability=0.25, seed=-559038737, generator=JAVA_GENERATOR)
    assert java["generator"] == "java.util.Random" and "numpy" not in java


def test_record_needs_a_mask() -> None:
    with pytest.raises(InputError, match="`sample`"):
        record_of_randomness(np.array([1, 0]), probability=0.5, seed=0)
    with pytest.raises(InputError, match="`probability`"):
        record_of_randomness(np.array([True]), probability=2.0, seed=0)
