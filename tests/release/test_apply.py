"""Re-applying a recorded transformation to a new batch (``kanonym apply``)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import polars as pl
import pytest

import kanonym
from kanonym.cli import main
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.errors import HierarchyError, InputError, StaleTransformationError, VerificationError
from kanonym.hierarchy import Hierarchy, parse_hierarchy, resolve
from kanonym.io import read_table
from kanonym.release import apply_transformation

K = 5
SPECS = {"age": "interval:5,10,20", "zip": "mask"}


def _generalized_rows(
    frame: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    transformation: Mapping[str, int],
) -> Counter[tuple[object, ...]]:
    """Every input row with its quasi-identifiers mapped to the given levels."""
    mapped = frame.with_columns(
        pl.col(name).replace_strict(
            dict(zip(h.leaves, h.levels[transformation[name]], strict=True)),
            return_dtype=pl.String,
        )
        for name, h in hierarchies.items()
    )
    return Counter(mapped.rows())


def _assert_applied(
    result: kanonym.Result,
    batch: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    transformation: Mapping[str, int],
    k: int,
) -> None:
    """The release is k-anonymous and is the batch at exactly ``transformation``."""
    assert result.transformation == dict(transformation)
    assert kanonym.check(result.table, list(hierarchies), k=k).k_anonymous
    # Each released row is an input row generalized at the recorded levels, and
    # only the suppressed rows are missing.
    expected = _generalized_rows(batch, hierarchies, transformation)
    released = Counter(result.table.rows())
    assert released <= expected
    assert expected.total() - released.total() == result.suppressed_rows
    assert result.suppressed_rows <= result.max_suppressed_rows


# Adult, fitted on its first half with hierarchy files, applied to the second.


@pytest.fixture(scope="module")
def adult(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the Adult hierarchies as files, both halves, and the first half's report."""
    folder = tmp_path_factory.mktemp("adult")
    (folder / "hierarchies").mkdir()
    sources = {}
    for name, hierarchy in adult_hierarchies().items():
        if name != "salary-class":
            path = folder / "hierarchies" / f"{name}.csv"
            path.write_text(hierarchy.to_arx_csv())
            sources[name] = str(path)
    table = load_adult()
    half = table.height // 2
    table.slice(half).write_csv(folder / "second.csv", separator=";")
    fitted = kanonym.anonymize(
        table.slice(0, half),
        quasi_identifiers=sources,
        sensitive=["salary-class"],
        k=K,
        max_suppression=0.04,
        algorithm="minimal",
        seed=1,
    )
    fitted.write(folder / "first.csv", report=folder / "first.report.json")
    return folder


def _report(folder: Path) -> dict:
    return json.loads((folder / "first.report.json").read_text())


def _adult_hierarchies(folder: Path) -> dict[str, Hierarchy]:
    return {
        name: kanonym.load_arx(folder / "hierarchies" / f"{name}.csv")
        for name in _report(folder)["quasi_identifiers"]
    }


def test_api_releases_the_second_half_at_the_recorded_levels(adult: Path) -> None:
    report = _report(adult)
    batch = read_table(adult / "second.csv").frame
    result = apply_transformation(adult / "second.csv", adult / "first.report.json", seed=3)
    assert isinstance(result, kanonym.Result) and result.applied_from is not None
    _assert_applied(result, batch, _adult_hierarchies(adult), report["transformation"], K)
    assert result.max_suppressed_rows == int(0.04 * batch.height)  # the limit, on this batch
    assert result.table.columns == batch.columns
    new = result.report()
    # The schema of Result.report() (which has no "output" nor the fingerprints of the files
    # until written), plus applied_from.
    assert new.keys() == {*report, "applied_from"} - {"output", "fingerprints", "fingerprints_note"}
    assert new["applied_from"] == str(adult / "first.report.json")
    assert new["input_rows"] == batch.height and new["seed"] == 3
    assert new["quasi_identifiers"] == report["quasi_identifiers"]
    assert new["algorithm"] == report["algorithm"] and new["nodes_checked"] == 1


