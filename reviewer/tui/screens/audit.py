"""The Audit view: what `reviewer audit` found in each run (leaked state, copies, hollow passes,
order effects), a finding's evidence beside the table, its trials one Enter away. ``R`` audits
again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.text import visible
from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cursor_key, cut_end, share_room, table_room
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table
from reviewer.workflows.audit import copies_once, kind_count, not_kept_line

_STYLE = {"leak": "bold red", "copy": "yellow", "hollow": "magenta", "order": "cyan"}


class AuditLoaded(Message):
    """Each run's audit summary (``RunAudit.to_dict`` shape, findings included)."""

    def __init__(self, runs: list[dict[str, Any]]) -> None:
        super().__init__()
        self.runs = runs


def _fmt(v: Any) -> str:
    return "-" if not isinstance(v, int | float) else f"{v:.2f}"


#: The most cells the run and the task columns take each (the evidence under the table names them).
NAME_ROOM = 24
#: The least the finding keeps before run and task give way.
FINDING_MIN = 24
#: The most of a finding's trial numbers shown (the evidence lists them all).
TRIALS_ROOM = 12


@dataclass(frozen=True)
class Finding:
    """One row of the findings table as plain one-line text (names made visible)."""

    key: str
    kind: str
    run: str
    task: str
    trials: str
    title: str
    effect: str


def _finding(run: dict[str, Any], i: int, f: dict[str, Any]) -> Finding:
    trials = ", ".join(str(t["trial"]) for t in f["trials"]) or "-"
    return Finding(
        key=f"{run['run']}\x00{i}",
        kind=visible(f["kind"], single_line=True),
        run=visible(run["run"], single_line=True),
        task=visible(f.get("task_id") or "-", single_line=True),
        trials=cut_end(Text(trials), TRIALS_ROOM).plain,
        title=f["title"],
        effect=f"{_fmt(run['pass_hat_k_reported'])}→{_fmt(f['pass_hat_k_adjusted'])}",
    )


