"""Labeling jobs: give a label, undo the last one, share labels as JSONL.

The one path for the app's label writer thread and `reviewer labels export|import`; which label
stands afterwards is the store's ``standing_labels`` view, the same for every reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from reviewer.labeling.io import ImportResult, export_labels, import_labels
from reviewer.models import Label
from reviewer.store.db import Store
from reviewer.store.labels import add_label, undo_last


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
) -> Label:
    """Append one label and commit it at once. ValueError for a bad verdict or an unknown trial."""
    return add_label(
        db,
        trial_id,
        labeler,
        verdict,
        criteria=criteria,
        note=note,
        rubric_ref=rubric_ref,
        queue=queue,
    )


def undo_label(db: Store, labeler: str, queue: str | None = None) -> Label | None:
    """Retract the labeler's latest standing label (in ``queue`` when given); the retraction, or None."""
    return undo_last(db, labeler, queue)


def export_label_file(
    db: Store, dest: str | Path | IO[str], labeler: str | None = None, *, force: bool = False
) -> int:
    """Write every label and retraction, oldest first, as JSONL; how many were written. A file is
    written atomically; an existing one is replaced only with ``force`` (else LabelFileError)."""
    return export_labels(db, dest, labeler, force=force)


def import_label_file(db: Store, source: str | Path | IO[bytes]) -> ImportResult:
    """Merge labels and retractions from JSONL; the same rows in any order give the same labels."""
    return import_labels(db, source)
