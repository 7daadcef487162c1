"""The search progress bar: drawn on a terminal after a second, never when piped."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from kanonym.cli import progress
from kanonym.cli.progress import SearchProgressBar
from kanonym.search import Progress


def _bar(terminal: bool, **options: object) -> tuple[SearchProgressBar, io.StringIO]:
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=terminal, width=100)
    return SearchProgressBar(console=console, **options), sink  # type: ignore[arg-type]


def test_drawn_on_a_terminal_once_the_delay_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "_DELAY_SECONDS", 0.0)
    bar, sink = _bar(terminal=True)
    with bar:
        bar.update(Progress(checked=10, lattice_size=100, best_score=0.25))
    assert "10/100" in sink.getvalue() and "0.25" in sink.getvalue()


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