def test_cli_writes_the_release_and_a_new_report(adult: Path, tmp_path: Path, capsys) -> None:
    out, new = tmp_path / "second-out.csv", tmp_path / "second.report.json"
    args = ["apply", "--from-report", str(adult / "first.report.json"), str(adult / "second.csv")]
    assert main([*args, "--output", str(out), "--report", str(new), "--seed", "7"]) == 0
    assert "applied [" in capsys.readouterr().out
    assert out.read_bytes().startswith(b"sex;age;race;")  # the input's delimiter is kept
    document = json.loads(new.read_text())
    assert document["applied_from"] == str(adult / "first.report.json")
    assert document["output"] == str(out) and document["verified"] is True
    assert document["transformation"] == _report(adult)["transformation"]
    # The new report is itself a recipe: applying it again gives the same release.
    again = tmp_path / "again.csv"
    args = ["apply", "--from-report", str(new), str(adult / "second.csv"), "--output", str(again)]
    assert main([*args, "--seed", "7", "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    assert again.read_bytes() == out.read_bytes()


def test_cli_writes_an_html_report_of_the_applied_release(adult: Path, tmp_path: Path) -> None:
    out, page = tmp_path / "second-out.csv", tmp_path / "second.html"
    args = ["apply", "--from-report", str(adult / "first.report.json"), str(adult / "second.csv")]
    assert main([*args, "--output", str(out), "--report-html", str(page), "--quiet"]) == 0
    html = page.read_text(encoding="utf-8")
    assert "No lattice search made this release" in html
    assert hashlib.sha256(out.read_bytes()).hexdigest() in html


def test_same_seed_gives_the_same_bytes(adult: Path, tmp_path: Path) -> None:
    def run(name: str, seed: str) -> bytes:
        args = [
            "apply",
            "--from-report",
            str(adult / "first.report.json"),
            str(adult / "second.csv"),
        ]
        assert main([*args, "--output", str(tmp_path / name), "--seed", seed, "--quiet"]) == 0
        return (tmp_path / name).read_bytes()

    assert run("a.csv", "11") == run("b.csv", "11")
    assert run("a.csv", "11") != run("c.csv", "12")


def test_seed_is_drawn_when_not_given(adult: Path) -> None:
    seeds = {
        apply_transformation(adult / "second.csv", adult / "first.report.json").seed
        for _ in range(2)
    }
    assert len(seeds) == 2


def test_relative_sources_are_read_from_the_report_folder(
    adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _report(adult)
    for name, entry in report["quasi_identifiers"].items():
        entry["source"] = f"hierarchies/{name}.csv"
    (adult / "relative.report.json").write_text(json.dumps(report))
    monkeypatch.chdir(tmp_path)  # nowhere near the hierarchy files
    result = apply_transformation(adult / "second.csv", adult / "relative.report.json", seed=1)
    assert result.transformation == report["transformation"]
    # A mapping has no folder: relative sources need base_dir.
    with pytest.raises(InputError, match="cannot read hierarchy file"):
        apply_transformation(adult / "second.csv", report)
    assert apply_transformation(adult / "second.csv", report, base_dir=adult, seed=1).table.equals(
        result.table
    )


def test_parquet_output(adult: Path, tmp_path: Path) -> None:
    args = ["apply", "--from-report", str(adult / "first.report.json"), str(adult / "second.csv")]
    assert main([*args, "--output", str(tmp_path / "out.parquet"), "--quiet"]) == 0
    released = pl.read_parquet(tmp_path / "out.parquet")
    assert kanonym.check(released, list(_adult_hierarchies(adult)), k=K).k_anonymous


def _expect_exit(args: list[str], capsys, status: int, needle: str, *unwritten: Path) -> None:
    capsys.readouterr()  # what earlier commands of the test printed (warnings)
    assert main(args) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err
    assert err.startswith("kanonym: apply:" if status == 1 else "kanonym: error:")
    for path in unwritten:
        assert not path.exists()


def test_levels_no_longer_suffice(adult: Path, tmp_path: Path, capsys) -> None:
    # A small batch splits into many classes below k: far more than 4% of it must go.
    small = tmp_path / "small.csv"
    pl.read_csv(adult / "second.csv", separator=";", infer_schema=False).head(200).write_csv(small)
    out, new = tmp_path / "out.csv", tmp_path / "new.json"
    args = ["apply", "--from-report", str(adult / "first.report.json"), str(small)]
    args += ["--output", str(out), "--report", str(new)]
    _expect_exit(args, capsys, 1, "but the limit is 8", out, new)
    with pytest.raises(StaleTransformationError) as raised:
        apply_transformation(small, adult / "first.report.json")
    assert isinstance(raised.value, VerificationError)


def test_value_absent_from_a_hierarchy_file(adult: Path, tmp_path: Path, capsys) -> None:
    batch = pl.read_csv(adult / "second.csv", separator=";", infer_schema=False)
    batch = batch.with_columns(pl.col("native-country").replace("Cuba", "Atlantis"))
    batch.write_csv(tmp_path / "atlantis.csv")
    out = tmp_path / "out.csv"
    args = [
        "apply",
        "--from-report",
        str(adult / "first.report.json"),
        str(tmp_path / "atlantis.csv"),
    ]
    _expect_exit([*args, "--output", str(out)], capsys, 2, "'Atlantis'", out)


def test_missing_column(adult: Path, tmp_path: Path, capsys) -> None:
    batch = pl.read_csv(adult / "second.csv", separator=";", infer_schema=False)
    batch.drop("salary-class").write_csv(tmp_path / "narrow.csv")
    out = tmp_path / "out.csv"
    args = [
        "apply",
        "--from-report",
        str(adult / "first.report.json"),
        str(tmp_path / "narrow.csv"),
    ]
    _expect_exit([*args, "--output", str(out)], capsys, 2, "'salary-class' not found", out)


def _edit(report: dict, key: str, value: object) -> dict:
    """``report`` with ``key`` (``a.b`` for a nested key) set to ``value``, or removed if None."""
    edited = json.loads(json.dumps(report))
    *path, last = key.split(".")
    target = edited
    for part in path:
        target = target[part]
    if value is None:
        del target[last]
    else:
        target[last] = value
    return edited


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("k", None, "missing key(s) ['k']"),
        ("schema_version", 3, "schema_version 3 is not supported; expected 2 (or 1)"),
        ("schema_version", True, "schema_version True is not supported"),
        ("quasi_identifiers", "age", "'quasi_identifiers' must be an object"),
        ("quasi_identifiers.age.height", "4", "'quasi_identifiers.age.height' must be a whole"),
        ("transformation.age", 9, "level 9 of 'age' is above its hierarchy's height 4"),
        ("transformation.age", -1, "'transformation.age' must be a whole number"),
        ("transformation.nope", 1, "'transformation' has levels for"),
        ("quasi_identifiers.age.source", None, "needs a 'source' string for 'age'"),
        ("k", 0, "k must be a whole number >= 1"),
        ("suppression_limit.rows", 3, "mutually exclusive"),
        ("algorithm", ["minimal"], "'algorithm' must be a string"),
        ("algorithm", "magic", "unknown algorithm 'magic'"),
        ("identifying", "name", "'identifying' must be a list of column names"),
        ("sensitive", ["salary-class", "salary-class"], "'sensitive' names a column twice"),
        ("suppression_limit.fraction", "4%", "max-suppression must be a fraction"),
    ],
)
def test_malformed_report(adult: Path, tmp_path: Path, capsys, key, value, needle) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_edit(_report(adult), key, value)))
    out = tmp_path / "out.csv"
    args = ["apply", "--from-report", str(bad), str(adult / "second.csv"), "--output", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"kanonym: error: {bad}: ")
    assert err.count(str(bad)) == 1  # named once, however deep the check that failed
    assert needle in err, err
    assert not out.exists()


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b'{"schema_version": 1,', "not a JSON report"),
        (b"\xff\xfe", "not a JSON report"),
        (b"[1, 2]", "a report is a JSON object, got list"),
    ],
)
def test_report_that_is_not_a_json_object(
    adult: Path, tmp_path: Path, capsys, content: bytes, needle: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    out = tmp_path / "out.csv"
    args = ["apply", "--from-report", str(bad), str(adult / "second.csv"), "--output", str(out)]
    _expect_exit(args, capsys, 2, needle, out)


def test_report_file_not_found(adult: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.csv"
    args = ["apply", "--from-report", str(tmp_path / "none.json"), str(adult / "second.csv")]
    _expect_exit([*args, "--output", str(out)], capsys, 2, "report file not found", out)


def test_malformed_hierarchy_file_stays_a_hierarchy_error(adult: Path, tmp_path: Path) -> None:
    (tmp_path / "sex.csv").write_text("Male;*\nFemale\n")
    report = _edit(_report(adult), "quasi_identifiers.sex.source", str(tmp_path / "sex.csv"))
    with pytest.raises(HierarchyError, match=r"^<Mapping>: .*sex\.csv: line 2"):
        apply_transformation(adult / "second.csv", report)


def _as_schema_1(report: dict) -> dict:
    """``report`` as kanonym wrote it before schema 2: names and ``hierarchies`` apart."""
    old = {key: value for key, value in report.items() if key != "quasi_identifiers"}
    old.update(schema_version=1, quasi_identifiers=list(report["quasi_identifiers"]))
    old["hierarchies"] = report["quasi_identifiers"]
    return old


def test_report_schema_2_maps_each_quasi_identifier_to_its_hierarchy(adult: Path) -> None:
    report = _report(adult)
    assert report["schema_version"] == 2 and "hierarchies" not in report
    qis = report["quasi_identifiers"]
    assert list(qis) == list(report["transformation"])  # the quasi-identifiers, in order
    assert qis["age"] == {"source": str(adult / "hierarchies" / "age.csv"), "height": 4}


def test_a_schema_1_report_is_read_as_its_schema_2_form(adult: Path, tmp_path: Path) -> None:
    old = _as_schema_1(_report(adult))
    (tmp_path / "old.json").write_text(json.dumps(old))
    from_old = apply_transformation(adult / "second.csv", tmp_path / "old.json", seed=5)
    from_new = apply_transformation(adult / "second.csv", adult / "first.report.json", seed=5)
    assert from_old.table.equals(from_new.table)
    assert from_old.transformation == old["transformation"]
    # What it writes is schema 2, whatever it read.
    assert from_old.report()["schema_version"] == 2
    assert from_old.report()["quasi_identifiers"] == _report(adult)["quasi_identifiers"]


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("hierarchies", None, "missing key(s) ['hierarchies']"),
        ("hierarchies.age", None, "'hierarchies' needs a 'source' string for 'age'"),
        ("hierarchies.age.height", -1, "'hierarchies.age.height' must be a whole number"),
        ("quasi_identifiers", {"age": "x"}, "'quasi_identifiers' must be a list"),
    ],
)
def test_malformed_schema_1_report(adult: Path, key: str, value: object, needle: str) -> None:
    old = _edit(_as_schema_1(_report(adult)), key, value)
    with pytest.raises(kanonym.InputError) as caught:
        apply_transformation(adult / "second.csv", old)
    assert needle in str(caught.value)


