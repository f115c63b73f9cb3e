"""`reviewer export` as a library call: select, build, redact, and write one task file atomically."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.export.files import FILE_NAMES, ExportError, existing_ids, resolve_out, write_atomic
from reviewer.export.redact import Redactor
from reviewer.export.select import Candidate, Selection, select, skipped_reasons
from reviewer.export.tasks import RuleInfo, TaskContext, build_task, candidate_task_id, to_inspect
from reviewer.models import Rubric
from reviewer.store.db import Store
from reviewer.store.rescore import PartialCredit, partial_credit

FORMATS = tuple(FILE_NAMES)
#: Values that identify rather than describe and never hold a secret (a constant, a content hash, a
#: time): not redacted. The task id is replaced by one made from the masked task id.
_KEEP = frozenset({("format",), ("id",), ("provenance", "trial_id"), ("provenance", "labeled_at")})


class NothingToExport(ExportError):
    """The selection chose no trial."""


@dataclass(frozen=True)
class ClusterCount:
    id: str
    name: str
    tasks: int


@dataclass
class ExportSummary:
    """What an export wrote: the file, how many tasks were added or already there, from which clusters."""

    path: Path
    format: str
    selected: int
    written: int
    already: int
    total: int
    ids: list[str] = field(default_factory=list)
    clusters: list[ClusterCount] = field(default_factory=list)
    unclustered: int = 0
    sources: dict[str, int] = field(default_factory=dict)
    redacted: dict[str, int] | None = None
    redaction: str | None = None  # "3 secrets (2 api keys, 1 email)"
    skipped: str = ""  # why the listed trials that were not exported were left out
    #: harness failures written that got partial credit and fail only by the default rule
    partial: PartialCredit = field(default_factory=PartialCredit)

    def lines(self) -> list[str]:
        """The summary as text lines (plain strings; names come from the data)."""
        n = self.written
        head = f"exported {n} task{_s(n)} to {self.path} ({self.format})"
        if n:
            head += f" from {len(self.clusters)} cluster{_s(len(self.clusters))}"
        if self.already:
            head += f"; {self.already} already in the file, {self.total} in all"
        out = [head]
        out.extend(f"  {c.tasks} from {c.name} [{c.id}]" for c in self.clusters)
        if self.unclustered:
            out.append(f"  {self.unclustered} in no cluster")
        if self.redaction is not None:
            out.append(f"redacted {self.redaction}")
        if self.skipped:
            out.append(self.skipped)
        if self.partial.n:
            out.append(partial_credit_warning(self.partial, "of these harness failures"))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "file": str(self.path),
            "format": self.format,
            "selected": self.selected,
            "written": self.written,
            "already": self.already,
            "total": self.total,
            "ids": self.ids,
            "clusters": [{"id": c.id, "name": c.name, "tasks": c.tasks} for c in self.clusters],
            "unclustered": self.unclustered,
            "sources": self.sources,
            "redacted": self.redacted,
            "skipped": self.skipped,
            "partial_credit": self.partial.n,
        }


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def partial_credit_warning(p: PartialCredit, what: str) -> str:
    """ "warning: 61 of these harness failures got partial credit …": graded "failures" said, with
    the command that judges their run again."""
    run = p.runs[0] if len(p.runs) == 1 else "RUN"
    return (
        f"warning: {p.n} {what} got partial credit (rewards {p.rewards()}) and fail only because "
        f"pass means reward ≥ 1 − 1e-6; if such rewards pass for you: reviewer rescore {run} "
        "--pass-threshold X"
    )


def export_tasks(
    db: Store,
    selection: Selection,
    out: str | Path | None = None,
    fmt: str = "native",
    *,
    force: bool = False,
    append: bool = False,
    redact: bool = False,
) -> ExportSummary:
    """Export the selected failures as tasks to ``out`` (see ``resolve_out``).

    Raises ExportError (NothingToExport among them) or SelectionError with a one-line message."""
    if fmt not in FILE_NAMES:
        raise ExportError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    if force and append:
        raise ExportError("--force replaces the file and --append adds to it; give one of them")
    path = resolve_out(out, fmt)
    candidates = select(db, selection)
    skipped = skipped_reasons(db, selection, candidates)
    if not candidates:
        raise NothingToExport(nothing_message(selection, skipped))
    exists = path.exists()
    if exists and not (force or append):
        raise ExportError(f"{path} exists; --append adds the new tasks to it, --force replaces it")
    old = existing_ids(path, fmt) if append and exists else []
    known = set(old)
    redactor = Redactor() if redact else None
    out_id = _task_ids(redactor)
    new = [c for c in candidates if out_id(c) not in known]
    if new or not exists or not append:
        lines = _lines(db, new, fmt, redactor, _rule_infos(db))
        write_atomic(path, lines, keep_existing=append and exists)
    summary = _summary(path, fmt, candidates, new, old, redactor)
    summary.skipped = skipped
    summary.partial = partial_credit(db, [c.key.trial_id for c in new if c.source == "harness"])
    return summary


def _task_ids(redactor: Redactor | None) -> Callable[[Candidate], str]:
    """The id a candidate's task has in the file: with redaction, made from the masked task id (so
    ``--append --redact`` finds the tasks an earlier redacted export wrote)."""
    if redactor is None:
        return candidate_task_id
    quiet = Redactor()  # ids are counted where the record is redacted, not here
    return lambda c: candidate_task_id(c, quiet.text)


def nothing_message(sel: Selection, skipped: str = "") -> str:
    """Why the selection is empty (with why the listed trials were skipped), and the options that
    widen it."""
    what = "no trial is labeled fail by " + (repr(sel.labeler) if sel.labeler else "a human")
    if sel.include_judge:
        what += " or failed by a judge without a human saying pass"
    if sel.include_harness:
        what += " or failed by the harness without a human saying pass"
    where = []
    if sel.runs:
        where.append("in run " + ", ".join(sel.runs))
    if sel.cluster:
        where.append(f"in cluster {sel.cluster}")
    if sel.trial_ids is not None:
        where.append("among the chosen trials")
    hint = "" if sel.include_judge else "; --judge-fails adds judge fails no human contradicted"
    if not sel.include_harness:
        hint += "; --harness-fails adds the harness's failures"
    why = f" ({skipped})" if skipped else ""
    return f"nothing to export: {' '.join([what, *where])}{why}{hint}"


def _rule_infos(db: Store) -> dict[str, RuleInfo]:
    from reviewer.metrics.active_rules import active_rules
    from reviewer.metrics.rules import RuleError

    try:
        active = active_rules(db)
    except RuleError:
        return {}
    if active is None:
        return {}
    return {
        r.id: RuleInfo(r.description or None, json.loads(json.dumps(r.to_dict(), default=str)))
        for r in active.rules
    }


def _lines(
    db: Store,
    candidates: Sequence[Candidate],
    fmt: str,
    redactor: Redactor | None,
    rules: dict[str, RuleInfo],
) -> Iterator[str]:
    """One JSON line per task, built as it is written (so a failure midway writes nothing)."""
    from reviewer.store.export_select import rubric_by_ref, violation_rows
    from reviewer.store.monitor import is_production
    from reviewer.store.trials import load_trial

    rubrics: dict[str, Rubric | None] = {}
    for c in candidates:
        trial = load_trial(db, c.key.trial_id)
        if trial is None:
            raise ExportError(f"trial {c.key.trial_id} left the database during the export")
        ref = c.label.rubric if c.label else None
        if ref is not None and ref not in rubrics:
            rubrics[ref] = rubric_by_ref(db, ref)
        ctx = TaskContext(
            violation_rows(db, c.key.trial_id),
            rubrics.get(ref) if ref else None,
            rules,
            "production" if is_production(db, c.key.trial_id) else None,
        )
        task = build_task(c, trial, ctx)
        if redactor is not None:
            with redactor.one_record():
                task = redactor.value(task, _KEEP)
                task["id"] = candidate_task_id(c, redactor.text)
        record = to_inspect(task) if fmt == "inspect" else task
        yield json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _summary(
    path: Path,
    fmt: str,
    candidates: Sequence[Candidate],
    new: Sequence[Candidate],
    old: Sequence[str],
    redactor: Redactor | None,
) -> ExportSummary:
    shown = (lambda s: s) if redactor is None else Redactor().text  # names come from the data
    counts: Counter[tuple[str, str]] = Counter()
    for c in new:
        if c.cluster is not None:
            counts[(c.cluster.cluster_id, shown(c.cluster.cluster_name))] += 1
    clusters = [
        ClusterCount(cid, name, n)
        for (cid, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return ExportSummary(
        path=path,
        format=fmt,
        selected=len(candidates),
        written=len(new),
        already=len(candidates) - len(new),
        total=len(old) + len(new),
        ids=[_task_ids(redactor)(c) for c in new],
        clusters=clusters,
        unclustered=sum(1 for c in new if c.cluster is None),
        sources=dict(sorted(Counter(c.source for c in new).items())),
        redacted=None if redactor is None else dict(sorted(redactor.counts.items())),
        redaction=None if redactor is None else redactor.summary(),
    )
