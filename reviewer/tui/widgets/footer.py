"""The footer every screen uses: `? Help`, the way back and `q Quit` come first, so a narrow terminal
(80 columns) cuts the screen's own keys on the right, never these three."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: actions shown first, in this order
FIRST = ("help", "app.pop_screen", "back", "leave", "quit")


def _rank(action: str) -> int:
    return FIRST.index(action) if action in FIRST else len(FIRST)


class KeyFooter(Footer):
    def __init__(self) -> None:
        super().__init__(compact=True)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        active = self.screen.active_bindings
        seen: set[str] = set()
        shown = []
        for _, binding, enabled, tooltip in active.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            shown.append((binding, enabled, tooltip))
        # a stable sort: the screen's own order after the first three
        shown.sort(key=lambda b: _rank(b[0].action))
        self.styles.grid_size_columns = len(shown)
        for binding, enabled, tooltip in shown:
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)
