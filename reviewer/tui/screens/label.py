"""Labeling a calibration queue (or one trial): the transcript beside a label panel, one key each.

p / f / x label the trial pass / fail / skip, commit it to SQLite at once and move on to the next
unlabeled trial; number keys answer the rubric's criteria first; a fail under a rubric with
``categories`` asks for its failure tag (one key), K tags a failure at any time (free text too);
c adds a note; u undoes the last
label; ] and [ step through the queue. A verdict against the rubric's pass rule asks once and is
stored as an override. The screen is blind: until this labeler has labeled the trial, no judge
verdict, rationale or other labeler's label reaches it (the transcript is built without the judge,
the transcript widget is in blind mode, ``v`` and ``J`` are off, the palette offers no jumps).
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
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, ProgressBar, Static, TextArea

from reviewer.models import Label, Rubric
from reviewer.text import counted
from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.transcript import TranscriptView
from reviewer.tui.widgets.transcript_search import FindLine, SearchChanged
from reviewer.workflows.labels import TaskContext

if TYPE_CHECKING:
    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.transcript import TrialPayload
    from reviewer.workflows.queues import QueueItem, QueueStatus


#: How often an open shared queue renews its lease and reads the team's progress (seconds).
SHARED_REFRESH_S = 60.0


#: What a verdict key that did not label says (the rubric's pass rule kept it, or no tag was
#: chosen): taken off the screen when a label lands
NOT_LABELED_OVERRIDE = "Not labeled: answer the criteria again or press the other verdict."
NOT_LABELED_TAG = "Not labeled: no tag was chosen (Esc)."


@dataclass
class QueueState:
    name: str | None  # None: one trial labeled outside any queue
    labeler: str
    items: list[QueueItem]
    rubric: Rubric | None
    done: set[str] = field(default_factory=set)
    #: an active queue: ``items`` are its labeled trials and the one decided next
    active: bool = False
    #: the trials the queue labels (an active queue's target, not its reserve)
    total: int | None = None
    #: a shared queue: (trials with all their labels, all its trials), the team's progress
    team: tuple[int, int] | None = None

    @property
    def size(self) -> int:
        return len(self.items) if self.total is None else self.total


class OutlookReady(Message):
    """The labels the judge's trust verdict needs, and for an active queue its next trial.

    ``status`` is the queue's :class:`QueueStatus` when the next trial was decided afresh.
    """

    def __init__(self, text: str, status: QueueStatus | None = None, advance: bool = False) -> None:
        super().__init__()
        self.text = text
        self.status = status
        self.advance = advance


class QueueLoaded(Message):
    def __init__(self, state: QueueState, start: int) -> None:
        super().__init__()
        self.state = state
        self.start = start


class ItemLoaded(Message):
    def __init__(
        self,
        index: int,
        payload: TrialPayload,
        mine: Label | None,
        others: dict[str, Label],
        context: TaskContext,
    ) -> None:
        super().__init__()
        self.index, self.payload, self.mine, self.others = index, payload, mine, others
        self.context = context
        #: the transcript blocks were built without the judge (the trial was not labeled when read)
        self.blind = mine is None


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


class PlaceLost(Message):
    """A shared queue's trial filled by other labelers while this one read it: not labeled."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class LabelChanged(Message):
    """The label was not written: this labeler's label of the trial changed since the screen read
    it (another window or process labeled it); ``args`` is the write to retry."""

    def __init__(self, args: dict[str, Any], conflict: Any) -> None:
        super().__init__()
        self.args, self.conflict = args, conflict


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


class ConfirmModal(ModalScreen[bool]):
    """One question: Enter keeps (True), Esc does not (False)."""

    BINDINGS = [
        Binding("enter", "answer(True)", "Yes, keep it", id="confirm.yes"),
        Binding("escape", "answer(False)", "No", id="confirm.no"),
    ]
    DEFAULT_CSS = """
    ConfirmModal { align: center middle; }
    ConfirmModal > Static { width: 70%; max-width: 80; height: auto; border: thick $warning;
                            background: $surface; padding: 1 2; }
    """

    def __init__(
        self, question: str, hint: str = "Enter keeps it (stored as an override) · Esc goes back"
    ) -> None:
        super().__init__()
        self.question = question
        self.hint = hint

    def compose(self) -> ComposeResult:
        text = safe_text(self.question, "bold")
        text.append(f"\n\n{self.hint}", style="dim")
        yield Static(text, id="confirm-text")

    def action_answer(self, keep: bool) -> None:
        self.dismiss(keep)


