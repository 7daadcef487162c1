"""Benchmark: the globally optimal search against ARX 3.9.2 (Flash) on adult, fars and cup.

Cases: ARX's anchor table (``/work/shared/anchors/arx.md``): adult and fars,
k in {2, 5, 10, 100}, suppression in {0, 4 %}, metrics DM* and entropy; every
attribute with a hierarchy is a quasi-identifier, in column order. Plus cup
(ZIP zero-padded to 5 digits and masked digit by digit); ARX has no figures
for cup here. Four cup hierarchy files list some leaves twice with different
parents; kanonym rejects that by default, so cup is loaded with ARX's own rule
for such files (the last row wins, ``load_arx(..., duplicates="last")``) and
the leaves concerned are listed in the results.

Per case: the median of 5 search times (``--quick``: 1), each with a fresh
evaluator and metric (building them, including the frequency set, counts as
search; encoding does not and is reported once per dataset), the nodes
checked, the score, the levels, whether they match ARX, and the peak of memory
traced by ``tracemalloc`` during one extra, untimed search. Also a cold,
whole-process run of the command line on adult (k=5, 4 %, DM*): start, read
the CSV, search, verify, write to a temporary folder; median of 3 (``--quick``:
1), with the child's peak resident set size from ``os.wait4``.

Writes ``results/optimal.json`` and ``results/optimal.md``. Needs
../shared/data for fars and cup (skipped when absent); adult ships with kanonym.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from common import SHARED_DATA, dataset, machine, median_seconds, speed_now, write_results

from kanonym.config import SuppressionLimit
from kanonym.datasets import ADULT_COLUMNS, adult_hierarchies, adult_hierarchy_path, adult_path
from kanonym.encode import EncodedTable, FrequencySet, encode
from kanonym.errors import HierarchyError
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy, MaskBuilder, load_arx, resolve
from kanonym.io import read_table
from kanonym.metrics import MetricContext, make_metric
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, SearchOutcome, run_search

REPEATS = 5
CLI_REPEATS = 3
KS = (2, 5, 10, 100)
FRACTIONS = (0.0, 0.04)
METRICS = ("entropy", "dm-star")  # arx.md order
TARGET_GEOMEAN = 0.15
# A fresh ARX process (JVM start, read adult, k=5, 4 %, DM*), arx.md.
ARX_CLI_SECONDS = 4.2


@dataclass(frozen=True)
class Arx:
    """ARX's optimum and its wall time for one case (arx.md)."""

    levels: tuple[int, ...]
    score: float
    checked: int
    wall_ms: float


_ArxRow = tuple[int, float, tuple[int, ...], float, int, float]

