"""Shared helpers for benchmarks: data loading, timing, machine description, output."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

from kanonym.hierarchy import Hierarchy, load_arx
from kanonym.io import read_table

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
SHARED_DATA = ROOT.parent.parent / "shared" / "data"


CALIBRATE = ROOT.parent.parent / "shared" / "anchors" / "calibrate.py"


def speed_now() -> float:
    """``speed_now`` of ``../shared/anchors/calibrate.py``, run now: ARX's anchor times are
    multiplied by it before a ratio is formed, since these machines differ 2-3x run to run
    (1.0 when the script is absent)."""
    if not CALIBRATE.exists():
        return 1.0
    done = subprocess.run(
        [sys.executable, str(CALIBRATE)], capture_output=True, text=True, check=True
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1])["speed_now"])


def machine() -> dict[str, object]:
    """Where the numbers were measured."""
    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "polars": pl.__version__,
        "platform": platform.platform(),
    }


def dataset(name: str) -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """A shared benchmark dataset with every hierarchy-bearing column as a QI, in column order."""
    folder = SHARED_DATA / name
    frame = read_table(folder / f"{name}.csv").frame
    hierarchies = {
        column: load_arx(folder / "hierarchies" / f"{column}.csv")
        for column in frame.columns
        if (folder / "hierarchies" / f"{column}.csv").exists()
    }
    return frame, hierarchies


def median_seconds(run: Callable[[], object], repeats: int) -> tuple[float, list[float]]:
    """Median wall time of ``repeats`` calls, and all of them."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times), times


def write_results(name: str, payload: dict[str, object], table: str) -> None:
    """Write ``results/NAME.json`` and ``results/NAME.md``."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / f"{name}.md").write_text(table)
