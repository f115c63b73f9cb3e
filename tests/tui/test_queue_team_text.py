"""The app's queue list says who labeled a queue only when someone besides its labeler did, as
`reviewer queues` and docs/app.md say: "labeled by root 3" showed for root's own queue (found by
a new-user review)."""

from __future__ import annotations

from reviewer.tui.screens.queues import team_text
from reviewer.workflows.queues import TeamProgress


def test_a_queue_only_its_labeler_labeled_says_nothing_more() -> None:
    assert team_text(TeamProgress({"root": 3}), "root") == ""
    assert team_text(TeamProgress({}), "root") == ""


def test_another_labeler_or_a_shared_queue_is_said() -> None:
    assert team_text(TeamProgress({"root": 3, "ana": 1}), "root") == "labeled by root 3, ana 1"
    shared = TeamProgress({"root": 3}, shared=True, complete=3, total=10)
    assert team_text(shared, "root") == "team 3 / 10 labeled · labeled by root 3"
