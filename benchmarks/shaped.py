"""Adult-shaped Parquet tables of any size, written batch by batch (never N rows in memory).

Rows are drawn from the bundled Adult table (``kanonym.datasets``) with
replacement, and each age is jittered by up to 5 years inside the age
hierarchy's range (1-100), as ``scale.py`` shapes its tables, so that the
frequency set grows with the table. Batch ``i`` is drawn with the generator
``numpy.random.default_rng([seed, i])``: the same size and seed give the same
file, written as one row group per batch. Files are cached under
``benchmarks/.data/`` (gitignored) and reused.

Usage: ``python benchmarks/shaped.py 1000000 10000000`` prints the paths.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

from kanonym.datasets import load_adult

DATA = Path(__file__).resolve().parent / ".data"
SEED = 20261122
BATCH = 1_000_000
AGE_RANGE = (1, 100)


def batch(adult: pl.DataFrame, rows: int, seed: int, index: int) -> pl.DataFrame:
    """Batch ``index``: ``rows`` Adult rows drawn with replacement, ages jittered."""
    rng = np.random.default_rng([seed, index])
    picked = adult[rng.integers(0, adult.height, size=rows)]
    ages = picked["age"].cast(pl.Int64).to_numpy() + rng.integers(-5, 6, size=rows)
    return picked.with_columns(pl.Series("age", np.clip(ages, *AGE_RANGE).astype(str)))


def shaped(rows: int, seed: int = SEED) -> Path:
    """The cached Adult-shaped Parquet file of ``rows`` rows, written first if absent."""
    import pyarrow.parquet as pq

    DATA.mkdir(exist_ok=True)
    path = DATA / f"adult-shaped-{rows}-{seed}.parquet"
    if path.exists():
        return path
    adult = load_adult()
    partial = path.with_suffix(".partial")
    writer = None
    try:
        for index, start in enumerate(range(0, rows, BATCH)):
            arrow = batch(adult, min(BATCH, rows - start), seed, index).to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(partial, arrow.schema, compression="zstd")
            writer.write_table(arrow)
    finally:
        if writer is not None:
            writer.close()
    partial.replace(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, nargs="+")
    parser.add_argument("--seed", type=int, default=SEED)
    arguments = parser.parse_args()
    for rows in arguments.rows:
        print(shaped(rows, arguments.seed))


if __name__ == "__main__":
    main()
