"""A progress line for long work, on a terminal only.

One callback, :meth:`SearchProgressBar.update`, receives every
:class:`~kanonym.search.Progress` report of a release: each stage as it starts
(reading, encoding, searching, measuring, transforming, verifying, writing,
drawing the report figure by figure) and the search's own reports. The line
shows the stage, a bar when the stage's length is known in advance (an
exhaustive search's nodes, the report's figures) and a moving spinner with
counts otherwise (a pruning search: nodes checked, nodes still undecided and
the best score, never the lattice's size as a total it will not reach), and
the time the stage has taken.

The line appears once the work has run for a second (short commands stay
silent) and then refreshes by itself, so a stage that reports nothing while
it runs (reading a file, drawing a figure) still shows as running. It is drawn
on stderr only when stderr is a terminal, so piped or redirected output stays
clean, and it disappears when the work ends.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING

from kanonym.search import Progress

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import ProgressColumn, Task, TaskID

_DELAY_SECONDS = 1.0


def describe(progress: Progress) -> str:
    """The counts of a report, in words: what the line shows right of the bar.

    Example:
        >>> describe(Progress(754, 20736, 0.25, unresolved=1200))
        '754 nodes checked, 1,200 undecided, best 0.25'
        >>> describe(Progress(53, 1200, 0.105, done=53, total=60, unresolved=7))
        '53/60 nodes checked, best 0.105'
        >>> describe(Progress.of_stage("drawing report", detail="lattice", done=2, total=8))
        '2/8'
    """
    if progress.stage != "searching":
        return "" if progress.total is None else f"{progress.done:,}/{progress.total:,}"
    if progress.lattice_size == 0:
        return ""  # the stage has just started, or the search counts no nodes (Mondrian)
    if progress.total is not None:
        # The exhaustive search: nodes checked out of those its bound leaves to check.
        parts = [f"{progress.done:,}/{progress.total:,} nodes checked"]
    else:
        parts = [f"{progress.checked:,} node{'' if progress.checked == 1 else 's'} checked"]
        if progress.unresolved is not None:
            parts.append(f"{progress.unresolved:,} undecided")
    if progress.best_score is not None:
        parts.append(f"best {progress.best_score:.6g}")
    return ", ".join(parts)


class SearchProgressBar:
    """Context manager whose ``update`` method is a release's ``on_progress`` callback.

    Thread-safe: a timer starts the line once the first second has passed,
    and rich's own thread refreshes it.
    """

    def __init__(
        self, *, enabled: bool = True, console: Console | None = None, stage: str = "reading"
    ) -> None:
        """``stage``: what the line says runs until the first report arrives (the
        work may begin with a step that reports nothing, as the ledger's reading
        and fingerprinting of the input)."""
        if console is None and enabled:
            from rich.console import Console  # rich loads only when a bar may be shown

            console = Console(stderr=True)
        self.console = console
        self.enabled = enabled and console is not None and console.is_terminal
        self.started = time.perf_counter()
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._latest: Progress | None = None
        # The running stage, its latest detail and when its first report came.
        self._stage = ""
        self._detail = ""
        self._since = 0.0
        self._counted = False
        self._closed = False
        self._first = Progress.of_stage(stage)

    def __enter__(self) -> SearchProgressBar:
        self.started = time.perf_counter()
        self.update(self._first)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._bar is not None:
                self._bar.stop()

    def update(self, progress: Progress) -> None:
        """Show ``progress`` (after the first second, on a terminal)."""
        if not self.enabled:
            return
        with self._lock:
            if self._closed:
                return
            self._latest = progress
            fresh = progress.stage != self._stage
            if fresh:
                self._stage, self._since = progress.stage, time.perf_counter()
            if fresh or progress.detail:
                # A search's own reports carry no detail: the stage's (its algorithm) stays.
                self._detail = progress.detail
            if self._bar is None:
                wait = self.started + _DELAY_SECONDS - time.perf_counter()
                if wait > 0:
                    # A stage that reports nothing more for a while must still
                    # show once the second has passed: a timer draws it then.
                    if self._timer is None:
                        self._timer = threading.Timer(wait, self._appear)
                        self._timer.daemon = True
                        self._timer.start()
                    return
                self._start()
            self._draw(progress)

    def _appear(self) -> None:
        """The timer's work: draw the latest report if the work is still running."""
        with self._lock:
            if self._closed or self._bar is not None or self._latest is None:
                return
            self._start()
            self._draw(self._latest)

    def _start(self) -> None:
        from rich.progress import BarColumn, SpinnerColumn, TextColumn
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            # Without a total, rich draws a pulsing bar: running, length unknown.
            BarColumn(bar_width=24),
            TextColumn("{task.fields[status]}"),
            _stage_clock(),
            console=self.console,
            transient=True,
        )
        self._bar.start()

    def _draw(self, progress: Progress) -> None:
        bar = self._bar
        assert bar is not None
        description = self._stage + (f" ({self._detail})" if self._detail else "")
        counted = progress.total is not None
        if self._task is None or counted != self._counted:
            # rich cannot take a task's total back to None (indeterminate): a new task.
            if self._task is not None:
                bar.remove_task(self._task)
            self._task = bar.add_task(
                description,
                total=progress.total,
                completed=progress.done,
                since=self._since,
                status=describe(progress),
            )
            self._counted = counted
        bar.update(
            self._task,
            description=description,
            total=progress.total,
            completed=progress.done,
            since=self._since,
            status=describe(progress),
            # Reports are few (a search's come at most five times a second):
            # draw each at once rather than at the next tick of rich's thread.
            refresh=True,
        )


def _clock(seconds: float) -> str:
    """``0:01:05`` for 65 seconds."""
    minutes, second = divmod(int(seconds), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}"


def _stage_clock() -> ProgressColumn:
    """A column with the time since the running stage began (``since``, a task field).

    rich's elapsed-time column starts with its task, which is replaced when a
    stage's total becomes known; and a stage's clock should count from its
    first report, before the line appeared.
    """
    from rich.progress import ProgressColumn
    from rich.text import Text

    class StageClock(ProgressColumn):
        def render(self, task: Task) -> Text:
            since = float(task.fields["since"])
            return Text(_clock(time.perf_counter() - since), style="progress.elapsed")

    return StageClock()
