"""The job file a sweep writes: a hierarchy's spec must read back as the same hierarchy."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.errors import InputError
from kanonym.hierarchy import ORDER_NAMES, OrderBuilder, parse_hierarchy
from kanonym.sweep.job import hierarchy_spec


@pytest.mark.parametrize(
    "order",
    [("text",), ("numeric",), ("date",), ("auto",), ("date:%Y", "2020"), ("a,b", "c")],
)
def test_an_order_that_reads_back_as_another_is_refused(order: tuple[str, ...]) -> None:
    # 'order:2:text' reads as the text order, 'order:2:a,b,c' as three values.
    with pytest.raises(InputError, match="reads as another") as raised:
        hierarchy_spec(OrderBuilder(fanouts=2, order=order), "quasi-identifier 'grade'")
    assert "\n" not in str(raised.value) and "to_arx_csv" in str(raised.value)


@settings(max_examples=300, deadline=None)
@given(
    order=st.lists(
        st.text(st.sampled_from("ab,:xdtem%Y"), min_size=1, max_size=6),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    fanouts=st.one_of(st.integers(2, 4), st.tuples(st.integers(2, 4))),
)
def test_a_spec_is_written_exactly_when_it_reads_back(order: list[str], fanouts) -> None:
    builder = OrderBuilder(fanouts=fanouts, order=tuple(order))
    ambiguous = (
        any("," in value for value in order)
        or (len(order) == 1 and order[0] in ORDER_NAMES)
        or order[0].startswith("date:")
    )
    if ambiguous:
        with pytest.raises(InputError, match="reads as another"):
            hierarchy_spec(builder, "quasi-identifier 'grade'")
    else:
        assert parse_hierarchy(hierarchy_spec(builder, "quasi-identifier 'grade'")) == builder
