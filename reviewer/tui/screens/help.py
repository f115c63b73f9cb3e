"""`?`: every key that applies here, from the bindings themselves (so remapped keys show as remapped)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from reviewer.tui.keys import key_display


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark", "dismiss", "Close", id="help.close")]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 110; height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, screen: Screen[object]) -> None:
        super().__init__()
        self.for_screen = screen

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self._table(), id="help-table")

    def _table(self) -> Table:
        table = Table(
            title=Text("Keys (Esc closes) · remap them in reviewer.toml [keys] by id"),
            expand=True,
        )
        table.add_column(Text("key"), style="bold", no_wrap=True)
        table.add_column(Text("does"))
        table.add_column(Text("id (for [keys])"), style="dim", no_wrap=True)
        keymap = getattr(self.app, "_keymap", {})
        seen: set[tuple[str, str]] = set()
        sources: list[tuple[str, list[Binding]]] = []
        for node in [self.for_screen, *self.for_screen.query("*")]:
            own = type(node).__dict__.get("BINDINGS")  # declared by our class, not inherited
            if own and type(node).__module__.startswith("reviewer."):
                sources.append((_where(node), [b for b in own if isinstance(b, Binding)]))
        sources.append(("everywhere", [b for b in self.app.BINDINGS if isinstance(b, Binding)]))
        for where, bindings in sources:
            rows = []
            for b in bindings:
                if not b.description:
                    continue
                key = keymap.get(b.id, b.key) if b.id else b.key
                if (key, b.description) in seen:
                    continue
                seen.add((key, b.description))
                rows.append((key_display(key), b.description, b.id or ""))
            if where == "this screen":
                rows += _criteria_rows(self.for_screen)
            if rows:
                table.add_row(Text(where, style="italic"), Text(""), Text(""))
                for key, desc, bid in rows:
                    table.add_row(Text(key), Text(desc), Text(bid))
        return table


def _where(node: object) -> str:
    from textual.screen import Screen as _Screen

    if isinstance(node, _Screen):
        return "this screen"
    return {"TranscriptView": "the transcript"}.get(type(node).__name__, type(node).__name__)


def _criteria_rows(screen: object) -> list[tuple[str, str, str]]:
    """The labeling screen's rubric criteria: their number keys (read by ``on_key``, not bindings)."""
    rubric = getattr(screen, "rubric", None)
    criteria = getattr(rubric, "criteria", None) or []
    if not criteria or not hasattr(screen, "action_label"):
        return []
    out = []
    for c in criteria:
        if not getattr(c, "key", ""):
            continue  # a criterion without a key is answered in the panel only
        question = getattr(c, "question", "") or getattr(c, "id", "")
        out.append((str(c.key), f"criterion: {question} (yes → no → unset)", ""))
    return out


def _pretty(keys: str) -> str:
    """Key names as typed (kept for callers; ``keys.key_display`` is the one rule)."""
    return key_display(keys)
