"""Issue 10, point 14: linking a generalized release without its hierarchies is an error."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from tests.patients import patients

import kanonym
from kanonym.attacks import linkage
from kanonym.cli import main
from kanonym.errors import InputError

QIS = {"birth_date": "date", "sex": "suppress", "zip": "mask"}


@pytest.fixture(scope="module")
def released() -> tuple[pl.DataFrame, pl.DataFrame]:
    table = patients(300)
    result = kanonym.anonymize(
        table,
        quasi_identifiers=QIS,
        k=5,
        identifying=["name", "ssn"],
        insensitive=["diagnosis", "admission_date", "length_of_stay"],
        max_suppression=0.04,
        seed=1,
    )
    # Birth dates to decades (1990-1999), ZIPs masked (02***), sex kept.
    assert result.transformation == {"birth_date": 3, "sex": 0, "zip": 3}
    return result.table, table


def test_issue10_p14_link_refuses_a_generalized_release_without_hierarchies(
    released: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    release, voters = released
    # It used to report "300 identities: 300 match no record" as if the release were safe.
    with pytest.raises(linkage.GeneralizedReleaseError) as raised:
        kanonym.link(release, voters, on=["birth_date", "sex", "zip"])
    error = raised.value
    assert isinstance(error, InputError)
    assert set(error.columns) == {"birth_date", "zip"}  # sex was released raw
    assert "quasi_identifiers={'birth_date': ..., 'zip': ...}" in str(error)
    assert any(label.endswith("**") for label in error.columns["zip"])
    # With the hierarchies, the attack runs and every identity matches its class.
    summary = kanonym.link(
        release,
        voters,
        on=["birth_date", "sex", "zip"],
        quasi_identifiers={"birth_date": "date", "zip": "mask"},
        k=5,
    )
    assert summary.zero_matches < summary.identities and summary.below_k == 0


def test_issue10_p14_link_refuses_labels_the_identities_never_have() -> None:
    # Years for birth dates: no range or mask, but no value in common either.
    release = pl.DataFrame({"birth_date": ["1964", "1964", "1971"], "sex": ["F", "F", "M"]})
    voters = pl.DataFrame({"birth_date": ["1964-04-12", "1971-01-02"], "sex": ["F", "M"]})
    with pytest.raises(
        linkage.GeneralizedReleaseError, match=r"'birth_date' holds e\.g\. '1964', '1971'"
    ):
        kanonym.link(release, voters, on=["birth_date", "sex"])
    # Asked explicitly, the columns are compared as text (and match nothing).
    summary = kanonym.link(release, voters, on=["birth_date", "sex"], check_generalized=False)
    assert summary.zero_matches == 2


def test_issue10_p14_raw_releases_still_link() -> None:
    table = patients(300)
    # A voter list of 3 people against 300 raw records, and the reverse.
    voters = table.head(3)
    on = ["birth_date", "sex", "zip"]
    assert kanonym.link(table, voters, on=on).unique_matches == 3
    assert kanonym.link(voters, table, on=on).unique_matches == 3
    # Suppressed cells (*) and phone-like values present on both sides are raw.
    assert linkage.generalized_labels(pl.Series(["*", "555-1234"]), pl.Series(["555-1234"])) == ()


def test_issue10_p14_link_command_exits_2(
    tmp_path: Path, released: tuple[pl.DataFrame, pl.DataFrame], capsys: pytest.CaptureFixture[str]
) -> None:
    release, voters = released
    release.write_csv(tmp_path / "release.csv")
    voters.write_csv(tmp_path / "voters.csv")
    args = ["link", str(tmp_path / "release.csv"), str(tmp_path / "voters.csv")]
    assert main([*args, "--on", "birth_date", "sex", "zip"]) == 2
    err = capsys.readouterr().err
    # One line naming the command line's flag, not the Python parameter.
    assert err.count("\n") == 1 and "looks generalized" in err and "add --qi " in err
    assert "quasi_identifiers=" not in err
    on_qi = ["--on", "birth_date", "sex", "zip", "--qi", "birth_date=date", "zip=mask"]
    assert main([*args, *on_qi]) == 0
