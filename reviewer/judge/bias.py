"""Position bias of a pairwise judge: each pair judged in order AB and in order BA (MT-Bench layout).

Winners arrive mapped back to the pair's own names (``a``, ``b``, ``tie``, ``None`` for a missing or
unparseable verdict). In order AB ``a`` is shown first, in order BA ``b`` is, so a pair is

- *consistent*: the same winner in both orders (a tie in both counts),
- *biased toward first*: the first-shown answer is favoured: it wins in both orders (AB ``a``, BA
  ``b``), or wins in one order and ties in the other (MT-Bench, Zheng et al. 2023: a tie in one order
  only is inconsistent, and leans to the position that won the other order),
- *biased toward second*: the same for the second-shown answer (AB ``b`` / BA ``a``, or a tie and a
  second-slot win),
- *error*: a verdict is missing in either order.

A judge whose every verdict is in one order (a pairs file of order AB alone) says nothing of position
bias: which answer was shown first is then which answer was listed first, so its first-slot win rate
is the dataset's as much as the judge's. Its report says so (``one_order``) instead of a rate, and
its pairs are not listed as inconsistent.

Rating-based judges (LLMBar's ``*/Rating*`` strategies) give two absolute scores; LLMBar writes a
score tie as AB ``b`` and BA ``a``, which would read as biased toward second. For a judge
:func:`is_rating_judge` recognises, that pattern is a tie in both orders (consistent).

The first-slot win rate counts single-order verdicts, but its interval takes the pair as the unit:
the two verdicts of one pair are not independent (a judge that always favours one slot decides both),
so the Wilson interval uses the effective number of verdicts after the design effect of the pairs.
When that cannot be measured (every verdict picked the same slot, or one pair), each pair counts once.

Pure statistics over plain values; kappa comes from :mod:`reviewer.calibration.kappa`. Degenerate
inputs give ``None`` figures with an explanation, never NaN.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple, Protocol

from reviewer.calibration.kappa import cohen_kappa, landis_koch
from reviewer.text import json_ready, visible

__all__ = [
    "CATEGORIES",
    "CATEGORY_NAMES",
    "WINNERS",
    "Aggregate",
    "BiasReport",
    "FirstSlot",
    "Inconsistent",
    "JudgeBias",
    "PairVerdicts",
    "VsHuman",
    "bias_report",
    "classify",
    "is_rating_judge",
    "judge_bias",
    "render_bias",
    "surviving_winner",
    "vs_human",
    "wilson_interval",
]

WINNERS = ("a", "b", "tie")
CATEGORIES = ("consistent", "biased_first", "biased_second", "error")
CATEGORY_NAMES = {
    "consistent": "consistent",
    "biased_first": "biased toward first",
    "biased_second": "biased toward second",
    "error": "error",
}
_Z95 = 1.959963984540054


class PairVerdicts(Protocol):
    """What the statistics read of a pair judgement (``reviewer.store.pairs.PairRow`` is one)."""

    @property
    def pair_id(self) -> str: ...
    @property
    def judge(self) -> str: ...
    @property
    def order_ab(self) -> str | None: ...
    @property
    def order_ba(self) -> str | None: ...
    @property
    def human(self) -> str | None: ...


def _winner(value: str | None) -> str | None:
    return value if value in WINNERS else None


def is_rating_judge(judge: str) -> bool:
    """A judge whose two verdicts come from two absolute scores (LLMBar's ``Rating*`` strategies,
    named ``MODEL/Rating...``): its AB ``b`` / BA ``a`` is a score tie."""
    return any(part.startswith("Rating") for part in judge.split("/")[1:])


def classify(order_ab: str | None, order_ba: str | None, rating: bool = False) -> str:
    """The MT-Bench category of one pair's two mapped-back verdicts (one of :data:`CATEGORIES`);
    ``rating``: the judge scores each answer, so AB ``b`` / BA ``a`` is a tie."""
    ab, ba = _winner(order_ab), _winner(order_ba)
    if ab is None or ba is None:
        return "error"
    if ab == ba or (rating and (ab, ba) == ("b", "a")):
        return "consistent"
    # the first-shown answer is a in order AB and b in order BA
    first = (ab == "a") + (ba == "b")
    second = (ab == "b") + (ba == "a")
    return "biased_first" if first > second else "biased_second"


def surviving_winner(order_ab: str | None, order_ba: str | None, rating: bool = False) -> str:
    """The aggregate rule: a win counts only if it survives the swap, else the pair is a tie."""
    if classify(order_ab, order_ba, rating) != "consistent":
        return "tie"
    if rating and (order_ab, order_ba) == ("b", "a"):
        return "tie"
    return _winner(order_ab) or "tie"


def wilson_interval(k: float, n: float, z: float = _Z95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion k / n (an effective, possibly fractional, count);
    ``None`` when n is 0."""
    if n <= 0:
        return None
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class FirstSlot:
    """How often the answer shown first wins a single-order verdict that picks a winner."""

    wins: int
    decided: int  # single-order verdicts that are a or b (ties and errors left out)
    ties: int
    errors: int
    rate: float | None = None
    ci: tuple[float, float] | None = None
    explanation: str | None = None
    pairs: int = 0  # pairs with at least one decided verdict: the unit of the interval
    design_effect: float | None = (
        None  # variance over pairs / variance if verdicts were independent
    )
    #: the design effect could not be measured (a rate of 0 or 1, or a single pair): the interval
    #: counts each pair once (design effect = verdicts / pairs)
    design_effect_assumed: bool = False


