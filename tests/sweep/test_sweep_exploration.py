"""The sweep: each point is the release anonymize makes with its k and limit, measured."""

from __future__ import annotations

import dataclasses
import itertools
import tomllib
from pathlib import Path

import polars as pl
import pytest
from tests.patients import CONFIG, patients

import kanonym
from kanonym.config import job_from_options
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.errors import InputError, NoSolutionError
from kanonym.hierarchy import Hierarchy

KS = range(1, 8)
LIMITS = (0.0, 0.05, 0.2)


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    return patients(120)


@pytest.fixture(scope="module")
def sweep(table: pl.DataFrame) -> kanonym.Exploration:
    return kanonym.explore(table, CONFIG, ks=KS, suppression_limits=LIMITS)


def _independent_risks(release: pl.DataFrame, qis: list[str], threshold: float) -> tuple:
    """Risks from the released table's class sizes, grouped by Polars (not the search)."""
    sizes = release.group_by(qis).len()["len"]
    if sizes.len() == 0:
        return 0.0, 0.0, 0
    at_risk = int(sizes.filter(1.0 / sizes > threshold).sum())
    return 1.0 / sizes.min(), min(sizes.len() / sizes.sum(), 1.0 / sizes.min()), at_risk


def test_every_point_is_what_anonymize_releases(
    table: pl.DataFrame, sweep: kanonym.Exploration
) -> None:
    assert [(p.max_suppression, p.k) for p in sweep.points] == list(itertools.product(LIMITS, KS))
    qis = list(CONFIG.quasi_identifiers)
    for point in sweep.points:
        config = dataclasses.replace(
            CONFIG, k=point.k, suppression=kanonym.SuppressionLimit(fraction=point.max_suppression)
        )
        if not point.solution:
            with pytest.raises(NoSolutionError):
                kanonym.anonymize(table, config)
            continue
        result = kanonym.anonymize(table, config)
        assert point.transformation == result.transformation, point.label
        assert point.suppressed_rows == result.suppressed_rows
        assert point.released_rows == result.table.height
        assert point.equivalence_classes == result.metrics["equivalence_classes"]
        assert point.score == pytest.approx(result.metrics["loss"], rel=1e-9)
        highest, average, at_risk = _independent_risks(result.table, qis, sweep.risk_threshold)
        assert point.highest_risk == pytest.approx(highest, rel=1e-12)
        assert point.average_risk == pytest.approx(average, rel=1e-12)
        assert point.records_at_risk == at_risk
        # The config the point fills releases exactly it.
        assert kanonym.anonymize(table, sweep.config(point)).transformation == point.transformation


def test_points_without_a_solution_are_on_no_frontier() -> None:
    table = pl.DataFrame(
        {"zip": ["02138", "02139", "02141", "02142", "02138", "02141"],
         "disease": ["flu", "flu", "cold", "flu", "cold", "flu"]}
    )  # fmt: skip
    model = kanonym.DistinctLDiversity(attribute="disease", l=2)
    sweep = kanonym.explore(
        table, quasi_identifiers={"zip": "mask"}, models=[model], ks=range(1, 9),
        suppression_limits=[0.0, 0.5],
    )  # fmt: skip
    unsolved = [p for p in sweep.points if not p.solution]
    # k 7 and 8 exceed the six rows (anonymize refuses such k).
    assert {(p.k, p.max_suppression) for p in unsolved} == set(
        itertools.product((7, 8), (0.0, 0.5))
    )
    assert not any(p.on_frontier for p in unsolved)
    assert all(p.score is None and p.transformation is None for p in unsolved)
    for point in unsolved:
        with pytest.raises(NoSolutionError):
            sweep.config(point)
    solved = sweep.point(2, 0.5)
    result = kanonym.anonymize(table, sweep.config(solved))
    assert result.transformation == solved.transformation


def test_frontier_is_sorted_by_risk_and_marked(sweep: kanonym.Exploration) -> None:
    risks = [p.average_risk for p in sweep.frontier]
    assert risks == sorted(risks)
    assert {id(p) for p in sweep.frontier} == {id(p) for p in sweep.points if p.on_frontier}


@pytest.mark.parametrize(("k", "limit"), [(2, 0.0), (5, 0.02), (10, 0.05)])
def test_adult_points_match_anonymize(k: int, limit: float) -> None:
    frame, hierarchies = load_adult(), adult_hierarchies()
    sweep = kanonym.explore(
        frame, quasi_identifiers=hierarchies, ks=[k], suppression_limits=[limit]
    )
    (point,) = sweep.points
    result = kanonym.anonymize(
        frame, quasi_identifiers=hierarchies, k=k, max_suppression=limit, seed=1
    )
    assert point.transformation == result.transformation
    assert point.suppressed_rows == result.suppressed_rows


def test_job_toml_runs_the_point(tmp_path: Path, table: pl.DataFrame) -> None:
    source = tmp_path / "patients.csv"
    table.write_csv(source)
    sweep = kanonym.explore(source, CONFIG, ks=[3, 4], suppression_limits=[0.05])
    point = sweep.points[1]
    text = sweep.job_toml(point, output="out.csv", report="out.json")
    job = job_from_options(tomllib.loads(text), base_dir=tmp_path)
    assert job.input == source.resolve() and job.output == tmp_path / "out.csv"
    assert job.config.k == 4 and job.config.suppression.fraction == 0.05
    assert kanonym.anonymize(job.input, job.config).transformation == point.transformation


