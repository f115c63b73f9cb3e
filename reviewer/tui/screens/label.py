"""Labeling a calibration queue: the transcript beside a label panel, one key per decision.

p / f / x label the trial pass / fail / skip, commit it to SQLite at once and move on to the next
unlabeled trial; number keys toggle the rubric's criteria first; c adds a note; u undoes the last label.
The judge's verdict and other labelers' labels stay hidden until this labeler has labeled the trial.
"""

from __future__ import annotations

import queue as queue_mod
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, Static, TextArea

from reviewer.models import Label, Rubric
from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.transcript import TranscriptView

if TYPE_CHECKING:
    from reviewer.store.queues import QueueItem
    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.transcript import TrialPayload


@dataclass
class QueueState:
    name: str
    labeler: str
    items: list[QueueItem]
    rubric: Rubric | None
    done: set[str] = field(default_factory=set)


class QueueLoaded(Message):
    def __init__(self, state: QueueState, start: int) -> None:
        super().__init__()
        self.state = state
        self.start = start


class ItemLoaded(Message):
    def __init__(
        self, index: int, payload: TrialPayload, mine: Label | None, others: dict[str, Label]
    ) -> None:
        super().__init__()
        self.index, self.payload, self.mine, self.others = index, payload, mine, others


class Prefetched(Message):
    """The next trial of the queue, read ahead while the labeler reads this one."""

    def __init__(self, item: ItemLoaded) -> None:
        super().__init__()
        self.item = item


class Committed(Message):
    """A write reached the database: a label (advance) or an undo (go back to its trial)."""

    def __init__(self, kind: str, label: Label | None, advance: bool) -> None:
        super().__init__()
        self.kind, self.label, self.advance = kind, label, advance