@dataclass
class VsHuman:
    """The judge's winners against the human preference over one scope (3 classes: a, b, tie)."""

    scope: str
    n: int
    correct: int = 0
    accuracy: float | None = None
    kappa: float | None = None
    band: str | None = None
    left_out: int = 0  # pairs with a human preference that are not in this scope
    explanation: str | None = None


@dataclass
class Aggregate:
    """Winners under the swap rule; ``from_inconsistent`` / ``from_error`` say where the ties came from."""

    a: int = 0
    b: int = 0
    tie: int = 0
    from_inconsistent: int = 0
    from_error: int = 0


class Inconsistent(NamedTuple):
    """A pair whose winner changed with the order (or is missing), with both winners and the human's."""

    pair_id: str
    category: str
    order_ab: str | None
    order_ba: str | None
    human: str | None


@dataclass
class JudgeBias:
    """One judge's position-bias figures."""

    judge: str
    n: int
    counts: dict[str, int]
    first_slot: FirstSlot
    vs_human: list[VsHuman]
    aggregate: Aggregate
    n_human: int
    inconsistent: list[Inconsistent] = field(default_factory=list)
    #: "AB" or "BA" when every verdict of the judge is in that order (none in the other)
    one_order: str | None = None

    def pct(self, category: str) -> float | None:
        return 100 * self.counts[category] / self.n if self.n else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["counts"] = {c: {"n": self.counts[c], "pct": self.pct(c)} for c in CATEGORIES}
        d["inconsistent"] = [p._asdict() for p in self.inconsistent]
        return json_ready(d)


@dataclass
class BiasReport:
    judges: list[JudgeBias]
    explanation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "judges": [j.to_dict() for j in self.judges],
            "categories": list(CATEGORIES),
            "explanation": self.explanation,
        }


def bias_report(pairs: Iterable[PairVerdicts], judge: str | None = None) -> BiasReport:
    """Figures per judge (or for ``judge`` only), judges in name order; rating-based judges
    (:func:`is_rating_judge`) read AB ``b`` / BA ``a`` as a score tie."""
    by_judge: dict[str, list[PairVerdicts]] = {}
    for p in pairs:
        if judge is None or p.judge == judge:
            by_judge.setdefault(p.judge, []).append(p)
    report = BiasReport(
        [judge_bias(name, by_judge[name], is_rating_judge(name)) for name in sorted(by_judge)]
    )
    if not report.judges:
        report.explanation = (
            f"no pair judgements of judge {judge!r}"
            if judge is not None
            else "no pair judgements: import a pairs JSONL file or run the pairwise judge"
        )
    return report


def judge_bias(judge: str, pairs: Sequence[PairVerdicts], rating: bool = False) -> JudgeBias:
    """One judge's consistency table, first-slot win rate, agreement with humans and aggregate."""
    cats = [classify(p.order_ab, p.order_ba, rating) for p in pairs]
    counts = Counter(cats)
    one = one_order(pairs)
    first_slot = _first_slot(pairs, rating)
    if one is not None:
        first_slot.rate = first_slot.ci = first_slot.design_effect = None
        first_slot.explanation = (
            f"every verdict is in order {one}: the answer shown first is the one listed first, "
            "so this rate would be the data's as much as the judge's"
        )
    return JudgeBias(
        judge=judge,
        n=len(pairs),
        counts={c: counts.get(c, 0) for c in CATEGORIES},
        first_slot=first_slot,
        vs_human=_vs_human_all(pairs, cats, rating),
        aggregate=_aggregate(pairs, cats, rating),
        n_human=sum(1 for p in pairs if _winner(p.human) is not None),
        inconsistent=[
            Inconsistent(p.pair_id, c, p.order_ab, p.order_ba, p.human)
            for p, c in zip(pairs, cats, strict=True)
            if c != "consistent" and one is None
        ],
        one_order=one,
    )


