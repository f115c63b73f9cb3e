"""Labeling a queue in the app: one key per trial, blind judge, undo, criteria, notes, crash safety."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import Static

from reviewer.calibration.sampling import make_queue
from reviewer.cli import cli
from reviewer.labeling.rubric import load_rubric
from reviewer.store import open_store
from reviewer.store.labels import current_labels
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import ConfirmModal, LabelScreen, NoteModal
from tests.conftest import REPO, SAMPLE_RUNS, sample_copy
from tests.tui.conftest import until

DRIVER = Path(__file__).with_name("label_driver.py")


@pytest.fixture
def queued_db(tmp_path: Path) -> Path:
    path = sample_copy(tmp_path / "s.db")
    db = open_store(path)
    make_queue(db, "q", 12, seed=1, labeler="ana")
    make_queue(db, "q2", 12, seed=2, labeler="bo")
    db.close()
    return path


def text_of(app: ReviewerApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def wait_loaded(app: ReviewerApp, pilot: object, screen: LabelScreen) -> None:
    for _ in range(200):
        await pilot.pause(0.01)  # type: ignore[attr-defined]
        if screen.payload is not None and screen.state is not None:
            return
    raise AssertionError("queue never loaded")


async def test_one_key_per_trial_blind_judge_and_undo(queued_db: Path) -> None:
    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    app = ReviewerApp(db_path=queued_db, labeler="ana", rubric=rubric)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = LabelScreen("q", "ana", rubric)
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        assert "0 / 12" in text_of(app, "#label-title")
        assert "hidden until you label" in text_of(app, "#label-judge")
        first = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("1", "1")  # looked_up: yes, then no
        assert screen.criteria["looked_up"] is False
        await pilot.press("p")  # against pass_rule "all": asks once, Enter keeps it as an override
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("enter")
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id != first)
        assert "1 / 12" in text_of(app, "#label-title")
        await pilot.press("f")
        await until(pilot, lambda: len(screen.state.done) == 2)  # type: ignore[union-attr]
        labels = current_labels(open_store(queued_db), "ana")
        assert labels[(first, "ana")].verdict == "pass"
        assert labels[(first, "ana")].criteria == {"looked_up": False}
        assert labels[(first, "ana")].rubric == "support-policy@1"
        assert labels[(first, "ana")].override
        assert len(labels) == 2
        await pilot.press("u")  # undo the fail: back to that trial, one label left
        await until(pilot, lambda: len(screen.state.done) == 1)  # type: ignore[union-attr]
        assert len(current_labels(open_store(queued_db), "ana")) == 1
        assert screen.mine is None
        await pilot.press("x")
        await until(pilot, lambda: len(screen.state.done) == 2)  # type: ignore[union-attr]
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: screen.mine is not None)
        assert screen.mine is not None and screen.mine.verdict == "skip"
        await pilot.press("v")
        await pilot.pause()
        assert "judge:" in text_of(app, "#label-judge")


async def test_a_not_labeled_toast_is_taken_off_when_a_label_lands(queued_db: Path) -> None:
    """Esc on the rubric's question says "Not labeled"; the next key labeled the trial, and the
    toast stayed beside the next one (found by a new user at 80x24)."""
    from reviewer.tui.screens.label import NOT_LABELED_OVERRIDE

    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    app = ReviewerApp(db_path=queued_db, labeler="ana", rubric=rubric)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = LabelScreen("q", "ana", rubric)
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        first = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("1", "1")  # looked_up: no
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("escape")
        await until(
            pilot, lambda: any(n.message == NOT_LABELED_OVERRIDE for n in app._notifications)
        )
        await pilot.press("f")  # labeled now
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id != first)
        await pilot.pause()
        assert not any(n.message == NOT_LABELED_OVERRIDE for n in app._notifications)


async def test_note_is_kept_with_the_label(queued_db: Path) -> None:
    app = ReviewerApp(db_path=queued_db, labeler="ana")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = LabelScreen("q", "ana")
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        trial = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, NoteModal)
        await pilot.press(
            *"refund went to the wrong card", "enter", *"[b]second line[/b]", "ctrl+s"
        )
        await pilot.pause()
        await pilot.press("f")
        await until(pilot, lambda: len(screen.state.done) == 1)  # type: ignore[union-attr]
        label = current_labels(open_store(queued_db), "ana")[(trial, "ana")]
        assert label.note == "refund went to the wrong card\n[b]second line[/b]"


async def test_resumes_where_it_stopped(queued_db: Path) -> None:
    for expected_done in (0, 2):
        app = ReviewerApp(db_path=queued_db, labeler="ana")
        async with app.run_test(size=(140, 40)) as pilot:
            screen = LabelScreen("q", "ana")
            app.push_screen(screen)
            await wait_loaded(app, pilot, screen)
            assert len(screen.state.done) == expected_done  # type: ignore[union-attr]
            assert screen.payload.trial_id not in screen.state.done  # type: ignore[union-attr]
            for extra in (1, 2):
                await pilot.press("p")
                target = expected_done + extra
                await until(pilot, lambda s=screen, t=target: len(s.state.done) == t)  # type: ignore[misc,union-attr]


def _driver(db: Path, queue: str, labeler: str, count: int) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [sys.executable, str(DRIVER), str(db), queue, labeler, str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(REPO),
    )


def test_sigkill_in_the_middle_loses_no_label(queued_db: Path) -> None:
    proc = _driver(queued_db, "q", "ana", 12)
    seen: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("labeled"):
            seen.append(line.split()[2])
        if len(seen) == 5:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    stored = {tid for tid, who in current_labels(open_store(queued_db), "ana")}
    assert set(seen) <= stored


def test_two_app_processes_label_the_same_database_at_once(queued_db: Path) -> None:
    a = _driver(queued_db, "q", "ana", 12)
    b = _driver(queued_db, "q2", "bo", 12)
    out_a, err_a = a.communicate(timeout=120)
    out_b, err_b = b.communicate(timeout=120)
    assert a.returncode == 0, err_a[-2000:]
    assert b.returncode == 0, err_b[-2000:]
    assert "locked" not in err_a + err_b
    labels = current_labels(open_store(queued_db))
    assert sum(1 for (_, who) in labels if who == "ana") == 12
    assert sum(1 for (_, who) in labels if who == "bo") == 12
    assert out_a.count("labeled") == 12 and out_b.count("labeled") == 12


async def test_the_queue_list_shows_the_progress_made_when_labeling_returns(
    queued_db: Path,
) -> None:
    from textual.widgets import DataTable

    from reviewer.tui.screens.queues import QueuesScreen

    app = ReviewerApp(db_path=queued_db, labeler="ana")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        queues = QueuesScreen()
        await app.push_screen(queues)
        await pilot.pause()
        table = queues.query_one("#queues", DataTable)
        await until(pilot, lambda: table.row_count == 2)
        done = lambda: str(table.get_row(next(k for k in table.rows if k.value == "q"))[2])  # noqa: E731
        assert done().startswith("0 /")
        screen = LabelScreen("q", "ana")
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        await pilot.press("p")
        await until(pilot, lambda: len(screen.state.done) == 1)  # type: ignore[union-attr]
        app.pop_screen()
        await until(pilot, lambda: done().startswith("1 /"))


async def test_a_label_given_in_another_window_is_not_replaced_silently(queued_db: Path) -> None:
    """One labeler in two windows on one queue: the later verdict used to replace the first without
    a word. The screen now sees that the label changed since it read the trial and asks: Esc keeps
    the other window's label (and shows it), Enter replaces it."""
    from reviewer.workflows.labels import give_label

    app = ReviewerApp(db_path=queued_db, labeler="ana")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = LabelScreen("q", "ana")
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        trial = screen.payload.trial_id  # type: ignore[union-attr]
        with open_store(queued_db) as db:  # the other window labels it fail first
            give_label(db, trial, "ana", "fail", queue="q")
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        question = str(app.screen.query_one("#confirm-text", Static).render())
        assert "ana labeled it fail at" in question and "Replace that with pass?" in question
        await pilot.press("escape")
        await until(pilot, lambda: screen.mine is not None)
        assert screen.mine is not None and screen.mine.verdict == "fail"
        assert current_labels(open_store(queued_db), "ana")[(trial, "ana")].verdict == "fail"
        # now this window knows the fail: a pass replaces it without asking
        await pilot.press("p")
        await until(
            pilot,
            lambda: current_labels(open_store(queued_db), "ana")[(trial, "ana")].verdict == "pass",
        )


