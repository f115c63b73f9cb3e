"""The pass^k-vs-k terminal chart: shape, axis labels, legend, markers, edge cases."""

from __future__ import annotations

import pytest

from reviewer.metrics.passk import run_passk
from reviewer.metrics.plot import MARKERS, passk_curve, plot_passk

SERIES = {
    "old prompt": [(1, 0.9), (2, 0.8), (3, 0.74), (4, 0.7), (5, 0.68)],
    "new prompt": [(1, 0.92), (2, 0.75), (3, 0.6), (4, 0.5), (5, 0.45)],
}


def test_chart_layout() -> None:
    text = plot_passk(SERIES, width=60, height=12)
    lines = text.splitlines()
    assert lines[0] == "pass^k vs k"
    plot_rows = lines[1:13]
    assert plot_rows[0].startswith("1.00 ┤") and plot_rows[-1].startswith("0.00 ┤")
    assert any(r.startswith("0.50 ┤") for r in plot_rows)
    assert all(len(line) <= 60 for line in lines)
    assert lines[13].startswith("     └─")
    assert lines[14].split() == ["k", "1", "2", "3", "4", "5"]
    assert lines[15].split() == [MARKERS[0], "old", "prompt", MARKERS[1], "new", "prompt"]
    body = "\n".join(plot_rows)
    assert body.count(MARKERS[0]) >= 4 and body.count(MARKERS[1]) >= 4
    assert any(0x2800 < ord(ch) <= 0x28FF for ch in body)  # braille line segments


def test_points_land_on_the_right_rows() -> None:
    lines = plot_passk({"r": [(1, 1.0), (2, 0.0)]}, width=30, height=6).splitlines()
    assert MARKERS[0] in lines[1] and lines[1].index(MARKERS[0]) == 6
    assert MARKERS[0] in lines[6] and lines[6].rstrip().endswith(MARKERS[0])


def test_single_point_and_clamping() -> None:
    text = plot_passk({"a": [(1, 1.7)], "b": [(1, -0.2)]}, width=30, height=5)
    lines = text.splitlines()
    assert MARKERS[0] in lines[1] and MARKERS[1] in lines[5]
    assert lines[7].split() == ["k", "1"]


def test_many_ks_keep_labels_apart_and_show_the_last() -> None:
    pts = [(k, 0.97**k) for k in range(1, 33)]
    labels = plot_passk({"a": pts}, width=40, height=8).splitlines()[-2]
    words = labels.split()
    assert words[:2] == ["k", "1"] and words[-1] == "32"
    assert len(words) < 33  # some labels skipped to keep them apart
    assert all(len(line) <= 40 for line in plot_passk({"a": pts}, width=40).splitlines())


def test_no_data_and_unsafe_names() -> None:
    assert plot_passk({}) == "pass^k vs k\n(no data)\n"
    assert plot_passk({"a": []}) == "pass^k vs k\n(no data)\n"
    text = plot_passk({"ev\x1b[31mil": [(1, 0.5)]})
    assert "\x1b" not in text and "␛[31mil" in text


@pytest.mark.parametrize(("width", "height"), [(20, 3), (100, 20), (5, 1)])
def test_sizes(width: int, height: int) -> None:
    lines = plot_passk(SERIES, width=width, height=height).splitlines()
    assert len(lines) == 1 + max(3, height) + 3


def test_passk_curve_matches_report() -> None:
    tasks = [("a", 5, 5), ("b", 5, 3), ("c", 4, 2)]
    curve = passk_curve([(n, c) for _, n, c in tasks])
    assert [k for k, _ in curve] == [1, 2, 3, 4]
    rep = run_passk("r", tasks, [1, 2, 3, 4, 5])
    assert curve == [(k, rep.average_hat_k[k]) for k in range(1, 5)]
    longer = passk_curve([(n, c) for _, n, c in tasks], max_k=6)
    assert longer[-1] == (5, rep.average_hat_k[5]) and len(longer) == 5
    assert passk_curve([]) == []