def one_order(pairs: Iterable[PairVerdicts]) -> str | None:
    """ "AB" or "BA" when the pairs' verdicts are all in that order (none in the other), else None."""
    ab = ba = False
    for p in pairs:
        ab, ba = ab or p.order_ab is not None, ba or p.order_ba is not None
        if ab and ba:
            return None
    return "AB" if ab else "BA" if ba else None


def _first_slot(pairs: Sequence[PairVerdicts], rating: bool = False) -> FirstSlot:
    wins = decided = ties = errors = 0
    per_pair: list[tuple[int, int]] = []  # (first-slot wins, decided verdicts) of each pair
    for p in pairs:
        ab, ba = p.order_ab, p.order_ba
        if rating and (_winner(ab), _winner(ba)) == ("b", "a"):
            ab = ba = "tie"  # a score tie
        w = d = 0
        for value, first in ((ab, "a"), (ba, "b")):
            v = _winner(value)
            if v is None:
                errors += 1
            elif v == "tie":
                ties += 1
            else:
                d += 1
                w += v == first
        wins, decided = wins + w, decided + d
        if d:
            per_pair.append((w, d))
    out = FirstSlot(wins=wins, decided=decided, ties=ties, errors=errors, pairs=len(per_pair))
    if decided:
        out.rate = wins / decided
        out.design_effect = _design_effect(per_pair, out.rate)
        if out.design_effect is None:
            # Nothing to measure it from (a rate of 0 or 1, or one pair): the pair is the unit,
            # as if a pair's verdicts always went together, the most they can be correlated.
            out.design_effect, out.design_effect_assumed = decided / len(per_pair), True
        n_eff = decided / max(1.0, out.design_effect)
        out.ci = wilson_interval(wins / decided * n_eff, n_eff)
    else:
        out.explanation = "no single-order verdict picked a winner (all ties or errors)"
    return out


def _design_effect(per_pair: Sequence[tuple[int, int]], rate: float) -> float | None:
    """Variance of the rate with pairs as the unit (ratio estimator, n / (n - 1) corrected) over
    the binomial variance of as many independent verdicts; None when either is 0."""
    m = len(per_pair)
    total = sum(d for _, d in per_pair)
    if m < 2 or not total or rate in (0.0, 1.0):
        return None
    resid = math.fsum((w - rate * d) ** 2 for w, d in per_pair)
    clustered = m / (m - 1) * resid / total**2
    return clustered / (rate * (1 - rate) / total)


def _vs_human_all(
    pairs: Sequence[PairVerdicts], cats: Sequence[str], rating: bool = False
) -> list[VsHuman]:
    human = [_winner(p.human) for p in pairs]
    scopes: list[tuple[str, list[str | None]]] = [
        ("order AB", [_winner(p.order_ab) for p in pairs]),
        ("order BA", [_winner(p.order_ba) for p in pairs]),
        (
            "swap-consistent",
            [
                surviving_winner(p.order_ab, p.order_ba, rating) if c == "consistent" else None
                for p, c in zip(pairs, cats, strict=True)
            ],
        ),
        ("swap-surviving", [surviving_winner(p.order_ab, p.order_ba, rating) for p in pairs]),
    ]
    return [vs_human(scope, judged, human) for scope, judged in scopes]


def vs_human(scope: str, judged: Sequence[str | None], human: Sequence[str | None]) -> VsHuman:
    """Accuracy and Cohen's kappa of ``judged`` against ``human`` where both have a winner."""
    both = [(j, h) for j, h in zip(judged, human, strict=True) if j is not None and h is not None]
    n_human = sum(1 for h in human if h is not None)
    out = VsHuman(scope=scope, n=len(both), left_out=n_human - len(both))
    if not n_human:
        out.explanation = "no pair has a human preference"
        return out
    if not both:
        out.explanation = "no pair with a human preference has a judge winner here"
        return out
    out.correct = sum(j == h for j, h in both)
    out.accuracy = out.correct / len(both)
    js, hs = [j for j, _ in both], [h for _, h in both]
    out.kappa = cohen_kappa(hs, js, labels=WINNERS) if len(both) >= 2 else None
    if out.kappa is not None:
        out.band = landis_koch(out.kappa)
    out.explanation = _kappa_note(hs, js, out.kappa)
    return out


def _kappa_note(human: Sequence[str], judge: Sequence[str], kappa: float | None) -> str | None:
    """Why kappa is missing or means little, or None when the input is ordinary."""
    if len(human) < 2:
        return f"kappa needs at least 2 pairs, n = {len(human)}"
    sh, sj = set(human), set(judge)
    if kappa is None:
        return f"kappa is undefined: judge and human always say {next(iter(sh))!r}"
    for name, s in (("human", sh), ("judge", sj)):
        if len(s) == 1:
            return (
                f"every {name} winner is {next(iter(s))!r}, so kappa is 0 whatever the other says"
            )
    return None


