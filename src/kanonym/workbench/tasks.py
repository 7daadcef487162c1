"""Long work in a background thread, with progress to poll and a Cancel button.

A release or a sweep over k takes seconds to minutes; the page polls
:meth:`Task.status` as JSON while it runs. kanonym's searches have no cancel
call of their own, but every one reports :class:`~kanonym.search.Progress`
through a callback now and then: the task's callback raises
:class:`CancelledError` there once the officer asked to stop, which unwinds the
search before anything is written.

Example:
    >>> task = Task("demo", lambda report: 42)
    >>> task.start(); task.join()
    >>> task.status()["state"], task.value
    ('done', 42)
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from kanonym.errors import KanonymError
from kanonym.search import Progress

Value = TypeVar("Value")


class CancelledError(Exception):
    """Raised from the progress callback to stop a task the officer cancelled."""


class Task(Generic[Value]):
    """One piece of long work: ``work(report)`` run in a daemon thread.

    ``work`` passes ``report`` as the ``on_progress`` callback of the calls it
    makes; the latest report is kept for :meth:`status`.
    """

    def __init__(self, title: str, work: Callable[[Callable[[Progress], None]], Value]) -> None:
        self.title = title
        self._work = work
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"kanonym-{title}", daemon=True)
        self.state = "running"
        self.value: Value | None = None
        self.error: str | None = None
        self.progress: Progress | None = None
        self.started = time.monotonic()
        self.elapsed = 0.0

    def start(self) -> None:
        """Start the work in its thread."""
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the work to end (the pages poll :meth:`status`; a caller without a page
        to poll, as the tests, waits here)."""
        self._thread.join(timeout)

    def cancel(self) -> None:
        """Ask the work to stop at its next progress report (nothing once it has ended: a
        finished release's writing reports through the same callback)."""
        if self.running:
            self._cancel.set()

    @property
    def running(self) -> bool:
        """Whether the work has not ended yet."""
        return self.state == "running"

    def _report(self, progress: Progress) -> None:
        if self._cancel.is_set():
            raise CancelledError
        self.progress = progress

    def _run(self) -> None:
        # The state is set last, after the elapsed time and the value or error: a poll from
        # another thread that reads an ended state reads what it ended with.
        try:
            self.value = self._work(self._report)
            state = "done"
        except CancelledError:
            state = "cancelled"
        except KanonymError as error:
            # The library's errors are one line naming what to fix: show it on the page.
            self.error = " ".join(str(error).split())
            state = "failed"
        except Exception as error:  # the page must say what went wrong, whatever it was
            self.error = f"{type(error).__name__}: {error}"
            state = "failed"
        self.elapsed = time.monotonic() - self.started
        self.state = state

    def status(self) -> dict[str, Any]:
        """The task as the page's progress poll reads it."""
        progress = self.progress
        return {
            "title": self.title,
            "state": self.state,
            "error": self.error,
            "elapsed": round(
                (time.monotonic() - self.started) if self.running else self.elapsed, 1
            ),
            "stage": None if progress is None else progress.stage,
            "detail": None if progress is None else progress.detail,
            "checked": None if progress is None else progress.checked,
            # JSON has no infinity: a score not yet finite is shown as none.
            "best_score": (
                progress.best_score
                if progress is not None
                and progress.best_score is not None
                and math.isfinite(progress.best_score)
                else None
            ),
            "done": None if progress is None else progress.done,
            "total": None if progress is None else progress.total,
        }
