"""What the sweep and results pages show, and filing a release, from the public API.

The measures come from kanonym's own functions (:func:`kanonym.explore`,
:func:`kanonym.risk`, :func:`kanonym.check`, the HTML report's figures): the
workbench shows them, it computes none of them itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kanonym.attacks.api import risk
from kanonym.config import ReleaseJob
from kanonym.io.toml import toml_document
from kanonym.release.pipeline import check
from kanonym.release.recorded import Ledger
from kanonym.result import Result
from kanonym.search import Progress
from kanonym.sweep import Exploration, explore
from kanonym.workbench.workflow import Workflow, job_file_name, read_job

SWEEP_KS = tuple(range(2, 21))
"""The k a sweep tries."""


def sweep_limits(chosen: float) -> tuple[float, ...]:
    """The suppression limits a sweep tries: none, the chosen one (or 2%), and a larger
    one (5%, or twice the chosen one from 5% up, at most all rows).

    Example:
        >>> sweep_limits(0.0), sweep_limits(0.04), sweep_limits(0.1), sweep_limits(1.0)
        ((0.0, 0.02, 0.05), (0.0, 0.04, 0.05), (0.0, 0.1, 0.2), (0.0, 1.0))
    """
    middle = chosen or 0.02
    high = 0.05 if middle < 0.05 else min(1.0, 2 * middle)
    return tuple(sorted({0.0, middle, high}))


def sweep(
    job: ReleaseJob, limits: Sequence[float], report: Callable[[Progress], None]
) -> Exploration:
    """The sweep over :data:`SWEEP_KS` and ``limits`` of the job's table and config."""
    return explore(
        job.input,
        job.config,
        ks=SWEEP_KS,
        suppression_limits=limits,
        delimiter=job.delimiter,
        on_progress=report,
    )


def sweep_context(exploration: Exploration | None) -> dict[str, Any]:
    """The sweep page's figure and rows (nothing before a sweep ran)."""
    if exploration is None:
        return {"points": [], "sweep_figure": None}
    return {"points": list(exploration.points), "sweep_figure": exploration.figure()}


def results_context(result: Result, flow: Workflow) -> dict[str, Any]:
    """The results page's summary, figures, risk before and after, and sensitive measures."""
    from kanonym.report.html import figures

    names = list(result.hierarchies)
    before = None if flow.frame is None else risk(flow.frame, names)
    after = risk(result.table, names)
    sensitive = list(flow.with_role("sensitive"))
    measured = check(result.table, names, k=result.config.k, sensitive=sensitive)
    return {
        "result": result,
        "figures": figures(result),
        "risk_before": before,
        "risk_after": after,
        "sensitive": measured.sensitive,
    }


def file_release(
    result: Result, options: Mapping[str, object], workspace: Path, ledger: str | None
) -> dict[str, str]:
    """Write the release made with the job ``options``, its reports and its job file into
    the workspace; with a ledger, through :meth:`kanonym.Ledger.release`, which records
    it (and re-runs the job under the ledger's policies, with the same seed: the same
    release).

    Returns the job key (and ``job``) -> file name of each file written.
    """
    job = read_job(options, workspace)
    if ledger is None:
        result.write(job.output, report=job.report, report_html=job.report_html)
    else:
        Ledger(workspace / ledger).release(
            job.input,
            job.config,
            output=job.output,
            report=job.report,
            report_html=job.report_html,
            delimiter=job.delimiter,
        )
    name = job_file_name(options)
    (workspace / name).write_text(toml_document(options), encoding="utf-8")
    return {**release_files(options), "job": name}


def release_files(options: Mapping[str, object]) -> dict[str, str]:
    """The release's files a job names, by job key (names in the workspace)."""
    return {key: str(options[key]) for key in ("output", "report", "report-html") if key in options}
