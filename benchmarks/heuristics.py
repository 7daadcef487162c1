"""Benchmark: how far the heuristics land from the optimum (loss), on adult and fars.

For k in {2, 5, 10, 100} and suppression limits 0 and 4 %, every
hierarchy-bearing column a quasi-identifier (adult: the bundled
``load_adult()``/``adult_hierarchies()``; fars: ``common.dataset("fars")``),
each case runs ``kanonym.anonymize(..., metric="loss")`` with

* ``optimal`` (AG_TS: tuple suppression), the reference;
* ``datafly`` and ``greedy`` (AG_TS);
* ``mu-argus`` (AG_CS: cells blanked, the limit counting rows touched);
* ``optimal`` with AG_CS, the best cell-suppressing release, for comparison.

Each heuristic's ratio is its release's ``metrics["loss"]`` over the optimal
AG_TS loss at the same limit (the issue's measure); mu-Argus's is also given
against the optimal AG_CS loss. Also recorded: nodes checked, the search time
of one run, and mu-Argus's blanked cells per phase. Needs ../shared/data for fars.
"""

from __future__ import annotations

import time

import polars as pl
from common import SHARED_DATA, dataset, machine, write_results

import kanonym
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.hierarchy import Hierarchy

CASES = [(k, fraction) for fraction in (0.0, 0.04) for k in (2, 5, 10, 100)]
# (name in the results, algorithm, technique)
RUNS = [
    ("optimal", "optimal", "AG_TS"),
    ("datafly", "datafly", "AG_TS"),
    ("greedy", "greedy", "AG_TS"),
    ("mu-argus", "mu-argus", "AG_CS"),
    ("optimal-cs", "optimal", "AG_CS"),
]


def _datasets() -> list[tuple[str, pl.DataFrame, dict[str, Hierarchy]]]:
    found = [("adult", load_adult(), dict(adult_hierarchies()))]
    if (SHARED_DATA / "fars").exists():
        found.append(("fars", *dataset("fars")))
    else:
        print(f"skipping fars: {SHARED_DATA / 'fars'} not found")
    return found


def _run(
    frame: pl.DataFrame, hierarchies: dict[str, Hierarchy], k: int, fraction: float, run: tuple
) -> dict[str, object]:
    _, algorithm, technique = run
    started = time.perf_counter()
    result = kanonym.anonymize(
        frame,
        quasi_identifiers=hierarchies,
        k=k,
        max_suppression=fraction,
        algorithm=algorithm,
        technique=technique,
        metric="loss",
        seed=1,
    )
    return {
        "loss": result.metrics["loss"],
        "transformation": list(result.transformation.values()),
        "nodes_checked": result.nodes_checked,
        "search_ms": round(result.timings["search"] * 1000, 1),
        "seconds": round(time.perf_counter() - started, 3),
        "suppressed_rows": result.suppressed_rows,
        "suppressed_cells": result.report()["suppressed_cells"],
    }


def _line(case: dict) -> str:
    mu = case["mu-argus"]
    cells = mu["suppressed_cells"]
    phases = cells["by_phase"]
    checks = " / ".join(str(case[name]["nodes_checked"]) for name, _, _ in RUNS)
    return (
        f"| {case['dataset']} | {case['k']} | {case['suppression']:.0%} "
        f"| {case['optimal']['loss']:.4f} "
        + "".join(
            f"| {case[name]['loss']:.4f} ({case[name]['ratio']:.2f}) "
            for name in ("datafly", "greedy", "mu-argus")
        )
        + f"| {case['optimal-cs']['loss']:.4f} | {mu['ratio_cs']:.2f} "
        f"| {phases['combinations']} + {phases['completion']} in {cells['rows']} | {checks} |"
    )


def main() -> None:
    cases = []
    for name, frame, hierarchies in _datasets():
        for k, fraction in CASES:
            case: dict = {"dataset": name, "k": k, "suppression": fraction}
            for run in RUNS:
                case[run[0]] = _run(frame, hierarchies, k, fraction, run)
            for heuristic in ("datafly", "greedy", "mu-argus"):
                case[heuristic]["ratio"] = case[heuristic]["loss"] / case["optimal"]["loss"]
            case["mu-argus"]["ratio_cs"] = case["mu-argus"]["loss"] / case["optimal-cs"]["loss"]
            cases.append(case)
            print(
                name,
                k,
                fraction,
                {h: round(case[h]["loss"], 4) for h, _, _ in RUNS},
                {h: case[h]["seconds"] for h, _, _ in RUNS},
                flush=True,
            )
    lines = [
        "# Heuristics against the optimum (loss)",
        "",
        f"Machine: {machine()}",
        "",
        "Loss of each release, with its ratio to the optimal loss with tuple suppression "
        "at the same limit in parentheses. mu-Argus blanks cells (AG_CS, the limit "
        "counting rows with a blanked cell); its loss is also set against the optimal "
        "AG_CS loss. Checks: nodes checked by optimal / datafly / greedy / mu-argus / "
        "optimal AG_CS.",
        "",
        "| data | k | MaxSup | optimal | datafly | greedy | mu-argus | optimal AG_CS "
        "| mu-argus / optimal AG_CS | mu-argus cells: combinations + completion, in rows "
        "| checks |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(_line(case) for case in cases),
    ]
    write_results("heuristics", {"machine": machine(), "cases": cases}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
