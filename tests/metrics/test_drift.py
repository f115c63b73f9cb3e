"""The judge's shift on anchors: McNemar's exact test by hand, and what counts as both judged."""

from __future__ import annotations

import pytest

from reviewer.metrics.drift import AnchorReport, judge_shift, mcnemar_exact


def test_mcnemar_exact_by_hand() -> None:
    assert mcnemar_exact(12, 0) == pytest.approx(2 * 0.5**12)
    assert mcnemar_exact(5, 2) == pytest.approx(2 * (1 + 7 + 21) / 128)
    assert mcnemar_exact(3, 3) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) == 1.0


def test_shift_counts_only_anchors_both_judges_graded_pass_or_fail() -> None:
    base = {"a": "pass", "b": "pass", "c": "fail", "d": "pass", "e": "error"}
    new = {"a": "fail", "b": "pass", "c": "pass", "e": "pass", "f": "fail"}
    s = judge_shift(base, new)
    assert (s.n, s.base_passed, s.new_passed, s.pass_to_fail, s.fail_to_pass) == (3, 2, 2, 1, 1)
    assert s.shift == 0 and not s.moved


def test_report_lines_say_whether_the_judge_moved() -> None:
    base = {str(i): "pass" for i in range(20)}
    new = {str(i): ("fail" if i < 9 else "pass") for i in range(20)}
    report = AnchorReport(20, "m/v1/r@1", "m/v2/r@1", judge_shift(base, new), judged_now=20)
    assert report.moved
    lines = report.lines()
    assert lines[0] == "judge drift on 20 anchors: m/v1/r@1 (baseline) -> m/v2/r@1 (new run)"
    assert lines[1].startswith(
        "  pass rate 1.00 -> 0.55 (-0.45 on 20 anchors both judged; 9 pass->fail"
    )
    assert lines[1].endswith("the judge moved beyond noise")
    assert report.to_dict()["shift"]["mcnemar_p"] == pytest.approx(2 * 0.5**9)


def test_the_shift_interval_is_agresti_mins_by_hand() -> None:
    from reviewer.metrics.drift import JudgeShift

    # b = 12.5, c = 0.5, n = 42: d = -12/42; se = sqrt(13 - 144/42) / 42
    low, high = JudgeShift(40, 28, 16, 12, 0, 0.0005).interval()
    se = (13 - 144 / 42) ** 0.5 / 42
    assert low == pytest.approx(-12 / 42 - 1.959963984540054 * se)
    assert high == pytest.approx(-12 / 42 + 1.959963984540054 * se)
    assert JudgeShift(0, 0, 0, 0, 0, 1.0).interval() == (0.0, 0.0)
