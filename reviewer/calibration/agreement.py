"""Judge-vs-human agreement, human-vs-human agreement (the ceiling) and per-criterion agreement.

Pure statistics over plain values: the caller collects the pairs from the store. Degenerate inputs
(no overlap, n < 2, one class only) give ``None`` figures with an ``explanation``, never NaN.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from reviewer.calibration.assurance import ASSURANCE, Outlook, labels_to_verdict
from reviewer.calibration.kappa import (
    bootstrap_kappa_ci,
    cohen_kappa,
    confusion_matrix,
    fleiss_kappa,
    kappa_ci_adjusted,
    kappa_from_confusion,
    kappa_se_fce,
    krippendorff_alpha,
    landis_koch,
)
from reviewer.calibration.mix import mix_interval, mix_kappa, mix_shares
from reviewer.calibration.wilson import wilson_interval
from reviewer.text import json_ready

__all__ = [
    "CONFUSION_KEYS",
    "MIN_LABELS",
    "Agreement",
    "CriterionAgreement",
    "HumanAgreement",
    "Pair",
    "PairAgreement",
    "criteria_agreement",
    "human_agreement",
    "judge_agreement",
    "render_agreement",
]

VERDICTS = ("pass", "fail")
#: Keys of :attr:`Agreement.confusion`: human label first, judge verdict second.
CONFUSION_KEYS = tuple(f"human {h}/judge {j}" for h in VERDICTS for j in VERDICTS)
_Z95 = 1.959963984540054
#: No trust verdict below this many labeled trials: the interval reaches its 94.5% coverage from
#: about 30 (bench/kappa_coverage.py); below it, the report says how many more are needed.
MIN_LABELS = 30
#: Agreement.status values.
TRUSTED = "trusted"
NOT_TRUSTED = "not trusted"
UNDECIDED = "undecided"
TOO_FEW_LABELS = "too few labels"
UNDEFINED = "undefined"
_MISSING = (None, "skip")


@dataclass(frozen=True)
class Pair:
    """One trial with both a human label and a judge verdict."""

    trial_id: str
    human: str
    judge: str

    def __post_init__(self) -> None:
        for side in ("human", "judge"):
            if getattr(self, side) not in VERDICTS:
                raise ValueError(
                    f"{side} verdict must be pass or fail, got {getattr(self, side)!r}"
                )

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Agreement:
    """Judge vs human on the trials both judged; pass is the positive class for TPR / TNR."""

    n: int
    observed: float | None = None
    kappa: float | None = None
    se: float | None = None
    ci_analytic: tuple[float, float] | None = None
    ci_bootstrap: tuple[float, float] | None = None
    confusion: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CONFUSION_KEYS, 0))
    tpr: float | None = None
    tnr: float | None = None
    majority_baseline: float | None = None
    band: str | None = None
    trusted: bool = False
    threshold: float = 0.6
    explanation: str | None = None
    disagreements: list[Pair] = field(default_factory=list)
    #: the lower of the two interval lower bounds: what the trust verdict is decided on
    kappa_lower: float | None = None
    majority_class: str | None = None
    human_pass_rate: float | None = None
    judge_pass_rate: float | None = None
    seed: int = 0
    n_boot: int = 2000
    min_n: int = MIN_LABELS
    #: the interval the trust verdict is decided on: ``mix.mix_interval`` (kappa over the judge's
    #: verdict mix) when the mix is known, else ``kappa.kappa_ci_adjusted`` of the labels
    ci_adjusted: tuple[float, float] | None = None
    #: the judge's verdicts over every trial it graded: {"pass": n, "fail": n} (None: not known)
    judge_mix: dict[str, int] | None = None
    #: kappa of the labels re-weighted to the judge's verdict mix (``calibration.mix``), the kappa
    #: the verdict is about; None when there is no mix or a verdict it gives has no label yet
    kappa_mix: float | None = None
    #: the trust interval of the labels as they stand (each label weighed alike)
    ci_labels: tuple[float, float] | None = None
    #: trusted | not trusted (even the upper bound is below the threshold) | undecided |
    #: too few labels | undefined
    status: str = UNDEFINED
    #: further labels after which the verdict is settled with 80% probability (0: settled now;
    #: None: more than the search's cap)
    labels_needed: int | None = None
    #: how ``labels_needed`` was found, and the odds of each verdict after that many labels
    labels_outlook: Outlook | None = None
    #: Wilson 95% intervals of the TPR and TNR
    tpr_ci: tuple[float, float] | None = None
    tnr_ci: tuple[float, float] | None = None
    #: chance agreement: the share two raters with these pass rates would agree on by luck
    chance: float | None = None
    labeler: str = "the human"

    def matrix(self) -> list[list[int]]:
        """The confusion matrix as rows human pass/fail x columns judge pass/fail."""
        return [[self.confusion[f"human {h}/judge {j}"] for j in VERDICTS] for h in VERDICTS]

    @property
    def verdict_line(self) -> str:
        """``judge is trusted: ...`` or ``judge is not trusted: ...`` with the reason."""
        thr = f"{self.threshold:g}"
        if self.status == TOO_FEW_LABELS:
            return (
                f"no verdict yet: {self.n} label{'' if self.n == 1 else 's'}, it needs {self.min_n}"
            )
        if self.kappa_lower is None or self.ci_adjusted is None:
            why = "kappa is undefined" if self.kappa is None else "no kappa interval"
            return f"judge is not trusted: {why}, so it cannot be checked against {thr}"
        cmp = f"kappa lower bound {self.kappa_lower:.3f}"
        if self.trusted:
            return f"judge is trusted: {cmp} >= {thr} (n = {self.n})"
        if self.status == NOT_TRUSTED:
            return f"judge is not trusted: kappa upper bound {self.ci_adjusted[1]:.3f} < {thr}"
        return f"judge is not trusted yet: {cmp} < {thr} <= upper bound {self.ci_adjusted[1]:.3f}"

    @property
    def plain(self) -> str:
        """The verdict in one plain paragraph: what kappa means here, whether the judge can stand
        in for a human at the threshold, and how many more labels would settle it."""
        return plain_sentence(self)

    def to_dict(self) -> dict[str, Any]:
        return json_ready(
            {
                **asdict(self),
                # the one 95% interval that holds its coverage (bench/kappa_coverage.py); the
                # analytic and bootstrap intervals stay under their keys for scripts
                "ci": self.ci_adjusted,
                "not_for_decisions": list(NOT_FOR_DECISIONS),
                "verdict": self.verdict_line,
                "plain": self.plain,
            }
        )


#: ``--json`` keys of kappa intervals that cover as little as 28% at n = 20 (bench/kappa_coverage.py)
NOT_FOR_DECISIONS = ("ci_analytic", "ci_bootstrap")


def judge_agreement(
    pairs: Iterable[Pair],
    seed: int = 0,
    n_boot: int = 2000,
    trust_threshold: float = 0.6,
    min_n: int = MIN_LABELS,
    labeler: str = "the human",
    judge_mix: Mapping[str, int] | None = None,
) -> Agreement:
    """Agreement of the judge with the human over ``pairs``.

    With the judge's verdict mix (``judge_mix``: its pass and fail verdicts over every trial it
    graded) the verdict is decided on kappa over that mix (``calibration.mix``): a queue balanced
    between judge verdicts otherwise measures another kappa than the judge's.

    The trust verdict is decided on :func:`kappa.kappa_ci_adjusted` (the analytic FCE and bootstrap
    intervals are reported too, but cover too little on calibration-sized sets): trusted when its
    lower bound is at least ``trust_threshold``, not trusted when its upper bound is below it,
    undecided in between; with fewer than ``min_n`` pairs there is no verdict at all (a perfect score
    on a handful of trials means little). ``labels_needed`` says how many more labels settle an open
    verdict with 80% probability (:func:`assurance.labels_to_verdict`, seeded by ``seed``).
    """
    ps = list(pairs)
    n = len(ps)
    human = [p.human for p in ps]
    judge = [p.judge for p in ps]
    m, _ = confusion_matrix(human, judge, VERDICTS)
    confusion = {key: m[i // 2][i % 2] for i, key in enumerate(CONFUSION_KEYS)}
    base = Agreement(
        n=n,
        confusion=confusion,
        threshold=trust_threshold,
        disagreements=[p for p in ps if p.human != p.judge],
        seed=seed,
        n_boot=n_boot,
        min_n=min_n,
        labeler=labeler,
        judge_mix=_mix(judge_mix),
    )
    if n < min_n:
        # Fewer labels than a verdict needs: no verdict whatever kappa turns out to be (even when it
        # is undefined: more labels may well define it).
        base.status = TOO_FEW_LABELS
    if n == 0:
        base.explanation = "no trial has both a human label and a judge verdict"
        _outlook(base, m, seed)  # the minimum: no labels say more
        return base
    (tp, fn), (fp, tn) = m
    base.observed = (tp + tn) / n
    base.tpr = _ratio(tp, tp + fn)
    base.tnr = _ratio(tn, tn + fp)
    base.tpr_ci = wilson_interval(tp, tp + fn)
    base.tnr_ci = wilson_interval(tn, tn + fp)
    base.human_pass_rate = (tp + fn) / n
    base.judge_pass_rate = (tp + fp) / n
    base.chance = base.human_pass_rate * base.judge_pass_rate + (1 - base.human_pass_rate) * (
        1 - base.judge_pass_rate
    )
    base.majority_class = "pass" if tp + fn >= fp + tn else "fail"
    base.majority_baseline = max(tp + fn, fp + tn) / n
    base.explanation = _degenerate("human", "judge", human, judge, base.observed)
    _outlook(base, m, seed)
    if n < 2:
        return base
    kappa = kappa_from_confusion(m)
    if kappa is None:
        return base
    base.kappa = kappa
    base.band = landis_koch(kappa)
    base.se = kappa_se_fce(m)
    if base.se is not None:
        half = _Z95 * base.se
        base.ci_analytic = (max(-1.0, kappa - half), min(1.0, kappa + half))
    base.ci_bootstrap = bootstrap_kappa_ci(human, judge, seed=seed, n_boot=n_boot)
    base.ci_labels = kappa_ci_adjusted(m)
    base.kappa_mix = mix_kappa(m, base.judge_mix)
    mixed = mix_interval(m, base.judge_mix)
    base.ci_adjusted = base.ci_labels if mixed is None else mixed
    base.kappa_lower = None if base.ci_adjusted is None else base.ci_adjusted[0]
    base.status = TOO_FEW_LABELS if n < min_n else _status(base.ci_adjusted, trust_threshold)
    base.trusted = base.status == TRUSTED
    return base


def _outlook(a: Agreement, m: Sequence[Sequence[int]], seed: int) -> None:
    """``labels_needed`` and its outlook: further labels that settle the verdict with 80%
    probability over the agreement the labels so far leave plausible."""
    a.labels_outlook = labels_to_verdict(m, a.threshold, a.min_n, mix=a.judge_mix, seed=seed)
    a.labels_needed = a.labels_outlook.labels


def _mix(mix: Mapping[str, int] | None) -> dict[str, int] | None:
    if mix_shares(mix) is None:
        return None
    assert mix is not None
    return {k: int(mix.get(k, 0)) for k in ("pass", "fail")}


def _status(ci: tuple[float, float] | None, threshold: float) -> str:
    if ci is None:
        return UNDEFINED
    if ci[0] >= threshold:
        return TRUSTED
    if ci[1] < threshold:
        return NOT_TRUSTED
    return UNDECIDED


def plain_sentence(a: Agreement) -> str:
    """See :attr:`Agreement.plain`."""
    thr = f"{a.threshold:g}"
    who = a.labeler
    if a.kappa is None:
        need = f" ({a.labels_needed} more needed)" if a.labels_needed else ""
        return (
            f"There is no kappa yet{need}: it needs labeled trials of both outcomes on which the"
            f" judge also gave a verdict, so whether the judge can stand in for {who} is unknown."
        )
    pct = round(a.kappa * 100)
    obs = f"{a.observed:.0%}" if a.observed is not None else "n/a"
    luck = f"{a.chance:.0%}" if a.chance is not None else "n/a"
    if a.kappa <= 0:
        meaning = (
            f"Kappa {a.kappa:.2f}: the judge agrees with {who} on {obs} of trials, where luck"
            f" alone would give {luck}: no better than chance."
        )
    else:
        meaning = (
            f"Kappa {a.kappa:.2f}: the judge agrees with {who} on {obs} of trials, where luck"
            f" alone would give {luck}; that is {pct}% of the way from chance to perfect agreement."
        )
    if mix_differs(a) and a.judge_mix is not None and a.kappa_mix is not None:
        share = a.judge_mix["pass"] / sum(a.judge_mix.values())
        meaning += (
            f" Over the judge's own mix of verdicts (it passes {share:.0%} of the trials it"
            f" graded, {_pct(a.judge_pass_rate)} of the labeled ones) kappa is"
            f" {a.kappa_mix:.2f}: the verdict is about that."
        )
    ci = a.ci_adjusted
    more = a.labels_needed
    chance = f"{round(ASSURANCE * 100)}% probability"
    settle = (
        f" about {more} more label{'' if more == 1 else 's'} would settle it with {chance}"
        if more
        else f" even {a.labels_outlook.max_more if a.labels_outlook else 'many'} more labels would"
        f" not settle it with {chance} (kappa sits close to the threshold)"
    )
    if a.status == TOO_FEW_LABELS:
        stand = f" With {a.n} labels there is no verdict yet (it needs {a.min_n});{settle}."
    elif a.status == TRUSTED and ci is not None:
        stand = (
            f" It can stand in for {who} at the {thr} threshold: even the low end of its 95%"
            f" interval ({ci[0]:.2f}) reaches it."
        )
    elif a.status == NOT_TRUSTED and ci is not None:
        stand = (
            f" It cannot stand in for {who} at the {thr} threshold: even the high end of its 95%"
            f" interval ({ci[1]:.2f}) is below it; more labels will not change that."
        )
    elif a.status == UNDECIDED and ci is not None:
        stand = (
            f" Whether it can stand in for {who} at the {thr} threshold is not settled: its 95%"
            f" interval ({ci[0]:.2f} to {ci[1]:.2f}) contains {thr};{settle}."
        )
    else:
        stand = " Its interval is undefined, so there is no verdict."
    return meaning + stand


@dataclass
class PairAgreement:
    """Agreement of two sources on the items both labeled."""

    first: str
    second: str
    n: int
    observed: float | None = None
    kappa: float | None = None
    explanation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return json_ready(asdict(self))


@dataclass
class HumanAgreement:
    """Human-vs-human agreement: the ceiling a judge is measured against."""

    labelers: list[str]
    pairwise: list[PairAgreement]
    fleiss: float | None = None
    n_fleiss: int = 0  # items every labeler labeled
    alpha: float | None = None
    n_alpha: int = 0  # items at least two labelers labeled
    explanation: str | None = None

    @property
    def n_items_per_pair(self) -> dict[tuple[str, str], int]:
        return {(p.first, p.second): p.n for p in self.pairwise}

    @property
    def ceiling(self) -> float | None:
        """Cohen's kappa for two labelers, Fleiss' kappa for more."""
        if len(self.labelers) == 2 and self.pairwise:
            return self.pairwise[0].kappa
        return self.fleiss

    def to_dict(self) -> dict[str, Any]:
        return json_ready({**asdict(self), "ceiling": self.ceiling})


def human_agreement(labels_by_labeler: Mapping[str, Mapping[str, Hashable]]) -> HumanAgreement:
    """Pairwise Cohen's kappa, and with three or more labelers Fleiss' kappa (items everyone
    labeled) and nominal Krippendorff's alpha (all items, missing allowed). ``None`` and ``"skip"``
    labels count as missing."""
    labels = {
        who: {t: v for t, v in by_trial.items() if v not in _MISSING}
        for who, by_trial in labels_by_labeler.items()
    }
    labelers = sorted(labels)
    pairwise = [_pair(a, b, labels[a], labels[b]) for a, b in combinations(labelers, 2)]
    out = HumanAgreement(labelers=labelers, pairwise=pairwise)
    if len(labelers) < 2:
        out.explanation = f"agreement between humans needs two labelers; found {len(labelers)}"
        return out
    if all(p.n == 0 for p in pairwise):
        out.explanation = "no trial was labeled by two labelers"
        return out
    if len(labelers) < 3:
        out.explanation = pairwise[0].explanation
        return out
    trials = list(dict.fromkeys(t for who in labelers for t in labels[who]))
    everyone = [t for t in trials if all(t in labels[w] for w in labelers)]
    out.n_fleiss = len(everyone)
    if everyone:
        out.fleiss = fleiss_kappa([[labels[w][t] for w in labelers] for t in everyone])
    units = [[labels[w].get(t) for w in labelers] for t in trials]
    out.n_alpha = sum(1 for u in units if sum(v is not None for v in u) >= 2)
    out.alpha = krippendorff_alpha(units)
    notes = []
    if not everyone:
        notes.append(f"Fleiss' kappa needs trials all {len(labelers)} labelers labeled; none")
    elif out.fleiss is None:
        notes.append("Fleiss' kappa is undefined: every label is the same")
    if out.alpha is None:
        notes.append("Krippendorff's alpha is undefined: every paired label is the same")
    out.explanation = "; ".join(notes) or None
    return out


@dataclass
class CriterionAgreement(PairAgreement):
    """Agreement of two sources on one rubric criterion."""

    criterion: str = ""


def criteria_agreement(
    first: Mapping[str, Mapping[str, Hashable]],
    second: Mapping[str, Mapping[str, Hashable]],
    criteria: Sequence[str] | None = None,
    names: tuple[str, str] = ("human", "judge"),
) -> list[CriterionAgreement]:
    """Per rubric criterion, agreement of two sources given as trial_id -> {criterion: answer}.

    Only trials where both answered the criterion (answer not ``None``) count. ``criteria`` fixes the
    order; by default every criterion either side answered, in order of first appearance.
    """
    if criteria is None:
        seen = [c for src in (first, second) for answers in src.values() for c in answers]
        criteria = list(dict.fromkeys(seen))
    rows = []
    for c in criteria:
        a = {t: ans[c] for t, ans in first.items() if ans.get(c) is not None}
        b = {t: ans[c] for t, ans in second.items() if ans.get(c) is not None}
        p = _pair(names[0], names[1], a, b)
        rows.append(CriterionAgreement(**asdict(p), criterion=c))
    return rows


def render_agreement(
    a: Agreement,
    human: HumanAgreement | None = None,
    criteria: Sequence[CriterionAgreement] | None = None,
) -> str:
    """The agreement report as plain text (no markup), for the CLI and the TUI alike."""
    lines = ["Judge vs human agreement", f"  trials with both     {a.n}"]
    if a.explanation:
        lines.append(f"  note: {a.explanation}")
    if a.n:
        lines.append(f"  observed agreement   {_f(a.observed)}")
        band = f"  ({a.band})" if a.band else ""
        lines.append(f"  Cohen's kappa        {_f(a.kappa)}{band}")
        if mix_differs(a) and a.judge_mix is not None:
            total = sum(a.judge_mix.values())
            share = a.judge_mix["pass"] / total
            lines.append(
                f"  kappa, judge's mix   {_f(a.kappa_mix)}  (judge: {share:.0%} pass of {total}"
                f" verdicts, {_pct(a.judge_pass_rate)} of labeled)"
            )
        if a.ci_adjusted is not None:
            lines.append(
                f"    95% CI             {_ci(a.ci_adjusted)}  (small-sample; the verdict uses it)"
            )
        if a.labels_outlook is not None:
            lines.append(f"  labels to verdict    {_outlook_text(a)}")
        lines.append(
            f"  majority baseline    {_f(a.majority_baseline)}  (always {a.majority_class!r})"
        )
        tpr, tnr = _f(a.tpr) + _wilson(a.tpr_ci), _f(a.tnr) + _wilson(a.tnr_ci)
        lines.append(f"  judge TPR            {tpr}  (judge pass | human pass)")
        lines.append(f"  judge TNR            {tnr}  (judge fail | human fail)")
        (tp, fn), (fp, tn) = a.matrix()
        w = max(10, len(str(a.n)))
        lines += [
            "",
            f"  {'':<12}{'judge pass':>{w}}  {'judge fail':>{w}}",
            f"  {'human pass':<12}{tp:>{w}}  {fn:>{w}}",
            f"  {'human fail':<12}{fp:>{w}}  {tn:>{w}}",
        ]
    lines += ["", a.verdict_line, *_wrap(a.plain)]
    if a.n:
        (_, fn), (fp, _) = a.matrix()
        lines.append(
            f"disagreements: {len(a.disagreements)} "
            f"(judge pass, human fail: {fp}; judge fail, human pass: {fn})"
        )
    if human is not None:
        lines += ["", *_render_human(human)]
    if criteria:
        lines += ["", "Agreement per criterion", *(_row(c, c.criterion) for c in criteria)]
    return "\n".join(lines)


def _outlook_text(a: Agreement) -> str:
    """``~148 more (80% assurance; 0% trusted, 81% below 0.6)``."""
    o = a.labels_outlook
    if o is None or a.labels_needed == 0:
        return "none: the verdict is settled"
    chance = f"{o.assurance:.0%} assurance"
    if o.labels is None:
        return f"more than {o.max_more} (kappa sits close to {a.threshold:g})"
    return (
        f"~{o.labels} more ({chance}; {o.trusted:.0%} trusted,"
        f" {o.not_trusted:.0%} below {a.threshold:g})"
    )


def mix_differs(a: Agreement) -> bool:
    """Whether re-weighting to the judge's verdict mix moved kappa (by 0.0005 or more)."""
    return a.kappa is not None and a.kappa_mix is not None and abs(a.kappa_mix - a.kappa) >= 0.0005


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def _wilson(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"  95% CI {_ci(ci)}"


def _wrap(text: str, width: int = 78) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]


