"""Choosing k: a sweep of optimal releases over k and suppression limits, utility against
re-identification risk, with the Pareto frontier (:mod:`kanonym.sweep.exploration`).

Example:
    >>> import kanonym
    >>> from kanonym.datasets import adult_hierarchies, load_adult
    >>> sweep = kanonym.explore(load_adult(), quasi_identifiers=adult_hierarchies(),
    ...                         ks=range(2, 11))  # doctest: +SKIP
    >>> print(sweep)  # the frontier  # doctest: +SKIP
    >>> config = sweep.config(sweep.frontier[0])  # doctest: +SKIP
"""

from kanonym.sweep.exploration import DEFAULT_KS, DEFAULT_LIMITS, Exploration, explore
from kanonym.sweep.points import SweepPoint

__all__ = ["DEFAULT_KS", "DEFAULT_LIMITS", "Exploration", "SweepPoint", "explore"]
