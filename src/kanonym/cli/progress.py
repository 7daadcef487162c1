"""A progress bar for long searches, on a terminal only.

The bar appears once a search has run for a second (short searches stay
silent), shows nodes checked out of the lattice's size and the best score so
far, and is drawn on stderr only when stderr is a terminal, so piped or
redirected output stays clean.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING

from kanonym.search import Progress

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

_DELAY_SECONDS = 1.0


class SearchProgressBar:
    """Context manager whose ``update`` method is a search's ``on_progress`` callback."""

    def __init__(self, *, enabled: bool = True, console: Console | None = None) -> None:
        if console is None and enabled:
            from rich.console import Console  # rich loads only when a bar may be shown

            console = Console(stderr=True)
        self.console = console
        self.enabled = enabled and console is not None and console.is_terminal
        self.started = time.perf_counter()
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> SearchProgressBar:
        self.started = time.perf_counter()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def update(self, progress: Progress) -> None:
        """Show ``progress`` (after the first second, on a terminal)."""
        if not self.enabled or time.perf_counter() - self.started < _DELAY_SECONDS:
            return
        if self._bar is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("searching"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("nodes checked  best {task.fields[best]}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._task = self._bar.add_task("search", total=progress.lattice_size, best="-")
            self._bar.start()
        assert self._task is not None
        best = "-" if progress.best_score is None else f"{progress.best_score:.6g}"
        self._bar.update(self._task, completed=progress.checked, best=best)
