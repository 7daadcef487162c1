"""``java.util.Random``, bit for bit: the generator ARX draws SafePub's sample and search with.

``java.util.Random`` is the linear congruential generator the JDK documents
(class ``java.util.Random``, after Knuth, "The Art of Computer Programming",
vol. 2, section 3.2.1): a 48-bit state ``s``, advanced as
``s = (s * 0x5DEECE66D + 0xB) mod 2**48``; ``next(bits)`` returns the state's
top ``bits`` bits as a Java ``int``. A seed is scrambled once by XOR with the
multiplier. Every other method is defined on ``next`` by the documentation:

* ``nextInt()`` is ``next(32)``; ``nextInt(bound)`` is ``(bound * next(31)) >> 31``
  when ``bound`` is a power of two, and otherwise ``u % bound`` of the first
  ``u = next(31)`` for which ``u - u % bound + (bound - 1)`` does not overflow
  a Java ``int`` (rejecting the incomplete last block of ``bound`` values);
* ``nextLong()`` is ``(next(32) << 32) + next(32)`` in 64-bit arithmetic;
* ``nextDouble()`` is ``((next(26) << 27) + next(27)) * 2**-53``;
* ``nextBoolean()`` is ``next(1) != 0``;
* ``nextGaussian()`` is Marsaglia's polar method, returning the second of each
  pair on the next call.

:class:`JavaRandom` ports these; :func:`bernoulli_sample_java` draws ARX's
SafePub sample (Bild, Kuhn & Prasser 2018, "SafePub: A Truthful Data
Anonymization Algorithm With Strong Privacy Guarantees", PoPETs 2018(1)) in
compiled code: ARX's ``EDDifferentialPrivacy.initialize`` draws one
``nextDouble()`` per row, rows in table order, and keeps row ``i`` if and only
if that double is *strictly* below beta; run deterministically (its test mode)
it seeds ``new Random(0xDEADBEEF)``, :data:`ARX_DETERMINISTIC_SEED`.

Example:
    >>> random = JavaRandom(0)
    >>> random.next_int(), random.next_int(10), random.next_double()
    (-1155484576, 8, 0.24053641567148587)
    >>> bernoulli_sample_java(8, 0.8646647167633871, ARX_DETERMINISTIC_SEED).tolist()
    [True, False, True, True, True, False, False, True]
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from numba import njit

from kanonym.differential_privacy._checks import check_count, check_probability, check_whole
from kanonym.errors import InputError, echo

MULTIPLIER = 0x5DEECE66D
"""The LCG's multiplier (and the mask a seed is scrambled with)."""

ADDEND = 0xB
"""The LCG's increment."""

STATE_BITS = 48
_MASK = (1 << STATE_BITS) - 1
_DOUBLE_UNIT = 2.0**-53

ARX_DETERMINISTIC_SEED = -559038737
"""The seed of ARX's deterministic (test) runs: ``new Random(0xDEADBEEF)``.

In Java ``0xDEADBEEF`` is an ``int`` literal, hence negative
(-559,038,737), widened to ``long``; 3,735,928,559 would be another stream.
"""

_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1
_INT_MAX = (1 << 31) - 1

# The same constants for the compiled kernels, as unsigned 64-bit values: the
# product of a 48-bit state and the 35-bit multiplier wraps modulo 2**64, and
# its low 48 bits, the only ones kept, are those of the exact product.
_U_MULTIPLIER = np.uint64(MULTIPLIER)
_U_ADDEND = np.uint64(ADDEND)
_U_MASK = np.uint64(_MASK)


def _to_int32(value: int) -> int:
    """``value`` as Java's ``int`` arithmetic leaves it (two's complement, 32 bits)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _to_int64(value: int) -> int:
    """``value`` as Java's ``long`` arithmetic leaves it (two's complement, 64 bits)."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InputError(f"`seed` must be a whole number (a Java long), got {echo(seed)}")
    value = int(seed)
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise InputError(f"`seed` must fit a Java long (-2**63 to 2**63 - 1), got {value}")
    return value


