"""The public API is exactly what ``kanonym.__all__`` lists."""

from __future__ import annotations

import inspect
import subprocess
import sys

import polars as pl
import pytest

import kanonym
import kanonym.models
from kanonym.datasets import adult_hierarchies, load_adult

SUBPACKAGES = {
    "attacks",
    "cli",
    "config",
    "datasets",
    "differential_privacy",
    "encode",
    "engine",
    "errors",
    "evaluation",
    "figures",
    "hierarchy",
    "io",
    "lattice",
    "ledger",
    "metrics",
    "models",
    "options",
    "recoding",
    "release",
    "report",
    "result",
    "search",
    "sweep",
    "technique",
    "transform",
    "verify",
    "workbench",
}


def test_all_names_exist() -> None:
    for name in kanonym.__all__:
        assert hasattr(kanonym, name), name


def test_all_is_complete() -> None:
    # dir() includes the names loaded on first use (kanonym._lazy).
    public = {
        name
        for name in dir(kanonym)
        if not name.startswith("_") and not inspect.ismodule(getattr(kanonym, name))
    }
    assert public == set(kanonym.__all__) - {"__version__"}


def test_a_run_loads_no_attack_ledger_or_html_module() -> None:
    # Importing the package and anonymizing must not load the optional layers
    # (they cost about 70 ms of every command-line run); a fresh interpreter
    # tells, since this one has loaded everything.
    code = (
        "import sys, kanonym, kanonym.cli.main; "
        "print(sorted(m for m in sys.modules if m.startswith(("
        "'kanonym.attacks.measures', 'kanonym.attacks.complementary', 'kanonym.ledger', "
        "'kanonym.release.recorded', 'kanonym.report.html', 'rich'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lazy_names_resolve_to_their_modules() -> None:
    assert kanonym.risk.__module__ == "kanonym.attacks.api"
    assert kanonym.Ledger.__module__ == "kanonym.release.recorded"
    assert kanonym.audit.__module__ == "kanonym.attacks.complementary"
    try:
        kanonym.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_no_unexpected_submodules_are_public() -> None:
    modules = {
        name
        for name, value in vars(kanonym).items()
        if inspect.ismodule(value) and not name.startswith("_")
    }
    assert modules <= SUBPACKAGES


def test_version_is_a_release_number() -> None:
    parts = kanonym.__version__.split(".")
    assert len(parts) == 3 and all(p.isdigit() for p in parts)


def test_every_model_class_is_exported() -> None:
    classes = {
        name
        for name in kanonym.models.__all__
        if inspect.isclass(getattr(kanonym.models, name))
        and name not in {"ClassStatistics", "PrivacyModel", "PopulationModel"}
    }
    assert len(classes) == 16
    assert classes <= set(kanonym.__all__)


def test_anonymize_takes_model_objects_and_refuses_specs() -> None:
    table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"], "job": ["a", "b"] * 2})
    hierarchies = {"zip": "mask"}
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        k=2,
        models=[kanonym.DistinctLDiversity(attribute="job", l=2)],
        seed=1,
    )
    assert result.config.sensitive == ("job",)
    assert [m.describe()["model"] for m in result.models] == ["k-anonymity", "distinct-l-diversity"]
    with pytest.raises(
        kanonym.InputError, match=r"`models` holds privacy model objects.*parse_model"
    ):
        kanonym.anonymize(
            table, quasi_identifiers=hierarchies, k=2, models=["l-diversity:distinct:2:job"]
        )
    with pytest.raises(kanonym.InputError, match="k-anonymity is set by `k`"):
        kanonym.anonymize(
            table, quasi_identifiers=hierarchies, k=2, models=[kanonym.KAnonymity(k=3)]
        )


def test_k_is_keyword_only_in_every_public_function() -> None:
    for function in (kanonym.anonymize, kanonym.check, kanonym.link, kanonym.audit):
        parameter = inspect.signature(function).parameters["k"]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, function.__name__


def test_the_issue_11_model_example_runs() -> None:
    # Issue 11: `anonymize(models=[kanonym.DistinctLDiversity("occupation", l=3)])`.
    table = load_adult()
    hierarchies = adult_hierarchies()
    del hierarchies["occupation"]
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        sensitive=["occupation"],
        k=5,
        max_suppression=0.04,
        models=[kanonym.DistinctLDiversity("occupation", l=3)],
        seed=1,
    )
    smallest_diversity = (
        result.table.group_by(list(hierarchies)).agg(pl.col("occupation").n_unique()).min()
    )
    assert smallest_diversity.get_column("occupation")[0] >= 3
