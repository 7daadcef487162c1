"""Samarati's technique classes: the table, and every contradiction rejected with its reason."""

from __future__ import annotations

import pytest

from kanonym.config import AnonymizationConfig, SuppressionLimit
from kanonym.errors import InputError
from kanonym.technique import TECHNIQUES, Technique, resolve_technique, technique_for

QI = {"zip": "mask"}


def _config(**options: object) -> AnonymizationConfig:
    return AnonymizationConfig(quasi_identifiers=QI, k=2, **options)


def test_the_classification_table() -> None:
    table = {name: (t.generalization, t.suppression, t.same_as) for name, t in TECHNIQUES.items()}
    assert table == {
        "AG_TS": ("attribute", "tuple", None),
        "AG_AS": ("attribute", "attribute", "AG_"),
        "AG_CS": ("attribute", "cell", None),
        "AG_": ("attribute", "none", "AG_AS"),
        "CG_CS": ("cell", "cell", "CG_"),
        "CG_": ("cell", "none", "CG_CS"),
        "_TS": ("none", "tuple", None),
        "_AS": ("none", "attribute", None),
        "_CS": ("none", "cell", None),
    }


def test_a_technique_name_must_match_its_operations() -> None:
    with pytest.raises(ValueError, match="does not name"):
        Technique(name="AG_TS", generalization="attribute", suppression="cell")


@pytest.mark.parametrize(
    ("name", "reason"),
    [("CG_TS", "not applicable"), ("CG_AS", "not applicable"), ("_", "not interesting")],
)
def test_the_papers_excluded_classes_are_rejected_with_its_reason(name: str, reason: str) -> None:
    with pytest.raises(InputError, match=f"technique {name} is {reason}"):
        technique_for(name)
    with pytest.raises(InputError, match=reason):
        _config(technique=name)


def test_unknown_technique() -> None:
    with pytest.raises(InputError, match="unknown technique 'XX'"):
        _config(technique="XX")


def test_default_is_ag_ts_and_ag_cs_for_mu_argus() -> None:
    assert _config().technique == "AG_TS"
    assert _config(algorithm="mu-argus").technique == "AG_CS"
    assert _config(algorithm="mu-argus", technique="_CS").granularity.name == "_CS"


@pytest.mark.parametrize("name", ["CG_", "CG_CS"])
def test_cell_generalization_needs_mondrian(name: str) -> None:
    with pytest.raises(InputError, match="needs `algorithm='mondrian'`"):
        _config(technique=name)


@pytest.mark.parametrize("algorithm", ["mondrian", "mondrian-relaxed"])
def test_local_recoding_is_cell_generalization(algorithm: str) -> None:
    assert _config(algorithm=algorithm).technique == "CG_"
    assert _config(algorithm=algorithm, technique="CG_CS").granularity.same_as == "CG_"
    for other in ("AG_TS", "AG_", "_CS"):
        with pytest.raises(InputError, match="is a local recoding"):
            _config(algorithm=algorithm, technique=other)


@pytest.mark.parametrize("name", ["AG_", "AG_AS", "_AS"])
@pytest.mark.parametrize("limit", [SuppressionLimit(rows=1), SuppressionLimit(fraction=0.04)])
def test_no_suppression_limit_where_no_row_is_suppressed(
    name: str, limit: SuppressionLimit
) -> None:
    with pytest.raises(InputError, match=f"technique {name} .* do not apply"):
        _config(technique=name, suppression=limit)
    # A limit of zero contradicts nothing.
    assert _config(technique=name, suppression=SuppressionLimit(rows=0)).technique == name


@pytest.mark.parametrize("name", ["_TS", "_AS", "_CS"])
def test_no_level_bounds_without_generalization(name: str) -> None:
    with pytest.raises(InputError, match=f"technique {name} does not generalize"):
        _config(technique=name, max_levels={"zip": 1})


@pytest.mark.parametrize("algorithm", ["minimal", "samarati", "incognito"])
@pytest.mark.parametrize("name", ["AG_CS", "_CS"])
def test_cell_suppression_needs_a_search_without_monotone_pruning(
    name: str, algorithm: str
) -> None:
    with pytest.raises(InputError, match=f"cannot run with `algorithm='{algorithm}'`.*not"):
        _config(technique=name, algorithm=algorithm)


@pytest.mark.parametrize("name", ["AG_TS", "AG_", "_TS", "_AS"])
def test_mu_argus_only_suppresses_cells(name: str) -> None:
    with pytest.raises(InputError, match="mu-argus'` suppresses cells; use `technique='AG_CS'`"):
        _config(technique=name, algorithm="mu-argus")


def test_non_string_technique() -> None:
    with pytest.raises(InputError, match="must be a string"):
        resolve_technique(3, algorithm="optimal", limits_suppression=False, bounds_levels=False)
