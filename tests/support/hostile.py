"""Hostile names for the terminal tests: every escape and markup trick in every field a user can name.

``build(folder)`` writes a folder to import: a run, task ids, a file name, rule ids, a rubric, judge
rationales, a bad line (so a skip line names the file) that each carry these sequences.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.conftest import native_trial

OSC52 = "\x1b]52;c;aGVsbG8=\x07"  # clipboard write
OSC0 = "\x1b]0;pwned\x07"  # window title
OSC8 = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"  # hyperlink
CSI = "\x1b[2J\x1b[31m"  # clear screen, red
C1 = "\x9b2J\x9d0;t\x9c\x85"  # CSI, OSC, ST, NEL as C1 controls
NUL = "\x00"
BIDI = "\u202e\u2066\u2067\u2068\u2069\u200e\u200f"
TAGS = "\U000e0041\U000e007f"
SEPARATORS = "\u2028\u2029\u200b"
MARKUP = "[/tmp] [bold]b[/bold] [@click=app.quit]q[/] [link=https://evil.example]l[/link]"

ESCAPES = OSC52 + OSC0 + OSC8 + CSI + C1 + NUL + BIDI + TAGS + SEPARATORS
EVERYTHING = ESCAPES + MARKUP
# what a command-line argument can carry (no NUL)
ARG = ESCAPES.replace(NUL, "") + MARKUP

# what must never reach a terminal raw: C0 (but tab/newline), DEL, C1, bidi, zero-width, separators, tags
DANGEROUS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
    "\U000e0000-\U000e007f]"
)

RUN = "run " + EVERYTHING
TASK = "copy file to [/tmp] dir " + ESCAPES
FILE = "tr" + OSC0 + "ials\u202e" + CSI + ".jsonl"
RULE = "rule " + EVERYTHING
RATIONALE = "because " + EVERYTHING


def stored(s: str) -> str:
    """S as the store gives it back: PostgreSQL text cannot hold NUL, so there reviewer keeps a
    NUL as U+2400 (store/postgres.py); SQLite keeps it."""
    from reviewer.store.postgres import NUL_SHOWN
    from tests.conftest import on_postgres

    return s.replace(NUL, NUL_SHOWN) if on_postgres() else s


def records() -> list[dict[str, Any]]:
    recs = []
    for trial, passed in ((1, True), (2, False), (3, False)):
        rec = native_trial(TASK, passed=passed, trial=trial, run=RUN)
        rec["judge"] = {
            "verdict": "pass" if passed else "fail",
            "rationale": RATIONALE,
            "model": "judge " + EVERYTHING,
        }
        rec["error"] = {"type": "ToolError", "message": "failed " + EVERYTHING}
        rec["outcome"]["reason"] = "reason " + EVERYTHING
        recs.append(rec)
    other = native_trial("plain", passed=True, trial=1, run=RUN)
    recs.append(other)
    return recs


def toml_str(s: str) -> str:
    """A TOML basic string spelling every non-ASCII or control character as an escape."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif o < 0x20 or 0x7F <= o <= 0xFFFF and o > 0x7E:
            out.append(f"\\u{o:04x}")
        elif o > 0xFFFF:
            out.append(f"\\U{o:08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def build(folder: Path) -> Path:
    """The hostile folder: one trial file (with one bad line), rules and a rubric."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in records()] + ['{"task_id": "' + "x" + '", "messages": 3}']
    (folder / FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "rules.toml").write_text(
        "[[rule]]\n"
        f"id = {toml_str(RULE)}\n"
        'type = "forbid_tool"\n'
        'tool = "get_order"\n'
        'severity = "policy"\n'
        f"description = {toml_str('never ' + EVERYTHING)}\n",
        encoding="utf-8",
    )
    (folder / "rubric.toml").write_text(
        f"name = {toml_str('rubric [/tmp] [bold]b[/bold]')}\n"
        'version = "1"\n'
        'pass_rule = "all"\n'
        "[[criteria]]\n"
        'id = "c1"\n'
        f"question = {toml_str('asked ' + EVERYTHING)}\n"
        f"help = {toml_str('help ' + EVERYTHING)}\n"
        'key = "1"\n',
        encoding="utf-8",
    )
    return folder