class JavaRandom:
    """A port of ``java.util.Random``: the same seed gives the same numbers as the JDK's.

    Methods carry Java's names in Python's spelling (``nextInt`` is
    :meth:`next_int`); integers come back with Java's signs (``int`` and
    ``long`` in two's complement). Not for production secrets: like the JDK's
    class it is predictable from a few outputs; ARX uses it only in its
    deterministic test mode, ``java.security.SecureRandom`` otherwise.

    Example:
        >>> random = JavaRandom(42)
        >>> [random.next_int(10) for _ in range(5)]
        [0, 3, 8, 4, 0]
    """

    __slots__ = ("_next_gaussian", "_state")

    def __init__(self, seed: int) -> None:
        self._state = 0
        self._next_gaussian: float | None = None
        self.set_seed(seed)

    def set_seed(self, seed: int) -> None:
        """``setSeed``: scramble ``seed`` (a Java long) into the state, drop a pending Gaussian."""
        self._state = (_check_seed(seed) ^ MULTIPLIER) & _MASK
        self._next_gaussian = None

    @property
    def state(self) -> int:
        """The 48-bit state (what ``next`` advances)."""
        return self._state

    def next(self, bits: int) -> int:
        """``next(bits)``: advance the state and return its top ``bits`` bits as a Java int."""
        if check_whole(bits, "bits", 1) > 32:
            raise InputError(f"`bits` must be a whole number from 1 to 32, got {echo(bits)}")
        self._state = (self._state * MULTIPLIER + ADDEND) & _MASK
        return _to_int32(self._state >> (STATE_BITS - bits))

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` (any int) or ``nextInt(bound)`` (uniform on 0 .. bound - 1).

        Example:
            >>> JavaRandom(42).next_int(16), JavaRandom(42).next_int(1 << 30 | 1)
            (11, 117392763)
        """
        if bound is None:
            return self.next(32)
        if check_whole(bound, "bound", 1) > _INT_MAX:
            raise InputError(f"`bound` must be a whole number from 1 to 2**31 - 1, got {bound}")
        bound = int(bound)
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:
            # A power of two: the top bits of r, which are better mixed than its low ones.
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            # Java's loop test `u - r + m < 0` overflows exactly when u falls in the
            # last, incomplete block of `bound` values, which would favour small r.
            if _to_int32(u - r + m) >= 0:
                return r
            u = self.next(31)

    def next_long(self) -> int:
        """``nextLong()``: two ``next(32)`` joined in 64-bit arithmetic (signed)."""
        high = self.next(32)
        low = self.next(32)
        return _to_int64((high << 32) + low)

    def next_double(self) -> float:
        """``nextDouble()``: 53 random bits as a double in [0, 1)."""
        high = self.next(26)
        low = self.next(27)
        return ((high << 27) + low) * _DOUBLE_UNIT

    def next_boolean(self) -> bool:
        """``nextBoolean()``: one random bit."""
        return self.next(1) != 0

    def next_gaussian(self) -> float:
        """``nextGaussian()``: Marsaglia's polar method, keeping the pair's second value for later.

        Java takes the logarithm and square root from ``StrictMath`` (fdlibm);
        this uses Python's ``math``, which agrees on every value the tests
        compare but is not guaranteed to in the last bit for all inputs.
        """
        if self._next_gaussian is not None:
            value, self._next_gaussian = self._next_gaussian, None
            return value
        while True:
            v1 = 2 * self.next_double() - 1
            v2 = 2 * self.next_double() - 1
            s = v1 * v1 + v2 * v2
            if 0 < s < 1:
                break
        multiplier = math.sqrt(-2 * math.log(s) / s)
        self._next_gaussian = v2 * multiplier
        return v1 * multiplier

    def next_doubles(self, count: int) -> npt.NDArray[np.float64]:
        """``count`` successive ``nextDouble()`` values at once (compiled), advancing the state.

        Example:
            >>> JavaRandom(0).next_doubles(2).tolist()
            [0.730967787376657, 0.24053641567148587]
        """
        count = check_count(count, "count")
        out = np.empty(count, dtype=np.float64)
        self._state = int(_fill_doubles(np.uint64(self._state), out))
        return out

    def keep_below(self, rows: int, probability: float) -> npt.NDArray[np.bool_]:
        """``nextDouble() < probability`` for ``rows`` successive draws (compiled)."""
        rows = check_count(rows, "rows")
        probability = check_probability(probability)
        out = np.empty(rows, dtype=np.bool_)
        self._state = int(_fill_below(np.uint64(self._state), probability, out))
        return out


@njit(cache=True, nogil=True)
def _fill_doubles(state: np.uint64, out: npt.NDArray[np.float64]) -> np.uint64:
    """``out[i]``: the i-th ``nextDouble()`` after ``state``; returns the state after the last."""
    s = np.uint64(state)
    for i in range(out.shape[0]):
        s = (s * _U_MULTIPLIER + _U_ADDEND) & _U_MASK
        high = s >> np.uint64(22)  # next(26)
        s = (s * _U_MULTIPLIER + _U_ADDEND) & _U_MASK
        low = s >> np.uint64(21)  # next(27)
        out[i] = float((high << np.uint64(27)) + low) * _DOUBLE_UNIT
    return s


@njit(cache=True, nogil=True)
def _fill_below(state: np.uint64, probability: float, out: npt.NDArray[np.bool_]) -> np.uint64:
    """``out[i]``: whether the i-th ``nextDouble()`` after ``state`` is below ``probability``."""
    s = np.uint64(state)
    for i in range(out.shape[0]):
        s = (s * _U_MULTIPLIER + _U_ADDEND) & _U_MASK
        high = s >> np.uint64(22)
        s = (s * _U_MULTIPLIER + _U_ADDEND) & _U_MASK
        low = s >> np.uint64(21)
        out[i] = float((high << np.uint64(27)) + low) * _DOUBLE_UNIT < probability
    return s


def bernoulli_sample_java(rows: int, probability: float, seed: int) -> npt.NDArray[np.bool_]:
    """The rows ARX's SafePub keeps: row i iff the i-th ``nextDouble()`` of ``Random(seed)`` < p.

    ARX (``EDDifferentialPrivacy.initialize``) visits the rows in table order
    with one ``java.util.Random`` and keeps row ``i`` when
    ``random.nextDouble() < beta`` (strictly below); deterministically seeded
    with :data:`ARX_DETERMINISTIC_SEED`, it draws these same rows. This is the
    random sampling step of Li, Qardaji & Su (2012, "On sampling,
    anonymization, and differential privacy or, k-anonymization meets
    differential privacy", ASIACCS), each row drawn independently with
    probability ``probability``.

    Example:
        >>> bernoulli_sample_java(5, 0.5, 0).tolist()  # Random(0): 0.73, 0.24, 0.64, 0.55, 0.60
        [False, True, False, False, False]
    """
    return JavaRandom(seed).keep_below(rows, probability)
