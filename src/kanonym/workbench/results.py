"""What the sweep and results pages show, and filing a release, from the public API.

The measures come from kanonym's own functions (:func:`kanonym.explore`,
:func:`kanonym.risk`, :func:`kanonym.check`, the HTML report's figures): the
workbench shows them, it computes none of them itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from kanonym.attacks.api import risk
from kanonym.config import ReleaseJob
from kanonym.io.paths import check_destinations
from kanonym.io.toml import toml_document
from kanonym.release.pipeline import check, compute_job, write_job
from kanonym.release.recorded import Ledger, LedgerPlan
from kanonym.result import Result
from kanonym.search import Progress
from kanonym.sweep import DEFAULT_KS, DEFAULT_LIMITS, Exploration, explore
from kanonym.workbench.workflow import job_file_name, read_job


def sweep_limits(chosen: float) -> tuple[float, ...]:
    """The suppression limits a sweep tries: the library's defaults
    (:data:`kanonym.sweep.DEFAULT_LIMITS`: none, 2 % and 5 %) and the chosen one.

    Example:
        >>> sweep_limits(0.0), sweep_limits(0.02), sweep_limits(0.1)
        ((0.0, 0.02, 0.05), (0.0, 0.02, 0.05), (0.0, 0.02, 0.05, 0.1))
    """
    return tuple(sorted({*DEFAULT_LIMITS, chosen}))


def sweep(
    job: ReleaseJob,
    limits: Sequence[float],
    report: Callable[[Progress], None],
    rows: pl.DataFrame | None = None,
) -> Exploration:
    """The sweep over :data:`kanonym.sweep.DEFAULT_KS` and ``limits`` of the job's table
    and config; ``rows``: the table the workbench read, swept instead of ``job.input``
    (a database table, which the sweep cannot read where it lives)."""
    return explore(
        job.input if rows is None else rows,
        job.config,
        ks=DEFAULT_KS,
        suppression_limits=limits,
        delimiter=job.delimiter,
        on_progress=report,
    )


def sweep_context(exploration: Exploration | None) -> dict[str, Any]:
    """The sweep page's figure and rows (nothing before a sweep ran)."""
    if exploration is None:
        return {"points": [], "sweep_figure": None}
    return {"points": list(exploration.points), "sweep_figure": exploration.figure()}


def release(job: ReleaseJob, plan: LedgerPlan | None, report: Callable[[Progress], None]) -> Result:
    """The release the job makes, verified and not written (the run's work): with a
    ledger, the search runs on the ledger's plan of the job (:meth:`kanonym.Ledger.plan`),
    so that filing records this very result."""
    if plan is not None:
        job = dataclasses.replace(job, config=plan.config)
    return compute_job(job, on_progress=report)


def results_context(result: Result) -> dict[str, Any]:
    """The results page's summary, warnings, figures, risk before and after, and sensitive
    measures, all from the release and the job it ran (not what the pages say now)."""
    from kanonym.report.html import figures

    names = list(result.hierarchies)
    source = result.input_table
    before = None if source is None else risk(source.frame, names)
    after = risk(result.table, names)
    measured = check(
        result.table, names, k=result.config.k, sensitive=list(result.config.sensitive)
    )
    return {
        "result": result,
        "warnings": result.warnings,
        "figures": figures(result),
        "risk_before": before,
        "risk_after": after,
        "sensitive": measured.sensitive,
    }


def file_release(
    result: Result,
    options: Mapping[str, object],
    workspace: Path,
    ledger: tuple[str, LedgerPlan] | None,
) -> dict[str, str]:
    """Write the release made with the job ``options``, its reports and its job file into
    the workspace; with a ledger (its file name and the plan the release was searched
    on), through :meth:`kanonym.Ledger.record`, which checks and records this very
    result (no second search).

    The job file is written beside the release, atomically, and only once the
    release is: it is checked first, with them, against the table, the hierarchy
    files, the ledger and the other destinations.

    Returns the job key (and ``job``) -> file name of each file written.
    """
    job = read_job(options, workspace)
    name = job_file_name(options)
    target = workspace / name
    check_destinations(
        {
            "output": job.output,
            "report": job.report,
            "report-html": job.report_html,
            "job": target,
        },
        {
            **result.input_files(),
            "ledger": None if ledger is None else workspace / ledger[0],
        },
    )
    partial = target.with_name(f".{target.name}.part")
    partial.write_text(toml_document(options), encoding="utf-8")
    try:
        if ledger is None:
            write_job(job, result)
        else:
            Ledger(workspace / ledger[0]).record(
                job.input,
                ledger[1],
                result,
                output=job.output,
                report=job.report,
                report_html=job.report_html,
                delimiter=job.delimiter,
            )
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(target)
    return {**release_files(options), "job": name}


def release_files(options: Mapping[str, object]) -> dict[str, str]:
    """The release's files a job names, by job key (names in the workspace).

    Example:
        >>> release_files({"input": "t.csv", "output": "r.csv", "report": "r.report.json"})
        {'output': 'r.csv', 'report': 'r.report.json'}
    """
    return {key: str(options[key]) for key in ("output", "report", "report-html") if key in options}
