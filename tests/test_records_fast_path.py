"""records._plainly_valid, the reader's fast path, against check_record's long way: the fast
path re-implements the rules without the messages, so it must never say yes where the long way
refuses (a record the long way refuses would be read as valid), and for a record without rubric
fields it says yes exactly when the long way accepts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.errors import UserError
from ci_eval.results import records
from ci_eval.results.records import (
    COUNT_FIELDS,
    NUMBER_LIMITS,
    OPTIONAL_AMOUNT_FIELDS,
    OPTIONAL_COUNT_FIELDS,
    REQUIRED_FIELDS,
    STATUSES,
    _plainly_valid,
    check_record,
)

TASK = "task-001-x"
PATH = Path(f"results/{TASK}.jsonl")
VALID = {"run": 1, "task": TASK, "status": "pass", "passed": True, "agent": "claude-code"}
FIELDS = (*REQUIRED_FIELDS, *COUNT_FIELDS, *OPTIONAL_COUNT_FIELDS, *OPTIONAL_AMOUNT_FIELDS)
COUNT, TOKENS = NUMBER_LIMITS["count"], NUMBER_LIMITS["tokens"]
# the edges of every rule: 0 and 1 (run, attempt, k, requested start at 1), negatives, each
# limit and one past it, floats that are whole, not finite, or beyond every limit
EDGE_NUMBERS = (0, 1, 2, -1, -(10**20), COUNT, COUNT + 1, TOKENS, TOKENS + 1, 10**7, 10**7 + 1,
                10**400, 0.0, -0.0, 1.0, 0.5, -0.5, 1e6, 1e6 + 0.01, 1e7, 1e7 + 1, 1e300,
                float("inf"), float("-inf"), float("nan"))
VALUES = st.one_of(
    st.sampled_from(EDGE_NUMBERS),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.sampled_from([TASK, "task-002-y", "", *STATUSES, "PASS", "1"]),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
# a valid record with some fields replaced by any value, some removed
RECORDS = st.builds(
    lambda base, changed, removed: {**{k: v for k, v in base.items() if k not in removed},
                                    **changed},
    st.sampled_from([VALID, {**VALID, "status": "fail", "passed": False},
                     {**VALID, "status": "timeout", "passed": False, "attempt": 2, "k": 5,
                      "requested": 5, "tokens": 1200, "cost_usd": 0.25, "wall_seconds": 3.5}]),
    st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=3),
    st.sets(st.sampled_from(FIELDS), max_size=2),
)
NOT_OBJECTS = st.one_of(st.none(), st.integers(), st.text(max_size=3),
                        st.lists(st.integers(), max_size=2))


def long_way_accepts(record: object) -> bool:
    """check_record with the fast path off: the rules as the long way words them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records, "_plainly_valid", lambda record, task: False)
        try:
            check_record(record, PATH, 1)
        except UserError:
            return False
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(RECORDS, NOT_OBJECTS))
def test_fast_path_says_yes_exactly_when_check_record_accepts(record):
    assert _plainly_valid(record, TASK) == long_way_accepts(record), record


@pytest.mark.parametrize("changed", [
    {"run": 0}, {"run": -1}, {"run": COUNT + 1}, {"run": 10**400}, {"run": 1.0}, {"run": True},
    {"run": "1"}, {"run": None}, {"attempt": 0}, {"k": 0}, {"requested": 0}, {"k": COUNT + 1},
    {"tokens": -1}, {"tokens": TOKENS + 1}, {"tokens": 1.0}, {"tokens": False},
    {"cost_usd": -0.5}, {"cost_usd": float("nan")}, {"cost_usd": float("inf")},
    {"cost_usd": 1e6 + 0.01}, {"wall_seconds": 1e7 + 1}, {"wall_seconds": "3"},
    {"passed": 1}, {"passed": False}, {"status": "PASS"}, {"agent": 7}, {"task": "task-002-y"},
])
def test_fast_path_refuses_what_check_record_refuses(changed):
    """The table behind the property (each case one edge a re-implementation could drift on)."""
    record = {**VALID, **changed}
    assert not long_way_accepts(record)
    assert not _plainly_valid(record, TASK)
    with pytest.raises(UserError):
        check_record(record, PATH, 1)


@pytest.mark.parametrize("changed", [
    {"run": COUNT}, {"attempt": 1}, {"k": COUNT}, {"tokens": 0}, {"tokens": TOKENS},
    {"tokens": None}, {"cost_usd": 0}, {"cost_usd": 1e6}, {"cost_usd": -0.0},
    {"wall_seconds": 10**7}, {"checks_seconds": None},
])
def test_fast_path_takes_the_edges_check_record_accepts(changed):
    record = {**VALID, **changed}
    assert long_way_accepts(record) and _plainly_valid(record, TASK)
