"""The app's one language of keys: each key means one thing on every screen.

``KEY_MAP`` lists every key once, what it means and the binding ids that use it (a binding id is what
``reviewer.toml [keys]`` remaps). ``tests/tui/test_keymap.py`` checks it against the real ``BINDINGS`` of
every screen and widget, and that the key table in ``docs/app.md`` is ``markdown_table()``
(``python docs/generate.py`` writes it).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Textual key names as a user types them
KEY_NAMES = {
    "question_mark": "?",
    "escape": "Esc",
    "enter": "Enter",
    "space": "Space",
    "slash": "/",
    "backslash": "\\",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "right_curly_bracket": "}",
    "left_curly_bracket": "{",
    "greater_than_sign": ">",
    "less_than_sign": "<",
    "exclamation_mark": "!",
    "full_stop": ".",
    "comma": ",",
    "plus": "+",
    "minus": "-",
    "asterisk": "*",
    "tab": "Tab",
    "shift+tab": "Shift+Tab",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "backspace": "Backspace",
    "home": "Home",
    "end": "End",
    "up": "↑",
    "down": "↓",
}


def key_display(keys: str) -> str:
    """``right_square_bracket,pagedown`` → ``], PgDn``; ``ctrl+p`` → ``Ctrl+P``."""
    out = []
    for k in keys.split(","):
        k = k.strip()
        if k in KEY_NAMES:
            out.append(KEY_NAMES[k])
        elif k.startswith("ctrl+"):
            out.append("Ctrl+" + KEY_NAMES.get(k[5:], k[5:].upper()))
        else:
            out.append(k)
    return ", ".join(out)


@dataclass(frozen=True)
class KeyRow:
    key: str  # the Textual key name
    meaning: str
    ids: tuple[str, ...]  # the binding ids that use this key (their prefix names the screen)
    where: str = ""  # for keys handled outside BINDINGS (the labeling criteria)


KEY_MAP: tuple[KeyRow, ...] = (
    KeyRow("question_mark", "help: the keys of this screen", ("app.help", "help.close")),
    KeyRow("q", "quit the app", ("app.quit",)),
    KeyRow(
        "escape",
        "back: leave the screen, close a dialog, cancel a running job",
        (
            "tasks.back",
            "trials.back",
            "transcript.back",
            "compare.back",
            "failures.back",
            "agreement.back",
            "audit.back",
            "bias.back",
            "pair.back",
            "queues.back",
            "label.back",
            "help.close",
            "error.close",
            "import.cancel",
            "judge.cancel",
            "clusterjudge.cancel",
            "rename.cancel",
            "split.cancel",
            "note.cancel",
            "tag.cancel",
            "search.cancel",
            "importreport.close",
            "exportreport.close",
            "choosek.cancel",
            "rescore.cancel",
            "who.skip",
            "offer.no",
            "confirm.no",
            "new_queue.cancel",
            "gate.back",
            "monitor.back",
            "flagged.back",
            "plan.back",
        ),
    ),
    KeyRow("ctrl+p", "command palette: jump anywhere, run any action", ("app.palette",)),
    KeyRow("ctrl+s", "save: the note, the new queue", ("note.save", "new_queue.make")),
    KeyRow(
        "slash",
        "search: filter the list (trials) or find in the conversation (transcript)",
        ("trials.search", "transcript.search"),
    ),
    KeyRow("n", "next search match", ("transcript.next_match",)),
    KeyRow("N", "previous search match", ("transcript.prev_match",)),
    KeyRow("right_square_bracket", "next trial", ("transcript.next", "label.next")),
    KeyRow("left_square_bracket", "previous trial", ("transcript.prev", "label.prev")),
    KeyRow("right_curly_bracket", "next rule violation", ("transcript.next_violation",)),
    KeyRow("left_curly_bracket", "previous rule violation", ("transcript.prev_violation",)),
    KeyRow("greater_than_sign", "next tool error", ("transcript.next_error",)),
    KeyRow("less_than_sign", "previous tool error", ("transcript.prev_error",)),
    KeyRow(
        "enter",
        "open the row under the cursor (in a dialog: confirm or close it)",
        (
            "runs.open",
            "tasks.open",
            "failures.open",
            "agreement.open",
            "audit.open",
            "bias.open",
            "queues.label",
            "error.close",
            "importreport.close",
            "exportreport.close",
            "offer.yes",
            "confirm.yes",
            "tag.none",
            "judge.start",
            "clusterjudge.start",
            "monitor.open",
            "flagged.open",
        ),
    ),
    KeyRow(
        "space", "mark the row (runs to compare, clusters to merge)", ("runs.mark", "failures.mark")
    ),
    KeyRow(
        "R",
        "reload what the screen shows",
        (
            "runs.reload",
            "tasks.reload",
            "trials.reload",
            "transcript.reload",
            "compare.reload",
            "agreement.reload",
            "audit.rerun",
            "gate.rerun",
            "monitor.reload",
            "failures.reload",
        ),
    ),
    KeyRow(
        "pagedown",
        "page down (trials list: on the last row, the next 200 rows; compare: the comparison)",
        ("trials.next_page", "transcript.page_down", "compare.page_down"),
    ),
    KeyRow(
        "pageup",
        "page up (trials list: on the first row, the previous 200; compare: the comparison)",
        ("trials.prev_page", "transcript.page_up", "compare.page_up"),
    ),
    KeyRow("up", "scroll up a line", ("transcript.up",)),
    KeyRow("down", "scroll down a line", ("transcript.down",)),
    KeyRow("home", "top of the transcript", ("transcript.home",)),
    KeyRow("end", "end of the transcript", ("transcript.end",)),
    KeyRow("e", "fold or unfold the message here", ("transcript.fold",)),
    KeyRow("E", "fold or unfold every long message", ("transcript.fold_all",)),
    KeyRow("J", "show or hide the judge's verdict in the transcript", ("transcript.judge",)),
    KeyRow(
        "P",
        "pass threshold: the run's graded rewards judged again (runs, tasks); "
        "the trial's raw record in $PAGER (transcript)",
        ("runs.rescore", "tasks.rescore", "transcript.pager"),
    ),
    KeyRow("O", "the trial's raw record in $EDITOR", ("transcript.editor",)),
    KeyRow(
        "T",
        "export as regression tasks (the list, cluster or trial on screen)",
        ("trials.export", "failures.export", "transcript.export"),
    ),
    KeyRow("k", "choose k for pass^k (the palette too)", ("runs.k", "tasks.k")),
    KeyRow("t", "all trials of the run", ("runs.trials",)),
    KeyRow(
        "F",
        "failures: the failure clusters (runs), the task's failing trials (tasks)",
        ("runs.failures", "tasks.failing"),
    ),
    KeyRow("d", "compare (diff) the two marked runs", ("runs.compare",)),
    KeyRow(
        "L",
        "labeling: the queues (runs), this trial outside any queue (transcript)",
        ("runs.label", "transcript.label"),
    ),
    KeyRow("A", "judge agreement", ("runs.agreement",)),
    KeyRow(
        "U", "audit the run (leaked state, copies, hollow passes)", ("runs.audit", "tasks.audit")
    ),
    KeyRow("D", "power plan: the smallest drop a comparison detects", ("runs.plan",)),
    KeyRow("G", "gate the run against the baseline", ("runs.gate",)),
    KeyRow("M", "monitor production traffic by window", ("runs.monitor",)),
    KeyRow("i", "import a file or folder", ("runs.import", "monitor.import")),
    KeyRow(
        "s",
        "sort by the next column (trials: cost, latency, steps, tool errors, the worst first)",
        ("tasks.sort", "trials.sort"),
    ),
    KeyRow("y", "flaky tasks only (0 < c < n)", ("tasks.flaky",)),
    KeyRow("o", "filter by outcome (cycles)", ("trials.outcome",)),
    KeyRow(
        "j",
        "filter by judge: the verdict (trials), which judge (agreement)",
        ("trials.verdict", "agreement.judge"),
    ),
    KeyRow(
        "l",
        "filter by label: the label (trials), which labeler (agreement)",
        ("trials.label", "agreement.labeler"),
    ),
    KeyRow("g", "which rubric version (agreement)", ("agreement.rubric",)),
    KeyRow("exclamation_mark", "trials with rule violations only", ("trials.violations",)),
    KeyRow("I", "include the system prompt in the search (trials)", ("trials.system",)),
    KeyRow("backspace", "clear the filters", ("trials.clear",)),
    KeyRow("w", "swap old and new (compare)", ("compare.swap",)),
    KeyRow(
        "W",
        "outcomes from the harness, the human labels or the judge (cycles; compare, gate)",
        ("compare.outcome", "gate.outcome"),
    ),
    KeyRow("r", "rename the cluster", ("failures.rename",)),
    KeyRow(
        "m",
        "merge: the marked clusters (failures), the highlighted proposal (cluster judge)",
        ("failures.merge", "clusterjudge.merge"),
    ),
    KeyRow("S", "split the cluster (asks into how many pieces)", ("failures.split",)),
    KeyRow("z", "undo the last cluster edit (merge, split, rename)", ("failures.undo",)),
    KeyRow("C", "cluster the failures again", ("failures.recluster",)),
    KeyRow("X", "cancel the clustering", ("failures.cancel",)),
    KeyRow(
        "b", "cluster one run's failures (cycles every run, then each run)", ("failures.scope",)
    ),
    KeyRow(
        "H", "the clusters against the failure tags: each tag's best cluster", ("failures.score",)
    ),
    KeyRow("a", "new labeling queue", ("queues.new",)),
    KeyRow("B", "make the gated run the baseline", ("gate.baseline",)),
    KeyRow("h", "windows by day or by hour", ("monitor.window",)),
    KeyRow(
        "V",
        "ask the judge: the sample of the windows (monitor), cluster names and merges (failures)",
        ("monitor.judge", "failures.judge"),
    ),
    KeyRow("plus", "the next drop size D to plan for", ("plan.delta",)),
    KeyRow("p", "label: pass", ("label.pass",)),
    KeyRow("f", "label: fail", ("label.fail",)),
    KeyRow("x", "label: skip", ("label.skip",)),
    KeyRow("u", "label: undo the last label", ("label.undo",)),
    KeyRow("c", "label: a note for this trial", ("label.note",)),
    KeyRow("v", "label: reveal the judge (after labeling)", ("label.reveal",)),
    KeyRow("1 … 9", "label: answer the rubric's criteria (yes, no, unset)", (), where="label"),
    KeyRow("K", "label: tag the failure with a category (labels it fail)", ("label.tag",)),
    KeyRow(
        "a … z",
        "failure tag: the category whose key is shown (its first letter or a digit)",
        (),
        where="tag",
    ),
)

_SCREENS = {
    "app": "everywhere",
    "runs": "runs",
    "tasks": "tasks",
    "trials": "trials",
    "transcript": "transcript",
    "label": "labeling",
    "note": "labeling note",
    "tag": "failure tag",
    "compare": "compare",
    "failures": "failures",
    "rename": "rename",
    "agreement": "agreement",
    "audit": "audit",
    "bias": "bias",
    "pair": "bias pair",
    "queues": "queues",
    "help": "help",
    "error": "error",
    "import": "import",
    "judge": "judge run",
    "clusterjudge": "cluster judge",
    "search": "find",
    "importreport": "import problems",
    "exportreport": "export summary",
    "choosek": "choose k",
    "rescore": "pass threshold",
    "offer": "export offer",
    "gate": "gate",
    "monitor": "monitor",
    "flagged": "flagged conversations",
    "plan": "plan",
    "confirm": "override question",
    "new_queue": "new queue form",
}


#: bindings of the transcript viewer widget, which the labeling screen shows too
VIEWER_IDS = frozenset(
    {
        "transcript.up",
        "transcript.down",
        "transcript.page_up",
        "transcript.page_down",
        "transcript.home",
        "transcript.end",
        "transcript.fold",
        "transcript.fold_all",
        "transcript.next_error",
        "transcript.prev_error",
        "transcript.search",
        "transcript.next_match",
        "transcript.prev_match",
        "transcript.next_violation",
        "transcript.prev_violation",
        "transcript.judge",
    }
)


def screens_of(row: KeyRow) -> list[str]:
    out: list[str] = []
    for bid in row.ids:
        names = [_SCREENS.get(bid.split(".")[0], bid.split(".")[0])]
        if bid in VIEWER_IDS:
            names.append("labeling")
        for name in names:
            if name not in out:
                out.append(name)
    if row.where:
        out.append(_SCREENS.get(row.where, row.where))
    return out


def meaning_of(key: str) -> KeyRow | None:
    return next((r for r in KEY_MAP if r.key == key), None)


def markdown_table() -> str:
    """The key table of ``docs/app.md``."""
    lines = ["| key | means | on |", "| --- | --- | --- |"]
    for row in KEY_MAP:
        shown = key_display(row.key).replace("|", "\\|")
        lines.append(f"| `{shown}` | {row.meaning} | {', '.join(screens_of(row))} |")
    return "\n".join(lines)


def keymap_problems(user: dict[str, str]) -> list[str]:
    """What is wrong with a ``[keys]`` table, one line each: an id no binding has, and a key that
    would mean two things on one screen after remapping (a remapped key against the other bindings
    of the screens its binding is on, the app's own keys being on every screen)."""
    default: dict[str, list[str]] = {}
    for row in KEY_MAP:
        for bid in row.ids:
            default.setdefault(bid, []).append(row.key)
    problems = []
    unknown = sorted(i for i in user if i not in default)
    if unknown:
        problems.append(
            f"[keys] {', '.join(unknown)}: no binding has "
            f"{'this id' if len(unknown) == 1 else 'these ids'} (ids look like label.pass or "
            "app.quit: see the key table in docs/app.md)"
        )
    keys = {
        bid: [k.strip() for k in user[bid].split(",") if k.strip()] if bid in user else list(keys)
        for bid, keys in default.items()
    }
    empty = sorted(i for i in user if i in default and not keys[i])
    if empty:
        problems.append(f"[keys] {', '.join(empty)}: no key given")
    screens = {bid: screens_of(KeyRow("", "", (bid,))) for bid in default}
    seen: set[tuple[str, ...]] = set()
    for bid in sorted(i for i in user if i in default):
        for key in keys[bid]:
            for other, their in keys.items():
                if other == bid or key not in their:
                    continue
                shared = (
                    "everywhere" in screens[bid]
                    or "everywhere" in screens[other]
                    or set(screens[bid]) & set(screens[other])
                )
                pair = tuple(sorted((bid, other)))
                if shared and pair not in seen:
                    seen.add(pair)
                    problems.append(
                        f"[keys] {bid} = {user[bid]!r}: {key_display(key)} already means "
                        f"{other} there; give {bid} another key (or move {other} too)"
                    )
    return problems