# Builder specs: rebuilt on the values of the new batch.


def _fitted_on_builders() -> kanonym.Result:
    fit = pl.DataFrame(
        {
            "name": [f"p{i}" for i in range(12)],
            "age": ["31", "32", "33", "36", "37", "38", "41", "42", "43", "46", "47", "48"],
            "zip": ["02138", "02139"] * 6,
            "disease": ["flu", "cold", "flu", "flu", "cold", "cold"] * 2,
        }
    )
    fitted = kanonym.anonymize(
        fit,
        quasi_identifiers=SPECS,
        identifying=["name"],
        sensitive=["disease"],
        k=2,
        algorithm="minimal",
        seed=1,
    )
    assert fitted.transformation == {"age": 1, "zip": 1}
    return fitted


def _batch(ages: list[str], zips: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "name": [f"q{i}" for i in range(len(ages))],
            "age": ages,
            "zip": zips,
            "disease": ["flu"] * len(ages),
        }
    )


def test_builders_are_rebuilt_on_values_the_fit_never_saw() -> None:
    fitted = _fitted_on_builders()
    batch = _batch(["51", "53", "57", "58", "62", "64"], ["02131", "02135"] * 3)
    result = apply_transformation(batch.to_pandas(), fitted.report(), seed=2)
    hierarchies = {
        name: resolve(parse_hierarchy(spec), batch[name].to_list(), column=name, source="t")
        for name, spec in SPECS.items()
    }
    released = result.table
    assert released.columns == ["age", "zip", "disease"]  # the identifying column is dropped
    assert sorted(released["age"].to_list()) == ["50-54"] * 2 + ["55-59"] * 2 + ["60-64"] * 2
    assert set(released["zip"].to_list()) == {"0213*"}
    _assert_applied(result, batch.drop("name"), hierarchies, fitted.transformation, k=2)