class AuditScreen(ReviewerScreen):
    """One row per finding across the runs shown (one run, or all)."""

    BINDINGS = [
        Binding("enter", "open", "Trials", id="audit.open"),
        Binding("R", "rerun", "Audit again", id="audit.rerun"),
        Binding("escape", "app.pop_screen", "Back", id="audit.back"),
    ]

    DEFAULT_CSS = """
    AuditScreen #audit-summary { height: auto; max-height: 8; padding: 0 1; }
    AuditScreen #audit-findings { height: 1fr; }
    AuditScreen #audit-evidence { height: 9; padding: 0 1; border-top: solid $primary; }
    """

    def __init__(self, run: str | None = None) -> None:
        super().__init__()
        self.run = run
        self.rows: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        title = "Audit" if self.run is None else f"Audit of {self.run}"
        yield Static(safe_text(title, single_line=True), classes="title")
        yield Static("auditing…", id="audit-summary")
        yield Table(id="audit-findings", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="audit-evidence"):
            yield Static("", id="audit-detail")
        yield Static("", id="audit-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.runs: list[dict[str, Any]] = []
        self._columns(self.query_one("#audit-findings", DataTable), [])
        self.load(False)

    def _columns(self, table: DataTable[Any], rows: list[Finding]) -> dict[str, int]:
        """The columns at this width, from the findings themselves: kind, trials and the pass^k
        change never cut, run and task as wide as their widest (cut in the middle when the screen
        is narrow), the finding takes the rest (cut with "…")."""
        widths = {
            "kind": max([4] + [len(f.kind) for f in rows]),
            "trials": max([6] + [len(f.trials) for f in rows]),
            "effect": max([6] + [len(f.effect) for f in rows]),
        }
        wants = {
            "run": min(NAME_ROOM, max([3] + [len(f.run) for f in rows])),
            "task": min(NAME_ROOM, max([4] + [len(f.task) for f in rows])),
        }
        shared = share_room(table_room(self.size.width or 120, widths), wants, FINDING_MIN)
        widths.update(run=shared["run"], task=shared["task"], what=shared["free"])
        table.clear(columns=True)
        for key, label in (
            ("kind", "kind"),
            ("run", "run"),
            ("task", "task"),
            ("trials", "trials"),
            ("what", "finding"),
            ("effect", Text("pass^k", justify="right")),
        ):
            table.add_column(label, key=key, width=widths[key])
        return widths

    def _fill(self, table: DataTable[Any]) -> None:
        from reviewer.text import distinct_elisions

        rows = [_finding(run, i, f) for run in self.runs for i, f in enumerate(run["findings"])]
        widths = self._columns(table, rows)
        runs = distinct_elisions(sorted({f.run for f in rows}), widths["run"])
        tasks = distinct_elisions(sorted({f.task for f in rows}), widths["task"])
        for f in rows:
            table.add_row(
                Text(f.kind, style=_STYLE.get(f.kind, "")),
                Text(runs[f.run], no_wrap=True),
                Text(tasks[f.task], no_wrap=True),
                Text(f.trials, no_wrap=True),
                cut_end(safe_text(f.title, single_line=True, limit=400), widths["what"]),
                Text(f.effect, justify="right"),
                key=f.key,
            )

    def on_resize(self) -> None:
        table = self.query_one("#audit-findings", DataTable)
        if table.row_count:
            keep = table.cursor_row
            self._fill(table)
            table.move_cursor(row=min(max(keep, 0), table.row_count - 1))

    def action_rerun(self) -> None:
        self.query_one("#audit-status", Static).update("auditing…")
        self.load(True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="audit-load")
    def load(self, again: bool) -> None:
        from reviewer.workflows.audit import audit_runs, stored_audit
        from reviewer.workflows.store_access import run_names

        with self.store() as db:
            runs = [self.run] if self.run is not None else run_names(db)
            if again:
                out = [r.to_dict() for r in audit_runs(db, runs)]
            else:
                out = []
                for run in runs:
                    stored = stored_audit(db, run)
                    if stored is not None:
                        out.append(stored.to_dict())
        self.post_message(AuditLoaded(out))

    def on_audit_loaded(self, message: AuditLoaded) -> None:
        lines = Text()
        table = self.query_one("#audit-findings", DataTable)
        table.clear()
        self.rows = {}
        clean = [r for r in message.runs if not r["findings"]]
        for run in message.runs:
            if run["findings"] or len(message.runs) == 1:
                if lines:
                    lines.append("\n")
                lines.append_text(_summary(run))
            for i, f in enumerate(run["findings"]):
                key = f"{run['run']}\x00{i}"
                self.rows[key] = {**f, "run": run["run"], "k": run["k"]}
        self.runs = message.runs
        self._fill(table)
        if clean and len(message.runs) > 1:
            n = len(clean)
            lines.append(("\n" if lines else "") + f"{n} run{'' if n == 1 else 's'}: no finding")
        self.query_one("#audit-summary", Static).update(lines or Text("no runs yet"))
        n = table.row_count
        self.query_one("#audit-status", Static).update(
            Text(
                f"{n} finding{'' if n == 1 else 's'} · Enter: the finding's trials · R audit again"
            )
        )
        if n:
            table.focus()
            self._show(cursor_key(table))
        elif not message.runs:
            self.query_one("#audit-status", Static).update(Text("nothing to audit · R audit again"))
            self.query_one("#audit-detail", Static).update(
                Text("No trials to audit yet: import a run first (i on the runs screen).")
            )
        else:
            self.query_one("#audit-detail", Static).update(
                Text("No finding: the trials look independent.")
            )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._show(str(event.row_key.value))

    def _show(self, key: str | None) -> None:
        f = self.rows.get(key or "")
        if f is None:
            return
        text = safe_text(f["title"])
        text.stylize("bold")
        for line in f["evidence"]:
            text.append("\n  ")
            text.append_text(safe_text(line))
        text.append(
            f"\npass^{f['k']} with this finding taken into account: "
            f"{_fmt(f['pass_hat_k_adjusted'])}"
        )
        self.query_one("#audit-detail", Static).update(text)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self._open(str(event.row_key.value))

    def action_open(self) -> None:
        key = cursor_key(self.query_one("#audit-findings", DataTable))
        if key is not None:
            self._open(key)

    def _open(self, key: str) -> None:
        from reviewer.tui.nav import ListSequence
        from reviewer.tui.screens.transcript import TranscriptScreen

        f = self.rows.get(key)
        ids: Sequence[str] = [t["id"] for t in f["trials"]] if f else []
        if not ids:
            self.notify("An order effect names no single trial: see its tasks in the run.")
            return
        self.app.push_screen(TranscriptScreen(ids[0], ListSequence(ids)))


def _summary(run: dict[str, Any]) -> Text:
    counts = {k: v for k, v in run["counts"].items() if v}
    what = ", ".join(kind_count(k, n) for k, n in counts.items()) or "no finding"
    line = safe_text(run["run"], "bold", single_line=True, limit=40)
    line.append(f": {what} in {run['trials']} trials · pass^{run['k']} ")
    line.append(f"{_fmt(run['pass_hat_k_reported'])} as reported, ")
    line.append(copies_once(run["k"], run["pass_hat_k_copies_once"]))
    for kind, n in (run.get("not_stored") or {}).items():
        if n:
            line.append(f"\n  {not_kept_line(kind, n)}")
    return line