class TagModal(ModalScreen[str | None]):
    """A fail's failure tag: one key per category (shown beside it), Enter for none, Tab then
    Enter for words of your own. Dismisses with the tag, "" for none, None when cancelled."""

    BINDINGS = [
        Binding("enter", "none", "No tag", id="tag.none"),
        Binding("escape", "cancel", "Cancel", id="tag.cancel"),
    ]
    DEFAULT_CSS = """
    TagModal { align: center middle; }
    TagModal > Vertical { width: 70; max-width: 95%; height: auto; border: thick $accent;
                          background: $surface; padding: 1 2; }
    """

    def __init__(self, categories: list[str], current: str | None = None) -> None:
        from reviewer.workflows.labels import category_keys

        super().__init__()
        self.keys = category_keys(categories)
        self.current = current

    def compose(self) -> ComposeResult:
        from reviewer.workflows.labels import MAX_TAG

        text = Text("Tag this failure", style="bold")
        if self.current:
            text.append("  (now: ")
            text.append_text(safe_text(self.current, single_line=True))
            text.append(")")
        text.append("\n")
        for key, cat in self.keys:
            text.append(f"[{key}] ", style="bold")
            text.append_text(safe_text(cat, single_line=True))
            text.append("\n")
        hint = "Enter: no tag · Tab: your own words, then Enter · Esc: back, not labeled"
        text.append(("" if self.keys else "no categories in the rubric\n") + hint, style="dim")
        with Vertical():
            yield Static(text, id="tag-keys")
            yield Input(placeholder="your own words", id="tag-input", max_length=MAX_TAG)

    def on_mount(self) -> None:
        # the category keys go to the dialog: the text box waits for Tab
        self.call_after_refresh(self.set_focus, None)

    def on_key(self, event: Any) -> None:
        if isinstance(self.focused, Input):
            return
        for key, cat in self.keys:
            if event.key == key:
                event.stop()
                self.dismiss(cat)
                return

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(" ".join(event.value.split()))

    def action_none(self) -> None:
        self.dismiss("")

    def action_cancel(self) -> None:
        self.dismiss(None)


