"""The granularity of generalization and suppression: Samarati's technique classes.

Samarati ("k-Anonymity", FOSAD 2008 lecture slides, "Classification of
k-Anonymity techniques"; Ciriani, De Capitani di Vimercati, Foresti & Samarati,
"k-Anonymity", 2007) classifies k-anonymization by the level at which each
operation applies. Generalization applies to a whole attribute (AG: every value
of the column is taken to the same level), to single cells (CG: values of one
column may sit at different levels) or not at all. Suppression removes whole
tuples (TS), blanks a whole attribute (AS), blanks single cells (CS) or is not
used. A class is named ``<generalization>_<suppression>``:

============== ====== ====== ====== =============
generalization tuple  attr.  cell   none
============== ====== ====== ====== =============
attribute      AG_TS  AG_AS  AG_CS  AG_ (= AG_AS)
cell           CG_TS  CG_AS  CG_CS  CG_ (= CG_CS)
none           _TS    _AS    _CS    _
============== ====== ====== ====== =============

CG_TS and CG_AS are not applicable (a tuple or an attribute wholly blanked is
already reachable by generalizing its cells, and cell generalization leaves no
tuple or attribute that must be removed whole); ``_`` (nothing generalized,
nothing suppressed) is not interesting. AG_AS is AG_: suppressing an attribute is
generalizing it to its hierarchy's root, a node of the lattice already; CG_CS is
CG_ likewise.

Example:
    >>> TECHNIQUES["AG_CS"].suppression, TECHNIQUES["AG_AS"].same_as
    ('cell', 'AG_')
    >>> technique_for("CG_TS")
    Traceback (most recent call last):
    ...
    kanonym.errors.InputError: technique CG_TS is not applicable: ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kanonym.errors import InputError
from kanonym.recoding import RECODINGS

Generalization = Literal["attribute", "cell", "none"]
Suppression = Literal["tuple", "attribute", "cell", "none"]


@dataclass(frozen=True, kw_only=True)
class Technique:
    """One of Samarati's technique classes (see the module docstring).

    Attributes:
        name: the class name, e.g. ``"AG_TS"``.
        generalization: ``attribute``, ``cell`` or ``none``.
        suppression: ``tuple``, ``attribute``, ``cell`` or ``none``.
        same_as: the class it is identical to, if it has another name.
    """

    name: str
    generalization: Generalization
    suppression: Suppression
    same_as: str | None = None

    def __post_init__(self) -> None:
        prefix = {"attribute": "AG", "cell": "CG", "none": ""}[self.generalization]
        suffix = {"tuple": "TS", "attribute": "AS", "cell": "CS", "none": ""}[self.suppression]
        if self.name != f"{prefix}_{suffix}":
            raise ValueError(
                f"technique {self.name!r} does not name {self.generalization} generalization "
                f"with {self.suppression} suppression"
            )

    @property
    def cells(self) -> bool:
        """Whether outliers are handled by blanking cells (AG_CS, _CS)."""
        return self.suppression == "cell" and self.generalization != "cell"

    @property
    def suppresses_rows(self) -> bool:
        """Whether a suppression limit applies (rows removed, or rows with blanked cells)."""
        return self.suppression in ("tuple", "cell")


TECHNIQUES: Mapping[str, Technique] = {
    t.name: t
    for t in (
        Technique(name="AG_TS", generalization="attribute", suppression="tuple"),
        Technique(name="AG_AS", generalization="attribute", suppression="attribute", same_as="AG_"),
        Technique(name="AG_CS", generalization="attribute", suppression="cell"),
        Technique(name="AG_", generalization="attribute", suppression="none", same_as="AG_AS"),
        Technique(name="CG_CS", generalization="cell", suppression="cell", same_as="CG_"),
        Technique(name="CG_", generalization="cell", suppression="none", same_as="CG_CS"),
        Technique(name="_TS", generalization="none", suppression="tuple"),
        Technique(name="_AS", generalization="none", suppression="attribute"),
        Technique(name="_CS", generalization="none", suppression="cell"),
    )
}
DEFAULT_TECHNIQUE = "AG_TS"

# Classes of the table that are not techniques, with Samarati's reason.
_REJECTED = {
    "CG_TS": "not applicable: with cell generalization a tuple never has to be removed "
    "whole (its cells can be generalized up to the root instead)",
    "CG_AS": "not applicable: with cell generalization an attribute never has to be "
    "blanked whole (its cells can be generalized up to the root instead)",
    "_": "not interesting: it neither generalizes nor suppresses, so it releases the "
    "table as it is",
}

# Searches whose answer stays correct when a node's acceptance is not monotone,
# as it is with cell suppression (fewer than k outlier rows must join a class of
# released rows, which a generalization can make impossible).
CELL_SUPPRESSION_ALGORITHMS = frozenset({"optimal", "datafly", "greedy", "mu-argus"})
# Algorithms that only ever suppress cells, and the technique they default to.
_CELL_ONLY = {"mu-argus": "AG_CS"}
# Cell generalization is local recoding (Mondrian, strict or relaxed), a release
# path of its own; CG_ is the only class it belongs to.
CELL_GENERALIZATION_ALGORITHMS = frozenset(RECODINGS)


def technique_for(name: str) -> Technique:
    """The technique called ``name``; an InputError names the reason otherwise."""
    if name in _REJECTED:
        raise InputError(f"technique {name} is {_REJECTED[name]}")
    if name not in TECHNIQUES:
        raise InputError(f"unknown technique '{name}'; choose one of {list(TECHNIQUES)}")
    return TECHNIQUES[name]


def resolve_technique(
    name: str | None,
    *,
    algorithm: str,
    limits_suppression: bool,
    bounds_levels: bool,
) -> Technique:
    """Check a technique against the other options of a job; return it.

    ``name`` None means the algorithm's default (AG_CS for ``mu-argus``, AG_TS
    otherwise). ``limits_suppression`` says a non-zero suppression limit was
    given, ``bounds_levels`` that min/max levels were. Raises InputError with
    the reason for every contradiction.

    Example:
        >>> resolve_technique(None, algorithm="mu-argus", limits_suppression=True,
        ...                   bounds_levels=False).name
        'AG_CS'
        >>> resolve_technique("AG_", algorithm="optimal", limits_suppression=True,
        ...                   bounds_levels=False)
        Traceback (most recent call last):
        ...
        kanonym.errors.InputError: technique AG_ suppresses nothing: ...
    """
    if name is None:
        name = (
            "CG_"
            if algorithm in CELL_GENERALIZATION_ALGORITHMS
            else _CELL_ONLY.get(algorithm, DEFAULT_TECHNIQUE)
        )
    if not isinstance(name, str):
        raise InputError(f"`technique` must be a string such as 'AG_TS', got {name!r}")
    technique = technique_for(name)
    if technique.generalization == "cell":
        if algorithm not in CELL_GENERALIZATION_ALGORITHMS:
            raise InputError(
                f"technique {name} generalizes single cells (local recoding), which needs "
                + " or ".join(f"`algorithm='{a}'`" for a in sorted(CELL_GENERALIZATION_ALGORITHMS))
            )
        return technique
    if algorithm in CELL_GENERALIZATION_ALGORITHMS:
        raise InputError(
            f"`algorithm='{algorithm}'` is a local recoding (technique CG_, cell generalization "
            f"without suppression), not {name}"
        )
    if algorithm in _CELL_ONLY and not technique.cells:
        raise InputError(
            f"`algorithm='{algorithm}'` suppresses cells; use `technique='AG_CS'` (its default) "
            f"or `technique='_CS'`, not {name}"
        )
    if technique.cells and algorithm not in CELL_SUPPRESSION_ALGORITHMS:
        raise InputError(
            f"technique {name} cannot run with `algorithm='{algorithm}'`: with cell "
            "suppression a node that satisfies the models can have a generalization that "
            "does not (fewer than k outlier rows must join released rows), and "
            f"{algorithm} prunes by assuming it cannot; use one of "
            f"{sorted(CELL_SUPPRESSION_ALGORITHMS)}"
        )
    if limits_suppression and not technique.suppresses_rows:
        raise InputError(
            f"technique {name} suppresses nothing: every row is released whole, so "
            "`max_suppression` and `max_suppressed_rows` do not apply"
            if technique.suppression == "none"
            else f"technique {name} blanks whole attributes, never rows, so "
            "`max_suppression` and `max_suppressed_rows` do not apply"
        )
    if bounds_levels and technique.generalization == "none":
        raise InputError(
            f"technique {name} does not generalize, so `min_levels` and `max_levels` do not apply"
        )
    return technique
