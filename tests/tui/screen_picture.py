"""The screen as a user sees it: the composed rows of the terminal as plain text."""

from __future__ import annotations

from textual.app import App


def picture(app: App[object]) -> list[str]:
    """Every row of the terminal (screen and toasts), as text."""
    strips = app.screen._compositor.render_strips()
    return [strip.text for strip in strips]


def picture_text(app: App[object]) -> str:
    return "\n".join(picture(app))