class WriteWaiting(Message):
    """The label write waits for another process's write lock (after about a second)."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what


class WriteFailed(Message):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class NoteModal(ModalScreen[str | None]):
    BINDINGS = [
        Binding("ctrl+s", "save", "Save note", id="note.save"),
        Binding("escape", "cancel", "Cancel", id="note.cancel"),
    ]
    DEFAULT_CSS = """
    NoteModal { align: center middle; }
    NoteModal > Vertical { width: 80%; max-width: 100; height: 60%; border: thick $accent; background: $surface; padding: 0 1; }
    NoteModal TextArea { height: 1fr; }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Note for this trial — ctrl+s saves, Esc cancels")
            yield TextArea(self.text, id="note-text")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class LabelScreen(ReviewerScreen):
    BINDINGS = [
        Binding("p", "label('pass')", "Pass", id="label.pass"),
        Binding("f", "label('fail')", "Fail", id="label.fail"),
        Binding("x", "label('skip')", "Skip", id="label.skip"),
        Binding("u", "undo", "Undo", id="label.undo"),
        Binding("c", "note", "Note", id="label.note"),
        Binding("v", "reveal", "Reveal judge", id="label.reveal"),
        Binding("right_square_bracket", "step(1)", "Next", id="label.next"),
        Binding("left_square_bracket", "step(-1)", "Prev", show=False, id="label.prev"),
        Binding("escape", "app.pop_screen", "Back", id="label.back"),
    ]

    def __init__(self, queue_name: str, labeler: str, rubric: Rubric | None = None) -> None:
        super().__init__()
        self.queue_name = queue_name
        self.labeler = labeler
        self.rubric = rubric
        self.state: QueueState | None = None
        self.index = 0
        self.mine: Label | None = None
        self.others: dict[str, Label] = {}
        self.payload: TrialPayload | None = None
        self.criteria: dict[str, bool | None] = {}
        self.note = ""
        self.revealed = False
        self.started = time.monotonic()
        self.given = 0
        self._writes: queue_mod.Queue[tuple[str, dict[str, Any]] | None] = queue_mod.Queue()
        # the trial whose label is being written: one label key press per trial until it lands
        self.saving: str | None = None
        self._told_waiting = False
        self._prefetched: ItemLoaded | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            safe_text(f"Labeling {self.queue_name} as {self.labeler}", single_line=True),
            id="label-title",
            classes="title",
        )
        yield ProgressBar(id="label-progress", show_eta=False)
        with Horizontal(id="label-body"):
            yield TranscriptView(id="transcript", show_judge=False)
            with Vertical(id="label-panel"):
                yield Static("", id="label-criteria")
                yield Static("", id="label-mine")
                yield Static("", id="label-judge")
                yield Static("", id="label-note")
        yield KeyFooter()

    def _app(self) -> ReviewerApp:
        return cast("ReviewerApp", self.app)

    def on_mount(self) -> None:
        self.query_one(TranscriptView).focus()
        self._writer()
        self.load_queue()

    def on_unmount(self) -> None:
        self._writes.put(None)

    # --- loading ------------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="label-queue")
    def load_queue(self) -> None:
        from reviewer.store.labels import labeled_trial_ids
        from reviewer.store.queues import queue_items, queue_progress

        with self.store() as db:
            items = queue_items(db, self.queue_name)
            done = labeled_trial_ids(db, self.labeler) & {i.trial_id for i in items}
            _, _, next_pos = queue_progress(db, self.queue_name, self.labeler)
        state = QueueState(self.queue_name, self.labeler, items, self.rubric, done)
        start = next(
            (i for i, it in enumerate(items) if it.position == next_pos), max(0, len(items) - 1)
        )
        self.post_message(QueueLoaded(state, start))

    def on_queue_loaded(self, message: QueueLoaded) -> None:
        self.state = message.state
        if not self.state.items:
            self.notify("This queue is empty.", severity="warning")
            return
        self._progress()
        self.load_item(message.start)

    def _read_item(self, index: int) -> ItemLoaded | None:
        from reviewer.store.labels import standing_by_labeler
        from reviewer.tui.screens.transcript import load_payload

        assert self.state is not None
        trial_id = self.state.items[index].trial_id
        with self.store() as db:
            payload = load_payload(db, trial_id, None, blind=True)
            labels = standing_by_labeler(db, trial_id)
        if payload is None:
            return None
        mine = labels.pop(self.labeler, None)
        return ItemLoaded(index, payload, mine, labels)

    def load_item(self, index: int) -> None:
        """Show item ``index``: at once when it was read ahead, else from a worker."""
        ready = self._prefetched
        self._prefetched = None
        if ready is not None and ready.index == index and ready.mine is None:
            self.on_item_loaded(ready)
            return
        self._load_item(index)

    @work(thread=True, exclusive=True, exit_on_error=False, group="label-item")
    def _load_item(self, index: int) -> None:
        item = self._read_item(index)
        if item is not None:
            self.post_message(item)

    @work(thread=True, exclusive=True, exit_on_error=False, group="label-prefetch")
    def _prefetch(self, index: int) -> None:
        item = self._read_item(index)
        if item is not None:
            self.post_message(Prefetched(item))

    def on_prefetched(self, message: Prefetched) -> None:
        self._prefetched = message.item

    def on_item_loaded(self, message: ItemLoaded) -> None:
        self.index, self.payload, self.mine, self.others = (
            message.index,
            message.payload,
            message.mine,
            message.others,
        )
        self.revealed = False
        self.criteria = dict(self.mine.criteria) if self.mine else {}
        self.note = self.mine.note if self.mine else ""
        p = message.payload
        # blind: the blocks were built without any judge verdict
        self.query_one(TranscriptView).load(p.trial, p.violations, [], blocks=p.blocks)
        self._panel()
        self._progress()
        nxt = self._next_unlabeled(self.index)
        if nxt is not None and nxt != self.index:
            self._prefetch(nxt)

    # --- writing --------------------------------------------------------------------------------------

    @work(thread=True, exit_on_error=False, group="label-writer")
    def _writer(self) -> None:
        """One thread writes every label in the order given, each committed before the next."""
        from reviewer.workflows.labels import give_label, undo_label

        with self.store() as db:

            def waiting(what: str) -> None:  # the store says when a write waits for another writer
                self.post_message(WriteWaiting(what))

            db.on_wait = waiting
            while True:
                op = self._writes.get()
                if op is None:
                    return
                kind, args = op
                try:
                    if kind == "label":
                        advance = bool(args.pop("advance"))
                        label = give_label(db, **args)
                        self.post_message(Committed("label", label, advance))
                    else:
                        self.post_message(
                            Committed("undo", undo_label(db, self.labeler, self.queue_name), False)
                        )
                except Exception as e:  # reported in the modal; the queue keeps going
                    self.post_message(WriteFailed(e))

    def action_label(self, verdict: str) -> None:
        if self.payload is None or self.state is None:
            return
        if self.saving is not None:
            # the last label has not landed yet (another process may hold the write lock): this key
            # press is not queued, so four presses never label one trial four times
            if not self._told_waiting:
                self._told_waiting = True
                self.notify(
                    "Saving the last label (waiting for the database)… this key was ignored.",
                    severity="warning",
                )
            return
        self.saving = self.payload.trial_id
        self._writes.put(
            (
                "label",
                {
                    "trial_id": self.payload.trial_id,
                    "labeler": self.labeler,
                    "verdict": verdict,
                    "criteria": dict(self.criteria),
                    "note": self.note,
                    "rubric_ref": self.rubric.ref if self.rubric else None,
                    "queue": self.queue_name,
                    "advance": True,
                },
            )
        )

    def action_undo(self) -> None:
        self._writes.put(("undo", {}))

    def on_committed(self, message: Committed) -> None:
        assert self.state is not None
        if message.kind == "label" and message.advance:
            self.saving, self._told_waiting = None, False
        if message.kind == "label" and message.label is not None:
            self.given += 1
            self.state.done.add(message.label.trial_id)
            if message.label.trial_id == (self.payload.trial_id if self.payload else None):
                self.mine = message.label
            if message.advance:
                nxt = self._next_unlabeled(self.index)
                if nxt is None:
                    self._progress()
                    self._panel()
                    self.notify(
                        f"Queue done: {len(self.state.done)} / {len(self.state.items)} labeled."
                    )
                    return
                self.load_item(nxt)
                return
        elif message.kind == "undo":
            if message.label is None:
                self.notify("Nothing to undo.", severity="warning")
                return
            self.state.done.discard(message.label.trial_id)
            back = next(
                (
                    i
                    for i, it in enumerate(self.state.items)
                    if it.trial_id == message.label.trial_id
                ),
                None,
            )
            self.notify(f"Undid your {message.label.verdict} label.")
            if back is not None:
                self.load_item(back)
                return
        self._progress()
        self._panel()

    def on_write_waiting(self, message: WriteWaiting) -> None:
        if self.saving is not None and not self._told_waiting:
            self._told_waiting = True
            self.notify("Saving the label: waiting for the database (another process writes)…")

    def on_write_failed(self, message: WriteFailed) -> None:
        self.saving, self._told_waiting = None, False
        self._app().show_error("label not saved", message.error)

    def _next_unlabeled(self, after: int) -> int | None:
        assert self.state is not None
        n = len(self.state.items)
        for step in range(1, n + 1):
            j = (after + step) % n
            if self.state.items[j].trial_id not in self.state.done:
                return j
        return None

    # --- other keys ---------------------------------------------------------------------------------

    def on_key(self, event: Any) -> None:
        if self.rubric is None or self.payload is None:
            return
        for c in self.rubric.criteria:
            if c.key and event.key == c.key:
                current = self.criteria.get(c.id)
                self.criteria[c.id] = True if current is None else (False if current else None)
                self._panel()
                event.stop()
                return

    def action_step(self, step: int) -> None:
        if self.state is None or not self.state.items:
            return
        j = self.index + step
        if 0 <= j < len(self.state.items):
            self.load_item(j)
        else:
            self.notify("No more trials in this queue that way.")

    def action_reveal(self) -> None:
        if self.mine is None:
            self.notify(
                "Label this trial first: the judge stays hidden until you do.", severity="warning"
            )
            return
        self.revealed = not self.revealed
        self._panel()

    def action_note(self) -> None:
        def done(text: str | None) -> None:
            if text is None:
                return
            self.note = text
            if self.mine is not None and self.payload is not None:
                # the note belongs to the standing label: append it again with the note
                self._writes.put(
                    (
                        "label",
                        {
                            "trial_id": self.payload.trial_id,
                            "labeler": self.labeler,
                            "verdict": self.mine.verdict,
                            "criteria": dict(self.criteria),
                            "note": text,
                            "rubric_ref": self.rubric.ref if self.rubric else None,
                            "queue": self.queue_name,
                            "advance": False,
                        },
                    )
                )
            self._panel()

        self.app.push_screen(NoteModal(self.note), done)

    # --- drawing ------------------------------------------------------------------------------------

    def _progress(self) -> None:
        if self.state is None:
            return
        done, total = len(self.state.done), len(self.state.items)
        minutes = max((time.monotonic() - self.started) / 60, 1 / 60)
        rate = f" · {self.given / minutes:.1f} labels/min" if self.given else ""
        item = self.state.items[self.index] if self.state.items else None
        where = f" · trial {self.index + 1} of {total}" if item else ""
        split = f" · {item.split}" if item and item.split else ""
        self.query_one("#label-title", Static).update(
            safe_text(
                f"Labeling {self.queue_name} as {self.labeler} — {done} / {total}{rate}{where}{split}",
                single_line=True,
            )
        )
        self.query_one("#label-progress", ProgressBar).update(total=max(total, 1), progress=done)

    def _panel(self) -> None:
        crit = Text()
        if self.rubric is not None:
            crit.append_text(safe_text(self.rubric.ref, "bold", single_line=True))
            crit.append("\n")
            for c in self.rubric.criteria:
                v = self.criteria.get(c.id)
                mark, style = (
                    ("✓", "green") if v else (("✗", "red") if v is False else ("·", "dim"))
                )
                crit.append(f"[{c.key}] ", style="bold")
                crit.append(mark + " ", style=style)
                crit.append_text(safe_text(c.question))
                crit.append("\n")
        crit.append("p pass · f fail · x skip · u undo · c note", style="dim")
        self.query_one("#label-criteria", Static).update(crit)

        mine = Text()
        if self.mine is None:
            mine.append("not labeled by you yet", style="italic")
        else:
            style = {"pass": "bold green", "fail": "bold red"}.get(self.mine.verdict, "bold yellow")
            mine.append("your label: ")
            mine.append(self.mine.verdict.upper(), style=style)
        self.query_one("#label-mine", Static).update(mine)

        judge = Text()
        if self.mine is None:
            judge.append("judge and other labelers hidden until you label", style="dim")
        elif not self.revealed:
            judge.append("v reveals the judge and other labelers", style="dim")
        else:
            verdicts = self.payload.verdicts if self.payload else []
            for judged in verdicts:
                verdict = str(getattr(judged, "verdict", ""))
                disagree = (
                    self.mine.verdict in ("pass", "fail")
                    and verdict in ("pass", "fail")
                    and verdict != self.mine.verdict
                )
                judge.append("judge: ")
                judge.append(verdict.upper(), style="bold red reverse" if disagree else "bold")
                if disagree:
                    judge.append("  ≠ you", style="bold red")
                judge.append("\n")
                judge.append_text(safe_text(getattr(judged, "rationale", "") or ""))
                judge.append("\n")
            for who, label in sorted(self.others.items()):
                judge.append_text(safe_text(f"{who}: {label.verdict}", single_line=True))
                if label.verdict != self.mine.verdict:
                    judge.append("  ≠ you", style="bold red")
                judge.append("\n")
            if not verdicts and not self.others:
                judge.append("no judge verdict or other labels", style="dim")
        self.query_one("#label-judge", Static).update(judge)
        note = Text()
        if self.note:
            note.append("note: ", style="dim")
            note.append_text(safe_text(self.note))
        self.query_one("#label-note", Static).update(note)
