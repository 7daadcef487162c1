"""The HTML release report: well-formed, self-contained, fingerprinted, non-disclosing."""

from __future__ import annotations

import hashlib
import json
import sys
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

import kanonym
from kanonym.cli import main
from kanonym.datasets import adult_hierarchy_path, adult_path
from kanonym.errors import InputError
from kanonym.io import serialize
from kanonym.release import apply_transformation
from kanonym.report import SECTIONS, figures, render_html
from kanonym.report import content as content_module
from kanonym.report.content import gather

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr", "source"}
# A ZIP and a name-like value seen in fewer than k = 3 rows: they must never appear.
RARE_ZIP = "02999"
RARE_TOWN = "Xylotown"


class _Checker(HTMLParser):
    """Collects tags and attributes; fails on a closing tag that closes nothing open."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []
        self.ids: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            self.attributes.append((name, value or ""))
            if name == "id" and value:
                self.ids.append(value)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            self.attributes.append((name, value or ""))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: str) -> _Checker:
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert checker.stack == [], f"unclosed {checker.stack}"
    return checker


def _table() -> pl.DataFrame:
    zips = ["02138"] * 6 + ["02139"] * 6 + ["02141"] * 5 + [RARE_ZIP] * 2
    towns = ["Cambridge"] * 12 + ["Somerville"] * 5 + [RARE_TOWN] * 2
    ages = [str(20 + (i * 7) % 40) for i in range(len(zips))]
    return pl.DataFrame(
        {"name": [f"person{i}" for i in range(len(zips))], "zip": zips, "town": towns, "age": ages}
    )


@pytest.fixture
def job(tmp_path: Path) -> Path:
    _table().write_csv(tmp_path / "people.csv")
    return tmp_path


def _release(folder: Path, **extra: object) -> kanonym.Result:
    return kanonym.anonymize(
        folder / "people.csv",
        quasi_identifiers={"zip": "mask", "town": "suppress", "age": "interval:10,20"},
        identifying=["name"],
        k=3,
        max_suppressed_rows=2,
        seed=11,
        **extra,
    )


def test_page_is_well_formed_complete_and_self_contained(job: Path) -> None:
    result = _release(job)
    result.write(job / "out.csv", report=job / "out.json", report_html=job / "out.html")
    page = (job / "out.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    checker = _parse(page)
    sections = [i for i in checker.ids if i in SECTIONS]
    assert sections == list(SECTIONS)
    # Ids are unique on the page: the figures' SVG (vl-convert's) brings none of its own.
    assert len(checker.ids) == len(set(checker.ids))
    # Figures are inline SVG: per QI, class sizes, lattice, risk.
    assert checker.tags.count("svg") == 3 + 3
    assert not {"script", "link", "img", "iframe", "object", "embed"} & set(checker.tags)
    for name, value in checker.attributes:
        if name in {"href", "src", "xlink:href"}:
            assert value.startswith("#"), (name, value)
    assert "url(" not in page.replace("url(#", "")
    assert "@import" not in page


def test_fingerprints_are_the_sha256_of_the_files(job: Path) -> None:
    result = _release(job)
    result.write(job / "out.csv", report=job / "out.json", report_html=job / "out.html")
    page = (job / "out.html").read_text(encoding="utf-8")
    for name in ("out.csv", "out.json"):
        assert hashlib.sha256((job / name).read_bytes()).hexdigest() in page, name
    # The input's is the reviewer's (JSON report), never the page's (issue 15, point 2).
    report = json.loads((job / "out.json").read_text())
    digest = hashlib.sha256((job / "people.csv").read_bytes()).hexdigest()
    assert digest not in page
    assert [f["sha256"] for f in report["fingerprints"] if f["what"] == "input"] == [digest]
    # The JSON report does not change, and its metrics are the page's.
    assert f"{report['metrics']['loss']:.6g}" in page


def test_dataframe_input_is_fingerprinted_by_its_canonical_csv(job: Path) -> None:
    table = _table()
    result = kanonym.anonymize(
        table, quasi_identifiers={"zip": "mask"}, k=3, seed=1, keep_unlisted=True
    )
    content = gather(result)
    (fingerprint,) = [f for f in content.fingerprints if f.what == "input"]
    canonical = serialize(table, fmt="csv", dialect=None)
    assert fingerprint.sha256 == hashlib.sha256(canonical).hexdigest()
    assert fingerprint.path == "<DataFrame>" and "canonical" in fingerprint.basis


def test_values_of_fewer_than_k_rows_never_appear(job: Path) -> None:
    result = _release(job)
    page = render_html(result).decode("utf-8")
    _parse(page)
    for rare in (RARE_ZIP, RARE_TOWN):
        assert rare not in page
    # Figure text is text, so the check above sees it: frequent values are there.
    assert "Cambridge" in page and "02138" in page


def test_after_distributions_show_released_values_only(job: Path) -> None:
    result = _release(job)
    content = gather(result)
    for distribution in content.distributions:
        released = {
            "(missing)" if v is None else v
            for v in result.table.get_column(distribution.column).to_list()
        }
        labels = {bar.label for bar in distribution.after if not bar.merged}
        assert labels <= released
        assert sum(bar.count for bar in distribution.after) == result.table.height
        before = {bar.label for bar in distribution.before if not bar.merged}
        assert RARE_ZIP not in before and RARE_TOWN not in before


def test_figures_for_notebooks(job: Path) -> None:
    drawn = figures(_release(job))
    assert set(drawn) == {
        "distribution:zip",
        "distribution:town",
        "distribution:age",
        "class_sizes",
        "lattice",
        "risk",
    }
    # Vega-Lite specifications: plain data a notebook or a browser draws as it is.
    assert json.loads(json.dumps(drawn)) == drawn
    assert RARE_ZIP not in json.dumps(drawn) and RARE_TOWN not in json.dumps(drawn)


def test_lattice_too_large_to_draw_falls_back_to_a_per_height_table() -> None:
    # 12 two-level attributes: 4,096 nodes, more than a figure shows.
    table = pl.DataFrame({f"q{j}": ["a", "b"] * 4 for j in range(12)})
    result = kanonym.anonymize(
        table,
        quasi_identifiers=dict.fromkeys(table.columns, "suppress"),
        k=2,
        algorithm="datafly",
        seed=3,
    )
    assert result.search is not None and result.search.lattice.size == 4096
    content = gather(result)
    assert content.explored is None
    assert sum(row.nodes for row in content.per_height) == 4096
    assert sum(row.checked for row in content.per_height) == result.nodes_checked
    view = content.lattice
    assert view is not None and not view.whole
    assert sum(h.satisfies + h.fails + h.not_checked for h in view.per_height) == 4096
    assert sum(h.satisfies + h.fails for h in view.per_height) == result.nodes_checked
    # Drawn around the released node: it, its direct specializations and generalizations.
    chosen = result.search.chosen
    assert [n.levels for n in view.nodes if n.released] == [chosen]
    assert {n.levels for n in view.nodes} == {
        chosen,
        *result.search.lattice.predecessors(chosen),
        *result.search.lattice.successors(chosen),
    }
    assert set(figures(result)) >= {"lattice_heights"} and "lattice" not in figures(result)


def test_page_with_a_per_height_table(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(content_module, "MAX_DRAWN_LATTICE", 4)
    page = render_html(_release(job)).decode("utf-8")
    checker = _parse(page)
    assert "drawn per height, and around the released node" in page
    assert checker.tags.count("svg") == 3 + 3  # the per-height figure replaces the lattice


def test_release_without_a_search_gets_a_per_class_summary(job: Path) -> None:
    _release(job).write(job / "out.csv", report=job / "out.json")
    applied = apply_transformation(job / "people.csv", job / "out.json", seed=2)
    page = render_html(applied).decode("utf-8")
    _parse(page)
    assert "No lattice search made this release" in page
    assert RARE_ZIP not in page


def test_local_recoding_page_compares_before_and_after_without_disclosing(job: Path) -> None:
    result = kanonym.anonymize(
        job / "people.csv",
        quasi_identifiers={"zip": "mask", "town": "suppress", "age": "interval:10,20"},
        identifying=["name"],
        k=3,
        algorithm="mondrian",
        seed=11,
    )
    content = gather(result)
    assert all(d.before and d.after for d in content.distributions)
    page = render_html(result).decode("utf-8")
    _parse(page)
    assert RARE_ZIP not in page and RARE_TOWN not in page
    assert "No lattice search made this release" in page


def test_missing_vl_convert_is_bad_input_and_writes_nothing(
    job: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "vl_convert", None)
    # The specs need nothing beyond kanonym: only drawing them does.
    assert "risk" in figures(_release(job))
    with pytest.raises(InputError, match=r"kanonym\[report\]"):
        render_html(_release(job))
    args = [
        "anonymize",
        str(job / "people.csv"),
        "--qi",
        "zip=mask",
        "--identifying",
        "name",
        "--insensitive",
        "town",
        "age",
        "--k",
        "3",
        "--max-suppressed-rows",
        "2",
        "--output",
        str(job / "out.csv"),
        "--report-html",
        str(job / "out.html"),
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'kanonym[report]'" in err
    assert not (job / "out.csv").exists() and not (job / "out.html").exists()


def test_demo_without_vl_convert_writes_the_release_and_says_why_no_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "vl_convert", None)
    assert main(["demo", "--output-dir", str(tmp_path), "--seed", "1"]) == 0
    assert "no HTML report" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adult-k5.csv", "adult-k5.report.json"]


def test_unwritable_html_path_is_bad_input_and_writes_nothing(
    job: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "anonymize",
        str(job / "people.csv"),
        "--qi",
        "zip=mask",
        "--identifying",
        "name",
        "--insensitive",
        "town",
        "age",
        "--k",
        "3",
        "--max-suppressed-rows",
        "2",
        "--output",
        str(job / "out.csv"),
        "--report",
        str(job / "out.json"),
        "--report-html",
        str(job / "missing" / "out.html"),
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out.html" in err
    assert sorted(p.name for p in job.iterdir()) == ["people.csv"]


def test_cli_end_to_end_on_adult_with_a_job_file(tmp_path: Path, capsys) -> None:
    qis = ("sex", "race", "marital-status", "native-country")
    lines = [
        f'input = "{adult_path()}"',
        'output = "adult.csv"',
        'report-html = "adult.html"',
        "k = 5",
        "max-suppression = 0.04",
        "seed = 7",
        'insensitive = ["age", "education", "workclass", "occupation", "salary-class"]',
        "[qi]",
        *(f'{name} = "{adult_hierarchy_path(name)}"' for name in qis),
    ]
    (tmp_path / "job.toml").write_text("\n".join(lines) + "\n")
    assert main(["anonymize", "--config", str(tmp_path / "job.toml"), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    page = (tmp_path / "adult.html").read_text(encoding="utf-8")
    checker = _parse(page)
    assert [i for i in checker.ids if i in SECTIONS] == list(SECTIONS)
    # The input's fingerprint is the reviewer's, never the page's (issue 15, point 2).
    assert hashlib.sha256(adult_path().read_bytes()).hexdigest() not in page
    assert hashlib.sha256((tmp_path / "adult.csv").read_bytes()).hexdigest() in page
    # 2 x 2 x 3 x 3 = 36 nodes: drawn whole, as far as the search checked it (no
    # extra checks unless asked).
    assert "36 nodes" in page and "Only what the search checked is shown" in page
    assert "Minimal satisfying nodes" not in page
    # Adult has one row from the Netherlands: never named. The rarest marital
    # status (Married-AF-spouse, 21 rows, above k) is.
    assert "Holand-Netherlands" not in page
    assert "Married-AF-spouse" in page
