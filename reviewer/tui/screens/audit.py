"""The Audit view: what `reviewer audit` found in each run (leaked state, copies, hollow passes,
order effects), a finding's evidence beside the table, its trials one Enter away. ``R`` audits
again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cursor_key
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.workflows.audit import copies_once, kind_count, not_kept_line

_STYLE = {"leak": "bold red", "copy": "yellow", "hollow": "magenta", "order": "cyan"}


class AuditLoaded(Message):
    """Each run's audit summary (``RunAudit.to_dict`` shape, findings included)."""

    def __init__(self, runs: list[dict[str, Any]]) -> None:
        super().__init__()
        self.runs = runs


def _fmt(v: Any) -> str:
    return "-" if not isinstance(v, int | float) else f"{v:.2f}"


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
        yield DataTable(id="audit-findings", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="audit-evidence"):
            yield Static("", id="audit-detail")
        yield Static("", id="audit-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#audit-findings", DataTable)
        for key, label in (
            ("kind", "kind"),
            ("run", "run"),
            ("task", "task"),
            ("trials", "trials"),
            ("what", "finding"),
            ("effect", Text("pass^k", justify="right")),
        ):
            table.add_column(label, key=key)
        self.load(False)

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
                trials = ", ".join(str(t["trial"]) for t in f["trials"]) or "-"
                table.add_row(
                    Text(f["kind"], style=_STYLE.get(f["kind"], "")),
                    safe_text(run["run"], single_line=True, limit=24),
                    safe_text(f.get("task_id") or "-", single_line=True, limit=20),
                    safe_text(trials, single_line=True, limit=12),
                    safe_text(f["title"], single_line=True, limit=70),
                    Text(
                        f"{_fmt(run['pass_hat_k_reported'])}→{_fmt(f['pass_hat_k_adjusted'])}",
                        justify="right",
                    ),
                    key=key,
                )
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