def _render_human(h: HumanAgreement) -> list[str]:
    lines = ["Human vs human agreement (the ceiling)"]
    lines += [_row(p, f"{p.first} ~ {p.second}") for p in h.pairwise]
    if len(h.labelers) >= 3:
        lines.append(f"  Fleiss' kappa {_f(h.fleiss)} on {h.n_fleiss} trials all labelers labeled")
        lines.append(f"  Krippendorff's alpha {_f(h.alpha)} on {h.n_alpha} trials")
    if h.explanation:
        lines.append(f"  note: {h.explanation}")
    return lines


def _row(p: PairAgreement, name: str) -> str:
    text = f"  {name:<24} n {p.n:>5}  observed {_f(p.observed)}  kappa {_f(p.kappa)}"
    return f"{text}  ({p.explanation})" if p.explanation else text


def _pair(a_name: str, b_name: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> PairAgreement:
    shared = [t for t in a if t in b]
    av, bv = [a[t] for t in shared], [b[t] for t in shared]
    out = PairAgreement(first=a_name, second=b_name, n=len(shared))
    if not shared:
        out.explanation = f"no trial was labeled by both {a_name} and {b_name}"
        return out
    out.observed = sum(x == y for x, y in zip(av, bv, strict=True)) / len(shared)
    out.explanation = _degenerate(a_name, b_name, av, bv, out.observed)
    if len(shared) >= 2:
        out.kappa = cohen_kappa(av, bv)
    return out


def _degenerate(
    a_name: str, b_name: str, a: Sequence[Any], b: Sequence[Any], observed: float
) -> str | None:
    """Why kappa is missing or means little here, or ``None`` when the input is ordinary."""
    n = len(a)
    obs = f"observed agreement {observed:.2f}"
    if n < 2:
        return f"kappa needs at least 2 trials with both {a_name} and {b_name}; n = {n}, {obs}"
    sa, sb = set(a), set(b)
    if len(sa) == 1 and sa == sb:
        return (
            f"kappa is undefined when {a_name} and {b_name} agree on every trial and every label"
            f" is {next(iter(sa))!r}; {obs}"
        )
    if len(sa) == 1 and len(sb) == 1:
        return (
            f"every {a_name} label is {next(iter(sa))!r} and every {b_name} label is"
            f" {next(iter(sb))!r}: kappa is 0; {obs}"
        )
    for name, s in ((a_name, sa), (b_name, sb)):
        if len(s) == 1:
            return (
                f"every {name} label is {next(iter(s))!r}, so kappa is 0 whatever the other says:"
                f" a constant rater adds nothing beyond the base rate; {obs}"
            )
    return None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _ci(ci: tuple[float, float]) -> str:
    return f"{ci[0]:.3f} .. {ci[1]:.3f}"
