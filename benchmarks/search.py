"""Benchmark: the 0.1 searches (all k-minimal generalizations, Samarati) on shared datasets.

Search time only (encoding excluded, reported separately), median of 5 runs
with a fresh evaluator each time. Needs ../shared/data; datasets absent there
are skipped.
"""

from __future__ import annotations

import time

from common import SHARED_DATA, dataset, machine, median_seconds, write_results

from kanonym.config import SuppressionLimit
from kanonym.encode import encode
from kanonym.evaluation import NodeEvaluator
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, run_search

REPEATS = 5
CASES = [(k, fraction) for k in (2, 5, 10, 100) for fraction in (0.0, 0.04)]


def main() -> None:
    rows = []
    for name in ("adult", "fars"):
        if not (SHARED_DATA / name).exists():
            print(f"skipping {name}: {SHARED_DATA / name} not found")
            continue
        frame, hierarchies = dataset(name)
        started = time.perf_counter()
        encoded = encode(frame, hierarchies)
        encode_seconds = time.perf_counter() - started
        for algorithm in ("minimal", "samarati"):
            for k, fraction in CASES:
                max_sup = SuppressionLimit(fraction=fraction).max_rows(frame.height)
                outcome = None

                def run(
                    k: int = k, max_sup: int = max_sup, algorithm: str = algorithm, encoded=encoded
                ) -> None:
                    nonlocal outcome
                    evaluator = NodeEvaluator(
                        encoded, [KAnonymity(k=k)], max_suppressed_rows=max_sup
                    )
                    outcome = run_search(
                        ALGORITHMS[algorithm], evaluator, policy="min-relative-distance"
                    )

                median, times = median_seconds(run, REPEATS)
                assert outcome is not None
                rows.append(
                    {
                        "dataset": name,
                        "algorithm": algorithm,
                        "k": k,
                        "suppression": fraction,
                        "search_ms": round(median * 1000, 1),
                        "runs_ms": [round(t * 1000, 1) for t in times],
                        "encode_ms": round(encode_seconds * 1000, 1),
                        "nodes_checked": outcome.nodes_checked,
                        "solutions": len(outcome.solutions),
                        "best": list(outcome.best.node),
                    }
                )
                print(rows[-1])
    lines = [
        "# Search benchmark (kanonym 0.1 searches)",
        "",
        f"Machine: {machine()}",
        "",
        "| dataset | algorithm | k | suppression | search ms (median of 5) "
        "| nodes checked | solutions |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['dataset']} | {r['algorithm']} | {r['k']} | {r['suppression']} | "
        f"{r['search_ms']} | {r['nodes_checked']} | {r['solutions']} |"
        for r in rows
    ]
    write_results(
        "search", {"machine": machine(), "repeats": REPEATS, "cases": rows}, "\n".join(lines) + "\n"
    )


if __name__ == "__main__":
    main()
