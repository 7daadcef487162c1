"""(epsilon, delta)-differential privacy for microdata by SafePub's sampling and suppression.

A table is released (epsilon, delta)-differentially private by drawing every
row independently with probability beta, generalizing with a scheme chosen
without looking at the data (or by the exponential mechanism, on a share of
the budget) and suppressing every class smaller than k (Li, Qardaji & Su 2012,
"On sampling, anonymization, and differential privacy or, k-anonymization meets
differential privacy", ASIACCS; SafePub: Bild, Kuhn & Prasser 2018, "SafePub: A
Truthful Data Anonymization Algorithm With Strong Privacy Guarantees", PoPETs
2018(1)). This package holds the pieces, each matching ARX's implementation:

* :mod:`~kanonym.differential_privacy.parameters`: beta and k from epsilon and delta;
* :mod:`~kanonym.differential_privacy.sampling`: the row sample, and its record for a report;
* :mod:`~kanonym.differential_privacy.exponential_mechanism`: the search's private choice;
* :mod:`~kanonym.differential_privacy.java_random`: ``java.util.Random``, to draw as ARX does.

Example:
    >>> parameters = derive_parameters(2.0, 1e-5)
    >>> sample = bernoulli_sample(1_000, parameters.beta, seed=1)
    >>> parameters.k, bool(800 < sample.sum() < 920)
    (114, True)
"""

from kanonym.differential_privacy.exponential_mechanism import (
    arx_epsilon_per_step,
    exponential_mechanism,
    exponential_mechanism_arx,
)
from kanonym.differential_privacy.java_random import (
    ARX_DETERMINISTIC_SEED,
    JavaRandom,
    bernoulli_sample_java,
)
from kanonym.differential_privacy.parameters import (
    MAX_EPSILON,
    SafePubParameters,
    check_delta,
    derive_parameters,
    safepub_delta,
)
from kanonym.differential_privacy.sampling import (
    JAVA_GENERATOR,
    PCG64_GENERATOR,
    bernoulli_sample,
    record_of_randomness,
)

__all__ = [
    "ARX_DETERMINISTIC_SEED",
    "JAVA_GENERATOR",
    "MAX_EPSILON",
    "PCG64_GENERATOR",
    "JavaRandom",
    "SafePubParameters",
    "arx_epsilon_per_step",
    "bernoulli_sample",
    "bernoulli_sample_java",
    "check_delta",
    "derive_parameters",
    "exponential_mechanism",
    "exponential_mechanism_arx",
    "record_of_randomness",
    "safepub_delta",
]
