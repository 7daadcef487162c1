"""A made-up patient table shaped like the one issue 10 was found with.

Columns: name and SSN (direct identifiers, unique per row), birth date (ISO),
sex, ZIP, diagnosis, admission date and length of stay. Values come from a
seeded generator, so every test sees the same table.
"""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl

from kanonym.config import AnonymizationConfig

COLUMNS = (
    "name",
    "ssn",
    "birth_date",
    "sex",
    "zip",
    "diagnosis",
    "admission_date",
    "length_of_stay",
)
DIAGNOSES = ("flu", "asthma", "diabetes", "fracture", "migraine", "angina")
ROLES = [
    "--qi", "birth_date=date", "sex=suppress", "zip=mask",
    "--identifying", "name", "ssn",
    "--insensitive", "diagnosis", "admission_date", "length_of_stay",
    "--k", "3", "--max-suppression", "0.2", "--quiet",
]  # fmt: skip
"""A job on the table as command-line flags: every column's role, k=3, 20 % suppression."""
CONFIG = AnonymizationConfig(
    quasi_identifiers={"birth_date": "date", "sex": "suppress", "zip": "mask"},
    identifying=("name", "ssn"),
    insensitive=("diagnosis", "admission_date", "length_of_stay"),
    k=3,
    seed=1,
)
"""The same roles as a job in Python (k=3, seed 1)."""


def patients(rows: int = 300, seed: int = 10) -> pl.DataFrame:
    """``rows`` patients; every column a string, as a CSV file reads them."""
    rng = random.Random(seed)
    return pl.DataFrame(
        {
            "name": [f"Person {i:05d}" for i in range(rows)],
            "ssn": [
                f"{100 + i // 10000:03d}-{i // 100 % 100:02d}-{i % 10000:04d}" for i in range(rows)
            ],
            "birth_date": [
                f"{rng.randint(1930, 2005)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                for _ in range(rows)
            ],
            "sex": [rng.choice(("F", "M")) for _ in range(rows)],
            "zip": [f"0{rng.choice(('21', '22', '31'))}{rng.randint(30, 45)}" for _ in range(rows)],
            "diagnosis": [rng.choice(DIAGNOSES) for _ in range(rows)],
            "admission_date": [
                f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" for _ in range(rows)
            ],
            "length_of_stay": [str(rng.randint(1, 30)) for _ in range(rows)],
        }
    )


def write_patients(folder: Path, name: str = "patients.csv", rows: int = 300) -> Path:
    """The table as a CSV file in ``folder``."""
    path = folder / name
    patients(rows).write_csv(path)
    return path