# arx.md, "ARX 3.9.2 on this project's machines", in its row order. Per dataset and metric:
# k, suppression, optimal levels, score, nodes checked, wall ms.
# fmt: off
_ARX_TABLE: dict[tuple[str, str], tuple[_ArxRow, ...]] = {
    ("adult", "entropy"): (
        (2, 0.0, (1, 1, 1, 1, 3, 2, 2, 1, 1), 379417.3460570988, 217, 47.5),
        (5, 0.0, (1, 2, 1, 1, 3, 2, 2, 1, 1), 407289.5388925293, 181, 37.2),
        (10, 0.0, (1, 1, 1, 1, 3, 2, 2, 2, 1), 427068.6405775489, 160, 32.4),
        (100, 0.0, (0, 4, 1, 1, 3, 2, 2, 1, 1), 453196.8932458743, 63, 19.5),
        (2, 0.04, (0, 0, 1, 2, 2, 2, 2, 0, 0), 200830.9864766802, 2931, 1785.9),
        (5, 0.04, (1, 0, 1, 1, 3, 2, 2, 0, 1), 255559.85455731067, 2768, 1099.7),
        (10, 0.04, (0, 0, 1, 1, 3, 2, 2, 1, 1), 282939.0335460752, 2288, 858.9),
        (100, 0.04, (1, 1, 1, 1, 3, 2, 2, 1, 1), 379417.3460570988, 737, 149.0),
    ),
    ("adult", "dm-star"): (
        (2, 0.0, (1, 1, 1, 1, 3, 2, 2, 1, 1), 19399310.0, 217, 40.0),
        (5, 0.0, (1, 1, 1, 2, 3, 2, 2, 1, 1), 33627534.0, 181, 27.3),
        (10, 0.0, (1, 1, 1, 1, 3, 2, 2, 2, 1), 55170356.0, 160, 26.9),
        (100, 0.0, (0, 4, 1, 1, 3, 2, 2, 1, 1), 102352340.0, 63, 13.7),
        (2, 0.04, (1, 0, 1, 1, 1, 2, 2, 0, 1), 649706.0, 2931, 1464.5),
        (5, 0.04, (1, 0, 1, 1, 3, 2, 2, 0, 1), 1415782.0, 2768, 1042.0),
        (10, 0.04, (1, 0, 1, 2, 3, 2, 2, 0, 1), 2300532.0, 2288, 704.8),
        (100, 0.04, (1, 1, 1, 1, 3, 2, 2, 1, 1), 19399310.0, 737, 160.5),
    ),
    ("fars", "entropy"): (
        (2, 0.0, (5, 2, 0, 0, 1, 2, 3, 0), 1550194.8953632899, 210, 158.3),
        (5, 0.0, (1, 2, 3, 3, 1, 2, 1, 2), 1684832.739722754, 136, 102.9),
        (10, 0.0, (1, 2, 3, 3, 1, 2, 1, 2), 1684832.739722754, 118, 78.8),
        (100, 0.0, (5, 2, 3, 3, 1, 2, 0, 2), 1828114.5308318876, 74, 73.7),
        (2, 0.04, (1, 0, 1, 3, 1, 0, 0, 0), 751504.7301175465, 1724, 3265.9),
        (5, 0.04, (5, 0, 1, 2, 0, 0, 0, 0), 971513.2980919094, 2443, 3238.0),
        (10, 0.04, (4, 0, 2, 3, 1, 0, 0, 0), 1097245.110636153, 2674, 2404.2),
        (100, 0.04, (5, 2, 0, 1, 1, 2, 1, 0), 1468439.141237766, 1763, 1269.3),
    ),
    ("fars", "dm-star"): (
        (2, 0.0, (3, 2, 3, 3, 1, 2, 0, 2), 117308023.0, 210, 174.5),
        (5, 0.0, (1, 2, 3, 3, 1, 2, 1, 2), 142377891.0, 136, 112.9),
        (10, 0.0, (1, 2, 3, 3, 1, 2, 1, 2), 142377891.0, 118, 111.8),
        (100, 0.0, (5, 2, 3, 3, 1, 2, 0, 2), 436925397.0, 74, 55.0),
        (2, 0.04, (0, 2, 3, 2, 1, 2, 0, 1), 2093997.0, 1724, 3433.3),
        (5, 0.04, (0, 2, 2, 2, 1, 2, 1, 0), 4469271.0, 2443, 2818.2),
        (10, 0.04, (0, 2, 3, 2, 1, 2, 1, 1), 8045237.0, 2674, 3152.7),
        (100, 0.04, (0, 2, 3, 3, 1, 2, 2, 2), 56052481.0, 1763, 1493.3),
    ),
}
# fmt: on
ARX: dict[tuple[str, str, int, float], Arx] = {
    (dataset, metric, k, fraction): Arx(levels, score, checked, wall_ms)
    for (dataset, metric), table in _ARX_TABLE.items()
    for k, fraction, levels, score, checked, wall_ms in table
}


def search_once(
    encoded: EncodedTable, frequency_set: FrequencySet, metric_name: str, k: int, max_rows: int
) -> SearchOutcome:
    """One optimal search from scratch (fresh evaluator and metric) on encoded data."""
    evaluator = NodeEvaluator(
        encoded, [KAnonymity(k=k)], max_suppressed_rows=max_rows, frequency_set=frequency_set
    )
    metric = make_metric(
        metric_name, MetricContext(encoded=encoded, frequency_set=frequency_set, k=k)
    )
    return run_search(ALGORITHMS["optimal"], evaluator, metric=metric)


def search_into(
    outcomes: list[SearchOutcome],
    encoded: EncodedTable,
    frequency_set: FrequencySet,
    metric_name: str,
    k: int,
    max_rows: int,
) -> None:
    """:func:`search_once`, keeping the outcome."""
    outcomes.append(search_once(encoded, frequency_set, metric_name, k, max_rows))


