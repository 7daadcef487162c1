"""Benchmark: the sweep over k and suppression limits on Adult (``kanonym explore``).

The default sweep, k 2..20 x suppression 0 %, 2 %, 5 % (57 optimal searches,
loss), on the bundled Adult table (30,162 rows, nine quasi-identifiers with
ARX's hierarchies): the public API in this process (``kanonym.explore`` on the
file, reading included; one warm-up run first, so numba's compilation and the
disk cache are not counted), and the command line as a fresh process
(``kanonym explore --demo --json FILE --quiet``: start-up, reading, the sweep
and writing the JSON). Medians of several runs; the load average is recorded
before and after, since a busy machine slows every run. Target: under 10 s each.

Usage: ``python benchmarks/explore.py [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import machine, median_seconds, speed_now, write_results

import kanonym
from kanonym.datasets import adult_hierarchies, adult_path

TARGET_SECONDS = 10.0


def _load() -> list[float]:
    """The load average over 1, 5 and 15 minutes."""
    return [round(value, 2) for value in os.getloadavg()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    load_before = _load()
    # ../shared/anchors/calibrate.py in the same run: how fast the machine is now.
    speed = speed_now()
    hierarchies = adult_hierarchies()
    sweep = kanonym.explore(adult_path(), quasi_identifiers=hierarchies)  # warm-up
    api, api_runs = median_seconds(
        lambda: kanonym.explore(adult_path(), quasi_identifiers=hierarchies), repeats
    )
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "sweep.json"
        command = [sys.executable, "-m", "kanonym", "explore", "--demo", "--json", str(out)]
        cli, cli_runs = median_seconds(
            lambda: subprocess.run([*command, "--quiet"], check=True), repeats
        )
    load_after = _load()
    payload: dict[str, object] = {
        "machine": machine(),
        "speed_now": speed,
        "load_average_1_5_15_before": load_before,
        "load_average_1_5_15_after": load_after,
        "repeats": repeats,
        "points": len(sweep.points),
        "with_solution": sum(p.solution for p in sweep.points),
        "on_frontier": len(sweep.frontier),
        "nodes_checked": sum(p.nodes_checked for p in sweep.points),
        "api_median_s": round(api, 3),
        "api_runs_s": [round(t, 3) for t in api_runs],
        "cli_median_s": round(cli, 3),
        "cli_runs_s": [round(t, 3) for t in cli_runs],
        "target_s": TARGET_SECONDS,
    }
    print(payload, flush=True)
    verdict = "met" if max(api, cli) < TARGET_SECONDS else "MISSED"
    table = "\n".join(
        [
            "# Explore benchmark: the sweep over k and suppression limits on Adult",
            "",
            f"Machine: {machine()}",
            "",
            f"speed_now {speed} (../shared/anchors/calibrate.py, same run).",
            "",
            f"Load average (1, 5, 15 min): before {load_before}, after {load_after}.",
            "",
            f"k 2..20 x suppression 0 %, 2 %, 5 %: {len(sweep.points)} optimal searches (loss), "
            f"{payload['nodes_checked']} nodes checked in all, {len(sweep.frontier)} points on "
            f"the frontier. Medians of {repeats} runs; target < {TARGET_SECONDS:g} s ({verdict}).",
            "",
            "| what | median s | runs s |",
            "|---|---|---|",
            f"| `kanonym.explore(adult)` (in process, reading included) | {api:.2f} | "
            f"{', '.join(f'{t:.2f}' for t in api_runs)} |",
            f"| `kanonym explore --demo --json FILE` (fresh process) | {cli:.2f} | "
            f"{', '.join(f'{t:.2f}' for t in cli_runs)} |",
            "",
        ]
    )
    write_results("explore", payload, table)


if __name__ == "__main__":
    main()
