"""What `reviewer PATHS` could not import, shown inside the app when it opens (the terminal's lines
are covered by the app at once): the problems and the skipped records as ``file:line: reason``."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from reviewer.tui.safe import safe_text


class ImportReport(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter", "dismiss", "Close", id="importreport.close")]
    DEFAULT_CSS = """
    ImportReport { align: center middle; }
    ImportReport > Vertical {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    ImportReport VerticalScroll { height: auto; max-height: 30; }
    ImportReport .title { margin-bottom: 1; }
    """

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.TITLE_TEXT, classes="title")
            with VerticalScroll():
                yield Static(safe_text("\n".join(self.lines)), id="import-report")

    TITLE_TEXT = "The import had problems (Esc closes)"


class ExportReport(ImportReport):
    """An export's summary too long for a toast (the skipped trials and why): wrapped, scrollable."""

    BINDINGS = [Binding("escape,enter", "dismiss", "Close", id="exportreport.close")]
    TITLE_TEXT = "Regression tasks (Esc closes)"
