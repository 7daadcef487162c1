"""Releases under sensitive-attribute models, through the API, the CLI and apply."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import kanonym
from kanonym.cli import main
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.models import parse_model

# ARX 3.9.2's unit tests on adult with occupation sensitive and the other eight
# attributes as quasi-identifiers (../shared/anchors/arx.md): levels, suppressed
# rows and score. The entropy score of the 4 % l-diversity case is not compared:
# kanonym's non-uniform entropy (the definition that matches ARX to the last
# digit on all 16 k-anonymity cases) gives 222599.53 at ARX's node, ARX's test
# reports 228878.20, apparently from another entropy variant.
ARX_CASES = [
    ("l-diversity:entropy:5:occupation", 1, "entropy", 0.04, [1, 0, 1, 1, 2, 2, 2, 1], 753, None),
    (
        "l-diversity:entropy:5:occupation",
        1,
        "entropy",
        0.0,
        [1, 1, 1, 1, 3, 2, 2, 1],
        0,
        324620.5269918692,
    ),
    (
        "t-closeness:equal:0.2:occupation",
        5,
        "dm-star",
        0.04,
        [1, 4, 1, 0, 3, 2, 2, 1],
        848,
        3.11880088e8,
    ),
    (
        "t-closeness:equal:0.2:occupation",
        5,
        "dm-star",
        0.0,
        [1, 4, 1, 1, 3, 2, 2, 1],
        0,
        4.56853172e8,
    ),
    # ARX scores this one by its own loss variant; kanonym's loss finds the same node.
    ("l-diversity:distinct:3:occupation", 1, "loss", 0.04, [0, 3, 0, 0, 2, 1, 1, 0], 1102, None),
]


@pytest.fixture(scope="module")
def adult():
    hierarchies = adult_hierarchies()
    del hierarchies["occupation"]
    return load_adult(), hierarchies


@pytest.mark.parametrize(
    ("model", "k", "metric", "fraction", "levels", "suppressed", "score"), ARX_CASES
)
def test_arx_l_diversity_and_t_closeness(
    adult, model, k, metric, fraction, levels, suppressed, score
):
    table, hierarchies = adult
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        k=k,
        models=[parse_model(model)],
        metric=metric,
        max_suppression=fraction,
        seed=1,
    )
    assert list(result.transformation.values()) == levels
    assert result.suppressed_rows == suppressed
    if score is not None:
        assert result.metrics[metric] == pytest.approx(score, rel=1e-9)
    report = result.report()
    assert report["model_specs"] == [model] and len(report["models"]) == 2
    assert "occupation" in report["sensitive"]


def test_released_classes_are_distinct_l_diverse(adult) -> None:
    table, hierarchies = adult
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        k=3,
        models=[kanonym.DistinctLDiversity(attribute="occupation", l=3)],
        max_suppression=0.04,
        seed=2,
    )
    measured = kanonym.check(result.table, list(hierarchies), k=3, sensitive=["occupation"])
    assert measured.as_dict()["sensitive"]["occupation"]["l_distinct"] >= 3


def test_homogeneity_example_passes_after_enforcement() -> None:
    """Seed 003, "Attribute disclosure": in the 2-anonymous release Carol's class
    (black, 64, F) is all short breath. Enforcing distinct 2-diversity as well
    leaves no class with a single disease, Carol's included."""
    days = ("64/04/12", "64/09/13", "64/04/15", "63/03/13", "63/03/18", "64/09/27")
    dob = kanonym.Hierarchy("dob", (days, tuple(d[:2] for d in days), ("*",) * len(days)))
    table = pl.DataFrame(
        {
            "race": ["asian"] * 5 + ["black"] * 2 + ["white"] * 2,
            "dob": [*days[:5], *["64/09/27"] * 4],
            "sex": ["F", "F", "F", "M", "M", "F", "F", "F", "F"],
            "zip": [
                "94142",
                "94141",
                "94139",
                "94139",
                "94139",
                "94138",
                "94139",
                "94139",
                "94141",
            ],
            "disease": [
                "hypertension",
                "obesity",
                "chest pain",
                "obesity",
                "obesity",
                "short breath",
                "short breath",
                "chest pain",
                "short breath",
            ],
        }
    )
    qi = {"race": "suppress", "dob": dob, "sex": "suppress", "zip": "mask"}
    plain = kanonym.anonymize(table, quasi_identifiers=qi, k=2, sensitive=["disease"], seed=1)
    before = kanonym.disclosure(plain.table, list(qi), ["disease"]).attributes["disease"]
    assert before.homogeneous_classes > 0  # the homogeneity attack works on plain k
    enforced = kanonym.anonymize(
        table,
        quasi_identifiers=qi,
        k=2,
        models=[kanonym.DistinctLDiversity(attribute="disease", l=2)],
        seed=1,
    )
    after = kanonym.disclosure(enforced.table, list(qi), ["disease"]).attributes["disease"]
    assert after.homogeneous_classes == 0
    # Carol's row is one of the short-breath rows; each sits in a class with another disease.
    for row in enforced.table.filter(pl.col("disease") == "short breath").iter_rows(named=True):
        classmates = enforced.table.filter(*(pl.col(name) == row[name] for name in qi))
        assert classmates.get_column("disease").n_unique() >= 2


