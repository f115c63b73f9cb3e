"""Signature templates: a word that masking left in place but that varies like an instance.

"user alice not found", "user bob not found", … : when signatures are equal but for one word, and
that word takes many values each seen on few failures, the word is an instance and the signatures
share the template "user <*> not found". Few values seen often ("expected writes: cancel_reservation"
vs "book_reservation") are kinds, and stay apart. Stdlib only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

__all__ = ["VARIABLE", "templates_of"]

VARIABLE = "<*>"
#: A position is a variable when it takes at least this many values …
MIN_VALUES = 8
#: … seen on at most this many failures each, on average.
MAX_FAILURES_PER_VALUE = 3.0
_TRAILING = ":,;.)]}'\""


def templates_of(
    counts: Mapping[str, int],
    min_values: int = MIN_VALUES,
    max_per_value: float = MAX_FAILURES_PER_VALUE,
    *,
    log_lines: bool = False,
) -> dict[str, str]:
    """Signature -> its template, for signatures (with their failure counts) that share one.

    Signatures are split on spaces; for each word position, the signatures equal elsewhere form a
    candidate. A signature joins the candidate with the most values that passes the rule. Signatures
    with no template are left out of the answer. Linear in the number of signatures.

    ``log_lines`` (``reviewer signatures``): a placeholder masking left at the position joins the
    template its words make (``invalid user <id> from <ip>`` with ``invalid user <*> from <ip>``:
    the user was test9 there, bob here), and the first word is never a variable: as in Drain's
    tree, lines that start with different words (``boot (command <num>)``, ``halt (command
    <num>)``) are different events.
    """
    candidates: dict[tuple[str, ...], list[str]] = defaultdict(list)
    values: dict[tuple[str, ...], int] = defaultdict(int)
    for sig in counts:
        words = sig.split(" ")
        if len(words) < 3:  # too short to tell a variable from the message
            continue
        for pos, word in enumerate(words):
            if pos == 0 and (log_lines or word.endswith(":")):
                continue  # a leading "tool:" is a kind
            placeholder = word.startswith("<")
            if placeholder and not log_lines:
                continue  # placeholders are variables already
            core = "" if placeholder else word.rstrip(_TRAILING)
            if placeholder:
                # "<id>," joins "<*>,": what trails a placeholder is what trails the word
                end = word.find(">") + 1
                if not end:
                    continue
                key = (*words[:pos], VARIABLE + word[end:], *words[pos + 1 :])
            elif not core:
                continue
            else:
                key = (*words[:pos], VARIABLE + word[len(core) :], *words[pos + 1 :])
                values[key] += 1
            candidates[key].append(sig)
    best: dict[str, tuple[int, str]] = {}
    for template_words, members in candidates.items():
        n_values = values[template_words]
        if (
            n_values < min_values
            or sum(counts[m] for m in members) / len(members) > max_per_value
        ):
            continue
        template = " ".join(template_words)
        for sig in members:
            rank = (len(members), template)
            if sig not in best or rank > best[sig]:
                best[sig] = rank
    return {sig: template for sig, (_, template) in best.items()}