def traced_peak_mib(run: Callable[[], object]) -> float:
    """Peak memory traced by tracemalloc (Python and NumPy allocations) during ``run()``."""
    tracemalloc.start()
    try:
        run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def conflicting_leaves(path: Path) -> list[str]:
    """Leaves listed on several rows of an ARX hierarchy file with different generalizations."""
    rows: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line:
            leaf = line.split(";", 1)[0]
            rows.setdefault(leaf, set()).add(line)
    return [leaf for leaf, lines in rows.items() if len(lines) > 1]


def load_cup() -> tuple[pl.DataFrame, dict[str, Hierarchy], dict[str, list[str | None]]]:
    """Cup with ZIP padded and masked, and the leaves read with ARX's last-row rule."""
    folder = SHARED_DATA / "cup"
    frame = read_table(folder / "cup.csv").frame
    padded = frame.get_column("ZIP").str.len_chars() == 4
    frame = frame.with_columns(pl.col("ZIP").str.zfill(5))
    hierarchies: dict[str, Hierarchy] = {}
    last_row_wins: dict[str, list[str | None]] = {}
    for column in frame.columns:
        path = folder / "hierarchies" / f"{column}.csv"
        if column == "ZIP":
            values = frame.get_column(column).to_list()
            hierarchies[column] = resolve(MaskBuilder(), values, column=column, source="cup.csv")
        elif path.exists():
            try:
                hierarchies[column] = load_arx(path)
            except HierarchyError:
                hierarchies[column] = load_arx(path, duplicates="last")
                last_row_wins[path.name] = conflicting_leaves(path)
    print(f"cup: zero-padded {int(padded.sum())} four-digit ZIPs; last row wins in {last_row_wins}")
    return frame, hierarchies, last_row_wins


def run_dataset(
    name: str,
    frame: pl.DataFrame,
    hierarchies: dict[str, Hierarchy],
    repeats: int,
    speed: float,
) -> tuple[float, list[dict[str, Any]]]:
    """Encode once, then time every case; the encode seconds and one row per case."""
    started = time.perf_counter()
    # Encoding: integer codes and the frequency set, done once per dataset.
    encoded = encode(frame, hierarchies)
    frequency_set = FrequencySet.from_codes(encoded.row_code_matrix())
    encode_seconds = time.perf_counter() - started
    rows: list[dict[str, Any]] = []
    for metric_name in METRICS:
        for fraction in FRACTIONS:
            for k in KS:
                max_rows = SuppressionLimit(fraction=fraction).max_rows(frame.height)
                outcomes: list[SearchOutcome] = []
                run = functools.partial(
                    search_into, outcomes, encoded, frequency_set, metric_name, k, max_rows
                )

                median, times = median_seconds(run, repeats)
                peak = traced_peak_mib(run)
                best = outcomes[0].best
                levels = [int(level) for level in best.node]
                arx = ARX.get((name, metric_name, k, fraction))
                row: dict[str, Any] = {
                    "dataset": name,
                    "metric": metric_name,
                    "k": k,
                    "suppression": fraction,
                    "search_ms": round(median * 1000, 1),
                    "runs_ms": [round(t * 1000, 1) for t in times],
                    "encode_ms": round(encode_seconds * 1000, 1),
                    "nodes_checked": outcomes[0].nodes_checked,
                    "score": best.score,
                    "levels": levels,
                    "suppressed_rows": best.suppressed_rows,
                    "peak_traced_mib": round(peak, 1),
                    "same_every_run": len({(o.best.node, o.best.score) for o in outcomes}) == 1,
                }
                if arx is not None:
                    assert best.score is not None
                    row |= {
                        "arx_ms": arx.wall_ms,
                        # ARX's time as it would be on this machine now (calibrate.py).
                        "ratio": round(median * 1000 / (arx.wall_ms * speed), 4),
                        "arx_checked": arx.checked,
                        "arx_score": arx.score,
                        "arx_levels": list(arx.levels),
                        "matches_arx": math.isclose(best.score, arx.score, rel_tol=1e-9)
                        and tuple(levels) == arx.levels,
                    }
                rows.append(row)
                print(
                    f"{name} {metric_name} k={k} sup={fraction}: {row['search_ms']} ms "
                    f"(ARX {row.get('arx_ms', '-')}), {row['nodes_checked']} nodes, "
                    f"score {best.score!r}, levels {levels}, "
                    f"matches ARX {row.get('matches_arx', '-')}",
                    flush=True,
                )
    return encode_seconds, rows


