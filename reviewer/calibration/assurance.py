"""How many more labels settle the trust verdict, with 80% assurance.

"If agreement stays as it is" (the table scaled up) settled the verdict only 41-74% of the time:
the truth is not the table seen on a few dozen labels. Here the plausible truths are a Dirichlet
posterior of the four cell shares (the counts plus half a count each, Jeffreys' prior), the next
labels are drawn from each, and the answer is the smallest number of further labels after which
the trust interval settles the verdict (trusted or not trusted) in at least 80% of the draws.
``bench/labels_needed.py`` checks it against labels drawn from a known truth. Vectorised (numpy,
one seeded generator) so the app can recompute it after every label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from reviewer.calibration.kappa import kappa_ci_adjusted_many as trust_intervals
from reviewer.calibration.mix import mix_intervals, mix_shares

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "ASSURANCE",
    "Outlook",
    "labels_to_verdict",
    "settled_share",
    "trust_intervals",
]

#: The probability that the verdict is settled after the number of labels the report gives.
ASSURANCE = 0.8
#: Plausible truths drawn from the posterior (the figure moves by about 1% of itself between seeds).
DRAWS = 2000
#: Beyond this many further labels the report says "more than" instead of a number.
MAX_MORE = 20_000


@dataclass(frozen=True)
class Outlook:
    """The labels the verdict needs and what the posterior expects of them."""

    #: further labels after which the verdict is settled with ``assurance``; 0 when it is settled
    #: now; None when more than ``max_more`` would be needed
    labels: int | None
    #: the share of plausible truths whose verdict is settled after ``labels`` more (at ``max_more``
    #: when ``labels`` is None), and how: trusted or not trusted
    settled: float
    trusted: float
    not_trusted: float
    assurance: float = ASSURANCE
    draws: int = DRAWS
    seed: int = 0
    max_more: int = MAX_MORE
    #: no label yet: ``labels`` is the minimum a verdict needs, and nothing more can be said
    at_least: bool = False
    #: fewer labels than a verdict's minimum so far: how many more reach it. The estimate in
    #: ``labels`` rests then on a handful of labels and moves by hundreds from one to the next, so
    #: the phrase says this floor ("27+") until the minimum is reached
    floor: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def phrase(self) -> str:
        """``~120 labels to a verdict`` (the app's status lines), ``verdict settled``, ``>20000 ...``,
        ``30+ labels to a verdict`` before the first label, ``27+`` while short of the minimum."""
        if self.labels == 0:
            return "verdict settled"
        if self.labels is None:
            return f">{self.max_more} labels to a verdict"
        if self.at_least:
            return f"{self.labels}+ labels to a verdict"
        if self.floor:
            return f"{self.floor}+ labels to a verdict"
        return f"~{self.labels} label{'' if self.labels == 1 else 's'} to a verdict"


def settled_share(
    confusion: Sequence[Sequence[int]],
    threshold: float,
    more: int,
    min_n: int,
    *,
    mix: Mapping[str, int] | None = None,
    draws: int = DRAWS,
    seed: int = 0,
) -> tuple[float, float, float]:
    """(settled, trusted, not trusted): shares of posterior draws whose verdict is settled after
    ``more`` further labels (none when fewer than ``min_n`` labels in all); the draws
    :func:`labels_to_verdict` makes for that number."""
    import numpy as np

    truths = _posterior(confusion, draws, np.random.default_rng(seed))
    rng = np.random.default_rng([seed, more])
    return _verdicts(confusion, truths, threshold, more, min_n, rng, _usable(mix))


def _posterior(confusion: Sequence[Sequence[int]], draws: int, rng: Any) -> np.ndarray:
    import numpy as np

    counts = np.array([x for row in confusion for x in row], dtype=float)
    return np.asarray(rng.dirichlet(counts + 0.5, size=draws))


def _verdicts(
    confusion: Sequence[Sequence[int]],
    truths: np.ndarray,
    threshold: float,
    more: int,
    min_n: int,
    rng: Any,
    mix: Mapping[str, int] | None = None,
) -> tuple[float, float, float]:
    import numpy as np

    now = np.array([x for row in confusion for x in row], dtype=np.int64)
    if now.sum() + more < max(min_n, 2):
        return 0.0, 0.0, 0.0
    future = rng.multinomial(more, truths) if more else np.zeros_like(truths, dtype=np.int64)
    tables = now + future
    low, high = trust_intervals(tables)
    if mix is not None:
        # the verdict is decided on kappa over the judge's verdict mix where that is defined
        mixed_low, mixed_high = mix_intervals(tables, mix)
        use = ~np.isnan(mixed_low)
        low, high = np.where(use, mixed_low, low), np.where(use, mixed_high, high)
    trusted = float(np.mean(low >= threshold))
    not_trusted = float(np.mean(high < threshold))
    return trusted + not_trusted, trusted, not_trusted


def _usable(mix: Mapping[str, int] | None) -> Mapping[str, int] | None:
    return None if mix_shares(mix) is None else mix


def labels_to_verdict(
    confusion: Sequence[Sequence[int]],
    threshold: float,
    min_n: int,
    *,
    mix: Mapping[str, int] | None = None,
    assurance: float = ASSURANCE,
    draws: int = DRAWS,
    seed: int = 0,
    max_more: int = MAX_MORE,
) -> Outlook:
    """The fewest further labels that settle the verdict with probability ``assurance``.

    ``confusion`` is [[human pass & judge pass, human pass & judge fail], [human fail & judge pass,
    human fail & judge fail]]; with the judge's verdict ``mix`` the verdict is decided on kappa over
    that mix, as the report decides it. The next labels keep the labels' own mix of verdicts. The
    search doubles then halves (about 30 evaluations of ``draws`` tables each); every evaluation
    uses the same posterior draws and a generator seeded alike, so the same table and seed give the
    same answer.
    """
    import numpy as np

    if not 0 < assurance < 1:
        raise ValueError(f"assurance must be in (0, 1), got {assurance}")
    if sum(sum(row) for row in confusion) == 0:
        # nothing to draw plausible truths from (the prior alone would speak): the minimum
        return Outlook(max(min_n, 2), 0.0, 0.0, 0.0, assurance, draws, seed, max_more, True)
    base = np.random.default_rng(seed)
    truths = _posterior(confusion, draws, base)
    usable = _usable(mix)
    n = sum(sum(row) for row in confusion)
    cache: dict[int, tuple[float, float, float]] = {}

    def odds(more: int) -> tuple[float, float, float]:
        if more not in cache:
            rng = np.random.default_rng([seed, more])
            cache[more] = _verdicts(confusion, truths, threshold, more, min_n, rng, usable)
        return cache[more]

    def done(more: int) -> bool:
        return odds(more)[0] >= assurance

    def outlook(more: int | None) -> Outlook:
        s, t, nt = odds(max_more if more is None else more)
        floor = max(0, min_n - n) if more != 0 else 0
        return Outlook(more, s, t, nt, assurance, draws, seed, max_more, floor=floor)

    low = max(0, min_n - n)
    if done(low):
        return outlook(low)
    high = max(low, 1)
    while not done(high):
        if high >= max_more:
            return outlook(None)
        low, high = high, min(high * 2, max_more)
    while high - low > 1:  # done(high), not done(low)
        mid = (low + high) // 2
        low, high = (low, mid) if done(mid) else (mid, high)
    return outlook(high)
