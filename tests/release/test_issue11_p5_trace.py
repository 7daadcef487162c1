"""Issue 11 point 5: the lattice trace is built only when the HTML report asks for it."""

from __future__ import annotations

import polars as pl
import pytest

import kanonym
from kanonym.search import trace as trace_module


def test_the_trace_is_built_only_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    original = trace_module.SearchTrace.__post_init__

    def counting(self: trace_module.SearchTrace) -> None:
        built.append(len(self.checked))
        original(self)

    monkeypatch.setattr(trace_module.SearchTrace, "__post_init__", counting)
    table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
    result = kanonym.anonymize(table, quasi_identifiers={"zip": "mask"}, k=2, seed=1)
    result.summary()
    result.report()
    assert built == []
    trace = result.search
    assert trace is not None and built == [result.nodes_checked]
    assert trace.chosen == tuple(result.transformation.values())
    assert result.search is trace and len(built) == 1