class LabelScreen(ReviewerScreen):
    BINDINGS = [
        Binding("p", "label('pass')", "Pass", id="label.pass"),
        Binding("f", "label('fail')", "Fail", id="label.fail"),
        Binding("x", "label('skip')", "Skip", id="label.skip"),
        Binding("K", "tag", "Tag failure", id="label.tag"),
        Binding("u", "undo", "Undo", id="label.undo"),
        Binding("c", "note", "Note", id="label.note"),
        Binding("v", "reveal", "Reveal judge", id="label.reveal"),
        # priority: the transcript widget under focus must not take them for its own jumps
        Binding("right_square_bracket", "step(1)", "Next", id="label.next", priority=True),
        Binding("left_square_bracket", "step(-1)", "Prev", id="label.prev", priority=True),
        Binding("escape", "leave", "Back", id="label.back"),
    ]
    #: the palette offers no jumps from here (they could show a judge verdict or another's label)
    blind = True

    def __init__(
        self,
        queue_name: str | None,
        labeler: str,
        rubric: Rubric | None = None,
        *,
        trial_id: str | None = None,
    ) -> None:
        super().__init__()
        if queue_name is None and trial_id is None:
            raise ValueError("a label screen needs a queue or a trial")
        self.queue_name = queue_name
        self.single = trial_id  # labeling one trial outside any queue
        self.labeler = labeler
        self.rubric = rubric
        self.state: QueueState | None = None
        self.index = 0
        self.mine: Label | None = None
        self.others: dict[str, Label] = {}
        self.payload: TrialPayload | None = None
        self.context: TaskContext | None = None
        self.criteria: dict[str, bool | None] = {}
        self.note = ""
        self.revealed = False
        self.started = time.monotonic()
        self.given = 0
        #: a shared queue: each next trial is leased to this labeler (see queue_status)
        self.shared = False
        self._writes: queue_mod.Queue[tuple[str, dict[str, Any]] | None] = queue_mod.Queue()
        # the trial whose label is being written: one label key press per trial until it lands
        self.saving: str | None = None
        self._told_waiting = False
        self._prefetched: ItemLoaded | None = None
        # rubric answers and notes given on a trial not labeled yet, kept when stepping away so
        # they are there on coming back (until the label stores them)
        self._drafts: dict[str, tuple[dict[str, bool | None], str]] = {}

    @property
    def what(self) -> str:
        return self.queue_name if self.queue_name is not None else "one trial (no queue)"

    def compose(self) -> ComposeResult:
        yield Static(
            safe_text(f"Labeling {self.what} as {self.labeler}", single_line=True),
            id="label-title",
            classes="title",
        )
        with Horizontal(id="label-progress-row"):
            yield ProgressBar(id="label-progress", show_eta=False)
            # the labels the trust verdict needs, and how an active queue picks: never the judge's
            # verdict of a trial (the screen is blind)
            yield Static("", id="label-outlook")
        with Horizontal(id="label-body"):
            transcript = TranscriptView(id="transcript", show_judge=False)
            transcript.blind = True
            yield transcript
            with VerticalScroll(id="label-panel"):
                yield Static("", id="label-mine")
                yield Static("", id="label-judge")
                yield Static("", id="label-criteria")
                yield Static("", id="label-note")
                yield Static("", id="label-task")
        yield FindLine(id="label-find")
        yield KeyFooter()

    def _app(self) -> ReviewerApp:
        return cast("ReviewerApp", self.app)

    def on_mount(self) -> None:
        self.query_one(TranscriptView).focus()
        self._writer()
        self.load_queue()
        # a shared queue: the lease on the trial being read is renewed, and the team's progress
        # and who else is labeling read again, while the labeler reads
        self.set_interval(SHARED_REFRESH_S, self._renew)

    def _renew(self) -> None:
        if self.shared and self.state is not None:
            self._refresh_outlook()

    def on_unmount(self) -> None:
        if self.state is not None and self.state.team is not None:
            self._writes.put(("release", {}))  # the trial held goes back to the team at once
        self._writes.put(None)

    # --- loading ------------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="label-queue")
    def load_queue(self) -> None:
        from reviewer.workflows.labels import labeled_trial_ids
        from reviewer.workflows.queues import QueueItem, queue_items, queue_progress

        if self.queue_name is None:
            assert self.single is not None
            with self.store() as db:
                done = labeled_trial_ids(db, self.labeler) & {self.single}
            one = [
                QueueItem(position=1, trial_id=self.single, split=None, verdict="", cluster=None)
            ]
            self.post_message(
                QueueLoaded(QueueState(None, self.labeler, one, self.rubric, done), 0)
            )
            return
        from reviewer.workflows.queues import get_queue

        with self.store() as db:
            params = get_queue(db, self.queue_name).params
            self.shared = bool(params.get("shared"))
            if params.get("active") or self.shared:
                # a shared queue is stepped like an active one: its trials this labeler labeled,
                # then the one leased to them (decided afresh after each label)
                status = self._status(db)
                state = QueueState(
                    self.queue_name,
                    self.labeler,
                    _active_items(status),
                    self.rubric,
                    {it.trial_id for it in status.labeled},
                    active=True,
                    total=None if self.shared else status.total,
                    team=(status.done, status.total) if self.shared else None,
                )
                self.post_message(QueueLoaded(state, max(0, len(state.items) - 1)))
                self.post_message(OutlookReady(_outlook_text(status)))
                return
            items = queue_items(db, self.queue_name)
            done = labeled_trial_ids(db, self.labeler) & {i.trial_id for i in items}
            _, _, next_pos = queue_progress(db, self.queue_name, self.labeler)
        state = QueueState(self.queue_name, self.labeler, items, self.rubric, done)
        start = next(
            (i for i, it in enumerate(items) if it.position == next_pos), max(0, len(items) - 1)
        )
        self.post_message(QueueLoaded(state, start))
        self._refresh_outlook()

    def _status(self, db: Any) -> QueueStatus:
        from reviewer.workflows.agreement import configured_threshold
        from reviewer.workflows.queues import queue_status

        assert self.queue_name is not None
        threshold, _ = configured_threshold(self.app.settings)
        return queue_status(
            db, self.queue_name, self.labeler, threshold=threshold, claim=self.shared
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="label-outlook")
    def _refresh_outlook(self, advance: bool = False) -> None:
        """The labels to a verdict after the labels so far; an active queue's next trial too
        (``advance``: then show it)."""
        if self.queue_name is None:
            return
        with self.store() as db:
            status = self._status(db)
        self.post_message(OutlookReady(_outlook_text(status), status, advance))

    def on_outlook_ready(self, message: OutlookReady) -> None:
        self.query_one("#label-outlook", Static).update(
            safe_text(message.text, "dim", single_line=True)
        )
        state, status = self.state, message.status
        if state is None or status is None or not state.active:
            return
        state.items = _active_items(status)
        state.done = {it.trial_id for it in status.labeled}
        if state.team is None:
            state.total = status.total
        else:
            state.team = (status.done, status.total)
        if not message.advance:
            self._progress()
            return
        if status.next_item is None:
            self.notify(
                f"Nothing left for you: the team has {status.done} / {status.total} trials "
                f"fully labeled; you labeled {len(state.done)}."
                if state.team is not None
                else f"Queue done: {len(state.done)} / {state.size} labeled."
            )
            self._progress()
            self._panel()
            return
        self.load_item(len(state.items) - 1)

    def on_queue_loaded(self, message: QueueLoaded) -> None:
        self.state = message.state
        if not self.state.items:
            self.notify("This queue is empty.", severity="warning")
            return
        self._progress()
        self.load_item(message.start)

    def _read_item(self, index: int) -> ItemLoaded | None:
        from reviewer.tui.screens.transcript import load_payload
        from reviewer.workflows.labels import standing_by_labeler, task_context

        assert self.state is not None
        trial_id = self.state.items[index].trial_id
        with self.store() as db:
            labels = standing_by_labeler(db, trial_id)
            mine = labels.pop(self.labeler, None)
            # not labeled by this labeler: the blocks are built without any judge verdict
            payload = load_payload(db, trial_id, None, blind=mine is None)
        if payload is None:
            return None
        return ItemLoaded(index, payload, mine, labels, task_context(payload.trial))

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

    def unsaved_work(self) -> str | None:
        """What leaving now would lose, in words (None: nothing): rubric answers or a note given
        on this trial and not yet stored with a label."""
        if self.payload is None:
            return None
        answered = sum(v is not None for v in self.criteria.values())
        if self.mine is None:
            parts = [counted(answered, "rubric answer")] if answered else []
            if self.note:
                parts.append("a note")
            if not parts:
                return None
            verb = "are" if len(parts) > 1 or answered > 1 else "is"
            return f"{' and '.join(parts)} on this trial {verb} not stored until you label it"
        if {k: v for k, v in self.criteria.items() if v is not None} != {
            k: v for k, v in self.mine.criteria.items() if v is not None
        }:
            return (
                "the rubric answers changed since the label: press its verdict again to store them"
            )
        return None

    def _keep_draft(self) -> None:
        """Keep the answers of the trial shown, not labeled yet, for when it is shown again."""
        if self.payload is None or self.mine is not None:
            return
        trial_id = self.payload.trial_id
        if any(v is not None for v in self.criteria.values()) or self.note:
            self._drafts[trial_id] = (dict(self.criteria), self.note)
        else:
            self._drafts.pop(trial_id, None)

    def action_leave(self) -> None:
        """Back to the screen before; asks first when that would lose answers not stored."""
        lost = self.unsaved_work()
        if lost is None:
            self.app.pop_screen()
            return

        def answered(leave: bool | None) -> None:
            if leave:
                self.app.pop_screen()

        self.app.push_screen(
            ConfirmModal(f"Leave labeling? {lost}.", hint="Enter leaves without them · Esc stays"),
            answered,
        )

    def on_item_loaded(self, message: ItemLoaded) -> None:
        self._keep_draft()
        self.index, self.payload, self.mine, self.others = (
            message.index,
            message.payload,
            message.mine,
            message.others,
        )
        self.context = message.context
        self.revealed = False  # a reveal never carries over to another trial
        self.criteria = dict(self.mine.criteria) if self.mine else {}
        self.note = self.mine.note if self.mine else ""
        draft = self._drafts.pop(message.payload.trial_id, None)
        if draft is not None and self.mine is None:
            self.criteria, self.note = dict(draft[0]), draft[1]
            self.notify("Your answers on this trial are back (not stored until you label it).")
        p = message.payload
        transcript = self.query_one(TranscriptView)
        # blind until labeled; the judge blocks exist only when the trial was labeled when read
        transcript.set_blind(message.blind or self.mine is None)
        transcript.load(p.trial, p.violations, [], blocks=p.blocks)
        self.query_one("#label-panel", VerticalScroll).scroll_home(animate=False)
        self.refresh_bindings()
        self._panel()
        self._progress()
        nxt = self._next_unlabeled(self.index)
        # an active queue decides its next trial from the label about to be given: no read-ahead
        if nxt is not None and nxt != self.index and not (self.state and self.state.active):
            self._prefetch(nxt)

    # --- writing --------------------------------------------------------------------------------------

    @work(thread=True, exit_on_error=False, group="label-writer")
    def _writer(self) -> None:
        """One thread writes every label in the order given, each committed before the next. A
        connection the PostgreSQL server dropped (a restart, an idle connection cut by a firewall)
        is made again and the write tried once more: the screen's one connection failed every
        later label until the labeler left the screen."""
        import contextlib

        from reviewer.workflows.labels import LabelConflict, PlaceTaken, give_label, undo_label
        from reviewer.workflows.queues import release_leases
        from reviewer.workflows.store_access import connection_lost

        def waiting(what: str) -> None:  # the store says when a write waits for another writer
            self.post_message(WriteWaiting(what))

        def write(db: Any, kind: str, args: dict[str, Any]) -> None:
            if kind == "label":
                advance = bool(args["advance"])
                given = {k: v for k, v in args.items() if k != "advance"}
                try:
                    label = give_label(db, **given)
                except LabelConflict as conflict:
                    self.post_message(LabelChanged(given | {"advance": advance}, conflict))
                    return
                except PlaceTaken as taken:
                    self.post_message(PlaceLost(taken))
                    return
                self.post_message(Committed("label", label, advance))
            elif kind == "release":
                assert self.queue_name is not None
                release_leases(db, self.queue_name, self.labeler)
            else:
                undone = undo_label(db, self.labeler, self.queue_name, self.single)
                self.post_message(Committed("undo", undone, False))

        db: Any = None
        try:
            while True:
                op = self._writes.get()
                if op is None:
                    return
                kind, args = op
                for attempt in (1, 2):
                    try:
                        if db is None:
                            db = self.store()
                            db.on_wait = waiting
                        write(db, kind, args)
                    except Exception as e:  # reported in the modal; the queue keeps going
                        if attempt == 1 and db is not None and connection_lost(e):
                            with contextlib.suppress(Exception):
                                db.close()
                            db = None  # connected again, and the write tried once more
                            continue
                        self.post_message(WriteFailed(e))
                    break
        finally:
            if db is not None:
                db.close()

    def action_label(self, verdict: str) -> None:
        from reviewer.workflows.labels import contradiction

        if self.payload is None or self.state is None:
            return
        why = contradiction(self.rubric, self.criteria, verdict)
        ask_tag = verdict == "fail" and self.rubric is not None and bool(self.rubric.categories)
        if why is None:
            if ask_tag:
                self._ask_tag()
            else:
                self._give(verdict)
            return
        trial_id = self.payload.trial_id

        def answered(keep: bool | None) -> None:
            if keep and self.payload is not None and self.payload.trial_id == trial_id:
                if ask_tag:
                    self._ask_tag(override=True)
                else:
                    self._give(verdict, override=True)
            elif not keep:
                self.notify(NOT_LABELED_OVERRIDE)

        self.app.push_screen(ConfirmModal(f"{why} — keep {verdict}?"), answered)

    def _ask_tag(self, *, override: bool = False, retag: bool = False) -> None:
        """Ask for the failure's tag, then label the trial fail with it (``retag``: the standing
        fail label gets the tag, nothing else changes)."""
        if self.payload is None:
            return
        trial_id = self.payload.trial_id
        categories = list(self.rubric.categories) if self.rubric is not None else []

        def chosen(tag: str | None) -> None:
            if self.payload is None or self.payload.trial_id != trial_id:
                return
            if tag is None:
                self.notify(NOT_LABELED_TAG)
                return
            if retag and self.mine is not None:
                self._put_label(self.mine.verdict, tag=tag or None, advance=False)
                return
            self._give("fail", override=override, tag=tag or None)

        current = self.mine.tag if self.mine is not None else None
        self.app.push_screen(TagModal(categories, current), chosen)

    def action_tag(self) -> None:
        """Tag a failure: the standing fail label gets the tag; otherwise the trial is labeled fail
        with it (the rubric's pass rule asked first, as for f)."""
        from reviewer.workflows.labels import contradiction

        if self.payload is None or self.state is None:
            return
        if self.mine is not None and self.mine.verdict == "fail":
            self._ask_tag(retag=True)
            return
        why = contradiction(self.rubric, self.criteria, "fail")
        if why is None:
            self._ask_tag()
            return

        def answered(keep: bool | None) -> None:
            if keep:
                self._ask_tag(override=True)

        self.app.push_screen(ConfirmModal(f"{why} — keep fail?"), answered)

    def _give(self, verdict: str, *, override: bool = False, tag: str | None = None) -> None:
        assert self.payload is not None
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
                    "rubric": self.rubric,
                    "queue": self.queue_name,
                    "override": override,
                    "tag": tag,
                    "advance": True,
                    # the label as this screen read it: another window's label is not replaced
                    # silently (LabelChanged asks)
                    "expect_at": self.mine.at if self.mine is not None else "",
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
            withdraw = getattr(self.app, "withdraw", None)
            if withdraw is not None:  # a label landed: "Not labeled" no longer holds beside it
                for said in (NOT_LABELED_OVERRIDE, NOT_LABELED_TAG):
                    withdraw(said)
            self.state.done.add(message.label.trial_id)
            here = message.label.trial_id == (self.payload.trial_id if self.payload else None)
            if here:
                self.mine = message.label
            if message.advance and self.state.active:
                self._refresh_outlook(advance=True)  # decides the next trial afresh
                self._progress()
                self._panel()
                return
            if message.advance and self.queue_name is not None:
                self._refresh_outlook()
            if message.advance:
                nxt = self._next_unlabeled(self.index)
                if nxt is None:
                    if self.single is not None:
                        self.notify(f"Labeled {message.label.verdict}: v reveals the judge.")
                    else:
                        self.notify(
                            f"Queue done: {len(self.state.done)} / {self.state.size} labeled."
                        )
                    if here:  # staying on this trial, now labeled: read it with its judge
                        self._load_item(self.index)
                    self._progress()
                    self._panel()
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
            undone = message.label
            if undone.note or any(v is not None for v in undone.criteria.values()):
                # the answers and the note given with it come back with the trial (a draft: shown
                # when no other label of this labeler stands, stored with the next verdict)
                self._drafts[undone.trial_id] = (dict(undone.criteria), undone.note)
            if self.queue_name is not None:
                self._refresh_outlook()  # a label fewer: labels to a verdict read again
            if back is not None:
                self.load_item(back)
                return
        self._progress()
        self._panel()

    def on_write_waiting(self, message: WriteWaiting) -> None:
        if self.saving is not None and not self._told_waiting:
            self._told_waiting = True
            self.notify("Saving the label: waiting for the database (another process writes)…")

    def on_label_changed(self, message: LabelChanged) -> None:
        """Another window (or process) labeled this trial as this labeler after this screen read it:
        ask before replacing that label; no keeps it and shows it."""
        self.saving, self._told_waiting = None, False
        c, args = message.conflict, message.args
        if c.verdict is None:
            now = "undid its label"
        else:
            when = c.at[11:19] if c.at and len(c.at) >= 19 else c.at
            now = f"labeled it {c.verdict} at {when}"
        question = (
            f"Since this trial was opened, {c.labeler} {now} in another window. "
            f"Replace that with {args['verdict']}?"
        )

        def answered(replace: bool | None) -> None:
            if replace:
                self.saving = args["trial_id"]
                self._writes.put(("label", args | {"expect_at": c.at or ""}))
            else:
                self.notify("Kept the label given in the other window.", markup=False)
                self._load_item(self.index)

        hint = "Enter replaces it · Esc keeps the other window's label"
        self.app.push_screen(ConfirmModal(question, hint), answered)

    def on_place_lost(self, message: PlaceLost) -> None:
        """Others filled this shared-queue trial while it was read (its lease had lapsed, or it
        was labeled elsewhere): the label is not stored, and the next trial is taken."""
        self.saving, self._told_waiting = None, False
        who = ", ".join(getattr(message.error, "by", []))
        self.notify(
            f"Not labeled: {who} labeled or took this trial while you read it. Your next trial:",
            severity="warning",
            markup=False,
        )
        self._refresh_outlook(advance=True)

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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # "reveal" stays enabled before this labeler's label: the key says why it reveals
        # nothing yet (a greyed key did nothing and said nothing)
        # typing [ or ] into a search box is not a step
        return not (action == "step" and isinstance(self.focused, Input))

    def action_scroll(self, lines: int) -> None:
        self.query_one(TranscriptView).action_scroll_lines(lines)

    def on_search_changed(self, message: SearchChanged) -> None:
        self.query_one(FindLine).show(message)

    def on_transcript_view_judge_toggled(self, message: TranscriptView.JudgeToggled) -> None:
        self.revealed = message.shown and self.mine is not None
        self._panel()

    def action_step(self, step: int) -> None:
        if self.state is None or not self.state.items:
            return
        j = self.index + step
        if 0 <= j < len(self.state.items):
            self.load_item(j)
        elif self.state.team is not None and step > 0:
            # a shared queue steps through your trials only: the rest are others' or still open
            done, total = self.state.team
            self.notify(
                f"That was your last trial so far: the team has {done} / {total} done; the next "
                "open one comes when you label this one."
                if self.mine is None
                else f"Nothing left for you now: the team has {done} / {total} done, the rest "
                "are held by others or wait for their labels."
            )
        else:
            self.notify("No more trials in this queue that way.")

    def action_reveal(self) -> None:
        if self.mine is None:
            self.notify(
                "Label this trial first: the judge stays hidden until you do.", severity="warning"
            )
            return
        self.revealed = not self.revealed
        transcript = self.query_one(TranscriptView)
        if not transcript.blind and transcript.show_judge != self.revealed:
            transcript.action_toggle_judge()
        self._panel()

    def action_note(self) -> None:
        def done(text: str | None) -> None:
            if text is None:
                return
            self.note = text
            if self.mine is not None:
                # the note belongs to the standing label: append it again with the note
                self._put_label(self.mine.verdict, tag=self.mine.tag, advance=False)
            self._panel()

        self.app.push_screen(NoteModal(self.note), done)

    def _put_label(self, verdict: str, *, tag: str | None, advance: bool) -> None:
        """Append the standing label again with this screen's criteria, note and ``tag``."""
        if self.payload is None:
            return
        self._writes.put(
            (
                "label",
                {
                    "trial_id": self.payload.trial_id,
                    "labeler": self.labeler,
                    "verdict": verdict,
                    "criteria": dict(self.criteria),
                    "note": self.note,
                    "rubric": self.rubric,
                    "queue": self.queue_name,
                    # the verdict stands as given: kept against the rubric if it is so
                    "override": True,
                    "tag": tag,
                    "advance": advance,
                },
            )
        )

    # --- drawing ------------------------------------------------------------------------------------

    def _progress(self) -> None:
        if self.state is None:
            return
        done, total = len(self.state.done), self.state.size
        minutes = max((time.monotonic() - self.started) / 60, 1 / 60)
        rate = f" · {self.given / minutes:.1f} labels/min" if self.given else ""
        items = self.state.items
        item = items[self.index] if 0 <= self.index < len(items) else None
        where = f" · trial {self.index + 1} of {total}" if item else ""
        split = f" · {item.split}" if item and item.split else ""
        counts = f"{done} / {total}"
        if self.state.team is not None:  # a shared queue: the team's progress, and this labeler's
            done, total = self.state.team
            counts = f"team {done} / {total} done · you labeled {len(self.state.done)}"
            where = ""
        self.query_one("#label-title", Static).update(
            safe_text(
                f"Labeling {self.what} as {self.labeler} — {counts}{rate}{where}{split}",
                single_line=True,
            )
        )
        self.query_one("#label-progress", ProgressBar).update(total=max(total, 1), progress=done)

    def _panel(self) -> None:
        crit = Text()
        if self.rubric is not None:
            crit.append_text(safe_text(self.rubric.ref, "bold", single_line=True))
            if self.rubric.pass_rule == "all":
                crit.append("  pass = every criterion yes", style="dim")
            crit.append("\n")
            for c in self.rubric.criteria:
                v = self.criteria.get(c.id)
                mark, style = (
                    ("✓ yes", "green") if v else (("✗ no", "red") if v is False else ("· ?", "dim"))
                )
                crit.append(f"[{c.key}] ", style="bold")
                crit.append(mark + " ", style=style)
                crit.append_text(safe_text(c.question))
                crit.append("\n")
                if c.help:
                    crit.append_text(safe_text("    " + c.help, "dim italic"))
                    crit.append("\n")
        crit.append(
            "p pass · f fail · K tag failure · x skip · u undo · c note · ] next", style="dim"
        )
        self.query_one("#label-criteria", Static).update(crit)

        mine = Text()
        if self.mine is None:
            mine.append("not labeled by you yet", style="italic")
        else:
            style = {"pass": "bold green", "fail": "bold red"}.get(self.mine.verdict, "bold yellow")
            mine.append("your label: ")
            mine.append(self.mine.verdict.upper(), style=style)
            if self.mine.tag:
                mine.append("  tag: ", style="dim")
                mine.append_text(safe_text(self.mine.tag, "bold", single_line=True))
            if self.mine.override:
                mine.append("  (override: against the rubric's rule)", style="yellow")
        self.query_one("#label-mine", Static).update(mine)
        self.query_one("#label-judge", Static).update(self._judge_text())
        note = Text()
        if self.note:
            note.append("note: ", style="dim")
            note.append_text(safe_text(self.note))
        self.query_one("#label-note", Static).update(note)
        self.query_one("#label-task", Static).update(self._task_text())

    def _judge_text(self) -> Text:
        """Nothing of the judge or other labelers before this labeler's label and ``v``."""
        judge = Text()
        if self.mine is None:
            judge.append("judge and other labelers hidden until you label", style="dim")
            return judge
        if not self.revealed:
            judge.append("v reveals the judge and other labelers", style="dim")
            return judge
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
            who = str(getattr(judged, "judge", "") or "")
            if who:  # two verdicts one above the other: which judge said which
                judge.append("  (")
                judge.append_text(safe_text(who, "cyan", single_line=True))
                judge.append(")")
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
        return judge

    def _task_text(self) -> Text:
        """The task's instruction and the harness's expected actions beside the agent's."""
        out = Text()
        ctx = self.context
        if ctx is None:
            return out
        if ctx.instruction:
            out.append("task" if ctx.source == "task" else "first user message", style="bold")
            out.append("\n")
            out.append_text(safe_text(ctx.instruction))
        if ctx.expected is not None:
            out.append("\n\nexpected actions (harness)\n", style="bold")
            if not ctx.expected:
                out.append("none (no database writes)\n", style="dim")
            for a in ctx.expected:
                out.append("✓ " if a.matched else "✗ ", style="green" if a.matched else "red")
                out.append_text(safe_text(a.text(), single_line=True))
                if a.differs:
                    out.append_text(
                        safe_text(
                            f"  differs in: {', '.join(a.differs)}", "yellow", single_line=True
                        )
                    )
                out.append("\n")
            out.append("\nactions taken\n", style="bold")
            if not ctx.actual:
                out.append("none\n", style="dim")
            for a in ctx.actual:
                out.append("✓ " if a.matched else "· ", style="green" if a.matched else "dim")
                out.append_text(safe_text(a.text(), single_line=True))
                out.append("\n")
        return out


def _active_items(status: QueueStatus) -> list[QueueItem]:
    """An active queue as the screen steps through it: the trials labeled, oldest label first,
    then the one decided next."""
    items = list(status.labeled)
    if status.next_item is not None and status.next_item not in items:
        items.append(status.next_item)
    return items


def _outlook_text(status: QueueStatus) -> str:
    """The status line beside the progress bar: labels to a verdict, and for an active queue how
    its next trial is picked (never which judge verdict it has)."""
    parts = [] if status.outlook is None else [status.outlook.phrase()]
    if status.active and status.next_item is not None:
        parts.append("picked to tighten kappa")
    if status.shared and status.team is not None:
        others = sorted({k.labeler for k in status.team.leases} - {status.labeler})
        if others:
            parts.append(f"also labeling: {', '.join(others)}")
    return " · ".join(parts)
