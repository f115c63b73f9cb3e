"""The active rubric: the one rule the app, `reviewer labels give` and the judge decide it by."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reviewer.labeling.rubric import PASS_RULES as PASS_RULES
from reviewer.labeling.rubric import Rubric as Rubric
from reviewer.labeling.rubric import RubricError as RubricError
from reviewer.labeling.rubric import load_rubric as load_rubric
from reviewer.store.labels import stored_rubric_digest as stored_rubric_digest

if TYPE_CHECKING:
    from reviewer.store.db import Store


class RubricProblem(ValueError):
    """The configured rubric does not load, or differs from the one of its name@version that labels
    were given under: one line."""


def active_rubric(
    db: Store, configured: str | Path | None, *, imported: Rubric | None = None
) -> Rubric | None:
    """The configured rubric (a file given or set in reviewer.toml; recorded under its
    name@version), else ``imported`` (the rubric.toml of a folder just imported), else the one
    stored last (labels were given under it), else None. RubricProblem when the configured one
    does not load."""
    from reviewer.store.labels import RubricVersionError, ensure_rubric_version
    from reviewer.store.queries import latest_rubric

    if configured:
        try:
            rubric = load_rubric(Path(configured))
            ensure_rubric_version(db, rubric)
        except (RubricError, RubricVersionError) as e:
            raise RubricProblem(str(e)) from e
        return rubric
    if imported is not None:
        return imported
    return latest_rubric(db)
