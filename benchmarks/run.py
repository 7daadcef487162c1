"""Run every benchmark (``make bench``)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

BENCHMARKS = [
    "search.py",
    "optimal.py",
    "scale.py",
    "engines.py",
    "models.py",
    "mondrian.py",
    "heuristics.py",
    "explore.py",
    "report.py",
]

if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    for script in BENCHMARKS:
        print(f"== {script}")
        runpy.run_path(str(here / script), run_name="__main__")