def test_builders_through_the_cli(tmp_path: Path, capsys) -> None:
    fitted = _fitted_on_builders()
    fitted.write(tmp_path / "fit.csv", report=tmp_path / "fit.json")
    batch = tmp_path / "batch.csv"
    batch.write_bytes(
        b"name,age,zip,disease\r\na,51,02131,flu\r\nb,53,02135,cold\r\n"
        b"c,57,02131,flu\r\nd,58,02135,flu\r\n"
    )
    out = tmp_path / "out.csv"
    args = ["apply", "--from-report", str(tmp_path / "fit.json"), str(batch), "--output", str(out)]
    assert main([*args, "--seed", "1", "--quiet"]) == 0
    text = out.read_bytes().decode()
    assert text.startswith("age,zip,disease\r\n")  # CRLF kept, name dropped
    assert sorted(text.split("\r\n")[1:-1]) == [
        "50-54,0213*,cold",
        "50-54,0213*,flu",
        "55-59,0213*,flu",
        "55-59,0213*,flu",
    ]
    # One age more in a class of its own: level 1 would need a suppression the fit did not allow.
    batch.write_bytes(batch.read_bytes() + b"e,64,02131,flu\r\n")
    stale = tmp_path / "stale.csv"
    args[-1] = str(stale)
    _expect_exit(args, capsys, 1, "needs 1 of 5 rows suppressed for k=2, but the limit is 0", stale)


