"""Benchmark: one machine, growing tables (1M and 10M Adult-shaped rows).

Makes Adult-shaped tables by resampling the bundled Adult rows with
replacement and jittering each age by up to +-5 years inside the age
hierarchy's range (1-100), so the frequency set grows with the table as real
data would. Then runs ``kanonym anonymize`` as a fresh process, Parquet in ->
Parquet out, optimal search, k=5, 4 % suppression, default metric (loss), and
records the wall time, the peak resident memory of the process (its own ``VmHWM``:
``ru_maxrss`` counted this parent's memory, which Linux keeps across the fork and
``exec``), the
per-step timings from the release report, the distinct quasi-identifier tuples
and the nodes checked. Target: 10M rows end to end under 60 s on 2 cores, peak
memory under 8 GB.

Usage: ``python benchmarks/scale.py [--sizes 1000000 10000000]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from common import machine, write_results

from kanonym.datasets import ADULT_COLUMNS, adult_hierarchy_path, load_adult

SEED = 20261122
AGE_RANGE = (1, 100)


def adult_shaped(rows: int, seed: int = SEED) -> pl.DataFrame:
    """``rows`` resampled Adult rows with ages jittered by up to 5 years."""
    adult = load_adult()
    rng = np.random.default_rng(seed)
    picked = adult[rng.integers(0, adult.height, size=rows)]
    ages = picked["age"].cast(pl.Int64).to_numpy() + rng.integers(-5, 6, size=rows)
    ages = np.clip(ages, *AGE_RANGE)
    return picked.with_columns(pl.Series("age", ages.astype(str)))


# The command line (what ``kanonym`` runs), then the process's own peak memory on stderr.
PEAK_AFTER_CLI = """
import sys
from kanonym.cli.main import main
code = main(sys.argv[1:])
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print(f"VmHWM_KIB={peak}", file=sys.stderr)
sys.exit(code)
"""


def run_once(rows: int, folder: Path) -> dict[str, object]:
    source = folder / f"adult-{rows}.parquet"
    started = time.perf_counter()
    adult_shaped(rows).write_parquet(source)
    make_seconds = time.perf_counter() - started
    output, report = folder / f"release-{rows}.parquet", folder / f"release-{rows}.json"
    args = [
        sys.executable,
        "-c",
        PEAK_AFTER_CLI,
        "anonymize",
        str(source),
        "--qi",
        *(f"{c}={adult_hierarchy_path(c)}" for c in ADULT_COLUMNS),
        "--k",
        "5",
        "--max-suppression",
        "0.04",
        "--seed",
        "1",
        "--output",
        str(output),
        "--report",
        str(report),
        "--quiet",
    ]
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    peak_kib = int(done.stderr.strip().splitlines()[-1].removeprefix("VmHWM_KIB="))
    document = json.loads(report.read_text())
    timings = document["timings"]
    return {
        "rows": rows,
        "make_input_s": round(make_seconds, 2),
        "wall_s": round(wall, 2),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "timings_s": timings,
        "process_overhead_s": round(wall - sum(timings.values()), 2),
        "nodes_checked": document["nodes_checked"],
        "transformation": document["transformation"],
        "suppressed_rows": document["suppressed_rows"],
        "loss": document["metrics"]["loss"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    sizes = parser.parse_args().sizes
    rows_out = []
    with tempfile.TemporaryDirectory() as tmp:
        for rows in sizes:
            result = run_once(rows, Path(tmp))
            print(result, flush=True)
            rows_out.append(result)
    lines = [
        "# Scale benchmark: Adult-shaped tables, Parquet in -> Parquet out",
        "",
        f"Machine: {machine()}",
        "",
        "`kanonym anonymize` as a fresh process: optimal search, k=5, 4 % suppression, loss.",
        "Targets: 10M rows end to end < 60 s on 2 cores, peak memory < 8 GB.",
        "",
        "| rows | wall s | peak RSS MiB | read | encode | search | transform | verify | write "
        "| other (start-up, report) | nodes checked |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows_out:
        t = r["timings_s"]
        assert isinstance(t, dict)
        lines.append(
            f"| {r['rows']:,} | {r['wall_s']} | {r['peak_rss_mib']} | "
            + " | ".join(
                f"{t.get(step, 0):.2f}"
                for step in ("read", "encode", "search", "transform", "verify", "write")
            )
            + f" | {r['process_overhead_s']} | {r['nodes_checked']} |"
        )
    write_results("scale", {"machine": machine(), "runs": rows_out}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
