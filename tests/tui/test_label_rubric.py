"""The label screen follows the rubric (a verdict against pass_rule "all" asks once and is stored
as an override), shows each criterion's help and the task with the harness's expected actions, and
labels one trial outside any queue (L on a transcript)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import Static

from reviewer.calibration.sampling import make_queue
from reviewer.cli import cli
from reviewer.labeling.io import export_labels, import_labels
from reviewer.labeling.rubric import load_rubric
from reviewer.store import open_store
from reviewer.store.labels import current_labels
from reviewer.store.queries import trials_by_id_prefix
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import ConfirmModal, LabelScreen
from reviewer.tui.screens.transcript import TranscriptScreen
from tests.conftest import REPO, SAMPLE_RUNS, sample_copy
from tests.tui.conftest import until

SIZE = (120, 40)
TAU = REPO / "tests" / "fixtures" / "tau_bench" / "gpt-4o-airline-5-tasks.json"


@pytest.fixture
def queued_db(tmp_path: Path) -> Path:
    path = sample_copy(tmp_path / "s.db")
    with open_store(path) as db:
        make_queue(db, "q", 4, seed=1, labeler="ana")
    return path


def text_of(app: ReviewerApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_a_verdict_against_the_rubric_asks_once_and_is_stored_as_an_override(
    queued_db: Path,
) -> None:
    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    assert rubric.pass_rule == "all"
    app = ReviewerApp(db_path=queued_db, labeler="ana", rubric=rubric)
    async with app.run_test(size=SIZE) as pilot:
        screen = LabelScreen("q", "ana", rubric)
        app.push_screen(screen)
        await until(pilot, lambda: screen.payload is not None)
        first = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("1", "2", "3", "3", "p")  # criterion 3 answered no, then pass
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        question = str(app.screen.query_one("#confirm-text", Static).render())
        assert "criterion 3 is no: the rubric says fail — keep pass?" in question
        await pilot.press("escape")  # not kept: nothing stored, the same trial stays
        await pilot.pause()
        assert app.screen is screen and screen.payload.trial_id == first  # type: ignore[union-attr]
        assert current_labels(open_store(queued_db), "ana") == {}
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("enter")
        await until(pilot, lambda: screen.state is not None and first in screen.state.done)
        label = current_labels(open_store(queued_db), "ana")[(first, "ana")]
        assert label.verdict == "pass" and label.override
        assert label.criteria == {
            "looked_up": True,
            "verified_identity": True,
            "followed_policy": False,
        }

        # the reverse: every criterion yes, then fail
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id != first)
        second = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("1", "2", "3", "4", "f")
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        question = str(app.screen.query_one("#confirm-text", Static).render())
        assert "every criterion is yes: the rubric says pass — keep fail?" in question
        await pilot.press("enter")
        await until(pilot, lambda: screen.state is not None and second in screen.state.done)
        assert current_labels(open_store(queued_db), "ana")[(second, "ana")].override

        # a verdict the rubric agrees with asks nothing and is no override
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id != second)
        third = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("1", "1", "f")
        await until(pilot, lambda: screen.state is not None and third in screen.state.done)
        assert app.screen is screen
        assert not current_labels(open_store(queued_db), "ana")[(third, "ana")].override


def test_overrides_travel_in_the_labels_file(queued_db: Path, tmp_path: Path) -> None:
    from reviewer.workflows.labels import RubricContradiction, give_label

    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    with open_store(queued_db) as db:
        tid = trials_by_id_prefix(db, "", limit=1)[0][0]
        with pytest.raises(RubricContradiction, match="criterion 1 is no: the rubric says fail"):
            give_label(db, tid, "ana", "pass", criteria={"looked_up": False}, rubric=rubric)
        give_label(
            db, tid, "ana", "pass", criteria={"looked_up": False}, rubric=rubric, override=True
        )
        export_labels(db, tmp_path / "l.jsonl")
    assert '"override": true' in (tmp_path / "l.jsonl").read_text()
    other = sample_copy(tmp_path / "o.db")
    with open_store(other) as db:
        assert import_labels(db, tmp_path / "l.jsonl").added == 1
        assert current_labels(db, "ana")[(tid, "ana")].override


async def test_the_panel_shows_criterion_help_and_the_task_with_expected_actions(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.db"
    result = CliRunner().invoke(cli, ["--db", str(path), "import", str(TAU)])
    assert result.exit_code == 0, result.stderr
    with open_store(path) as db:
        make_queue(db, "q", 3, seed=0, labeler="ana")
    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    app = ReviewerApp(db_path=path, labeler="ana", rubric=rubric)
    async with app.run_test(size=SIZE) as pilot:
        screen = LabelScreen("q", "ana", rubric)
        app.push_screen(screen)
        await until(pilot, lambda: screen.payload is not None)
        await pilot.pause()
        crit = text_of(app, "#label-criteria")
        for c in rubric.criteria:
            assert c.help[:40] in crit
        task = text_of(app, "#label-task")
        trial = screen.payload.trial  # type: ignore[union-attr]
        assert trial.instruction and trial.instruction[:60] in task
        assert "expected actions (harness)" in task and "actions taken" in task
        expected = trial.metadata["task"]["actions"]
        for action in expected:
            assert action["name"] + "(" in task


def test_task_context_marks_expected_actions_taken_and_what_differs() -> None:
    from reviewer.labeling.context import task_context
    from reviewer.models import Message, ToolCall, Trial

    trial = Trial(
        task_id="t",
        messages=[
            Message("user", "I want a refund"),
            Message("assistant", "", tool_calls=[ToolCall("get_order", {"id": "A1"})]),
            Message("assistant", "", tool_calls=[ToolCall("refund", {"id": "A1", "amount": 9})]),
        ],
        metadata={
            "task": {
                "actions": [
                    {"name": "get_order", "kwargs": {"id": "A1"}},
                    {"name": "refund", "kwargs": {"id": "A1", "amount": 5}},
                ]
            }
        },
    )
    ctx = task_context(trial)
    assert ctx.instruction == "I want a refund" and ctx.source == "first user message"
    assert ctx.expected is not None
    assert [(a.name, a.matched, a.differs) for a in ctx.expected] == [
        ("get_order", True, None),
        ("refund", False, ["amount"]),
    ]
    assert [a.matched for a in ctx.actual] == [True, False]
    assert task_context(Trial(task_id="t", messages=[])).expected is None


async def test_L_on_a_transcript_labels_that_trial_with_no_queue(queued_db: Path) -> None:
    with open_store(queued_db) as db:
        tid = trials_by_id_prefix(db, "", limit=1)[0][0]
    app = ReviewerApp(db_path=queued_db, labeler="ana")
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(TranscriptScreen(tid))
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LabelScreen))
        screen = app.screen
        assert isinstance(screen, LabelScreen)
        await until(pilot, lambda: screen.payload is not None)
        assert screen.payload.trial_id == tid  # type: ignore[union-attr]
        assert "hidden until you label" in text_of(app, "#label-judge")
        assert "one trial (no queue)" in text_of(app, "#label-title")
        await pilot.press("f")
        await until(pilot, lambda: screen.mine is not None)
        await pilot.pause()
        label = current_labels(open_store(queued_db), "ana")[(tid, "ana")]
        assert label.verdict == "fail" and label.queue is None
        await until(pilot, lambda: "v reveals" in text_of(app, "#label-judge"))
        await pilot.press("v")
        await until(pilot, lambda: "judge:" in text_of(app, "#label-judge"))
        await pilot.press("u")  # undo: this trial's label only
        await until(pilot, lambda: screen.mine is None)
        assert current_labels(open_store(queued_db), "ana") == {}


def test_cli_labels_give_a_trial_outside_a_queue(queued_db: Path) -> None:
    with open_store(queued_db) as db:
        tid = trials_by_id_prefix(db, "", limit=1)[0][0]
    rubric = str(SAMPLE_RUNS / "rubric.toml")
    run = CliRunner().invoke
    base = ["--db", str(queued_db), "--labeler", "bo", "labels", "give"]
    result = run(cli, [*base, tid[:8], "pass", "--rubric", rubric, "--criterion", "looked_up=no"])
    assert result.exit_code == 1
    assert result.stderr == (
        "reviewer: criterion 1 is no: the rubric says fail; add --override to keep pass\n"
    )
    result = run(cli, [*base, tid[:8], "pass", "--rubric", rubric, "--criterion", "1=no"]
                 + ["--override", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert '"override": true' in result.stdout and '"queue": null' in result.stdout
    label = current_labels(open_store(queued_db), "bo")[(tid, "bo")]
    assert label.criteria == {"looked_up": False} and label.queue is None
    # no --rubric: the app's rubric (the imported folder's, stored last) applies the same
    result = run(cli, [*base, tid, "fail", *[f"--criterion={k}=yes" for k in "1234"]])
    assert result.exit_code == 1 and "every criterion is yes: the rubric says pass" in result.stderr
    result = run(cli, [*base, "abcdef0123", "pass"])
    assert result.exit_code == 1 and "no trial with id 'abcdef0123'" in result.stderr
    result = run(cli, [*base, tid, "pass", "--rubric", rubric, "--criterion", "nope=yes"])
    assert result.exit_code == 1 and "no criterion 'nope' in support-policy@1" in result.stderr


async def test_answers_on_an_unlabeled_trial_are_kept_and_leaving_asks(queued_db: Path) -> None:
    """Issue 32, item 8: rubric answers given on a trial not labeled yet come back after stepping
    away and back; Esc and q ask before leaving them behind."""
    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    key = rubric.criteria[0].key
    assert key
    app = ReviewerApp(db_path=queued_db, labeler="ana", rubric=rubric)
    async with app.run_test(size=SIZE) as pilot:
        screen = LabelScreen("q", "ana", rubric)
        app.push_screen(screen)
        await until(pilot, lambda: screen.payload is not None)
        first = screen.payload
        assert first is not None and screen.unsaved_work() is None
        await pilot.press(key, "c")  # a criterion, then a note
        await until(pilot, lambda: not isinstance(app.screen, LabelScreen))
        await pilot.press(*"why", "ctrl+s")
        await until(pilot, lambda: app.screen is screen)
        lost = screen.unsaved_work()
        assert lost == "1 rubric answer and a note on this trial are not stored until you label it"
        # to the next trial and back: the answers are there again
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: screen.payload is not first and screen.payload is not None)
        assert screen.unsaved_work() is None
        await pilot.press("left_square_bracket")
        await until(
            pilot, lambda: screen.payload is not None and screen.payload.trial_id == first.trial_id
        )
        assert screen.criteria[rubric.criteria[0].id] is True and screen.note == "why"
        assert any("answers on this trial are back" in n.message for n in app._notifications)
        # Esc asks; Esc again stays, with the answers
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        assert "Leave labeling? 1 rubric answer and a note" in str(
            app.screen.query_one("#confirm-text", Static).render()
        )
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        # q asks too; Esc stays
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert app.is_running
        # labeled: nothing to lose, Esc leaves at once
        await pilot.press("f")
        await until(pilot, lambda: screen.mine is not None or screen.payload is not first)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is not screen)
        assert not isinstance(app.screen, ConfirmModal)
