"""verify reads models as declarations and shares no code with the models or the search."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

import kanonym.verify
from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.models import (
    EntropyLDiversity,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    OrderedDistanceTCloseness,
)
from kanonym.verify import verify_models

TABLE = pl.DataFrame({"zip": ["1", "1", "2", "2"], "s": ["a", "b", "a", "a"]})


@dataclass(frozen=True)
class Declared:
    """A model written by hand: a kind and its parameters."""

    name: str
    attribute: str = "s"
    l: int = 2  # noqa: E741 - the papers' name for it


def check(*models: object, released: pl.DataFrame = TABLE) -> None:
    verify_models(released, columns=["zip"], source=TABLE, models=models)  # type: ignore[arg-type]


def test_the_verify_package_imports_no_model_search_lattice_or_encoding_code() -> None:
    forbidden = ("models", "search", "lattice", "encode", "evaluation", "engine", "recoding")
    for path in Path(kanonym.verify.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                parts = name.split(".")
                assert not (parts[0] == "kanonym" and len(parts) > 1 and parts[1] in forbidden), (
                    f"{path.name} imports {name}"
                )


def test_a_declaration_is_judged_by_its_kind_and_parameters() -> None:
    check(Declared("distinct-l-diversity", l=1))
    with pytest.raises(
        VerificationError, match=r"distinct-l-diversity \(attribute 's', l=2\) in 1 of 2"
    ):
        check(Declared("distinct-l-diversity", l=2))


def test_an_unknown_kind_fails_even_on_an_empty_release() -> None:
    with pytest.raises(VerificationError, match="does not know the privacy model 'l-closeness'"):
        check(Declared("l-closeness"))
    with pytest.raises(VerificationError, match="does not know the privacy model 'l-closeness'"):
        check(Declared("l-closeness"), released=TABLE.clear())
    with pytest.raises(VerificationError, match="does not know the privacy model"):
        check(object())


def test_a_parameter_of_the_wrong_type_fails() -> None:
    with pytest.raises(VerificationError, match=r"parameter l is 2\.5, not of type int"):
        check(Declared("distinct-l-diversity", l=2.5))  # type: ignore[arg-type]
    with pytest.raises(VerificationError, match=r"parameter l is 2\.5"):
        check(Declared("distinct-l-diversity", l=2.5), released=TABLE.clear())  # type: ignore[arg-type]
    with pytest.raises(VerificationError, match="parameter l is True"):
        check(Declared("distinct-l-diversity", l=True))
    with pytest.raises(VerificationError, match="parameter attribute is None"):
        check(Declared("distinct-l-diversity", attribute=None))  # type: ignore[arg-type]


def test_the_model_objects_are_read_as_declarations() -> None:
    check(KAnonymity(k=2), EntropyLDiversity(attribute="s", l=1))
    with pytest.raises(VerificationError, match=r"k-anonymity \(k=3\) in 2 of 2 classes"):
        check(KAnonymity(k=3))
    with pytest.raises(VerificationError, match="entropy-l-diversity"):
        check(EntropyLDiversity(attribute="s", l=2))


def test_a_model_the_reference_cannot_satisfy_fails() -> None:
    with pytest.raises(VerificationError, match="'a' is not a number"):
        check(OrderedDistanceTCloseness(attribute="s", t=1))
    h = Hierarchy("s", (("a", "c"), ("*", "*")))
    with pytest.raises(VerificationError, match="'b' is not one of its values"):
        check(HierarchicalDistanceTCloseness(attribute="s", t=1, hierarchy=h))


def test_a_released_value_absent_from_the_input_fails() -> None:
    released = TABLE.with_columns(pl.Series("s", ["a", "b", "a", "z"]))
    with pytest.raises(VerificationError, match="holds a value the input does not"):
        check(Declared("distinct-l-diversity", l=1), released=released)
    with pytest.raises(VerificationError, match="has no column 'x'"):
        check(Declared("distinct-l-diversity", attribute="x", l=1))
