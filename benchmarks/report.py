"""Benchmark: the HTML release report beyond the search (issue 14, "reports drawn in a second").

Two tables: the bundled Adult table (30,162 rows; ``kanonym demo``'s) and a
200,000-row Adult-shaped table (``shaped.py``, Parquet), every Adult column a
quasi-identifier with ARX's hierarchies, optimal search, k=5, 4 % suppression,
seed 1. For each, in fresh processes (vl-convert starts its JavaScript engine
once per process, so a warm process would flatter the report):

* **command line**: ``kanonym anonymize ... --output --report`` with and
  without ``--report-html``; the difference of the medians is what the page
  costs a user of the command line (which starts vl-convert while the search
  runs);
* **API**: ``kanonym.anonymize(...)`` then ``result.write(output, report=...,
  report_html=...)``; the write is timed (release, JSON and HTML), beside the
  same write without the page, in the same process just before;
* **per figure**: in the API process, after the write (engine warm): the
  time to gather the report's content, and per figure the time to build its
  Vega-Lite spec and render it to SVG;
* **cold start**: :func:`kanonym.figures.render.warm_up` in a fresh process,
  and importing Altair and validating the report's specs with it (the
  measurement behind writing the specs as plain dicts).

Medians of ``--repeats`` runs (default 3). Usage:
``python benchmarks/report.py [--repeats 3] [--rows 200000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import machine, speed_now, write_results
from shaped import shaped

from kanonym.datasets import ADULT_COLUMNS, adult_hierarchy_path, adult_path

# One API run in a fresh process: prints one JSON line of timings.
API_RUN = """
import json, statistics, sys, time
from pathlib import Path
import kanonym
from kanonym.datasets import adult_hierarchies
source, folder = sys.argv[1], Path(sys.argv[2])
started = time.perf_counter()
result = kanonym.anonymize(source, quasi_identifiers=adult_hierarchies(), k=5,
                           max_suppression=0.04, seed=1)
anonymize_s = time.perf_counter() - started
suffix = Path(source).suffix
started = time.perf_counter()
result.write(folder / f"plain{suffix}", report=folder / "plain.json")
plain_s = time.perf_counter() - started
started = time.perf_counter()
result.write(folder / f"out{suffix}", report=folder / "out.json", report_html=folder / "out.html")
html_s = time.perf_counter() - started
from kanonym.figures.render import to_svg
from kanonym.report.content import gather
from kanonym.report.html import _figure_makers
started = time.perf_counter()
content = gather(result)
gather_s = time.perf_counter() - started
figures = {}
for name, make in _figure_makers(content).items():
    spec_times, svg_times = [], []
    for _ in range(3):
        started = time.perf_counter()
        spec = make()
        built = time.perf_counter()
        to_svg(spec)
        spec_times.append(built - started)
        svg_times.append(time.perf_counter() - built)
    figures[name] = {"spec_s": statistics.median(spec_times),
                     "svg_s": statistics.median(svg_times)}
print(json.dumps({"anonymize_s": anonymize_s, "write_plain_s": plain_s, "write_html_s": html_s,
                  "gather_s": gather_s, "nodes": result.search.lattice.size,
                  "nodes_checked": result.nodes_checked, "figures": figures,
                  "search_s": result.timings.get("search")}))
"""

COLD = """
import json, time
from kanonym.figures.render import warm_up
started = time.perf_counter()
warm_up()
warm = time.perf_counter() - started
import kanonym
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.report import figures
result = kanonym.anonymize(load_adult(), quasi_identifiers=adult_hierarchies(), k=5,
                           max_suppression=0.04, seed=1)
specs = figures(result)
started = time.perf_counter()
import altair
imported = time.perf_counter() - started
started = time.perf_counter()
for spec in specs.values():
    altair.Chart.from_dict({"$schema": "https://vega.github.io/schema/vega-lite/v6.json", **spec}
                           ).to_dict()
validated = time.perf_counter() - started
started = time.perf_counter()
for spec in specs.values():
    json.dumps(spec)
dicts = time.perf_counter() - started
print(json.dumps({"warm_up_s": warm, "altair_import_s": imported,
                  "altair_validate_s": validated, "figures": len(specs),
                  "dict_json_s": dicts}))
