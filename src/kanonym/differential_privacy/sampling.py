"""The random sampling step of SafePub: each row drawn independently with probability beta.

Li, Qardaji & Su (2012, "On sampling, anonymization, and differential privacy
or, k-anonymization meets differential privacy", ASIACCS) draw every record of
the table independently with the same probability beta (Bernoulli sampling)
before a k-anonymity-like generalization; the uncertainty whether a record was
drawn at all is what makes the result (epsilon, delta)-differentially private
(SafePub, Bild, Kuhn & Prasser 2018, PoPETs). The sample must be drawn afresh
for every release and nobody may choose its seed after seeing the data.

:func:`bernoulli_sample` draws kanonym's samples with NumPy's PCG64 generator;
:func:`record_of_randomness` is what a report records so that a reviewer can
redraw the sample. ARX's own draw, with ``java.util.Random``, is
:func:`kanonym.differential_privacy.java_random.bernoulli_sample_java`.

Example:
    >>> sample = bernoulli_sample(10, 0.5, seed=7)
    >>> sample.tolist()
    [False, False, False, True, True, False, True, False, False, True]
    >>> record_of_randomness(sample, probability=0.5, seed=7)["rows_drawn"]
    4
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kanonym.differential_privacy._checks import check_count, check_probability, check_whole
from kanonym.errors import InputError

PCG64_GENERATOR = "numpy.random.Generator(PCG64)"
"""How a report names the generator of :func:`bernoulli_sample`."""

JAVA_GENERATOR = "java.util.Random"
"""How a report names ARX's generator (``java_random.bernoulli_sample_java``)."""

# Uniforms are drawn this many at a time, so that a table of a hundred million rows
# needs a hundred megabytes of flags, not eight hundred of doubles. PCG64 yields one
# 64-bit output per double, so the draws do not depend on the block size.
_BLOCK = 1 << 20


def bernoulli_sample(rows: int, probability: float, seed: int) -> npt.NDArray[np.bool_]:
    """Which rows are drawn: row i iff the i-th uniform of PCG64(``seed``) is below ``probability``.

    This is the random sampling step of Li, Qardaji & Su (2012): every row is
    drawn independently with probability ``probability`` (SafePub's beta).
    The i-th uniform is the i-th double of ``numpy.random.Generator(PCG64(seed))
    .random()``, so the same seed, row count and probability give the same
    rows on any machine with the same NumPy (:func:`record_of_randomness`
    records its version).

    Example:
        >>> bernoulli_sample(6, 1.0, seed=0).all(), bernoulli_sample(6, 0.0, seed=0).any()
        (np.True_, np.False_)
    """
    return _bernoulli_blocks(rows, probability, seed, _BLOCK)


def _bernoulli_blocks(
    rows: int, probability: float, seed: int, block: int
) -> npt.NDArray[np.bool_]:
    rows = check_count(rows, "rows")
    threshold = check_probability(probability)
    generator = np.random.Generator(np.random.PCG64(check_whole(seed, "seed", 0)))
    drawn = np.empty(rows, dtype=np.bool_)
    for begin in range(0, rows, block):
        end = min(begin + block, rows)
        np.less(generator.random(end - begin), threshold, out=drawn[begin:end])
    return drawn


def record_of_randomness(
    sample: npt.NDArray[np.bool_],
    *,
    probability: float,
    seed: int,
    generator: str = PCG64_GENERATOR,
) -> dict[str, object]:
    """What a report records about a sample: enough to draw the same rows again.

    ``sample`` is the mask a sampler returned; ``generator`` names it
    (:data:`PCG64_GENERATOR` for :func:`bernoulli_sample`,
    :data:`JAVA_GENERATOR` for ARX's draw). The NumPy version is recorded
    because NumPy guarantees PCG64's bit stream, not the doubles its
    ``Generator`` makes of it, across versions.

    Example:
        >>> record = record_of_randomness(np.array([True, False, True]), probability=0.6, seed=3)
        >>> record["rows"], record["rows_drawn"], record["generator"]
        (3, 2, 'numpy.random.Generator(PCG64)')
    """
    mask = np.asarray(sample)
    if mask.dtype != np.bool_ or mask.ndim != 1:
        raise InputError(
            f"`sample` must be a one-dimensional boolean mask, got {mask.dtype} "
            f"with {mask.ndim} dimension(s)"
        )
    record: dict[str, object] = {
        "step": "Bernoulli sampling of rows (Li, Qardaji & Su 2012)",
        "generator": generator,
        "seed": int(seed),
        "probability": check_probability(probability),
        "comparison": "row i drawn iff uniform_i < probability",
        "rows": int(mask.shape[0]),
        "rows_drawn": int(np.count_nonzero(mask)),
    }
    if generator == PCG64_GENERATOR:
        record["numpy"] = np.__version__
    return record
