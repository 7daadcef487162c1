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
``delta-presence:MIN:MAX``                 :class:`DeltaPresence` (needs the population)
``differential-privacy:EPS:DELTA[:S]``     :class:`DifferentialPrivacy` (see below)
``k-map:K``                                :class:`KMap` (needs the population)
``k-map:K:ESTIMATOR:SIGNIFICANCE:N``       :class:`KMap` estimated from the population's
                                           size N (ESTIMATOR ``poisson`` or
                                           ``zero-truncated-poisson``)
``average-risk:R``                         :class:`AverageReidentificationRisk`
``average-risk:R:H:F``                     ... and at most F of the records above risk H
``sample-uniqueness:U``                    :class:`SampleUniqueness`
``population-uniqueness:U:EST:N``          :class:`PopulationUniqueness` (see below)
=========================================  ============================================

Population uniqueness's EST is ``dankar``, ``pitman``, ``zayatz`` or ``snb``
and N the population's size (a whole number, e.g. ``317238626``) or the
sampling fraction (a decimal with a point, e.g. ``0.01``).
Ordered distance ranks the values numerically, or, when a hierarchy is given
for the attribute (``--sensitive ATTR=HIERARCHY``), in the order of its leaves.
Differential privacy's S, its scheme, is a generalization degree (``none``, ``low``,
``low-medium``, ``medium`` (the default), ``medium-high``, ``high``,
``complete``) or ``search[:BUDGET[:STEPS]]``: SafePub's search, spending
BUDGET (0.1 by default) of EPS in STEPS draws (100 by default).
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
from typing import cast

from kanonym.errors import ECHO_LIMIT, InputError, echo
from kanonym.hierarchy import Hierarchy
from kanonym.models.average_risk import AverageReidentificationRisk
from kanonym.models.base import PrivacyModel
from kanonym.models.basic_beta_likeness import BasicBetaLikeness
from kanonym.models.delta_disclosure import DeltaDisclosurePrivacy
from kanonym.models.delta_presence import DeltaPresence
from kanonym.models.differential_privacy import (
    DEGREES,
    DifferentialPrivacy,
    GeneralizationDegree,
)
from kanonym.models.distinct_l_diversity import DistinctLDiversity
from kanonym.models.enhanced_beta_likeness import EnhancedBetaLikeness
from kanonym.models.entropy_l_diversity import EntropyLDiversity
from kanonym.models.equal_t_closeness import EqualDistanceTCloseness
from kanonym.models.hierarchical_t_closeness import HierarchicalDistanceTCloseness
from kanonym.models.k_map import ESTIMATORS, KMap
from kanonym.models.ordered_t_closeness import OrderedDistanceTCloseness
from kanonym.models.population_uniqueness import PopulationUniqueness
from kanonym.models.recursive_l_diversity import RecursiveCLDiversity
from kanonym.models.sample_uniqueness import SampleUniqueness

FORMS = (
    "l-diversity:distinct:L:ATTR",
    "l-diversity:entropy:L:ATTR",
    "l-diversity:recursive:C:L:ATTR",
    "t-closeness:equal|ordered|hierarchical:T:ATTR",
    "beta-likeness:basic|enhanced:B:ATTR",
    "delta-disclosure:D:ATTR",
    "delta-presence:MIN:MAX",
    "k-map:K[:poisson|zero-truncated-poisson:SIGNIFICANCE:POPULATION_SIZE]",
    "differential-privacy:EPS:DELTA[:SCHEME]",
    "average-risk:R[:H:F]",
    "sample-uniqueness:U",
    "population-uniqueness:U:EST:N",
)
_K_MAP_ESTIMATED = "k-map:K:poisson|zero-truncated-poisson:SIGNIFICANCE:POPULATION_SIZE"

FAMILIES = (
    "l-diversity",
    "t-closeness",
    "beta-likeness",
    "delta-disclosure",
    "delta-presence",
    "k-map",
    "differential-privacy",
    "average-risk",
    "sample-uniqueness",
    "population-uniqueness",
)
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
    if family == "delta-presence":
        low, high = _exactly(rest, 2, "delta-presence:MIN:MAX")
        return DeltaPresence(delta_min=_decimal(low, "MIN"), delta_max=_decimal(high, "MAX"))
    if family == "k-map":
        return _k_map(rest)
    if family == "differential-privacy":
        return _differential_privacy(rest)
    if family in ("average-risk", "sample-uniqueness", "population-uniqueness"):
        return _risk(family, rest)
    # A long spec of one word is quoted (cut) once already, by parse_model.
    named = "" if family == spec and len(family) > ECHO_LIMIT else f" {echo(family)}"
    # A typo is shown every form; a value too long to quote (no typo, and already cut
    # once) only the families, so that the line stays short.
    known = f"the forms are {GRAMMAR}" if named else f"the models are {', '.join(FAMILIES)}"
    raise InputError(f"unknown model{named}{_did_you_mean(family, FAMILIES)}; {known}")


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
    if isinstance(model, DeltaPresence):
        return f"delta-presence:{_number(model.delta_min)}:{_number(model.delta_max)}"
    if isinstance(model, KMap):
        if model.estimator is None:
            return f"k-map:{model.k}"
        return (
            f"k-map:{model.k}:{model.estimator}:{_number(model.significance)}:"
            f"{model.population_size}"
        )
    if isinstance(model, DifferentialPrivacy):
        return _differential_privacy_spec(model)
    if isinstance(model, AverageReidentificationRisk | SampleUniqueness | PopulationUniqueness):
        return _risk_spec(model)
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


def _exactly(rest: str, count: int, form: str) -> list[str]:
    """Split ``rest`` into exactly ``count`` non-empty fields (no attribute at the end)."""
    fields = rest.split(":")
    if len(fields) != count or not all(fields):
        raise InputError(f"expected the form {form}")
    return fields