async def test_replacing_the_other_windows_label_after_asking(queued_db: Path) -> None:
    from reviewer.workflows.labels import give_label

    app = ReviewerApp(db_path=queued_db, labeler="ana")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = LabelScreen("q", "ana")
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        trial = screen.payload.trial_id  # type: ignore[union-attr]
        with open_store(queued_db) as db:
            give_label(db, trial, "ana", "fail", queue="q")
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("enter")
        await until(
            pilot,
            lambda: current_labels(open_store(queued_db), "ana")[(trial, "ana")].verdict == "pass",
        )
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id != trial)


def test_the_label_store_refuses_a_stale_write() -> None:
    """The check is in the write transaction: a write made from an old read changes nothing."""
    import tempfile

    from reviewer.store.labels import LabelConflict, add_label

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "l.db"
        r = CliRunner().invoke(
            cli, ["--db", str(path), "import", str(SAMPLE_RUNS / "support-v1.jsonl")]
        )
        assert r.exit_code == 0
        with open_store(path) as db:
            tid = db.execute("SELECT id FROM trials LIMIT 1").fetchone()[0]
            first = add_label(db, tid, "ana", "pass", expect_at="")
            with pytest.raises(LabelConflict, match="is now pass at"):
                add_label(db, tid, "ana", "fail", expect_at="")
            add_label(db, tid, "ana", "fail", expect_at=first.at)
            assert current_labels(db, "ana")[(tid, "ana")].verdict == "fail"


