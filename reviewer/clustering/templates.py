"""Signature templates: a word that masking left in place but that varies like an instance.

"user alice not found", "user bob not found", … : when signatures are equal but for one word, and
that word takes many values each seen on few failures, the word is an instance and the signatures
share the template "user <*> not found". Few values seen often ("expected writes: cancel_reservation"
vs "book_reservation") are kinds, and stay apart. Stdlib only.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Mapping

__all__ = ["VARIABLE", "pair_templates_of", "templates_of"]

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
        if n_values < min_values or sum(counts[m] for m in members) / len(members) > max_per_value:
            continue
        template = " ".join(template_words)
        for sig in members:
            rank = (len(members), template)
            if sig not in best or rank > best[sig]:
                best[sig] = rank
    return {sig: template for sig, (_, template) in best.items()}


#: Pairs of variable positions are looked for in signatures of at most this many words …
MAX_PAIR_WORDS = 16
#: … among at most this many signatures of one length and first word (the candidates of a group
#: are held at once: about 100 per signature).
MAX_PAIR_GROUP = 2000


def pair_templates_of(signatures: Collection[str], min_values: int) -> dict[str, str]:
    """Signature -> its template, for log lines whose instances sit in two words at once
    (``registering class A for class B``): signatures equal but for two words, each of which takes
    at least ``min_values`` values among them, share the template with ``<*>`` in both when the
    words of one of the two are all names (dotted, slashed, underscored: a class or a key), not
    plain words. The first word is never a variable (see ``templates_of``), so signatures are read
    in groups of one length and first word; quadratic in the words of a signature, so only
    signatures of at most ``MAX_PAIR_WORDS`` words, in groups of at most ``MAX_PAIR_GROUP``."""
    groups: dict[tuple[int, str], list[list[str]]] = defaultdict(list)
    for sig in signatures:
        words = sig.split(" ")
        # two constants at least beside the two variables
        if 4 <= len(words) <= MAX_PAIR_WORDS and VARIABLE not in words:
            groups[(len(words), words[0])].append(words)
    best: dict[str, tuple[int, str]] = {}
    for group in groups.values():
        if min_values <= len(group) <= MAX_PAIR_GROUP:
            _pairs_in_group(group, min_values, best)
    return {sig: template for sig, (_, template) in best.items()}


def _pairs_in_group(
    group: list[list[str]], min_values: int, best: dict[str, tuple[int, str]]
) -> None:
    candidates: dict[tuple[str, ...], list[list[str]]] = defaultdict(list)
    for words in group:
        for i in range(1, len(words) - 1):
            if words[i].startswith("<"):
                continue
            head = (*words[:i], VARIABLE)
            for j in range(i + 1, len(words)):
                if not words[j].startswith("<"):
                    candidates[(*head, *words[i + 1 : j], VARIABLE, *words[j + 1 :])].append(words)
    for template_words, members in candidates.items():
        if len(members) < min_values:
            continue
        i, j = (k for k, w in enumerate(template_words) if w == VARIABLE)
        first = {m[i] for m in members}
        second = {m[j] for m in members}
        if len(first) < min_values or len(second) < min_values:
            continue
        if not (all(map(_NAME_LIKE.search, first)) or all(map(_NAME_LIKE.search, second))):
            continue  # two plain words that vary together are a kind: "from new to inited"
        template = " ".join(template_words)
        for words in members:
            sig = " ".join(words)
            rank = (len(members), template)
            if sig not in best or rank > best[sig]:
                best[sig] = rank


# a dotted, slashed or underscored name (a class, a path, a key): the shape of an instance
_NAME_LIKE = re.compile(r"\w[._$/:]\w")
