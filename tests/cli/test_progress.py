"""The progress line: drawn on a terminal after a second, never when piped; every stage."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from rich.console import Console

from kanonym.cli import progress
from kanonym.cli.progress import SearchProgressBar
from kanonym.config import AnonymizationConfig, ReleaseJob
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.release.pipeline import anonymize, run_job
from kanonym.search import Progress


def _bar(terminal: bool, **options: object) -> tuple[SearchProgressBar, io.StringIO]:
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=terminal, width=100)
    return SearchProgressBar(console=console, **options), sink  # type: ignore[arg-type]


def _text(sink: io.StringIO) -> str:
    """What the terminal was sent, without the escape sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", sink.getvalue())


def test_drawn_on_a_terminal_once_the_delay_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "_DELAY_SECONDS", 0.0)
    bar, sink = _bar(terminal=True)
    with bar:
        bar.update(Progress(checked=10, lattice_size=100, best_score=0.25))
    assert "searching" in _text(sink) and "10 nodes checked, best 0.25" in _text(sink)


def test_silent_when_piped_quiet_or_quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "_DELAY_SECONDS", 0.0)
    for terminal, enabled in ((False, True), (True, False)):
        bar, sink = _bar(terminal=terminal, enabled=enabled)
        with bar:
            bar.update(Progress(checked=10, lattice_size=100, best_score=None))
        assert sink.getvalue() == ""
    monkeypatch.setattr(progress, "_DELAY_SECONDS", 60.0)
    bar, sink = _bar(terminal=True)
    with bar:
        bar.update(Progress(checked=10, lattice_size=100, best_score=None))
    assert sink.getvalue() == ""


def test_issue10_p8_a_stage_that_reports_once_still_shows_after_the_delay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Reading a file or drawing a figure reports when it starts, then nothing
    # until it ends: the line must appear once the delay has passed anyway.
    monkeypatch.setattr(progress, "_DELAY_SECONDS", 0.05)
    bar, sink = _bar(terminal=True)
    with bar:
        bar.update(Progress.of_stage("reading", detail="patients.csv"))
        time.sleep(0.5)
    assert "reading (patients.csv)" in _text(sink)
    # The bar's own first stage shows too, before any report came.
    bar, sink = _bar(terminal=True, stage="reading")
    with bar:
        time.sleep(0.5)
    assert "reading" in _text(sink)


def test_issue10_p8_each_stage_and_figure_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "_DELAY_SECONDS", 0.0)
    bar, sink = _bar(terminal=True)
    with bar:
        bar.update(Progress.of_stage("encoding", detail="frequency set", done=2, total=4))
        bar.update(Progress.of_stage("drawing report", detail="figure risk", done=7, total=8))
    shown = _text(sink)
    assert "encoding (frequency set)" in shown and "2/4" in shown
    assert "drawing report (figure risk)" in shown and "7/8" in shown


def test_issue10_p8_a_pruning_search_shows_no_lattice_size_as_total(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Adult's lattice has 12,960 nodes; the optimal search checks a few hundred
    # of them. Its line shows the nodes checked and still undecided, never
    # "checked/12,960", a bar stuck at a few percent.
    monkeypatch.setattr(progress, "_DELAY_SECONDS", 0.0)
    bar, sink = _bar(terminal=True)
    with bar:
        result = anonymize(
            load_adult(),
            quasi_identifiers=adult_hierarchies(),
            k=5,
            max_suppression=0.04,
            keep_unlisted=True,
            seed=1,
            on_progress=bar.update,
        )
    shown = _text(sink)
    assert result.nodes_checked < 12960 / 4
    assert re.search(r"searching \(optimal\).* nodes? checked, [\d,]+ undecided", shown)
    assert "12960" not in shown and "12,960" not in shown


def test_issue10_p8_describe_never_gives_a_pruning_search_a_total() -> None:
    from kanonym.cli.progress import describe

    assert describe(Progress(754, 20736, 0.41, unresolved=38)) == (
        "754 nodes checked, 38 undecided, best 0.41"
    )
    assert "20,736" not in describe(Progress(754, 20736, None))
    # The exhaustive search counts against the nodes its bound leaves to check.
    assert describe(Progress(53, 1200, None, done=53, total=60)) == "53/60 nodes checked"


def test_issue10_p8_the_command_line_writes_the_html_report_inside_the_bar(
    tmp_path: Path,
) -> None:
    # cli/main.py runs run_job inside `with SearchProgressBar(...)`: reading,
    # encoding, the search, the writing and every figure of the HTML report
    # reach that one callback, in that order.
    pytest.importorskip("vl_convert")
    seen: list[Progress] = []
    source = tmp_path / "adult.csv"
    load_adult().head(400).write_csv(source)
    config = AnonymizationConfig(
        quasi_identifiers=adult_hierarchies(), k=5, keep_unlisted=True, seed=1
    )
    job = ReleaseJob(
        input=source, output=tmp_path / "out.csv", config=config, report_html=tmp_path / "o.html"
    )
    run_job(job, on_progress=seen.append)
    stages = list(dict.fromkeys(p.stage for p in seen))
    assert stages[:3] == ["reading", "encoding", "searching"]
    assert stages.index("writing") < stages.index("drawing report")
    figures = [p for p in seen if p.stage == "drawing report" and p.total is not None]
    count = figures[0].total
    assert count is not None and [p.done for p in figures] == list(range(count + 1))
    assert any(p.detail == "figure distribution:age" for p in figures)