async def test_undo_reads_the_labels_to_a_verdict_again(queued_db: Path) -> None:
    """After u the line said '28+ labels to a verdict' where reviewer queues said '29+': it was
    worked out after each label, not after an undo (found by a review)."""
    app = ReviewerApp(db_path=queued_db, labeler="ana")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = LabelScreen("q", "ana", None)
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        await until(pilot, lambda: "to a verdict" in text_of(app, "#label-outlook"))
        before = text_of(app, "#label-outlook")
        await pilot.press("p")
        await until(pilot, lambda: text_of(app, "#label-outlook") != before)
        await pilot.press("u")
        await until(pilot, lambda: len(screen.state.done) == 0)  # type: ignore[union-attr]
        await until(pilot, lambda: text_of(app, "#label-outlook") == before)


@pytest.mark.parametrize("key", ["p", "f", "x"])
async def test_undo_brings_back_the_note_and_answers_of_the_label(
    queued_db: Path, key: str
) -> None:
    """Undoing a skip brought the trial back with its note gone (found by a review): undo, of a
    skip as of a pass or a fail, shows the note and the rubric answers as they were given."""
    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    app = ReviewerApp(db_path=queued_db, labeler="ana", rubric=rubric)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = LabelScreen("q", "ana", rubric)
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        trial = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, NoteModal))
        await pilot.press(*"agent skipped the refund", "ctrl+s")
        await until(pilot, lambda: "note: agent skipped" in text_of(app, "#label-note"))
        await pilot.press("2")  # criterion 2: yes
        answers = dict(screen.criteria)
        assert any(v is not None for v in answers.values())
        await pilot.press(key)
        if isinstance(app.screen, ConfirmModal):  # against the rubric's pass rule: keep it
            await pilot.press("enter")
        await until(pilot, lambda: len(screen.state.done) == 1)  # type: ignore[union-attr]
        await until(pilot, lambda: screen.payload.trial_id != trial)  # type: ignore[union-attr]
        await pilot.press("u")
        await until(pilot, lambda: screen.payload.trial_id == trial)  # type: ignore[union-attr]
        await pilot.pause()
        assert screen.mine is None
        assert screen.note == "agent skipped the refund"
        assert screen.criteria == answers
        assert "note: agent skipped the refund" in text_of(app, "#label-note")


async def test_a_folded_message_names_its_key_in_the_narrow_labeling_transcript(
    tmp_path: Path,
) -> None:
    """At 80x24 the labeling screen's transcript is about 36 cells wide: a folded system prompt's
    line read '… 9 more lines, 1,523 chars (press' with the key cut off (found by a new user
    labeling the sample runs in tmux). The line fits and names e."""
    from reviewer.tui.widgets.transcript import TranscriptView
    from tests.tui.test_transcript import make_db, rich_trial

    path = make_db(tmp_path, [rich_trial(trial=i) for i in (1, 2)])
    with open_store(path) as db:
        make_queue(db, "q", 2, seed=1, labeler="ana")
    app = ReviewerApp(db_path=path, labeler="ana")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = LabelScreen("q", "ana", None)
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        view = screen.query_one(TranscriptView)
        await until(pilot, lambda: view.line_count > 0)
        await pilot.pause(0.3)  # the split pane settles its width after the first layout
        rows = [view.render_row(i).text.rstrip() for i in range(view.line_count)]
        notices = [r for r in rows if "more line" in r]
        assert notices, rows[:20]
        for row in notices:
            assert len(row) <= view.size.width
            assert "(e expands)" in row or "(press e to expand)" in row, row