def _k_map(rest: str) -> KMap:
    """``K`` (a population table) or ``K:ESTIMATOR:SIGNIFICANCE:POPULATION_SIZE``."""
    fields = rest.split(":")
    if len(fields) not in (1, 4) or not all(fields):
        raise InputError(f"expected the form k-map:K or {_K_MAP_ESTIMATED}")
    if len(fields) == 1:
        return KMap(k=_whole(fields[0], "K"))
    size, estimator, significance, people = fields
    if estimator not in ESTIMATORS:
        raise InputError(
            f"k-map estimator {echo(estimator)} is not poisson or zero-truncated-poisson"
            f"{_did_you_mean(estimator, ESTIMATORS)}; the form is {_K_MAP_ESTIMATED}"
        )
    return KMap(
        k=_whole(size, "K"),
        estimator="poisson" if estimator == "poisson" else "zero-truncated-poisson",
        significance=_decimal(significance, "SIGNIFICANCE"),
        population_size=_whole(people, "POPULATION_SIZE"),
    )


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


_DIFFERENTIAL_PRIVACY = "differential-privacy:EPS:DELTA[:SCHEME|search[:BUDGET[:STEPS]]]"


def _differential_privacy(rest: str) -> DifferentialPrivacy:
    """``EPS:DELTA[:SCHEME]`` or ``EPS:DELTA:search[:BUDGET[:STEPS]]``."""
    fields = rest.split(":")
    if not 2 <= len(fields) <= 5 or not all(fields):
        raise InputError(f"expected the form {_DIFFERENTIAL_PRIVACY}")
    epsilon, delta = _decimal(fields[0], "EPS"), _decimal(fields[1], "DELTA")
    scheme = fields[2] if len(fields) > 2 else "medium"
    if scheme == "search":
        budget = _decimal(fields[3], "BUDGET") if len(fields) > 3 else 0.1
        steps = _whole(fields[4], "STEPS") if len(fields) > 4 else 100
        return DifferentialPrivacy(
            epsilon, delta, generalization=None, search_budget=budget, search_steps=steps
        )
    if len(fields) > 3:
        raise InputError(f"only search takes a BUDGET; the form is {_DIFFERENTIAL_PRIVACY}")
    if scheme not in DEGREES:
        raise InputError(
            f"SCHEME {echo(scheme)} is not one of {', '.join(DEGREES)} or search"
            f"{_did_you_mean(scheme, (*DEGREES, 'search'))}"
        )
    return DifferentialPrivacy(epsilon, delta, generalization=cast(GeneralizationDegree, scheme))


def _differential_privacy_spec(model: DifferentialPrivacy) -> str | None:
    """The spec of ``model``; None for ARX's deterministic sample, which no spec names."""
    if model.randomness != "kanonym":
        return None
    head = f"differential-privacy:{_number(model.epsilon)}:{_number(model.delta)}"
    if model.generalization is None:
        return f"{head}:search:{_number(model.search_budget)}:{model.search_steps}"
    return f"{head}:{model.generalization}"


_POPULATION_UNIQUENESS = "population-uniqueness:U:dankar|pitman|zayatz|snb:N"


def _risk(family: str, rest: str) -> PrivacyModel:
    """The risk thresholds: ``average-risk:R[:H:F]``, ``sample-uniqueness:U``,
    ``population-uniqueness:U:EST:N``."""
    if family == "average-risk":
        fields = rest.split(":")
        if len(fields) == 3 and all(fields):
            risk, highest, share = fields
            return AverageReidentificationRisk(
                average_risk=_decimal(risk, "R"),
                highest_risk=_decimal(highest, "H"),
                records_at_risk=_decimal(share, "F"),
            )
        (risk,) = _exactly(rest, 1, "average-risk:R or average-risk:R:H:F")
        return AverageReidentificationRisk(average_risk=_decimal(risk, "R"))
    if family == "sample-uniqueness":
        (threshold,) = _exactly(rest, 1, "sample-uniqueness:U")
        return SampleUniqueness(threshold=_decimal(threshold, "U"))
    threshold, estimator, size = _exactly(rest, 3, _POPULATION_UNIQUENESS)
    choices = ("dankar", "pitman", "zayatz", "snb")
    if estimator not in choices:
        raise InputError(
            f"estimator {echo(estimator)} is not dankar, pitman, zayatz or snb"
            f"{_did_you_mean(estimator, choices)}; the form is {_POPULATION_UNIQUENESS}"
        )
    if _WHOLE.fullmatch(size):
        return PopulationUniqueness(
            threshold=_decimal(threshold, "U"),
            estimator=estimator,
            population_size=_whole(size, "N"),
        )
    return PopulationUniqueness(
        threshold=_decimal(threshold, "U"),
        estimator=estimator,
        sampling_fraction=_decimal(size, "N (a sampling fraction)"),
    )


def _risk_spec(
    model: AverageReidentificationRisk | SampleUniqueness | PopulationUniqueness,
) -> str:
    if isinstance(model, SampleUniqueness):
        return f"sample-uniqueness:{_number(model.threshold)}"
    if isinstance(model, AverageReidentificationRisk):
        spec = f"average-risk:{_number(model.average_risk)}"
        if model.highest_risk is not None and model.records_at_risk is not None:
            spec += f":{_number(model.highest_risk)}:{_number(model.records_at_risk)}"
        return spec
    if model.population_size is not None:
        size = str(model.population_size)
    else:
        # A fraction always written with a point, so that it reads back as one.
        size = repr(float(model.sampling_fraction or 0.0))
    return f"population-uniqueness:{_number(model.threshold)}:{model.estimator}:{size}"
