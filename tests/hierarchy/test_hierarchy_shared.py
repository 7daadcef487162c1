"""ARX hierarchy files of the shared data sets (skipped when ../shared/data is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanonym.errors import HierarchyError
from kanonym.hierarchy import load_arx

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"

pytestmark = [
    pytest.mark.shared,
    pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} is absent"),
]


def test_adult_age() -> None:
    h = load_arx(SHARED / "adult" / "hierarchies" / "age.csv")
    assert h.height == 4
    rows = {row[0]: row for row in zip(*h.levels, strict=True)}
    assert rows["34"] == ("34", "30-34", "30-39", "20-39", "*")


def test_adult_native_country_without_final_newline() -> None:
    path = SHARED / "adult" / "hierarchies" / "native-country.csv"
    assert not path.read_bytes().endswith(b"\n")
    h = load_arx(path)
    assert h.leaves[-1] == "Holand-Netherlands"
    assert h.levels[1][-1] == "Europe"
    assert h.height == 2


@pytest.mark.parametrize(
    "path",
    sorted((SHARED / "adult" / "hierarchies").glob("*.csv"))
    + sorted((SHARED / "fars" / "hierarchies").glob("*.csv")),
    ids=lambda path: f"{path.parent.parent.name}/{path.name}",
)
def test_adult_and_fars_hierarchies_load(path: Path) -> None:
    # These files hold no quoting, so a naive split is an independent reading.
    rows = [line.split(";") for line in path.read_text(encoding="utf-8").splitlines() if line]
    h = load_arx(path)
    assert h.leaves == tuple(dict.fromkeys(row[0] for row in rows))
    assert h.height == len(rows[0]) - 1


def test_fars_age_duplicate_row_is_kept_once() -> None:
    path = SHARED / "fars" / "hierarchies" / "iage.csv"
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line]
    assert len(lines) == len(load_arx(path).leaves) + 1


@pytest.mark.parametrize("name", ["AGE", "MINRAMNT", "NGIFTALL", "RAMNTALL"])
def test_cup_hierarchies_with_a_leaf_in_two_intervals_are_rejected(name: str) -> None:
    with pytest.raises(HierarchyError, match=r"level 0 value '\d+' has two parents at level 1"):
        load_arx(SHARED / "cup" / "hierarchies" / f"{name}.csv")
