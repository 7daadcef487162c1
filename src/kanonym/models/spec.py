"""One text form for every sensitive-attribute model (the ``--model`` grammar).

=========================================  ============================================
spec                                       model
=========================================  ============================================
``l-diversity:distinct:L:ATTR``            :class:`DistinctLDiversity` (L whole)
``l-diversity:entropy:L:ATTR``             :class:`EntropyLDiversity` (L a number >= 1)
``l-diversity:recursive:C:L:ATTR``         :class:`RecursiveCLDiversity`
``t-closeness:equal:T:ATTR``               :class:`EqualDistanceTCloseness`
``t-closeness:ordered:T:ATTR``             :class:`OrderedDistanceTCloseness` (see below)
``t-closeness:hierarchical:T:ATTR``        :class:`HierarchicalDistanceTCloseness`
``beta-likeness:basic:B:ATTR``             :class:`BasicBetaLikeness`
``beta-likeness:enhanced:B:ATTR``          :class:`EnhancedBetaLikeness`
``delta-disclosure:D:ATTR``                :class:`DeltaDisclosurePrivacy`
=========================================  ============================================

Ordered distance ranks the values numerically, or, when a hierarchy is given
for the attribute (``--sensitive ATTR=HIERARCHY``), in the order of its leaves.
ATTR is everything after the last parameter, so it may hold colons. Numbers
are plain decimals (``3``, ``0.2``, ``1e-3``).

Specs are the command line's and the job file's form; the Python API takes the
model objects. :func:`model_spec` writes a model back as its spec (the report
records them so that ``kanonym apply`` can enforce them again).

Example:
    >>> parse_model("l-diversity:recursive:3:2:disease").describe()
    {'model': 'recursive-c-l-diversity', 'attribute': 'disease', 'c': 3.0, 'l': 2}
    >>> model_spec(RecursiveCLDiversity(attribute="disease", c=3, l=2))
    'l-diversity:recursive:3:2:disease'
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from kanonym.errors import InputError, echo
from kanonym.hierarchy import Hierarchy
from kanonym.models.base import PrivacyModel
from kanonym.models.basic_beta_likeness import BasicBetaLikeness
from kanonym.models.delta_disclosure import DeltaDisclosurePrivacy
from kanonym.models.distinct_l_diversity import DistinctLDiversity
from kanonym.models.enhanced_beta_likeness import EnhancedBetaLikeness
from kanonym.models.entropy_l_diversity import EntropyLDiversity
from kanonym.models.equal_t_closeness import EqualDistanceTCloseness
from kanonym.models.hierarchical_t_closeness import HierarchicalDistanceTCloseness
from kanonym.models.ordered_t_closeness import OrderedDistanceTCloseness
from kanonym.models.recursive_l_diversity import RecursiveCLDiversity

FORMS = (
    "l-diversity:distinct:L:ATTR",
    "l-diversity:entropy:L:ATTR",
    "l-diversity:recursive:C:L:ATTR",
    "t-closeness:equal|ordered|hierarchical:T:ATTR",
    "beta-likeness:basic|enhanced:B:ATTR",
    "delta-disclosure:D:ATTR",
)

FAMILIES = ("l-diversity", "t-closeness", "beta-likeness", "delta-disclosure")
GRAMMAR = ", ".join(FORMS)
"""Every form of a model spec, for error messages and help texts."""

_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")


def parse_model(
    spec: str, *, sensitive_hierarchies: Mapping[str, Hierarchy] | None = None
) -> PrivacyModel:
    """The privacy model a spec names (see the module's table).

    Args:
        spec: e.g. ``"t-closeness:ordered:0.2:salary"``.
        sensitive_hierarchies: sensitive attribute -> its hierarchy; hierarchical
            t-closeness takes its attribute's from here.

    Raises:
        InputError: the spec is malformed, a parameter is out of range, or
            hierarchical t-closeness names an attribute without a hierarchy. The
            message quotes the spec.

    Example:
        >>> parse_model("beta-likeness:enhanced:2:disease").describe()
        {'model': 'enhanced-beta-likeness', 'attribute': 'disease', 'beta': 2.0}
    """
    if not isinstance(spec, str):
        raise InputError(f"a model spec must be a string, got {echo(spec)}")
    try:
        return _parse(spec, sensitive_hierarchies or {})
    except InputError as error:
        raise InputError(f"model {echo(spec)}: {error}") from None


def _parse(spec: str, hierarchies: Mapping[str, Hierarchy]) -> PrivacyModel:
    family, _, rest = spec.partition(":")
    if family == "l-diversity":
        variant, _, rest = rest.partition(":")
        if variant == "distinct":
            size, attribute = _fields(rest, 2, "l-diversity:distinct:L:ATTR")
            return DistinctLDiversity(attribute=attribute, l=_whole(size, "L"))
        if variant == "entropy":
            size, attribute = _fields(rest, 2, "l-diversity:entropy:L:ATTR")
            return EntropyLDiversity(attribute=attribute, l=_decimal(size, "L"))
        if variant == "recursive":
            c, size, attribute = _fields(rest, 3, "l-diversity:recursive:C:L:ATTR")
            return RecursiveCLDiversity(
                attribute=attribute, c=_decimal(c, "C"), l=_whole(size, "L")
            )
        raise InputError(
            f"l-diversity variant {echo(variant)} is not distinct, entropy or recursive"
            f"{_did_you_mean(variant, ('distinct', 'entropy', 'recursive'))}; the forms are "
            "l-diversity:distinct:L:ATTR, l-diversity:entropy:L:ATTR, "
            "l-diversity:recursive:C:L:ATTR"
        )
    if family == "t-closeness":
        distance, t, attribute = _fields(rest, 3, "t-closeness:equal|ordered|hierarchical:T:ATTR")
        if distance == "equal":
            return EqualDistanceTCloseness(attribute=attribute, t=_decimal(t, "T"))
        if distance == "ordered":
            # A hierarchy given for the attribute orders its values (leaf order);
            # without one they must be numbers.
            order = tuple(hierarchies[attribute].leaves) if attribute in hierarchies else None
            return OrderedDistanceTCloseness(attribute=attribute, t=_decimal(t, "T"), order=order)
        if distance == "hierarchical":
            if attribute not in hierarchies:
                raise InputError(
                    f"hierarchical distance needs a hierarchy of {echo(attribute)}, "
                    "given in `sensitive_hierarchies`"
                )
            return HierarchicalDistanceTCloseness(
                attribute=attribute, t=_decimal(t, "T"), hierarchy=hierarchies[attribute]
            )
        raise InputError(
            f"t-closeness distance {echo(distance)} is not equal, ordered or hierarchical"
            f"{_did_you_mean(distance, ('equal', 'ordered', 'hierarchical'))}; the form is "
            "t-closeness:equal|ordered|hierarchical:T:ATTR"
        )
    if family == "beta-likeness":
        variant, beta, attribute = _fields(rest, 3, "beta-likeness:basic|enhanced:B:ATTR")
        if variant == "basic":
            return BasicBetaLikeness(attribute=attribute, beta=_decimal(beta, "B"))
        if variant == "enhanced":
            return EnhancedBetaLikeness(attribute=attribute, beta=_decimal(beta, "B"))
        raise InputError(
            f"beta-likeness variant {echo(variant)} is not basic or enhanced"
            f"{_did_you_mean(variant, ('basic', 'enhanced'))}; the form is "
            "beta-likeness:basic|enhanced:B:ATTR"
        )
    if family == "delta-disclosure":
        delta, attribute = _fields(rest, 2, "delta-disclosure:D:ATTR")
        return DeltaDisclosurePrivacy(attribute=attribute, delta=_decimal(delta, "D"))
    raise InputError(
        f"unknown model {echo(family)}{_did_you_mean(family, FAMILIES)}; the forms are {GRAMMAR}"
    )


def model_spec(model: PrivacyModel) -> str | None:
    """The spec :func:`parse_model` reads back as ``model``, or None if the grammar lacks one.

    Hierarchical t-closeness's spec names no hierarchy: the caller records
    it apart (the report's ``sensitive_hierarchies``). None is returned for a
    model class of the caller's own and for ordered t-closeness with an
    explicit order, which no spec expresses (read back, it would rank the
    values numerically).

    Example:
        >>> model_spec(EntropyLDiversity(attribute="disease", l=2.5))
        'l-diversity:entropy:2.5:disease'
        >>> model_spec(OrderedDistanceTCloseness(attribute="salary", t=0.2, order=("lo", "hi")))
    """
    if isinstance(model, DistinctLDiversity):
        return f"l-diversity:distinct:{model.l}:{model.attribute}"
    if isinstance(model, EntropyLDiversity):
        return f"l-diversity:entropy:{_number(model.l)}:{model.attribute}"
    if isinstance(model, RecursiveCLDiversity):
        return f"l-diversity:recursive:{_number(model.c)}:{model.l}:{model.attribute}"
    if isinstance(model, EqualDistanceTCloseness):
        return f"t-closeness:equal:{_number(model.t)}:{model.attribute}"
    if isinstance(model, OrderedDistanceTCloseness):
        if model.order is not None:
            return None
        return f"t-closeness:ordered:{_number(model.t)}:{model.attribute}"
    if isinstance(model, HierarchicalDistanceTCloseness):
        return f"t-closeness:hierarchical:{_number(model.t)}:{model.attribute}"
    if isinstance(model, BasicBetaLikeness):
        return f"beta-likeness:basic:{_number(model.beta)}:{model.attribute}"
    if isinstance(model, EnhancedBetaLikeness):
        return f"beta-likeness:enhanced:{_number(model.beta)}:{model.attribute}"
    if isinstance(model, DeltaDisclosurePrivacy):
        return f"delta-disclosure:{_number(model.delta)}:{model.attribute}"
    return None


def _number(value: float) -> str:
    """A parameter as a spec writes it: whole plainly (``5``), otherwise exactly (``repr``)."""
    number = float(value)
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)


def _did_you_mean(word: str, choices: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word.lower(), choices, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _fields(rest: str, count: int, form: str) -> list[str]:
    """Split ``rest`` into ``count`` non-empty fields, the last taking any colons."""
    fields = rest.split(":", count - 1)
    if len(fields) != count or not all(fields):
        raise InputError(f"expected the form {form}")
    return fields


def _whole(text: str, what: str) -> int:
    if not _WHOLE.fullmatch(text):
        raise InputError(f"{what} {echo(text)} is not a whole number")
    try:
        return int(text)
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
        raise InputError(f"{what} {echo(text)} is too large") from None


def _decimal(text: str, what: str) -> float:
    if not _DECIMAL.fullmatch(text):
        raise InputError(f"{what} {echo(text)} is not a number")
    return float(text)
