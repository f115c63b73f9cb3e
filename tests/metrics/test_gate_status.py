"""A gate row's result says what compare says of its change: a secondary row within noise read
"ok", where compare (and the gate's own pass@1 row) said "within noise" (found by a new-user
review); worse beyond noise without a budget is shown as "worse", not failed."""

from __future__ import annotations

import pytest

from reviewer.metrics.compare_types import Row
from reviewer.metrics.gate import _check


@pytest.mark.parametrize(
    ("metric", "direction", "status", "failed"),
    [
        ("tool_error_rate", "within noise", "within noise", False),
        ("tool_error_rate", "worse", "worse", False),
        ("tool_error_rate", "better", "ok", False),
        ("tool_error_rate", "same", "ok", False),
        ("steps", "within noise", "within noise", False),
        ("pass_at_1", "within noise", "within noise", False),
        ("pass_at_1", "worse", "regressed", True),
        ("tool_error_rate", "too few tasks", "too few tasks", False),
        ("pass_at_1", "too few tasks", "too few tasks", False),
    ],
)
def test_a_rows_result_follows_compares_direction(
    metric: str, direction: str, status: str, failed: bool
) -> None:
    row = Row(metric, metric, 0.064, 0.080, "pct", False, direction, low=-0.01, high=0.05)
    check = _check(row, {}, {}, "test")
    assert (check.status, check.failed) == (status, failed)