def cold_cli(repeats: int, speed: float) -> dict[str, object]:
    """Whole-process ``kanonym anonymize`` on adult, k=5, 4 %, DM*, optimal."""
    shared_csv = SHARED_DATA / "adult" / "adult.csv"
    source = shared_csv if shared_csv.exists() else adult_path()
    script = Path(sys.executable).with_name("kanonym")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "kanonym"]
    runs: list[float] = []
    peaks: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for i in range(repeats):
            out = Path(folder) / f"adult-k5-{i}.csv"
            args = [
                *command,
                "anonymize",
                str(source),
                "--qi",
                *(f"{c}={adult_hierarchy_path(c)}" for c in ADULT_COLUMNS),
                "--k",
                "5",
                "--max-suppression",
                "0.04",
                "--algorithm",
                "optimal",
                "--metric",
                "dm-star",
                "--seed",
                "0",
                "--output",
                str(out),
                "--report",
                str(out.with_suffix(".json")),
                "--quiet",
            ]
            log = out.with_suffix(".log")
            with log.open("wb") as sink:
                started = time.perf_counter()
                child = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT)
                _, status, usage = os.wait4(child.pid, 0)
                elapsed = time.perf_counter() - started
            code = os.waitstatus_to_exitcode(status)
            child.returncode = code  # reaped by wait4 above
            if code != 0 or not out.exists():
                raise RuntimeError(
                    f"kanonym anonymize failed ({code}): {log.read_text(errors='replace').strip()}"
                )
            runs.append(elapsed)
            peaks.append(usage.ru_maxrss / 1024)  # Linux: KiB
    return {
        "case": "adult k=5 4% dm-star optimal",
        "input": str(source),
        "median_s": round(statistics.median(runs), 3),
        "runs_s": [round(t, 3) for t in runs],
        "arx_s": ARX_CLI_SECONDS,
        "ratio": round(statistics.median(runs) / (ARX_CLI_SECONDS * speed), 4),
        "peak_rss_mib": round(max(peaks), 1),
    }


def _cell(value: object) -> str:
    return "–" if value is None else str(value)