def test_job_toml_names_arx_files_and_refuses_hierarchies_built_in_python(
    tmp_path: Path,
) -> None:
    frame = load_adult().head(2000).select("sex", "race")
    hierarchies = {name: h for name, h in adult_hierarchies().items() if name in ("sex", "race")}
    sweep = kanonym.explore(frame, quasi_identifiers=hierarchies, ks=[2], suppression_limits=[0])
    text = sweep.job_toml(sweep.points[0], input=tmp_path / "t.csv")
    qi = tomllib.loads(text)["qi"]
    assert Path(qi["race"]).name == "race.csv" and Path(qi["race"]).is_file()
    built = Hierarchy("sex", (("Male", "Female"), ("*", "*")))
    sweep = kanonym.explore(
        frame.select("sex"), quasi_identifiers={"sex": built}, ks=[2], suppression_limits=[0]
    )
    with pytest.raises(InputError, match="built in Python"):
        sweep.job_toml(sweep.points[0], input="t.csv")
    with pytest.raises(InputError, match="pass `input`"):
        kanonym.explore(
            frame, quasi_identifiers={"sex": "suppress", "race": "suppress"}, ks=[2]
        ).job_toml(sweep.points[0])


@pytest.mark.parametrize(
    ("keywords", "needle"),
    [
        ({"ks": []}, "`ks`"),
        ({"ks": [0, 2]}, "`ks`"),
        ({"suppression_limits": [1.5]}, "`suppression_limits`"),
        ({"risk_threshold": 0}, "risk threshold"),
        ({"config": dataclasses.replace(CONFIG, algorithm="greedy")}, "optimal search"),
        (
            {
                "config": dataclasses.replace(
                    CONFIG, models=[kanonym.DeltaPresence(delta_min=0, delta_max=0.5)]
                )
            },
            "explore does not sweep delta-presence",
        ),
    ],
)
def test_bad_input_names_the_parameter(table: pl.DataFrame, keywords: dict, needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        kanonym.explore(table, **{"config": CONFIG, **keywords})


def test_text_and_html(sweep: kanonym.Exploration) -> None:
    text = str(sweep)
    assert "frontier" in text and text.count("\n") >= 2
    page = sweep._repr_html_()
    assert page.count("<tr") == len(sweep.points) + 1
    assert "★" in page and "<svg" in page
    document = sweep.as_dict()
    assert document["schema_version"] == 1 and len(document["points"]) == len(sweep.points)


def test_job_toml_keeps_every_option(tmp_path: Path, table: pl.DataFrame) -> None:
    source = tmp_path / "patients.csv"
    table.write_csv(source)
    template = dataclasses.replace(
        CONFIG,
        insensitive=("admission_date", "length_of_stay"),
        models=[kanonym.DistinctLDiversity(attribute="diagnosis", l=2)],
        weights={"zip": 2.0},
        max_levels={"sex": 0},
        min_levels={"zip": 1},
        seed=0,
        metric="entropy",
    )
    sweep = kanonym.explore(source, template, ks=[2], suppression_limits=[0.1])
    (point,) = sweep.points
    options = tomllib.loads(sweep.job_toml(point, report=None))
    config = job_from_options(options, base_dir=tmp_path).config
    expected = sweep.config(point)
    for field in ("k", "suppression", "metric", "seed", "identifying", "sensitive", "insensitive"):
        assert getattr(config, field) == getattr(expected, field), field
    assert dict(config.weights) == {"zip": 2.0} and dict(config.max_levels) == {"sex": 0}
    assert dict(config.min_levels) == {"zip": 1}
    assert [m.describe() for m in config.models] == [m.describe() for m in expected.models]
    assert kanonym.anonymize(source, config).transformation == point.transformation


def test_a_technique_without_suppression_is_refused_before_any_search(
    table: pl.DataFrame,
) -> None:
    # AG_ suppresses no rows: a limit above 0 is refused up front, not after every k at 0%.
    template = dataclasses.replace(CONFIG, technique="AG_")
    heard: list[str] = []
    with pytest.raises(InputError, match="suppresses no rows") as raised:
        kanonym.explore(
            table,
            template,
            ks=range(2, 6),
            suppression_limits=[0.0, 0.05],
            on_progress=lambda progress: heard.append(progress.stage),
        )
    assert "\n" not in str(raised.value) and "`technique='AG_'`" in str(raised.value)
    assert "searching" not in heard
    # At 0% alone it sweeps.
    sweep = kanonym.explore(table, template, ks=[2, 3], suppression_limits=[0.0])
    assert [p.k for p in sweep.points] == [2, 3]


def test_write_never_overwrites_the_table_it_swept(tmp_path: Path, table: pl.DataFrame) -> None:
    source = tmp_path / "patients.csv"
    table.write_csv(source)
    before = source.read_bytes()
    sweep = kanonym.explore(source, CONFIG, ks=[2], suppression_limits=[0])
    with pytest.raises(InputError, match="input table"):
        sweep.write(json_path=tmp_path / "sweep.json", html_path=source)
    assert source.read_bytes() == before
    assert not (tmp_path / "sweep.json").exists()
    sweep.write(json_path=tmp_path / "sweep.json")
    assert (tmp_path / "sweep.json").exists()
