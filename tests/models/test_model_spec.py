"""The ``--model`` grammar: every form, and malformed specs named in the error."""

from __future__ import annotations

import pytest

from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy
from kanonym.models import (
    BasicBetaLikeness,
    DeltaDisclosurePrivacy,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceTCloseness,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    OrderedDistanceTCloseness,
    RecursiveCLDiversity,
    model_spec,
    parse_model,
)

DISEASE = Hierarchy("disease.csv", (("flu", "ulcer"), ("*", "*")))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("l-diversity:distinct:3:disease", DistinctLDiversity(attribute="disease", l=3)),
        ("l-diversity:entropy:2.5:disease", EntropyLDiversity(attribute="disease", l=2.5)),
        ("l-diversity:entropy:3:disease", EntropyLDiversity(attribute="disease", l=3.0)),
        (
            "l-diversity:recursive:3:2:disease",
            RecursiveCLDiversity(attribute="disease", c=3.0, l=2),
        ),
        ("t-closeness:equal:0.2:disease", EqualDistanceTCloseness(attribute="disease", t=0.2)),
        ("t-closeness:ordered:.2:salary", OrderedDistanceTCloseness(attribute="salary", t=0.2)),
        (
            "t-closeness:hierarchical:0.2:disease",
            HierarchicalDistanceTCloseness(attribute="disease", t=0.2, hierarchy=DISEASE),
        ),
        ("beta-likeness:basic:1:disease", BasicBetaLikeness(attribute="disease", beta=1.0)),
        ("beta-likeness:enhanced:2e0:disease", EnhancedBetaLikeness(attribute="disease", beta=2)),
        ("delta-disclosure:1.5:disease", DeltaDisclosurePrivacy(attribute="disease", delta=1.5)),
        # The attribute is the rest of the spec, colons and all.
        ("delta-disclosure:1:a:b", DeltaDisclosurePrivacy(attribute="a:b", delta=1)),
    ],
)
def test_every_form_parses(spec: str, expected: object) -> None:
    assert parse_model(spec, sensitive_hierarchies={"disease": DISEASE}) == expected


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("k-anonymity:5", "unknown model 'k-anonymity'"),
        ("l-diversity:3:disease", "variant '3' is not distinct, entropy or recursive"),
        ("l-diversity:distinct:3", "expected the form l-diversity:distinct:L:ATTR"),
        ("l-diversity:distinct:3:", "expected the form"),
        ("l-diversity:distinct:2.5:disease", "L '2.5' is not a whole number"),
        ("l-diversity:distinct:0:disease", "l must be a whole number >= 1"),
        ("l-diversity:entropy:0.5:disease", "l must be a number >= 1"),
        ("l-diversity:recursive:3:disease", "expected the form l-diversity:recursive:C:L:ATTR"),
        ("l-diversity:recursive:x:2:disease", "C 'x' is not a number"),
        ("t-closeness:earth:0.2:disease", "distance 'earth' is not equal, ordered or"),
        ("t-closeness:equal:1.5:disease", "t must be a number >= 0 and <= 1"),
        ("t-closeness:equal:-0.1:disease", "T '-0.1' is not a number"),
        ("t-closeness:equal:nan:disease", "T 'nan' is not a number"),
        ("t-closeness:hierarchical:0.2:salary", "needs a hierarchy of 'salary'"),
        ("beta-likeness:strong:1:disease", "variant 'strong' is not basic or enhanced"),
        ("beta-likeness:basic:0:disease", "beta must be a number > 0"),
        ("delta-disclosure:disease", "expected the form delta-disclosure:D:ATTR"),
        ("delta-disclosure:1e999:disease", "delta must be a number > 0"),
        ("", "unknown model ''"),
    ],
)
def test_malformed_specs_are_input_errors_naming_the_spec(spec: str, reason: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_model(spec, sensitive_hierarchies={"disease": DISEASE})
    message = str(caught.value)
    assert message.startswith(f"model '{spec}': ")
    assert reason in message


def test_hierarchical_without_any_hierarchies() -> None:
    with pytest.raises(InputError, match="needs a hierarchy of 'disease'"):
        parse_model("t-closeness:hierarchical:0.2:disease")


def test_ordered_distance_takes_the_order_of_a_given_hierarchy() -> None:
    model = parse_model(
        "t-closeness:ordered:0.2:disease", sensitive_hierarchies={"disease": DISEASE}
    )
    assert model == OrderedDistanceTCloseness(attribute="disease", t=0.2, order=("flu", "ulcer"))


def test_a_spec_must_be_a_string() -> None:
    with pytest.raises(InputError, match="must be a string"):
        parse_model(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "spec",
    [
        "l-diversity:distinct:3:disease",
        "l-diversity:entropy:2.5:disease",
        "l-diversity:entropy:5:disease",
        "l-diversity:recursive:3:2:disease",
        "t-closeness:equal:0.2:disease",
        "t-closeness:ordered:1e-05:salary",
        "t-closeness:hierarchical:0.2:disease",
        "beta-likeness:basic:1:disease",
        "beta-likeness:enhanced:0.75:disease",
        "delta-disclosure:1.5:a:b",
    ],
)
def test_model_spec_writes_what_parse_model_reads(spec: str) -> None:
    model = parse_model(spec, sensitive_hierarchies={"disease": DISEASE})
    assert model_spec(model) == spec
    assert parse_model(model_spec(model), sensitive_hierarchies={"disease": DISEASE}) == model


def test_model_spec_is_none_where_no_spec_expresses_the_model() -> None:
    ordered = OrderedDistanceTCloseness(attribute="grade", t=0.2, order=("low", "high"))
    assert model_spec(ordered) is None
    assert model_spec(KAnonymity(k=2)) is None
