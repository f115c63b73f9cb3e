"""A small terminal line chart of pass^k against k, for one run or several, as plain text.

Lines are drawn in braille dots (2 x 4 per character cell) and every data point gets its series' marker,
so several runs stay apart without colour. The y axis is fixed at 0..1.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from fractions import Fraction

from reviewer.metrics.passk import pass_hat_k_exact
from reviewer.text import visible

MARKERS = "●■▲◆✚○□△"
_BRAILLE = 0x2800
# bit of the dot at (dx, dy) in a braille cell
_DOT = {(0, 0): 0x01, (0, 1): 0x02, (0, 2): 0x04, (1, 0): 0x08, (1, 1): 0x10, (1, 2): 0x20}
_DOT |= {(0, 3): 0x40, (1, 3): 0x80}
_MARGIN = 5  # "0.75 " before the axis


def passk_curve(
    counts: Iterable[tuple[int, int]], max_k: int | None = None
) -> list[tuple[int, float]]:
    """Average pass^k for k = 1..max_k over tasks given as (n, c).

    ``max_k`` defaults to the smallest n, so every point averages the same tasks; a larger max_k averages
    each k over the tasks with at least k trials (as the report does). Ks no task supports are left out.
    """
    groups = Counter(counts)
    if not groups:
        return []
    top = min(n for n, _ in groups) if max_k is None else max_k
    out: list[tuple[int, float]] = []
    for k in range(1, top + 1):
        total, m = Fraction(0), 0
        for (n, c), times in groups.items():
            v = pass_hat_k_exact(n, c, k)
            if v is not None:
                total += v * times
                m += times
        if m:
            out.append((k, float(total / m)))
    return out


def _visible(s: str) -> str:
    return visible(s, single_line=True)


def plot_passk(
    series: dict[str, list[tuple[int, float]]], width: int = 60, height: int = 12
) -> str:
    """Chart of pass^k (y, 0..1) against k (x) with a legend; ``width`` is the whole chart's width in
    characters and ``height`` the number of plot rows. Where points of two series share a cell, the
    series listed last is shown there; when there are too many ks for the width, only the ends of each
    curve get a marker."""
    clean: dict[str, list[tuple[int, float]]] = {}
    for name, points in series.items():
        pts = sorted(
            (int(k), min(1.0, max(0.0, float(v))))
            for k, v in points
            if v is not None and not math.isnan(float(v))
        )
        clean[name] = pts
    ks = sorted({k for pts in clean.values() for k, _ in pts})
    title = "pass^k vs k"
    if not ks:
        return f"{title}\n(no data)\n"

    cols = max(8, width - _MARGIN - 1)
    rows = max(3, height)
    xp, yp = cols * 2, rows * 4
    kmin, kmax = ks[0], ks[-1]

    def px(k: int) -> int:
        return xp // 2 if kmax == kmin else round((k - kmin) / (kmax - kmin) * (xp - 1))

    def py(v: float) -> int:
        return round((1.0 - v) * (yp - 1))

    dots = [[0] * cols for _ in range(rows)]
    marks: dict[tuple[int, int], str] = {}
    for i, pts in enumerate(clean.values()):
        marker = MARKERS[i % len(MARKERS)]
        pixels = [(px(k), py(v)) for k, v in pts]
        for (x0, y0), (x1, y1) in zip(pixels, pixels[1:], strict=False):
            for x, y in _line(x0, y0, x1, y1):
                dots[y // 4][x // 2] |= _DOT[x % 2, y % 4]
        # Dense curves keep markers at their ends only, so the line stays readable.
        marked = pixels if len(ks) <= cols // 3 else pixels[:1] + pixels[-1:]
        for x, y in marked:
            marks[y // 4, x // 2] = marker

    labels = _y_labels(rows)
    lines = [title]
    for r in range(rows):
        label = labels.get(r)
        prefix = f"{label:>4} ┤" if label is not None else " " * (_MARGIN - 1) + " │"
        cells = (marks.get((r, c)) or chr(_BRAILLE + dots[r][c]) for c in range(cols))
        lines.append(prefix + "".join(cells).rstrip(chr(_BRAILLE)).replace(chr(_BRAILLE), " "))
    lines.append(" " * _MARGIN + "└" + "─" * cols)
    lines.append("k".rjust(_MARGIN - 1) + "  " + _x_labels(ks, [px(k) // 2 for k in ks], cols))
    legend = "   ".join(
        f"{MARKERS[i % len(MARKERS)]} {_visible(name)}" for i, name in enumerate(clean)
    )
    lines.append(" " * (_MARGIN + 1) + legend)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _y_labels(rows: int) -> dict[int, str]:
    """Row -> label for 1.00, 0.75, 0.50, 0.25, 0.00, skipping those that would share a row."""
    steps = (1.0, 0.75, 0.5, 0.25, 0.0) if rows >= 9 else (1.0, 0.5, 0.0)
    out: dict[int, str] = {}
    for v in steps:
        r = round((1.0 - v) * (rows * 4 - 1)) // 4
        out.setdefault(r, f"{v:.2f}")
    return out


def _x_labels(ks: list[int], positions: list[int], cols: int) -> str:
    """k labels centred under their columns, left to right, skipping any that would touch the one
    before; the last k always shows."""
    spans: list[tuple[int, str]] = []  # (start column, text)
    for i, (k, pos) in enumerate(zip(ks, positions, strict=True)):
        text = str(k)
        start = max(0, min(pos - (len(text) - 1) // 2, cols - len(text)))
        last = i == len(ks) - 1
        while last and spans and spans[-1][0] + len(spans[-1][1]) >= start:
            spans.pop()
        if spans and spans[-1][0] + len(spans[-1][1]) >= start:
            continue
        spans.append((start, text))
    out = ""
    for start, text in spans:
        out = out.ljust(start) + text
    return out


def _line(x0: int, y0: int, x1: int, y1: int) -> Iterable[tuple[int, int]]:
    """Bresenham's line from (x0, y0) to (x1, y1), both ends included."""
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
    err = dx + dy
    while True:
        yield x0, y0
        if x0 == x1 and y0 == y1:
            return
        e2 = 2 * err
        if e2 >= dy:
            err += dy
            x0 += sx
        if e2 <= dx:
            err += dx
            y0 += sy
