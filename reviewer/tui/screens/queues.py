"""Calibration queues: their progress, a new stratified sample (a form: size and runs), and labeling
one (Enter)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Checkbox, DataTable, Header, Input, SelectionList, Static

from reviewer.text import counted
from reviewer.tui.safe import clean, safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cursor_key
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table

if TYPE_CHECKING:
    from reviewer.tui.app import ReviewerApp
    from reviewer.workflows.queues import TeamProgress


#: How often the queue list reads the queues' progress again while it is shown (seconds).
QUEUES_REFRESH_S = 15.0


@dataclass(frozen=True)
class QueueRow:
    """One queue as the list shows it."""

    name: str
    labeler: str
    done: int
    total: int
    created: str
    active: bool = False
    #: labels the judge's trust verdict needs, e.g. "~120 labels to a verdict"
    outlook: str = ""
    #: how an active queue picks its next trial (never the judge's verdict of it)
    why: str = ""
    #: a shared queue's labels per trial (0: not shared)
    per_trial: int = 0
    #: who labeled how many; who holds which trial now; how the labelers agree
    team: str = ""


class QueuesLoaded(Message):
    def __init__(self, rows: list[QueueRow], runs: list[str]) -> None:
        super().__init__()
        self.rows = rows
        self.runs = runs


@dataclass(frozen=True)
class NewQueue:
    """What the `a` form asks for."""

    size: int
    runs: list[str]
    active: bool = False
    #: a shared queue's labels per trial (0: a queue of one labeler)
    per_trial: int = 0


class NewQueueForm(ModalScreen[NewQueue | None]):
    """How many trials, from which runs, active or shared: the app's face of
    `reviewer sample --size N --run R [--active | --shared --labels-per-trial K]`."""

    BINDINGS = [
        Binding("ctrl+s", "make", "Make queue", id="new_queue.make"),
        Binding("escape", "cancel", "Cancel", id="new_queue.cancel"),
    ]
    DEFAULT_CSS = """
    NewQueueForm { align: center middle; }
    NewQueueForm > VerticalScroll { width: 70%; max-width: 80; height: auto; max-height: 90%;
                                    border: thick $accent; background: $surface; padding: 0 1; }
    /* an option's label is cut with an ellipsis, never past the dialog's edge */
    NewQueueForm Checkbox { width: 1fr; }
    NewQueueForm SelectionList { height: auto; max-height: 12; }
    NewQueueForm SelectionList > .selection-list--button { color: $text-muted; }
    NewQueueForm SelectionList > .selection-list--button-selected,
    NewQueueForm SelectionList > .selection-list--button-selected-highlighted {
        color: $success; text-style: bold;
    }
    NewQueueForm #new-queue-chosen { color: $text-muted; }
    """

    def __init__(self, runs: list[str], chosen: list[str], size: int) -> None:
        super().__init__()
        self.runs = runs
        self.chosen = chosen
        self.default_size = size

    def compose(self) -> ComposeResult:
        # scrolls: at 80x24 the form is taller than the screen, and focus scrolls its field in view
        with VerticalScroll():
            yield Static("New calibration queue — Enter or ctrl+s makes it, Esc cancels")
            yield Static("trials to sample")
            yield Input(str(self.default_size), type="integer", id="new-queue-size")
            yield Static("runs (space toggles; none ticked = every run)")
            yield SelectionList[str](
                *[(safe_text(r, single_line=True), r, r in self.chosen) for r in self.runs],
                id="new-queue-runs",
            )
            yield Static(self._chosen_text(self.chosen), id="new-queue-chosen")
            yield Checkbox(
                "active: each next trial picked to tighten the kappa estimate most"
                " (needs judge verdicts)",
                id="new-queue-active",
            )
            yield Checkbox(
                "shared: several labelers split it, each taking a lease on the trial they label",
                id="new-queue-shared",
            )
            yield Static("labels per trial (shared; 2 or more measures agreement)")
            yield Input("1", type="integer", id="new-queue-per-trial")
            yield Static("", id="new-queue-error")

    def on_mount(self) -> None:
        self.query_one("#new-queue-size", Input).focus()

    def _chosen_text(self, chosen: list[str]) -> Text:
        """Which runs the queue samples, in words: the ticks alone are easy to misread."""
        if not chosen:
            return Text(f"none ticked: sampled from every run ({len(self.runs)})")
        text = Text(f"ticked {len(chosen)} of {len(self.runs)}: ")
        text.append_text(safe_text(", ".join(chosen), single_line=True, limit=200))
        return text

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged[str]) -> None:
        chosen = [r for r in self.runs if r in set(event.selection_list.selected)]
        self.query_one("#new-queue-chosen", Static).update(self._chosen_text(chosen))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_make()

    def action_make(self) -> None:
        raw = self.query_one("#new-queue-size", Input).value.strip()
        size = int(raw) if raw.isdigit() else 0
        error = self.query_one("#new-queue-error", Static)
        if size < 1:
            error.update(Text("the size is a whole number, 1 or more", style="red"))
            return
        active = self.query_one("#new-queue-active", Checkbox).value
        shared = self.query_one("#new-queue-shared", Checkbox).value
        raw = self.query_one("#new-queue-per-trial", Input).value.strip() or "1"
        per_trial = int(raw) if raw.isdigit() else 0
        if active and shared:
            error.update(Text("a queue is active or shared, not both", style="red"))
            return
        if shared and not 1 <= per_trial <= 50:
            error.update(Text("labels per trial is a whole number from 1 to 50", style="red"))
            return
        runs = list(self.query_one(SelectionList).selected)
        self.dismiss(NewQueue(size, runs, active, per_trial if shared else 0))

    def action_cancel(self) -> None:
        self.dismiss(None)


class QueueMade(Message):
    """The `a` form's queue: sampled now, or found stored under its default name."""

    def __init__(
        self,
        name: str,
        created: bool,
        done: int,
        total: int,
        shortfall: str | None = None,
        infra: int = 0,
    ) -> None:
        super().__init__()
        self.infra = infra  # trials ended by infrastructure errors, left out of the sample
        self.name = name
        self.created = created
        self.done = done
        self.total = total
        self.shortfall = shortfall