"""


def _python(code: str, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(found, dict)
    return found


def _cli_seconds(source: Path, folder: Path, *, html: bool) -> float:
    """Wall time of a fresh ``kanonym anonymize`` process, with or without the page."""
    suffix = source.suffix
    args = [
        sys.executable,
        "-m",
        "kanonym",
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
        str(folder / f"cli{suffix}"),
        "--report",
        str(folder / "cli.json"),
        *(["--report-html", str(folder / "cli.html")] if html else []),
        "--quiet",
    ]
    started = time.perf_counter()
    subprocess.run(args, check=True)
    return time.perf_counter() - started


def _median(runs: list[dict[str, object]], key: str) -> float:
    return statistics.median(float(run[key]) for run in runs)  # type: ignore[arg-type]


def measure(name: str, source: Path, repeats: int) -> dict[str, object]:
    """Every measurement of one table."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        api = [_python(API_RUN, str(source), str(folder)) for _ in range(repeats)]
        without, with_html = [], []
        for _ in range(repeats):
            without.append(_cli_seconds(source, folder, html=False))
            with_html.append(_cli_seconds(source, folder, html=True))
    names = list(api[0]["figures"])  # type: ignore[call-overload]
    figures = {
        figure: {
            part: round(statistics.median(run["figures"][figure][part] for run in api), 4)  # type: ignore[index]
            for part in ("spec_s", "svg_s")
        }
        for figure in names
    }
    return {
        "table": name,
        "nodes": api[0]["nodes"],
        "nodes_checked": api[0]["nodes_checked"],
        "api": {
            "anonymize_s": round(_median(api, "anonymize_s"), 3),
            "search_s": round(_median(api, "search_s"), 3),
            "write_without_page_s": round(_median(api, "write_plain_s"), 3),
            "write_with_page_s": round(_median(api, "write_html_s"), 3),
            "page_beyond_write_s": round(
                _median(api, "write_html_s") - _median(api, "write_plain_s"), 3
            ),
            "gather_s": round(_median(api, "gather_s"), 3),
            "runs": api,
        },
        "cli": {
            "without_page_s": round(statistics.median(without), 3),
            "with_page_s": round(statistics.median(with_html), 3),
            "page_s": round(statistics.median(with_html) - statistics.median(without), 3),
            "runs_without": [round(t, 3) for t in without],
            "runs_with": [round(t, 3) for t in with_html],
        },
        "figures": figures,
    }


def table(payload: dict[str, object]) -> str:
    """The markdown results."""
    cases = payload["cases"]
    cold = payload["cold"]
    assert isinstance(cases, list) and isinstance(cold, dict)
    lines = [
        "# HTML report beyond the search (issue 14)",
        "",
        f"Machine: {payload['machine']}",
        f"speed_now {payload['speed_now']} (../shared/anchors/calibrate.py, same run).",
        f"Load average (1, 5, 15 min) at start {payload['load_start']}, at end "
        f"{payload['load_end']}. Medians of {payload['repeats']} fresh processes each.",
        "",
        "Optimal search, k=5, 4 %, seed 1, every Adult column a quasi-identifier (ARX's "
        "hierarchies). API: `kanonym.anonymize` then `result.write(out, report=..., "
        "report_html=...)` (the write with the page, and without it just before); command "
        "line: `kanonym anonymize ... --report` with and without `--report-html`, the "
        "difference of the medians. See `benchmarks/README.md`.",
        "",
        "| table | lattice nodes (checked) | API: anonymize s | API: write with page s | "
        "API: write without page s | API: page beyond the write s | gather s | "
        "CLI without page s | CLI with page s | CLI: page s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in cases:
        api, cli = case["api"], case["cli"]
        lines.append(
            f"| {case['table']} | {case['nodes']:,} ({case['nodes_checked']:,}) | "
            f"{api['anonymize_s']} | {api['write_with_page_s']} | "
            f"{api['write_without_page_s']} | {api['page_beyond_write_s']} | "
            f"{api['gather_s']} | {cli['without_page_s']} | {cli['with_page_s']} | "
            f"{cli['page_s']} |"
        )
    lines += [
        "",
        "Per figure, engine warm (median of 3 renders in each run, then of the runs): "
        "building the Vega-Lite spec / rendering it to SVG with vl-convert, ms.",
        "",
        "| figure | " + " | ".join(case["table"] for case in cases) + " |",
        "|---|" + "---|" * len(cases),
    ]
    names = list(dict.fromkeys(n for case in cases for n in case["figures"]))
    for name in names:
        cells = []
        for case in cases:
            found = case["figures"].get(name)
            cells.append(
                "-"
                if found is None
                else f"{found['spec_s'] * 1000:.1f} / {found['svg_s'] * 1000:.0f}"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for case in cases:
        total = sum(f["svg_s"] for f in case["figures"].values())
        lines.append(f"\n{case['table']}: all figures rendered in {total:.3f} s (warm).")
    lines += [
        "",
        "Cold start, fresh process, kanonym imported: vl-convert's first render (warm_up) "
        f"{cold['warm_up_s']:.3f} s; "
        f"`import altair` {cold['altair_import_s']:.3f} s; Altair validating the "
        f"{int(cold['figures'])} adult specs (`Chart.from_dict(...).to_dict()`) "
        f"{cold['altair_validate_s']:.3f} s; the same specs as plain dicts, serialized to JSON, "
        f"{cold['dict_json_s']:.4f} s.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args()
    load_start = [round(x, 2) for x in os.getloadavg()]
    # ../shared/anchors/calibrate.py in the same run: how fast the machine is now.
    speed = speed_now()
    cold = [_python(COLD) for _ in range(args.repeats)]
    cold_median = {key: statistics.median(float(c[key]) for c in cold) for key in cold[0]}
    cases = [measure("adult", adult_path(), args.repeats)]
    print(json.dumps(cases[-1]["api"], default=str)[:300], flush=True)
    cases.append(measure(f"adult-shaped {args.rows:,}", shaped(args.rows), args.repeats))
    payload: dict[str, object] = {
        "machine": machine(),
        "speed_now": speed,
        "load_start": load_start,
        "load_end": [round(x, 2) for x in os.getloadavg()],
        "repeats": args.repeats,
        "cold": cold_median,
        "cold_runs": cold,
        "cases": cases,
    }
    write_results("report", payload, table(payload))
    print(table(payload))


if __name__ == "__main__":
    main()
