"""Rule regexes: a catastrophic pattern against a plain one, on Python's ``re`` (what rules ran on
before issue 27) and on RE2 (what they run on now), in the same run.

``(a+)+$`` on ``a...a!`` backtracks on Python's re: the time multiplies by about 4 per 2 more
characters (69 s at 30). On RE2 it is linear, like the plain pattern. Prints, for each engine and
length, seconds per search and the ratio to the plain pattern; then what one search of a typical
tool result costs on each engine (RE2's binding costs more per call) and what checking the sample
runs' rules costs. Run: ``python bench/rule_regex_speed.py``.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CATASTROPHIC = r"(a+)+$"
PLAIN = r"a+b$"


def per_call(fn: Callable[[], object], least: float = 0.2) -> float:
    """Seconds per call of ``fn``, repeated for at least ``least`` seconds (at most 1,000,000)."""
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        spent = time.perf_counter() - start
        if spent >= least or n >= 1_000_000:
            return spent / n


def main() -> None:
    from reviewer.metrics.rule_regex import compile_rule_regex

    print("(a+)+$ vs a+b$ on 'a' * n + '!' (seconds per search; ratio catastrophic / plain)")
    bad_re, plain_re = re.compile(CATASTROPHIC), re.compile(PLAIN)
    growth = []
    for n in (16, 18, 20, 22, 24):
        text = "a" * n + "!"
        bad, plain = (
            per_call(lambda t=text: bad_re.search(t)),
            per_call(lambda t=text: plain_re.search(t)),
        )
        growth.append(bad)
        print(
            f"  python re  n={n:>9,}: {bad:10.2e} s vs {plain:9.2e} s  ratio {bad / plain:12,.0f}x"
        )
    per_two = (growth[-1] / growth[0]) ** (1 / (len(growth) - 1))
    at_30 = growth[-1] * per_two ** ((30 - 24) / 2)
    print(f"  python re: x{per_two:.1f} per 2 more characters; n=30 would take ~{at_30:.0f} s")
    bad_re2, plain_re2 = compile_rule_regex(CATASTROPHIC), compile_rule_regex(PLAIN)
    worst = 0.0
    for n in (30, 1_000, 100_000, 1_000_000):
        text = "a" * n + "!"
        bad, plain = (
            per_call(lambda t=text: bad_re2.search(t)),
            per_call(lambda t=text: plain_re2.search(t)),
        )
        worst = max(worst, bad / plain)
        print(
            f"  RE2        n={n:>9,}: {bad:10.2e} s vs {plain:9.2e} s  ratio {bad / plain:12.2f}x"
        )
    print(
        f"RE2 catastrophic / plain, worst over the lengths: {worst:.2f}x "
        f"(target <= 3x, linear): {'met' if worst <= 3 else 'NOT MET'}"
    )

    result = '{"order_id": "W5521", "status": "shipped", "items": [' + '{"id": 1}, ' * 20 + "]}"
    shipped = r'"status":\s*"shipped"'
    py, r2 = re.compile(shipped), compile_rule_regex(shipped)
    t_py, t_r2 = per_call(lambda: py.search(result)), per_call(lambda: r2.search(result))
    print(
        f"one search of a {len(result)}-character tool result: re {t_py * 1e6:.2f} us, "
        f"RE2 {t_r2 * 1e6:.2f} us ({t_r2 / t_py:.1f}x)"
    )
    sample_rules()


def sample_rules() -> None:
    """Checking the sample runs' rules over their trials, as an import does: with the patterns on
    Python's re (before) and on RE2 (now)."""
    from dataclasses import replace

    from reviewer.ingest import parse
    from reviewer.metrics.rules import ForbidTool, Rule, check_trial, load_rules

    folder = REPO / "sample_runs"
    now = load_rules(folder / "rules.toml")
    before: list[Rule] = [
        replace(
            r,
            args=tuple((k, re.compile(p.pattern)) for k, p in r.args),
            after_result=re.compile(r.after_result.pattern) if r.after_result else None,
        )
        if isinstance(r, ForbidTool)
        else r
        for r in now
    ]
    trials = [t for f in sorted(folder.glob("*.jsonl")) for t in parse(f) if hasattr(t, "messages")]
    found = [[check_trial(t, rs) for t in trials] for rs in (before, now)]
    assert found[0] == found[1], "the two engines disagree on the sample runs"
    t_before = per_call(lambda: [check_trial(t, before) for t in trials], least=1.0)
    t_now = per_call(lambda: [check_trial(t, now) for t in trials], least=1.0)
    print(
        f"checking the {len(now)} sample rules over {len(trials)} sample trials (same "
        f"violations): {t_before / len(trials) * 1e6:.1f} us a trial on re, "
        f"{t_now / len(trials) * 1e6:.1f} us on RE2 ({t_now / t_before:.2f}x)"
    )


if __name__ == "__main__":
    main()
