"""One trial: its summary, the transcript viewer and the judge line; ] / [ step through the list it came from,
/ finds in the conversation."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.widgets import Static
from textual.worker import get_current_worker

from reviewer.text import money_text, seconds_text
from reviewer.tui.export_action import ExportMixin, ExportScope
from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.transcript import TranscriptView
from reviewer.tui.widgets.transcript_render import VERDICT_STYLES, Block, VerdictLike
from reviewer.tui.widgets.transcript_search import FindLine, SearchChanged

if TYPE_CHECKING:
    from reviewer.models import Trial
    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.nav import TrialSequence
    from reviewer.workflows.store_access import Store
    from reviewer.workflows.trials import TrialHeader, Violation


@dataclass
class TrialPayload:
    """Everything the screen shows of one trial, read and prepared in a worker."""

    trial_id: str
    header: TrialHeader
    trial: Trial
    violations: list[Violation]
    verdicts: list[VerdictLike]
    position: tuple[int, int] | None
    blocks: list[Block]


class TrialLoaded(Message):
    def __init__(self, payload: TrialPayload) -> None:
        super().__init__()
        self.payload = payload


class TranscriptNotice(Message):
    def __init__(self, text: str, severity: SeverityLevel = "information") -> None:
        super().__init__()
        self.text = text
        self.severity = severity


class RecordReady(Message):
    def __init__(self, path: Path, editor: bool) -> None:
        super().__init__()
        self.path = path
        self.editor = editor


def load_payload(
    db: Store, trial_id: str, sequence: TrialSequence | None, *, blind: bool = False
) -> TrialPayload | None:
    """Read one trial with its violations and verdicts and build its block index (worker thread).

    ``blind`` leaves the verdicts out of the transcript blocks (labeling before the judge is seen)."""
    from reviewer.tui.widgets.transcript_render import build_blocks
    from reviewer.workflows.trials import load_trial, trial_header, trial_violations, verdicts_for

    header = trial_header(db, trial_id)
    trial = load_trial(db, trial_id)
    if header is None or trial is None:
        return None
    violations = trial_violations(db, trial_id)
    verdicts: list[VerdictLike] = list(verdicts_for(db, trial_id))
    if not verdicts and trial.judge is not None:
        verdicts = [trial.judge]
    position = sequence.position(db, trial_id) if sequence is not None else None
    blocks = build_blocks(trial, violations, [] if blind else verdicts)
    return TrialPayload(trial_id, header, trial, violations, verdicts, position, blocks)


def summary_text(p: TrialPayload) -> Text:
    """Outcome, reward, steps, cost, latency, termination and error of a trial (the header's lines)."""
    h = p.header
    out = Text()
    from reviewer.models import stored_outcome

    badge, style = _BADGES[stored_outcome(h.outcome, h.success)]
    out.append(badge, style)
    if h.reward is not None:
        out.append(f"  reward {h.reward:.2f}")
    out.append(f"  steps {h.steps}  cost {money_text(h.cost_usd)}")
    out.append("  latency " + ("-" if h.latency_s is None else seconds_text(h.latency_s)))
    out.append(f"  tool errors {h.tool_errors}", "red" if h.tool_errors else "")
    if p.violations:
        out.append(
            f"  ⚑ {len(p.violations)} rule violation{'s' * (len(p.violations) != 1)}",
            "bold dark_orange",
        )
    if h.termination:
        out.append("  ended: ")
        out.append_text(safe_text(h.termination, single_line=True, limit=80))
    from reviewer.workflows.trials import expectation_lines

    # what the source expected and how its grader scored come first: short lines that the long
    # texts after them (a reason, an error, a grader's explanation) can never push out of view
    explanations = _inspect_scores(out, p.trial.metadata)
    for label, text in expectation_lines(p.trial):
        out.append(f"\n{label}: ", "bold")
        out.append_text(safe_text(text, single_line=True, limit=300))
    if h.reason:
        out.append("\nreason: ", "bold")
        out.append_text(safe_text(h.reason, single_line=True, limit=300))
    if h.error_type or h.error_message:
        out.append("\nerror: ", "bold red")
        err = ": ".join(x for x in (h.error_type, h.error_message) if x)
        out.append_text(safe_text(err, "red", single_line=True, limit=300))
    for name, text in explanations:
        out.append("\nexplanation ", "bold")
        out.append_text(safe_text(name, "bold", single_line=True, limit=40))
        out.append(": ", "bold")
        out.append_text(safe_text(text, single_line=True, limit=200))
    return out


_BADGES = {
    "pass": (" PASS ", "bold white on green"),
    "fail": (" FAIL ", "bold white on red"),
    "infra": (" INFRASTRUCTURE ERROR ", "bold black on yellow"),  # the harness, not the agent
    "unscored": (" UNSCORED ", "bold white on grey37"),
}


def _inspect_scores(out: Text, metadata: dict[str, Any]) -> list[tuple[str, str]]:
    """An Inspect sample's target and each score's value and answer, one short line each, as its log
    has them; returns each score's explanation (name, text) for the header to put last."""
    explanations: list[tuple[str, str]] = []
    target = metadata.get("target")
    if target not in (None, "", []):
        out.append("\ntarget: ", "bold")
        shown = target if isinstance(target, str) else json.dumps(target, ensure_ascii=False)
        out.append_text(safe_text(shown, single_line=True, limit=200))
    scores = metadata.get("scores")
    if not isinstance(scores, dict):
        return explanations
    for name, score in scores.items():
        if not isinstance(score, dict):
            continue
        out.append("\nscore ", "bold")
        out.append_text(safe_text(str(name), "bold", single_line=True, limit=40))
        for key in ("value", "answer"):
            if score.get(key) is None:
                continue
            value = score[key]
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            out.append(f"  {key}: ", "dim")
            out.append_text(safe_text(text, single_line=True, limit=60))
        why = score.get("explanation")
        if why is not None:
            text = why if isinstance(why, str) else json.dumps(why, ensure_ascii=False)
            explanations.append((str(name), text))
    return explanations


def title_text(p: TrialPayload, width: int = 160) -> Text:
    """Run › task › trial N and the position in the list, in ``width`` cells: long run and task
    names are cut in the middle so the trial number and the position always show."""
    from reviewer.text import elide_middle, visible

    h = p.header
    tail = f" › trial {h.trial}"
    where = f"   {p.position[0]} / {p.position[1]}" if p.position is not None else ""
    run, task = visible(h.run, single_line=True), visible(h.task_id, single_line=True)
    room = max(8, width - len(tail) - len(where) - len(" › ") - 2)
    if len(run) + len(task) > room:
        run_room = min(len(run), max(4, room // 3))
        run = elide_middle(run, run_room)
        task = elide_middle(task, max(4, room - len(run)))
    out = safe_text(f"{run} › {task}{tail}", "bold", single_line=True)
    if where:
        out.append(where, "dim")
    return out


def judge_text(verdicts: list[VerdictLike]) -> Text:
    if not verdicts:
        return Text("judge: no verdict", "dim")
    v = verdicts[0]
    out = Text("judge: ", "bold")
    out.append_text(
        safe_text(
            v.verdict.upper(),
            VERDICT_STYLES.get(v.verdict, "bold yellow"),
            single_line=True,
            limit=20,
        )
    )
    if v.judge:
        out.append("  ")
        out.append_text(safe_text(v.judge, "dim", single_line=True, limit=60))
    if v.rationale:
        out.append(" — ")
        out.append_text(safe_text(v.rationale, single_line=True, limit=400))
    if len(verdicts) > 1:
        out.append(f"  (+{len(verdicts) - 1} more below)", "dim")
    return out


class TranscriptScreen(ExportMixin, ReviewerScreen):
    """A trial's transcript; opened from a list, ``]`` / ``[`` step through that list."""

    BINDINGS = [
        Binding("right_square_bracket", "step(1)", "Next trial", id="transcript.next"),
        Binding("left_square_bracket", "step(-1)", "Prev trial", show=False, id="transcript.prev"),
        Binding("P", "open_record(False)", "Pager", show=False, id="transcript.pager"),
        Binding("O", "open_record(True)", "Editor", show=False, id="transcript.editor"),
        Binding("R", "reload", "Reload", show=False, id="transcript.reload"),
        Binding("T", "export_tasks", "Export task", show=False, id="transcript.export"),
        Binding("L", "label_trial", "Label", id="transcript.label", show=False),
        Binding("escape", "app.pop_screen", "Back", id="transcript.back"),
    ]

    DEFAULT_CSS = """
    TranscriptScreen #transcript-summary { height: auto; max-height: 9; padding: 0 1; }
    TranscriptScreen #transcript-judge { height: 1; padding: 0 1; background: $boost; }
    """

    def __init__(self, trial_id: str, sequence: TrialSequence | None = None) -> None:
        super().__init__()
        self.trial_id = trial_id
        self.sequence = sequence
        self.payload: TrialPayload | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            safe_text(self.trial_id, single_line=True), id="transcript-title", classes="title"
        )
        yield Static("loading…", id="transcript-summary")
        yield TranscriptView(id="transcript")
        yield Static("", id="transcript-judge")
        yield FindLine(id="transcript-find")
        yield KeyFooter()

    @property
    def view(self) -> TranscriptView:
        return self.query_one("#transcript", TranscriptView)

    def _app(self) -> ReviewerApp:
        return cast("ReviewerApp", self.app)

    def on_mount(self) -> None:
        self.view.loading = True
        self.view.focus()
        self.load(self.trial_id)

    # --- loading and stepping ------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="transcript-load")
    def load(self, trial_id: str, step: int = 0) -> None:
        """Load ``trial_id``, or the trial ``step`` places from it in the sequence."""
        worker = get_current_worker()
        with self.store() as db:
            if step:
                if self.sequence is None:
                    self.post_message(TranscriptNotice("this trial was not opened from a list"))
                    return
                target = self.sequence.neighbour(db, trial_id, step)
                if target is None:
                    end = "last" if step > 0 else "first"
                    self.post_message(TranscriptNotice(f"this is the {end} trial of the list"))
                    return
                trial_id = target
            payload = load_payload(db, trial_id, self.sequence)
        if worker.is_cancelled:
            return
        if payload is None:
            self.post_message(TranscriptNotice(f"trial {trial_id} is not in the database", "error"))
            return
        self.post_message(TrialLoaded(payload))

    def on_resize(self) -> None:
        if self.payload is not None:  # the names cut to the new width, the trial number kept
            title = title_text(self.payload, self.size.width or 160)
            self.query_one("#transcript-title", Static).update(title)

    def on_trial_loaded(self, message: TrialLoaded) -> None:
        p = message.payload
        self.payload = p
        self.trial_id = p.trial_id
        self.query_one("#transcript-title", Static).update(title_text(p, self.size.width or 160))
        self.query_one("#transcript-summary", Static).update(summary_text(p))
        view = self.view
        view.load(p.trial, p.violations, p.verdicts, blocks=p.blocks)
        view.loading = False
        # a loading view's keys are left out of the footer: shown again now, however slow the read
        self.refresh_bindings()
        judge = self.query_one("#transcript-judge", Static)
        judge.update(judge_text(p.verdicts))
        judge.display = view.show_judge

    def on_search_changed(self, message: SearchChanged) -> None:
        self.query_one(FindLine).show(message)

    def action_reload(self) -> None:
        self.load(self.trial_id)

    def on_transcript_notice(self, message: TranscriptNotice) -> None:
        self.view.loading = False
        self.refresh_bindings()
        self.notify(message.text, severity=message.severity)

    def on_transcript_view_judge_toggled(self, message: TranscriptView.JudgeToggled) -> None:
        self.query_one("#transcript-judge", Static).display = message.shown

    def action_export_tasks(self) -> None:
        """This trial, as a regression task."""
        self.start_export(ExportScope("this trial", trial_ids=(self.trial_id,)))

    def action_step(self, step: int) -> None:
        self.load(self.trial_id, step)

    # --- raw record in $PAGER / $EDITOR ---------------------------------------------------------------

    def action_open_record(self, editor: bool) -> None:
        self.write_record(self.trial_id, editor)

    @work(thread=True, exclusive=True, exit_on_error=False, group="transcript-record")
    def write_record(self, trial_id: str, editor: bool) -> None:
        """The stored record, pretty-printed, in a temp file for the external program."""
        from reviewer.workflows.trials import native_record

        with self.store() as db:
            record = native_record(db, trial_id)
        if record is None:
            self.post_message(TranscriptNotice(f"trial {trial_id} has no stored record", "error"))
            return
        with contextlib.suppress(ValueError):
            record = json.dumps(json.loads(record), indent=2, ensure_ascii=False) + "\n"
        fd, name = tempfile.mkstemp(prefix="reviewer-trial-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(record)
        self.post_message(RecordReady(Path(name), editor))

    def on_record_ready(self, message: RecordReady) -> None:
        try:
            self.run_external(message.path, editor=message.editor)
        finally:
            message.path.unlink(missing_ok=True)

    def run_external(self, path: Path, *, editor: bool) -> None:
        """Run $PAGER (default less) or $EDITOR (default vi) on ``path`` with the app suspended."""
        var = "EDITOR" if editor else "PAGER"
        command = os.environ.get(var) or (os.environ.get("VISUAL") if editor else None)
        command = command or ("vi" if editor else "less")
        try:
            argv = shlex.split(command)
        except ValueError as e:
            self._app().show_error(f"${var} is not a valid command", e)
            return
        if not argv:
            self._app().show_error(f"${var} is empty", command)
            return
        try:
            with self.app.suspend():
                result = subprocess.run([*argv, str(path)], check=False)
        except SuspendNotSupported as e:
            self._app().show_error(f"Cannot run ${var} here", e)
        except OSError as e:
            self._app().show_error(f"Could not run ${var} ({command})", e)
        else:
            if result.returncode != 0:
                self._app().show_error(
                    f"${var} failed", f"{command} exited with status {result.returncode}"
                )

    # --- label this trial outside any queue ------------------------------------------------------------

    def action_label_trial(self) -> None:
        """The label screen for this one trial (blind until labeled; the label has no queue)."""
        from reviewer.tui.screens.label import LabelScreen

        app = self._app()
        self.app.push_screen(LabelScreen(None, app.labeler, app.rubric, trial_id=self.trial_id))