def test_non_monotone_model_with_minimal_is_rejected(adult) -> None:
    table, hierarchies = adult
    with pytest.raises(kanonym.InputError, match="not monotone"):
        kanonym.anonymize(
            table,
            quasi_identifiers=hierarchies,
            k=2,
            models=[kanonym.EqualDistanceTCloseness(attribute="occupation", t=0.2)],
            algorithm="minimal",
            max_suppression=0.04,
        )


def test_model_on_a_quasi_identifier_is_rejected(adult) -> None:
    table, hierarchies = adult
    with pytest.raises(kanonym.InputError, match="both"):
        kanonym.anonymize(
            table,
            quasi_identifiers=hierarchies,
            k=2,
            models=[kanonym.DistinctLDiversity(attribute="sex", l=2)],
        )


def test_cli_model_flag_toml_and_apply(tmp_path: Path) -> None:
    rows = ["zip,disease"] + [
        f"{z},{d}"
        for z, d in [
            ("02138", "flu"),
            ("02139", "cold"),
            ("02141", "flu"),
            ("02142", "cancer"),
            ("02138", "cold"),
            ("02139", "flu"),
            ("02141", "cancer"),
            ("02142", "cold"),
        ]
    ]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    args = [
        "anonymize",
        str(tmp_path / "t.csv"),
        "--qi",
        "zip=mask",
        "--k",
        "2",
        "--model",
        "l-diversity:distinct:2:disease",
        "--seed",
        "1",
        "--output",
        str(tmp_path / "out.csv"),
        "--report",
        str(tmp_path / "r.json"),
        "--quiet",
    ]
    assert main(args) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["model_specs"] == ["l-diversity:distinct:2:disease"]
    (tmp_path / "job.toml").write_text(
        'input = "t.csv"\noutput = "toml.csv"\nk = 2\nseed = 1\n'
        'models = ["l-diversity:distinct:2:disease"]\n[qi]\nzip = "mask"\n'
    )
    assert main(["anonymize", "--config", str(tmp_path / "job.toml"), "--quiet"]) == 0
    assert (tmp_path / "toml.csv").read_bytes() == (tmp_path / "out.csv").read_bytes()
    # Re-applied to a batch whose classes are all 'flu', the model no longer holds.
    (tmp_path / "batch.csv").write_text("zip,disease\n" + "02138,flu\n02139,flu\n" * 2)
    status = main(
        [
            "apply",
            "--from-report",
            str(tmp_path / "r.json"),
            str(tmp_path / "batch.csv"),
            "--output",
            str(tmp_path / "b.csv"),
            "--quiet",
        ]
    )
    assert status == 1 and not (tmp_path / "b.csv").exists()
