"""What full-text search indexes of a trial (migration m011's two columns): the conversation, and
the system prompt apart, searched only when asked. Plain functions over a ``Trial``, no SQL."""

from __future__ import annotations

import json

from reviewer.models import Trial


def search_text(trial: Trial) -> str:
    """What full-text search sees of a trial's conversation: every message but the system prompt,
    tool call arguments, reason and error."""
    parts = [m.content for m in trial.messages if m.content and m.role != "system"]
    for m in trial.messages:
        for c in m.tool_calls:
            parts.append(c.name)
            if c.arguments:
                parts.append(
                    c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)
                )
    if trial.reason:
        parts.append(trial.reason)
    if trial.error and trial.error.message:
        parts.append(trial.error.message)
    return "\n".join(parts)


def system_text(trial: Trial) -> str:
    """The system prompt(s) of a trial: searched only when asked (``search_system``)."""
    return "\n".join(m.content for m in trial.messages if m.content and m.role == "system")
