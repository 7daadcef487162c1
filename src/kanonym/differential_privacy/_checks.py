"""Checks of the numbers the differential privacy functions take, each naming the parameter.

Example:
    >>> check_probability(0.25)
    0.25
    >>> check_count(-1, "rows")
    Traceback (most recent call last):
    ...
    kanonym.errors.InputError: `rows` must be a whole number >= 0, got -1
"""

from __future__ import annotations

import math

import numpy as np

from kanonym.errors import InputError, echo


def check_whole(value: object, name: str, minimum: int) -> int:
    """``value`` as an int, refused unless it is a whole number (not a bool) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InputError(f"`{name}` must be a whole number >= {minimum}, got {echo(value)}")
    return int(value)


def check_count(value: object, name: str) -> int:
    """A count of rows or draws: a whole number >= 0."""
    return check_whole(value, name, 0)


def check_number(value: object, name: str) -> float:
    """A finite real number (not a bool), as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InputError(f"`{name}` must be a number, got {echo(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise InputError(f"`{name}` must be a finite number, got {echo(value)}")
    return number


def check_positive(value: object, name: str) -> float:
    """A finite number > 0."""
    number = check_number(value, name)
    if number <= 0.0:
        raise InputError(f"`{name}` must be > 0, got {echo(value)}")
    return number


def check_probability(value: object, name: str = "probability") -> float:
    """A number from 0 to 1, both included."""
    number = check_number(value, name)
    if not 0.0 <= number <= 1.0:
        raise InputError(f"`{name}` must be a number from 0 to 1, got {echo(value)}")
    return number