def render(payload: dict[str, Any]) -> str:
    """The markdown table and its summary."""
    summary = payload["summary"]
    rows = payload["cases"]
    lines = [
        "# Optimal search against ARX 3.9.2 (Flash)",
        "",
        f"Machine: {payload['machine']}",
        "",
        f"Load average (1, 5, 15 min) at start and end: "
        f"{payload['load_average_1_5_15_min']['start']}, "
        f"{payload['load_average_1_5_15_min']['end']}.",
        "",
        f"kanonym: median of {payload['repeats']} in-process searches (fresh evaluator and "
        "metric each, encoding excluded); ARX: arx.md (median of 5 after 2 warm-ups, one JVM, "
        "search only). ratio = kanonym / (ARX x speed_now), speed_now = "
        f"{payload['speed_now']} from ../shared/anchors/calibrate.py run at the start of this "
        "benchmark (ARX's figures as they would be on this machine now). Peak: tracemalloc "
        "peak of one untimed search.",
        "",
        "| dataset | metric | k | suppression | kanonym ms | ARX ms | ratio | nodes checked "
        "(ARX) | score | levels | matches ARX | peak MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['metric']} | {r['k']} | {r['suppression']} | "
            f"{r['search_ms']} | {_cell(r.get('arx_ms'))} | {_cell(r.get('ratio'))} | "
            f"{r['nodes_checked']} ({_cell(r.get('arx_checked'))}) | {r['score']!r} | "
            f"{r['levels']} | {_cell(r.get('matches_arx'))} | {r['peak_traced_mib']} |"
        )
    lines += [
        "",
        f"Encoding (once per dataset, excluded above): {payload['encode_ms']} ms.",
        "",
        f"* Geometric mean of ratios over the {summary['cases_with_arx']} cases with an ARX "
        f"figure: **{summary['geomean_ratio']}** (target <= {TARGET_GEOMEAN}: "
        f"{'met' if summary['geomean_target_met'] else 'NOT met'}).",
        f"* Cases slower than ARX: **{summary['slower_than_arx']}** (target 0: "
        f"{'met' if summary['slower_than_arx'] == 0 else 'NOT met'})"
        + (f": {', '.join(summary['slower_cases'])}." if summary["slower_cases"] else "."),
        f"* Cases whose score and levels differ from ARX's: {summary['mismatches']}.",
    ]
    cli = payload.get("cold_cli")
    if isinstance(cli, dict):
        lines.append(
            f"* Cold CLI ({cli['case']}, whole process: start, read CSV, search, verify, write), "
            f"median of {len(cli['runs_s'])}: {cli['median_s']} s; a fresh ARX process: "
            f"{cli['arx_s']} s; ratio {cli['ratio']}; peak RSS of the process "
            f"{cli['peak_rss_mib']} MiB (os.wait4 ru_maxrss)."
        )
    notes = payload["cup_leaves_read_with_last_row_rule"]
    if notes:
        listed = "; ".join(
            f"{file}: {', '.join(map(str, leaves))}" for file, leaves in sorted(notes.items())
        )
        lines.append(
            "* cup: some hierarchy files list a leaf twice with different parents; read with "
            f"ARX's rule (the last row wins), leaves concerned: {listed}."
        )
    for name, status in payload["skipped"].items():
        lines.append(f"* {name}: skipped, {status}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repetition (smoke test)")
    options = parser.parse_args()
    repeats = 1 if options.quick else REPEATS
    cli_repeats = 1 if options.quick else CLI_REPEATS

    load_at_start = list(os.getloadavg())
    speed = speed_now()
    rows: list[dict[str, Any]] = []
    encode_ms: dict[str, float] = {}
    skipped: dict[str, object] = {}
    sources: dict[str, tuple[pl.DataFrame, dict[str, Hierarchy]] | None] = {
        "adult": (read_table(adult_path()).frame, adult_hierarchies()),
        "fars": dataset("fars") if (SHARED_DATA / "fars").exists() else None,
    }
    for name, loaded in sources.items():
        if loaded is None:
            skipped[name] = f"{SHARED_DATA / name} not found"
            continue
        seconds, found = run_dataset(name, *loaded, repeats, speed)
        encode_ms[name] = round(seconds * 1000, 1)
        rows += found
    cup_notes: dict[str, list[str | None]] = {}
    if (SHARED_DATA / "cup").exists():
        frame, hierarchies, cup_notes = load_cup()
        seconds, found = run_dataset("cup", frame, hierarchies, repeats, speed)
        encode_ms["cup"] = round(seconds * 1000, 1)
        rows += found
    else:
        skipped["cup"] = f"{SHARED_DATA / 'cup'} not found"

    compared = [r for r in rows if "ratio" in r]
    ratios = [float(r["ratio"]) for r in compared]
    slower = [
        f"{r['dataset']} {r['metric']} k={r['k']} sup={r['suppression']}"
        for r in compared
        if float(r["ratio"]) > 1
    ]
    geomean = math.exp(statistics.fmean(math.log(x) for x in ratios)) if ratios else None
    summary = {
        "cases_with_arx": len(compared),
        "geomean_ratio": None if geomean is None else round(geomean, 4),
        "geomean_target": TARGET_GEOMEAN,
        "geomean_target_met": geomean is not None and geomean <= TARGET_GEOMEAN,
        "slower_than_arx": len(slower),
        "slower_cases": slower,
        "mismatches": [
            f"{r['dataset']} {r['metric']} k={r['k']} sup={r['suppression']}"
            for r in compared
            if not r["matches_arx"]
        ],
    }
    payload: dict[str, Any] = {
        "machine": machine(),
        "load_average_1_5_15_min": {"start": load_at_start, "end": list(os.getloadavg())},
        "speed_now": speed,
        "repeats": repeats,
        "memory": "tracemalloc peak (MiB) of one untimed search per case; "
        "cold CLI: ru_maxrss of the child process (os.wait4)",
        "encode_ms": encode_ms,
        "cup_leaves_read_with_last_row_rule": cup_notes,
        "cases": rows,
        "summary": summary,
        "skipped": skipped,
    }
    payload["cold_cli"] = cold_cli(cli_repeats, speed)
    print(payload["cold_cli"])
    table = render(payload)
    write_results("optimal", payload, table)
    print(table)


if __name__ == "__main__":
    main()