def test_a_row_limit_stays_a_row_limit_on_the_new_batch() -> None:
    report = _fitted_on_builders().report()
    report["suppression_limit"] = {"fraction": None, "rows": 1}
    batch = _batch(["51", "53", "57", "58", "64"], ["02131", "02135"] * 2 + ["02131"])
    result = apply_transformation(batch, report, seed=1)
    assert result.suppressed_rows == 1 and result.max_suppressed_rows == 1
    assert sorted(result.table["age"].to_list()) == ["50-54"] * 2 + ["55-59"] * 2


def test_a_mask_of_another_height_is_refused() -> None:
    # Six-character ZIP codes give the mask hierarchy height 6: level 1 would no
    # longer mean what it meant in the fitted release.
    batch = _batch(["51", "53"], ["021311", "021351"])
    with pytest.raises(InputError, match="height 6 on this table, but <Mapping> records 5"):
        apply_transformation(batch, _fitted_on_builders().report())


def test_a_value_a_builder_cannot_take_is_an_input_error() -> None:
    batch = _batch(["51", "fifty"], ["02131", "02135"])
    with pytest.raises(InputError, match="'fifty' is not a number"):
        apply_transformation(batch, _fitted_on_builders().report())


def test_applied_to_its_own_table_a_release_is_reproduced() -> None:
    # The default search minimizes a metric (the report names it, with no policy).
    table = _batch(["31", "32", "33", "36", "37", "38", "41", "43"], ["02138", "02139"] * 4)
    fitted = kanonym.anonymize(
        table,
        quasi_identifiers=SPECS,
        identifying=["name"],
        insensitive=["disease"],
        k=2,
        seed=4,
    )
    applied = apply_transformation(table, fitted.report(), seed=4)
    assert applied.table.equals(fitted.table)
    assert applied.metrics == fitted.metrics
    fitted_report, applied_report = fitted.report(), applied.report()
    for key in ("algorithm", "metric", "policy", "suppression_limit", "quasi_identifiers"):
        assert applied_report[key] == fitted_report[key], key


def test_recorded_weights_weigh_the_applied_release_metrics(tmp_path: Path) -> None:
    # Re-applied to the very table it was fitted on, a weighted release measures the same.
    table = load_adult().head(3000)
    weights = {"age": 3.0, "sex": 0.0}
    fitted = kanonym.anonymize(
        table,
        quasi_identifiers=adult_hierarchies(),
        k=5,
        max_suppression=0.04,
        weights=weights,
        seed=1,
    )
    fitted.write(tmp_path / "out.csv", report=tmp_path / "report.json")
    applied = apply_transformation(table, tmp_path / "report.json", seed=1)
    assert applied.report()["weights"] == fitted.report()["weights"]
    for name in ("loss", "entropy", "precision", "height"):
        assert applied.metrics[name] == pytest.approx(fitted.metrics[name]), name
