"""Judge against humans: the one path behind `reviewer agreement`, the agreement screen and the
queues' progress. The trust threshold is decided here, once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.calibration.report import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from reviewer.calibration.report import AgreementReport as AgreementReport
from reviewer.calibration.report import Disagreement as Disagreement
from reviewer.store.agreement_data import UnknownScope as UnknownScope

if TYPE_CHECKING:
    from reviewer.config import Config, Settings
    from reviewer.store.db import Store


def configured_threshold(cfg: Config | Settings | None = None) -> tuple[float, str | None]:
    """The trust threshold of the config (``[judge] trust_threshold``, else the default) and None;
    when the config is unusable, the default and the problem in one line naming the file (the CLI
    refuses with it, the app and a queue's progress say it and go on with the default)."""
    from reviewer.calibration.report import trust_threshold
    from reviewer.config import ConfigError, resolve_config

    try:
        cfg = resolve_config(cfg)
    except ConfigError as e:
        return DEFAULT_THRESHOLD, str(e)
    try:
        return trust_threshold(cfg.judge), None
    except ValueError as e:
        return DEFAULT_THRESHOLD, f"{', '.join(map(str, cfg.sources)) or 'config'}: {e}"


def agreement_report(
    db: Store,
    *,
    judge: str | None = None,
    labeler: str | None = None,
    rubric: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    seed: int = 0,
) -> AgreementReport:
    """The agreement of ``judge`` with ``labeler`` on labels under ``rubric`` (each by default the
    one the report picks); UnknownScope (one line) when one of them names nothing stored."""
    from reviewer.calibration.report import build_report
    from reviewer.store.agreement_data import gather_agreement

    data = gather_agreement(db, judge=judge, labeler=labeler, rubric=rubric)
    return build_report(data, threshold=threshold, seed=seed)
