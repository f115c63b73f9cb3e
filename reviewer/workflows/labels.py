"""Labeling jobs: give a label, undo the last one, share labels as JSONL.

The one path for the app's label writer thread and `reviewer labels export|import`; which label
stands afterwards is the store's ``standing_labels`` view, the same for every reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO

# re-exported for the faces (they import workflows only)
from reviewer.labeling.context import TaskContext as TaskContext
from reviewer.labeling.context import task_context as task_context
from reviewer.labeling.io import ImportResult, export_labels, import_labels
from reviewer.labeling.io import LabelFileError as LabelFileError
from reviewer.labeling.rubric import contradiction as contradiction
from reviewer.labeling.tags import MAX_TAG as MAX_TAG
from reviewer.labeling.tags import category_keys as category_keys
from reviewer.labeling.tags import check_tag, resolve_category
from reviewer.models import Label, Rubric
from reviewer.store.db import Store
from reviewer.store.labels import LabelConflict, add_label, undo_last
from reviewer.store.labels import labeled_trial_ids as labeled_trial_ids
from reviewer.store.labels import standing_by_labeler as standing_by_labeler
from reviewer.store.queues import PlaceTaken as PlaceTaken
from reviewer.store.queues import label_guard

__all__ = [
    "LabelConflict",
    "RubricContradiction",
    "export_label_file",
    "give_label",
    "import_label_file",
    "parse_answers",
    "resolve_trial",
    "undo_label",
]


class RubricContradiction(ValueError):
    """A verdict against the rubric's pass rule, given without ``override``; ``why`` says how."""

    def __init__(self, why: str, verdict: str) -> None:
        super().__init__(f"{why}; give it as an override to keep {verdict}")
        self.why = why


def give_label(
    db: Store,
    trial_id: str,
    labeler: str,
    verdict: str,
    *,
    criteria: dict[str, bool | None] | None = None,
    note: str = "",
    rubric_ref: str | None = None,
    queue: str | None = None,
    rubric: Rubric | None = None,
    override: bool = False,
    expect_at: str | None = None,
    tag: str | None = None,
) -> Label:
    """Append one label and commit it at once. ValueError for a bad verdict or an unknown trial.

    With ``rubric``, a verdict that goes against its pass rule (a pass with a criterion answered no
    under pass_rule "all", or a fail with every answer yes) raises RubricContradiction unless
    ``override``; with it the label is stored as an override. ``expect_at``: the time of the
    labeler's standing label as the caller read it ("" for none); LabelConflict when it changed
    meanwhile (another window labeled the trial), and nothing is written. ``tag``: a fail's
    failure category (a rubric category, named in any case, or free text); TagError (a ValueError)
    for a tag on another verdict or one too long."""
    tag = check_tag(verdict, tag)
    if tag is not None and rubric is not None:
        tag = resolve_category(rubric.categories, tag)
    why = contradiction(rubric, criteria or {}, verdict)
    if why is not None and not override:
        raise RubricContradiction(why, verdict)
    return add_label(
        db,
        trial_id,
        labeler,
        verdict,
        criteria=criteria,
        note=note,
        rubric_ref=rubric_ref or (rubric.ref if rubric is not None else None),
        queue=queue,
        override=why is not None,
        expect_at=expect_at,
        tag=tag,
        guard=label_guard(db, queue, trial_id, labeler, verdict),
    )


def undo_label(
    db: Store, labeler: str, queue: str | None = None, trial_id: str | None = None
) -> Label | None:
    """Retract the labeler's latest standing label (in ``queue``, of ``trial_id`` when given); the
    retraction, or None."""
    return undo_last(db, labeler, queue, trial_id)


def resolve_trial(db: Store, ref: str) -> str:
    """The stored id of TRIAL: the id itself, or a unique prefix of 6 characters or more."""
    from reviewer.store.queries import trials_by_id_prefix

    ref = ref.strip().lower()
    hits = trials_by_id_prefix(db, ref, limit=2) if len(ref) >= 6 else []
    exact = [h for h in hits if h[0] == ref]
    if exact:
        return exact[0][0]
    if len(hits) == 1:
        return hits[0][0]
    if hits:
        raise ValueError(f"trial {ref!r} is ambiguous: give more of its id")
    raise ValueError(f"no trial with id {ref!r} (give the id or its first 6+ characters)")


def parse_answers(rubric: Rubric | None, answers: Sequence[str]) -> dict[str, bool | None]:
    """``ID=yes|no`` answers (``looked_up=no``; a criterion's key stands for its id too)."""
    out: dict[str, bool | None] = {}
    values = {"yes": True, "y": True, "true": True, "no": False, "n": False, "false": False}
    for answer in answers:
        cid, sep, value = answer.partition("=")
        cid, value = cid.strip(), value.strip().lower()
        if not sep or value not in values:
            raise ValueError(f"criterion answer {answer!r}: write ID=yes or ID=no")
        if rubric is not None:
            found = next((c for c in rubric.criteria if cid in (c.id, c.key)), None)
            if found is None:
                known = ", ".join(c.id for c in rubric.criteria)
                raise ValueError(f"no criterion {cid!r} in {rubric.ref}; criteria: {known}")
            cid = found.id
        out[cid] = values[value]
    return out


def export_label_file(
    db: Store, dest: str | Path | IO[str], labeler: str | None = None, *, force: bool = False
) -> int:
    """Write every label and retraction, oldest first, as JSONL; how many were written. A file is
    written atomically; an existing one is replaced only with ``force`` (else LabelFileError)."""
    return export_labels(db, dest, labeler, force=force)


def import_label_file(db: Store, source: str | Path | IO[bytes]) -> ImportResult:
    """Merge labels and retractions from JSONL; the same rows in any order give the same labels."""
    return import_labels(db, source)
