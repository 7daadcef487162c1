"""Issue 10, point 14: qi-scan reports direct identifiers apart, not their supersets."""

from __future__ import annotations

import json

from tests.patients import patients

import kanonym


def test_issue10_p14_qi_scan_reports_direct_identifiers_apart() -> None:
    # name and SSN are unique on every row (birth date, on 2,000 rows, is not):
    # every combination holding one is as unique, and such supersets of one
    # column used to fill the whole top 10.
    scan = kanonym.qi_scan(patients(2000))
    assert [c.columns for c in scan.direct_identifiers] == [("name",), ("ssn",)]
    assert all(c.unique_records == 2000 for c in scan.direct_identifiers)
    assert not any({"name", "ssn"} & set(c.columns) for c in scan.combinations)
    # 8 columns, 1 to 3 at a time: 92 combinations; 41 of the other 6 columns
    # measured and ranked, the 2 identifiers, and 49 holding one skipped.
    assert (scan.total, len(scan.combinations), scan.skipped) == (92, 41, 49)
    assert scan.complete and scan.evaluated + scan.skipped == scan.total
    top = scan.combinations[:10]
    assert len({c.columns[0] for c in top}) > 1 or len({len(c.columns) for c in top}) > 1
    document = json.loads(json.dumps(scan.as_dict()))
    assert [c["columns"] for c in document["direct_identifiers"]] == [["name"], ["ssn"]]
    assert document["skipped"] == 49 and len(document["combinations"]) == 41
    text = scan.text(top=3).splitlines()
    assert "direct identifiers" in text[0]
    assert text[1].endswith(": name") and text[2].endswith(": ssn")
    assert "without the 49 combinations holding a direct identifier" in text[3]
    assert len(text) == 4 + 3


def test_issue10_p14_qi_scan_can_rank_every_combination() -> None:
    scan = kanonym.qi_scan(
        patients(300), ["name", "sex"], max_size=2, direct_identifier_uniqueness=None
    )
    assert scan.direct_identifiers == () and scan.skipped == 0
    assert [c.columns for c in scan.combinations] == [("name",), ("name", "sex"), ("sex",)]
