"""The re-check of k-map, both forms, by its own definitions.

The table: four ZIP codes, two rows each; ZIPs pair up at level 1. With the
population table the population is the table itself, so a bottom class stands
for 2 people and a level-1 class for 4; k = 3 fails the bottom only. Estimated
with N = 8 (the table's rows), k = 3 gives lambda = 3 and k' = 3: the bottom's
classes of 2 rows fail it. A defect in the model (one too few people, a derived
k of 2) makes the search accept the bottom; the re-check must refuse it.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pytest

import kanonym
from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.models import ClassStatistics, KMap
from kanonym.verify import verify_models
from kanonym.verify.definitions import estimated_k, k_mapped
from kanonym.verify.population import population_classes

ZIP = Hierarchy("zip", (("z1", "z2", "z3", "z4"), ("za", "za", "zb", "zb"), ("*",) * 4))
TABLE = pl.DataFrame({"zip": ["z1", "z1", "z2", "z2", "z3", "z3", "z4", "z4"]})
ESTIMATED = KMap(k=3, estimator="poisson", significance=0.01, population_size=8)


def release(model: KMap) -> kanonym.Result:
    return kanonym.anonymize(
        TABLE,
        quasi_identifiers={"zip": ZIP},
        k=1,
        models=[model],
        population=TABLE if model.estimator is None else None,
        max_suppressed_rows=0,
        metric="loss",
        seed=0,
    )


def test_sound_models_generalize() -> None:
    assert release(KMap(k=3)).transformation == {"zip": 1}
    assert release(ESTIMATED).transformation == {"zip": 1}
    assert ESTIMATED.derived_k(8) == 3


def test_a_model_counting_one_person_too_few_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def lenient(self: KMap, classes: ClassStatistics):  # type: ignore[no-untyped-def]
        assert classes.population is not None
        return classes.population >= self.k - 1

    monkeypatch.setattr(KMap, "satisfied_classes", lenient)
    with pytest.raises(VerificationError, match=r"release fails k-map \(k=3\) in 4 of 4"):
        release(KMap(k=3))


def test_a_wrong_derived_k_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kanonym.models.k_map._derived_k", lambda *_: 2)
    with pytest.raises(VerificationError, match=r"k-map .*least class size 3\) in 4 of 4"):
        release(ESTIMATED)


@dataclass(frozen=True)
class Declared:
    """k-map written by hand: its kind and parameters."""

    k: int
    estimator: str | None = None
    significance: float = 0.01
    population_size: int | None = None
    name: str = "k-map"


def _check(model: object, released: pl.DataFrame, population: pl.DataFrame | None = None) -> None:
    verify_models(released, columns=["zip"], source=TABLE, models=[model], population=population)  # type: ignore[list-item]


def test_population_form_reads_the_population() -> None:
    people = population_classes(TABLE.with_columns(n=pl.lit(1)), "n", {"zip": ZIP}, {"zip": 0})
    bottom = TABLE.head(4)  # z1 and z2: two people each
    _check(Declared(k=2), bottom, people)
    with pytest.raises(VerificationError, match=r"k-map \(k=3\) in 2 of 2"):
        _check(Declared(k=3), bottom, people)
    with pytest.raises(VerificationError, match="given no population"):
        _check(Declared(k=2), bottom)


def test_estimated_form_reads_the_input_rows() -> None:
    # 8 input rows, N = 8: k' = 3 for k = 3; N = 8000: lambda = 0.003, k' = 2.
    tampered = TABLE.head(5)  # a class z3 of one row, classes of two
    with pytest.raises(VerificationError, match=r"least class size 3\) in 3 of 3"):
        _check(Declared(k=3, estimator="poisson", population_size=8), tampered)
    with pytest.raises(VerificationError, match=r"least class size 2\) in 1 of 3"):
        _check(Declared(k=3, estimator="zero-truncated-poisson", population_size=8000), tampered)
    _check(Declared(k=3, estimator="poisson", population_size=8000), TABLE)


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (Declared(k=3, estimator="normal", population_size=8), "estimator is 'normal'"),
        (Declared(k=3, estimator="poisson"), "parameter population_size is None"),
        (Declared(k=3, estimator="poisson", population_size=4), "rows exceed population_size"),
        (Declared(k=3, estimator="poisson", significance=1.5, population_size=8), "out of range"),
    ],
)
def test_unreadable_estimates_fail(declared: Declared, message: str) -> None:
    with pytest.raises(VerificationError, match=message):
        _check(declared, TABLE)


@pytest.mark.parametrize("estimator", ["poisson", "zero-truncated-poisson"])
@pytest.mark.parametrize(("k", "derived"), [(3, 2), (1000, 3)])
def test_the_re_check_derives_arx_values(estimator: str, k: int, derived: int) -> None:
    assert estimated_k(k, 30162, 317238626, 0.01, estimator) == derived


def test_the_re_check_agrees_with_the_model_on_a_grid() -> None:
    for estimator in ("poisson", "zero-truncated-poisson"):
        for rows in (1, 7, 100, 3016, 30162):
            for population in (rows, rows * 3, 10**6, 317238626):
                for k in (1, 2, 3, 5, 11, 100, 1000, 10**5):
                    for significance in (0.001, 0.05, 0.3):
                        model = KMap(
                            k=k,
                            estimator=estimator,  # type: ignore[arg-type]
                            significance=significance,
                            population_size=population,
                        )
                        assert model.derived_k(rows) == estimated_k(
                            k, rows, population, significance, estimator
                        ), (estimator, rows, population, k, significance)


def test_k_mapped() -> None:
    assert k_mapped(3, 3) and not k_mapped(2, 3)


@pytest.mark.parametrize("engine", ["duckdb", "streaming"])
def test_engines_keeping_the_rows_re_check_the_derived_k(
    engine: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the rows live, the re-check counts the release's classes and the input's rows
    there (one GROUP BY each) and refuses a release below k'."""
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    path = tmp_path / "zip.csv"
    TABLE.write_csv(path)

    def run() -> kanonym.Result:
        return kanonym.anonymize(
            str(path),
            quasi_identifiers={"zip": ZIP},
            k=1,
            models=[ESTIMATED],
            max_suppressed_rows=0,
            metric="loss",
            seed=0,
            engine=engine,  # type: ignore[arg-type]
        )

    assert run().transformation == {"zip": 1}
    monkeypatch.setattr("kanonym.models.k_map._derived_k", lambda *_: 2)
    with pytest.raises(VerificationError, match=r"least class size 3\) in 4 of 4"):
        run()