class QueuesScreen(ReviewerScreen):
    BINDINGS = [
        Binding("enter", "label", "Label", id="queues.label"),
        Binding("a", "new", "New queue", id="queues.new"),
        Binding("escape", "app.pop_screen", "Back", id="queues.back"),
    ]

    def __init__(self, run: str | None = None) -> None:
        super().__init__()
        self.run = run
        self.runs: list[str] = []
        self.rows: dict[str, QueueRow] = {}
        #: the queue to highlight after the next load (one just made)
        self.focus_on: str | None = None

    def _app(self) -> ReviewerApp:
        return cast("ReviewerApp", self.app)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Calibration queues", classes="title")
        yield Table(id="queues", cursor_type="row", zebra_stripes=True)
        yield Static("loading…", id="queues-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#queues", DataTable)
        table.add_column("queue", key="queue")
        table.add_column("labeler", key="labeler")
        table.add_column(Text("done", justify="right"), key="done")
        table.add_column("kind", key="kind")
        table.add_column("to verdict", key="verdict")
        table.add_column("created", key="created")
        self.load()
        # others label the same queues: their progress shows without a key press
        self.set_interval(QUEUES_REFRESH_S, self._refresh)

    def _refresh(self) -> None:
        if self.app.screen is self:
            self.load()

    def on_screen_resume(self) -> None:
        """Back from labeling: the progress shown is the database's, not the one at first sight
        (read again a moment later too: the label screen gives its lease back as it closes)."""
        self.load()
        self.set_timer(0.5, self.load)

    @work(thread=True, exclusive=True, exit_on_error=False, group="queues-load")
    def load(self) -> None:
        from reviewer.workflows.agreement import configured_threshold
        from reviewer.workflows.queues import list_queues, progress_of, queue_status
        from reviewer.workflows.store_access import run_names

        threshold, _ = configured_threshold(self.app.settings)
        with self.store() as db:
            runs = run_names(db)
            rows = []
            for q in list_queues(db):
                who = progress_of(q, self._app().labeler)  # as `reviewer queues` shows it
                st = queue_status(db, q.name, who, threshold=threshold)
                team = st.team
                rows.append(
                    QueueRow(
                        q.name,
                        q.labeler,
                        st.done,
                        st.total,
                        q.created_at[:16].replace("T", " "),
                        st.active,
                        "" if st.outlook is None else st.outlook.phrase(),
                        st.choice.neutral() if st.choice is not None else "",
                        team.per_trial if team is not None and team.shared else 0,
                        "" if team is None else team_text(team, q.labeler),
                    )
                )
        self.post_message(QueuesLoaded(rows, runs))

    def on_queues_loaded(self, message: QueuesLoaded) -> None:
        self.runs = message.runs
        table = self.query_one("#queues", DataTable)
        keep = self.focus_on or self._current()  # the queue highlighted stays highlighted
        if self.focus_on in {r.name for r in message.rows}:
            # a new queue, once a load holds it (a load begun before it was made, such as the
            # one on coming back from the form, does not: the queue waits for the next)
            self.focus_on = None
        elif self.focus_on is not None:
            keep = self._current()
        table.clear()
        self.rows = {r.name: r for r in message.rows}
        for r in message.rows:
            table.add_row(
                safe_text(r.name, single_line=True),
                Text("(team)") if r.per_trial else safe_text(r.labeler, single_line=True),
                Text(
                    f"{r.done} / {r.total}",
                    justify="right",
                    style="green" if r.done == r.total else "",
                ),
                Text(
                    "active"
                    if r.active
                    else f"shared ×{r.per_trial}"
                    if r.per_trial
                    else "stratified"
                ),
                Text(r.outlook.replace(" to a verdict", "")),
                safe_text(r.created, single_line=True),
                key=r.name,
            )
        if keep in self.rows:
            table.move_cursor(row=table.get_row_index(keep))
        self._status_line()
        table.focus()

    def _status_line(self) -> None:
        """The queues, and for the highlighted one how it picks and what the verdict needs."""
        who = self._app().labeler
        line = (
            f"{counted(len(self.rows), 'queue')} · labeling as {who} · Enter labels the queue · "
            "a makes a new one"
        )
        row = self.rows.get(self._current() or "")
        if row is not None and row.team:
            line = f"{row.name}: {row.team}\n{line}"
        if row is not None and row.outlook:
            how = f" · active: {row.why}" if row.active and row.why else ""
            line = f"{row.name}: {row.outlook}{how}\n{line}"
        self.query_one("#queues-status", Static).update(safe_text(line))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.rows:
            self._status_line()

    def _current(self) -> str | None:
        return cursor_key(self.query_one("#queues", DataTable))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_label()

    def action_label(self) -> None:
        from reviewer.tui.screens.label import LabelScreen

        name = self._current()
        if name is None:
            self.notify("No queue yet: press a to sample one.", severity="warning")
            return
        app = self._app()
        self.app.push_screen(LabelScreen(name, app.labeler, app.rubric))

    def action_new(self) -> None:
        from reviewer.workflows.queues import DEFAULT_SIZE

        def made(answer: NewQueue | None) -> None:
            if answer is not None:
                self.sample(answer.size, answer.runs, answer.active, answer.per_trial)

        chosen = [self.run] if self.run else []
        self.app.push_screen(NewQueueForm(self.runs, chosen, DEFAULT_SIZE), made)

    @work(thread=True, exclusive=True, exit_on_error=False, group="queues-sample")
    def sample(self, size: int, runs: list[str], active: bool = False, per_trial: int = 0) -> None:
        """The same job as `reviewer sample --size N --run R [--active | --shared
        --labels-per-trial K]`: a new queue, or the stored one."""
        from reviewer.workflows.queues import make_queue

        app = self._app()
        try:
            with self.store() as db:
                made = make_queue(
                    db, app.labeler, n=size, runs=runs, active=active, per_trial=per_trial
                )
        except ValueError as e:  # nothing left to sample, an unknown run, no judge verdicts
            self.notify(clean(str(e), single_line=True), severity="warning", markup=False)
            return
        self.post_message(
            QueueMade(
                made.queue.name,
                made.created,
                made.done,
                made.total,
                made.shortfall,
                made.infra_left_out,
            )
        )

    def on_queue_made(self, message: QueueMade) -> None:
        name = clean(message.name, single_line=True)
        if message.created:
            short = f" ({message.shortfall})" if message.shortfall else ""
            crashed = (
                f" {message.infra} ended by "
                f"{'an infrastructure error' if message.infra == 1 else 'infrastructure errors'}"
                " left out."
                if message.infra
                else ""
            )
            self.notify(
                f"Queue {name}: {message.total} trials sampled{short}.{crashed}",
                severity="warning" if short else "information",
                markup=False,
            )
            self.focus_on = message.name
            self.load()
            return
        self.notify(
            f"Queue {name} exists ({message.done} / {message.total} labeled): resuming it.",
            markup=False,
        )
        from reviewer.tui.screens.label import LabelScreen

        app = self._app()
        self.app.push_screen(LabelScreen(message.name, app.labeler, app.rubric))


def team_text(team: TeamProgress, owner: str) -> str:
    """One line of who labeled a queue: each labeler's count; a shared queue's trials with all
    their labels, who holds which trial now and, with two or more labels a trial, how they agree
    (Krippendorff's alpha, the trials they split on). Nothing for a queue of one labeler
    (``owner``) that nobody else labeled: its progress says it (as ``reviewer queues``)."""
    if not team.shared and set(team.by_labeler) <= {owner}:
        return ""
    counts = ", ".join(f"{w} {n}" for w, n in team.by_labeler.items())
    parts = [f"labeled by {counts}"] if counts else []
    if team.shared:
        need = "labeled" if team.per_trial == 1 else f"with all {team.per_trial} labels"
        parts.insert(0, f"team {team.complete} / {team.total} {need}")
        held = ", ".join(f"{k.labeler} on {k.position}" for k in team.leases)
        if held:
            parts.append(f"now: {held}")
        if team.per_trial >= 2 and team.items:
            alpha = "n/a" if team.alpha is None else f"{team.alpha:.2f}"
            parts.append(f"{len(team.disagreements)} split of {len(team.items)} · alpha {alpha}")
    return " · ".join(parts)
