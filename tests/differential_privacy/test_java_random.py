"""JavaRandom draws what java.util.Random draws, and ARX's SafePub sample row for row.

Every expected value below was printed once by a small Java program run by
hand on OpenJDK 17.0.15 (``new java.util.Random(seed)`` and the calls named in
each test; for the samples, ARX's loop ``if (random.nextDouble() < beta)`` of
``EDDifferentialPrivacy.initialize``) and pasted here as literals: the tests
need no Java.
"""

from __future__ import annotations

import numpy as np
import pytest

from kanonym.differential_privacy import (
    ARX_DETERMINISTIC_SEED,
    JavaRandom,
    bernoulli_sample_java,
    derive_parameters,
)
from kanonym.errors import InputError

# ARX's beta for epsilon = 2, as Java prints it.
BETA_EPSILON_2 = 0.8646647167633871


def test_next_int() -> None:
    random = JavaRandom(0)
    assert [random.next_int() for _ in range(5)] == [
        -1155484576,
        -723955400,
        1033096058,
        -1690734402,
        -1557280266,
    ]


def test_next_double() -> None:
    random = JavaRandom(0)
    assert [random.next_double() for _ in range(5)] == [
        0.730967787376657,
        0.24053641567148587,
        0.6374174253501083,
        0.5504370051176339,
        0.5975452777972018,
    ]


def test_next_long() -> None:
    random = JavaRandom(0)
    assert [random.next_long() for _ in range(5)] == [
        -4962768465676381896,
        4437113781045784766,
        -6688467811848818630,
        -8292973307042192125,
        -7423979211207825555,
    ]


def test_next_boolean() -> None:
    random = JavaRandom(0)
    expected = [True, True, False, True, True, False, True, False]
    assert [random.next_boolean() for _ in range(8)] == expected


def test_next_gaussian() -> None:
    random = JavaRandom(0)
    assert [random.next_gaussian() for _ in range(5)] == [
        0.8025330637390305,
        -0.9015460884175122,
        2.080920790428163,
        0.7637707684364894,
        0.9845745328825128,
    ]


@pytest.mark.parametrize(
    ("bound", "expected"),
    [
        (10, [0, 3, 8, 4, 0, 5, 5, 8, 9, 3]),
        # A power of two takes the top bits.
        (16, [11, 0, 10, 0, 4, 15, 4, 11, 10, 1]),
        # 2**30 + 1 rejects almost half the draws (the incomplete last block).
        (
            1073741825,
            [
                117392763,
                102948884,
                662969970,
                595021505,
                196118093,
                969067502,
                791955276,
                819572292,
                592164476,
                995688456,
            ],
        ),
    ],
)
def test_next_int_bounded(bound: int, expected: list[int]) -> None:
    random = JavaRandom(42)
    assert [random.next_int(bound) for _ in range(len(expected))] == expected


def test_next_int_largest_bound() -> None:
    random = JavaRandom(42)
    assert [random.next_int(2147483647) for _ in range(5)] == [
        1562431130,
        117392763,
        1467211248,
        102948884,
        662969970,
    ]


def test_mixed_calls_share_one_stream() -> None:
    random = JavaRandom(42)
    drawn = (
        random.next_int(7),
        random.next_double(),
        random.next_long(),
        random.next_boolean(),
        random.next_int(),
    )
    assert drawn == (1, 0.05466526274716077, 884324181205335268, True, 1190043011)


def test_seeds_are_java_longs() -> None:
    random = JavaRandom(-1)
    assert [random.next_int() for _ in range(3)] == [1155099827, 1887904451, 52699159]
    # Only the low 48 bits of the seed matter: Long.MIN_VALUE is seed 0.
    assert JavaRandom(-(1 << 63)).next_long() == -4962768465676381896
    assert ARX_DETERMINISTIC_SEED == 0xDEADBEEF - (1 << 32)
    random = JavaRandom(ARX_DETERMINISTIC_SEED)
    assert [random.next_double() for _ in range(5)] == [
        0.23127968346166938,
        0.8933406622164421,
        0.2921249365632519,
        0.008613164541980245,
        0.857744091205314,
    ]


def test_set_seed_restarts_the_stream_and_drops_a_pending_gaussian() -> None:
    random = JavaRandom(5)
    random.next_gaussian()
    random.set_seed(0)
    assert random.next_gaussian() == 0.8025330637390305


def test_compiled_draws_continue_the_stream() -> None:
    python = JavaRandom(12345)
    compiled = JavaRandom(12345)
    expected = [python.next_double() for _ in range(1000)]
    assert compiled.next_doubles(600).tolist() == expected[:600]
    assert compiled.next_doubles(400).tolist() == expected[600:]
    assert compiled.state == python.state
    assert compiled.next_long() == python.next_long()
    below = JavaRandom(12345).keep_below(1000, 0.3)
    assert below.tolist() == [value < 0.3 for value in expected]


def test_arx_sample_of_forty_rows() -> None:
    kept = bernoulli_sample_java(40, BETA_EPSILON_2, ARX_DETERMINISTIC_SEED)
    assert np.flatnonzero(kept).tolist() == [
        *[0, 2, 3, 4, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24],
        *[25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 36, 37, 38, 39],
    ]
    assert derive_parameters(2.0, 1e-5).beta == BETA_EPSILON_2


def test_arx_sample_of_a_million_rows() -> None:
    random = JavaRandom(ARX_DETERMINISTIC_SEED)
    kept = random.keep_below(1_000_000, BETA_EPSILON_2)
    assert int(kept.sum()) == 864761
    assert int(np.flatnonzero(kept).sum()) == 432325631649
    # The generator stands where Java's does after the loop.
    assert random.next_long() == 6006567321882573531
    assert np.array_equal(
        bernoulli_sample_java(1_000_000, BETA_EPSILON_2, ARX_DETERMINISTIC_SEED), kept
    )


def test_sample_edges() -> None:
    assert bernoulli_sample_java(0, 0.5, 1).shape == (0,)
    assert not bernoulli_sample_java(100, 0.0, 1).any()
    assert bernoulli_sample_java(100, 1.0, 1).all()


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: JavaRandom(1 << 63), "`seed`"),
        (lambda: JavaRandom(True), "`seed`"),
        (lambda: JavaRandom(1.5), "`seed`"),  # type: ignore[arg-type]
        (lambda: JavaRandom(0).next_int(0), "`bound`"),
        (lambda: JavaRandom(0).next_int(1 << 31), "`bound`"),
        (lambda: JavaRandom(0).next(33), "`bits`"),
        (lambda: JavaRandom(0).next(0), "`bits`"),
        (lambda: JavaRandom(0).next_doubles(-1), "`count`"),
        (lambda: bernoulli_sample_java(-1, 0.5, 0), "`rows`"),
        (lambda: bernoulli_sample_java(10, 1.5, 0), "`probability`"),
        (lambda: bernoulli_sample_java(10, float("nan"), 0), "`probability`"),
    ],
)
def test_bad_arguments(call: object, named: str) -> None:
    with pytest.raises(InputError, match=named):
        call()  # type: ignore[operator]