def _aggregate(
    pairs: Sequence[PairVerdicts], cats: Sequence[str], rating: bool = False
) -> Aggregate:
    agg = Aggregate()
    for p, c in zip(pairs, cats, strict=True):
        w = surviving_winner(p.order_ab, p.order_ba, rating)
        setattr(agg, w, getattr(agg, w) + 1)
        if c == "error":
            agg.from_error += 1
        elif c != "consistent":
            agg.from_inconsistent += 1
    return agg


# --- rendering -----------------------------------------------------------------------------------


def render_bias(report: BiasReport) -> str:
    """The report as plain text (no markup): the MT-Bench table, then each judge's figures."""
    if not report.judges:
        return f"position bias: {report.explanation}"
    lines = ["Position bias (each pair judged in order AB and in order BA)", *_table(report.judges)]
    for j in report.judges:
        lines += ["", *_details(j)]
    return "\n".join(lines)


def _count(j: JudgeBias, category: str) -> str:
    pct = j.pct(category)
    return f"{j.counts[category]} ({pct:.1f}%)" if pct is not None else "0"


def _table(judges: Sequence[JudgeBias]) -> list[str]:
    names = [_name(j.judge) for j in judges]
    w = max(5, *(len(n) for n in names))
    heads = [CATEGORY_NAMES[c] for c in CATEGORIES]
    cells = [[_count(j, c) for c in CATEGORIES] for j in judges]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(heads)]
    lines = [
        f"{'judge':<{w}}  {'pairs':>5}  "
        + "  ".join(h.rjust(x) for h, x in zip(heads, widths, strict=True))
    ]
    for name, j, row in zip(names, judges, cells, strict=True):
        body = "  ".join(c.rjust(x) for c, x in zip(row, widths, strict=True))
        lines.append(f"{name:<{w}}  {j.n:>5}  {body}")
    return lines


def _details(j: JudgeBias) -> list[str]:
    lines = [_name(j.judge)]
    if j.one_order is not None:
        other = "BA" if j.one_order == "AB" else "AB"
        lines.append(
            f"  no verdict in order {other}: no pair was judged with its answers swapped, so the "
            "table counts every pair as an error and nothing here measures position bias; judge "
            "the pairs in both orders (reviewer bias --pairs N), or import both orders' verdicts"
        )
    lines += _first_slot_lines(j.first_slot)
    if j.n_human:
        lines.append(f"  vs human preference ({j.n_human} pairs with one; classes a, b, tie)")
        lines.append(f"    {'scope':<16}{'n':>6}  {'accuracy':>8}  {'kappa':>7}")
        lines += [_human_line(v) for v in j.vs_human]
    else:
        lines.append("  vs human preference: no pair has a human preference")
    a = j.aggregate
    lines += [
        "  swap-surviving winners (a win counts only if it survives the swap, else tie)",
        f"    a {a.a}  b {a.b}  tie {a.tie}  ({a.from_inconsistent} ties from inconsistent pairs, "
        f"{a.from_error} from errors)",
    ]
    return lines


def _first_slot_lines(f: FirstSlot) -> list[str]:
    head = "  first-slot win rate"
    if f.rate is None or f.ci is None:
        return [f"{head}: n/a ({f.explanation})"]
    deff = "" if f.design_effect is None else f", design effect {f.design_effect:.2f}"
    if f.design_effect_assumed:
        deff += " assumed"
    basis = f"Wilson, the {f.pairs} pairs as the unit{deff}"
    if f.design_effect is not None and f.design_effect < 1:
        # the pairs vary less than independent verdicts would: no narrower than those
        basis = (
            f"Wilson over the {f.decided} verdicts: the pairs' design effect "
            f"{f.design_effect:.2f} is below 1, counted as 1"
        )
    return [
        f"{head} {f.rate:.3f}, 95% CI {f.ci[0]:.3f} .. {f.ci[1]:.3f} ({basis})",
        f"    {f.wins} of the {f.decided} single-order verdicts with a winner picked the first "
        f"slot; {f.ties} ties and {f.errors} errors left out",
    ]


def _human_line(v: VsHuman) -> str:
    acc = "n/a" if v.accuracy is None else f"{v.accuracy:.3f}"
    kappa = "n/a" if v.kappa is None else f"{v.kappa:.3f}"
    band = f" ({v.band})" if v.band else ""
    line = f"    {v.scope:<16}{v.n:>6}  {acc:>8}  {kappa:>7}{band}"
    notes = [f"{v.left_out} left out"] if v.left_out else []
    if v.explanation:
        notes.append(v.explanation)
    return f"{line}  [{'; '.join(notes)}]" if notes else line


def _name(judge: str) -> str:
    return visible(judge, single_line=True)
