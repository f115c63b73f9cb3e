"""`?`: every key that applies here, from the bindings themselves (so remapped keys show as remapped)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", id="help.close")]

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
            title=Text("Keys (Esc closes) — remap any of them in reviewer.toml [keys] by id"),
            expand=True,
        )
        table.add_column("key", style="bold", no_wrap=True)
        table.add_column("does")
        table.add_column(Text("id (for [keys])"), style="dim", no_wrap=True)
        keymap = getattr(self.app, "_keymap", {})
        seen: set[tuple[str, str]] = set()
        sources: list[tuple[str, list[Binding]]] = []
        for node in [self.for_screen, *self.for_screen.query("*")]:
            if node.BINDINGS:
                sources.append(
                    (type(node).__name__, [b for b in node.BINDINGS if isinstance(b, Binding)])
                )
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
                rows.append((key, b.description, b.id or ""))
            if rows:
                table.add_row(Text(where, style="italic"), "", "")
                for key, desc, bid in rows:
                    table.add_row(Text(_pretty(key)), Text(desc), Text(bid))
        return table


def _pretty(keys: str) -> str:
    names = {
        "question_mark": "?",
        "escape": "Esc",
        "enter": "Enter",
        "space": "Space",
        "slash": "/",
        "right_square_bracket": "]",
        "left_square_bracket": "[",
        "full_stop": ".",
        "comma": ",",
        "plus": "+",
        "minus": "-",
        "asterisk": "*",
        "tab": "Tab",
        "shift+tab": "Shift+Tab",
        "pageup": "PgUp",
        "pagedown": "PgDn",
    }
    return ", ".join(names.get(k.strip(), k.strip()) for k in keys.split(","))
