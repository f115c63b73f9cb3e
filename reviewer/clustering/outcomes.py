"""What a trial says about its own outcome, as short statements ("facts") a cluster can be named by.

A source that records what was expected says more than any error text: tau-bench's expected actions
(``reward_info.actions``) against the calls the agent made, tau2's failed ``action_checks`` and
database check, an Inspect scorer's answer against the target. Each fact is a statement that is
true of the trial ("did not call cancel_reservation (expected it)"), worded the same way for every
trial it is true of, so counting facts over a cluster's members finds what most of them share.
Stdlib only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reviewer.models import Trial

__all__ = ["READ_ONLY_PREFIXES", "expectation_lines", "is_detail", "outcome_facts", "short_value"]

#: Tool names that only read (their calls change nothing an action check compares).
READ_ONLY_PREFIXES = (
    "get_",
    "search_",
    "list_",
    "find_",
    "lookup_",
    "read_",
    "calculate",
    "think",
    "transfer_to_human",
)
#: An answer or target longer than this is not quoted in a fact (a grader's essay, a long output).
SHORT_VALUE = 40


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _writes(names: Iterable[str]) -> list[str]:
    return [n for n in names if n and not n.startswith(READ_ONLY_PREFIXES)]


def short_value(value: Any) -> str | None:
    """A value short enough to quote in a fact, on one line, or None."""
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = " ".join(str(text).split())
    if not text or len(text) > SHORT_VALUE:
        return None
    return text


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _calls(trial: Trial) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, _arguments(c.arguments)) for m in trial.messages for c in m.tool_calls]


def _differing(expected: Mapping[str, Any], calls: Sequence[Mapping[str, Any]]) -> list[str]:
    """The arguments of the closest call that differ from ``expected`` (fewest differences)."""
    best: list[str] | None = None
    for got in calls:
        keys = sorted(k for k in set(expected) | set(got) if expected.get(k) != got.get(k))
        if best is None or len(keys) < len(best):
            best = keys
    return best or []


def _argument_lines(
    actions: Sequence[Any], calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[tuple[str, str]]:
    """For the expected writes the agent made with other arguments: each argument that differs,
    expected against the agent's closest call, one line each, at most ARGUMENT_LINES in all. The
    expected call alone is cut at EXPECTATION_CHARS, and the argument it turns on (a booking's
    payment_methods, after its flights and passengers) was past the cut. A call that is exactly
    another expected action is that action's, never compared with the rest."""
    wanted = [
        (a["name"], _dict(a.get("kwargs")))
        for a in actions
        if isinstance(a, dict) and isinstance(a.get("name"), str) and _writes([a["name"]])
    ]
    left = [(n, args) for n, args in calls if _writes([n])]
    missed = []
    for name, args in wanted:
        if (name, args) in left:
            left.remove((name, args))
        else:
            missed.append((name, args))
    out: list[tuple[str, str]] = []
    for name, args in missed:
        got = [g for n, g in left if n == name]
        if not got:
            continue  # not made at all: the reason and the cluster say so
        closest = min(got, key=lambda g: len(_differing(args, [g])))
        for k in _differing(args, [closest]):
            expected = json.dumps(args.get(k), ensure_ascii=False, sort_keys=True)
            made = json.dumps(closest.get(k), ensure_ascii=False, sort_keys=True)
            out.append((f"{name} {k}", f"expected {expected}; the agent's call: {made}"))
    return out[:ARGUMENT_LINES]


#: How many lines of differing arguments the header shows (the reason below must stay in view).
ARGUMENT_LINES = 3


def _action_facts(
    expected: Sequence[tuple[str, Mapping[str, Any]]], calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[str]:
    """Expected write actions against the agent's write calls: missing, wrong arguments, extra."""
    facts: list[str] = []
    expected_writes = [(n, a) for n, a in expected if _writes([n])]
    made = [(n, a) for n, a in calls if _writes([n])]
    made_names = {n for n, _ in made}
    wanted_names = {n for n, _ in expected_writes}
    for name in sorted(wanted_names):
        wanted = [a for n, a in expected_writes if n == name]
        got = [a for n, a in made if n == name]
        if not got:
            facts.append(f"did not call {name} (expected it)")
            continue
        # a call that made one expected action exactly is that action's: the others are compared
        # with the calls left (a task expecting two cancellations, one made right, the other never
        # made, called cancel_reservation too few times, not with other arguments)
        left: list[Mapping[str, Any]] = list(got)
        unmatched = []
        for w in wanted:
            if w in left:
                left.remove(w)
            else:
                unmatched.append(w)
        if unmatched and left:
            keys = _differing(unmatched[0], left)
            facts.append(f"called {name} with other arguments than expected")
            facts.extend(f"called {name} with {k} other than expected" for k in keys[:3])
        elif unmatched:
            facts.append(f"called {name} fewer times than expected")
    for name in sorted(made_names - wanted_names):
        facts.append(f"called {name} (not expected)")
    if expected_writes == [] and made:
        facts.append("expected no database writes")
    return facts


def _tau_bench(trial: Trial) -> list[str]:
    info = _dict(trial.metadata.get("reward_info"))
    actions = info.get("actions")
    if not isinstance(actions, list):
        actions = _dict(trial.metadata.get("task")).get("actions")
    if not isinstance(actions, list):
        return []
    expected = [
        (str(a.get("name")), _dict(a.get("kwargs")))
        for a in actions
        if isinstance(a, dict) and isinstance(a.get("name"), str)
    ]
    facts: list[str] = []
    detail = _dict(info.get("info"))
    r_actions = detail.get("r_actions")
    if not (isinstance(r_actions, int | float) and r_actions >= 1):
        facts.extend(_action_facts(expected, _calls(trial)))
    outputs = detail.get("outputs")
    if isinstance(outputs, dict):
        facts.extend(
            f"did not tell the user {short_value(k) or 'an expected output'}"
            for k, ok in outputs.items()
            if not ok
        )
    return facts


def _tau2(trial: Trial) -> list[str]:
    info = _dict(trial.metadata.get("reward_info"))
    facts: list[str] = []
    if _dict(info.get("db_check")).get("db_match") is False:
        facts.append("database state did not match expected")
    calls = _calls(trial)
    called = {n for n, _ in calls}
    checks = info.get("action_checks")
    if not isinstance(checks, list) and info.get("reward", 1) != 1:
        # the actions were not checked (not in reward_basis): the task's own expected actions
        # against the calls say what the database check cannot
        facts.extend(_action_facts(_tau2_expected(trial), calls))
    for check in _list(checks):
        if not isinstance(check, dict) or check.get("action_match") is not False:
            continue
        action = _dict(check.get("action"))
        name = action.get("name")
        if not isinstance(name, str):
            continue
        if name in called:
            facts.append(f"called {name} with other arguments than expected")
            keys = _differing(_dict(action.get("arguments")), [a for n, a in calls if n == name])
            facts.extend(f"called {name} with {k} other than expected" for k in keys[:3])
        else:
            facts.append(f"did not call {name} (expected it)")
    for check in _list(info.get("communicate_checks")):
        if isinstance(check, dict) and check.get("met") is False:
            facts.append("did not tell the user what was expected")
    for check in _list(info.get("nl_assertions")):
        if isinstance(check, dict) and check.get("met") is False:
            said = " ".join(str(check.get("nl_assertion") or "").split())
            facts.append(
                f"assertion not met: {said[:80]}"
                if said
                else "a natural-language assertion was not met"
            )
    for check in _list(info.get("env_assertions")):
        if isinstance(check, dict) and check.get("met") is False:
            func = _dict(check.get("env_assertion")).get("func_name")
            facts.append(f"environment assertion {func} failed" if func else "env assertion failed")
    return facts


def _tau2_expected(trial: Trial) -> list[tuple[str, dict[str, Any]]]:
    criteria = _dict(_dict(trial.metadata.get("task")).get("evaluation_criteria"))
    return [
        (a["name"], _dict(a.get("arguments")))
        for a in _list(criteria.get("actions"))
        if isinstance(a, dict) and isinstance(a.get("name"), str)
    ]


#: How long one expectation line of the transcript header may be.
EXPECTATION_CHARS = 300


def _clip(text: str) -> str:
    """One line of at most EXPECTATION_CHARS, ending in … when cut: an expected call cut short must
    not read as a whole one (``new_item_id`` for ``new_item_ids=[...]``)."""
    line = " ".join(text.split())
    return line if len(line) <= EXPECTATION_CHARS else line[: EXPECTATION_CHARS - 1] + "…"


def _call_text(name: str, args: Any) -> str:
    if not isinstance(args, dict) or not args:
        return f"{name}()"
    inner = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}" for k, v in args.items()
    )
    return f"{name}({inner})"


def expectation_lines(trial: Trial) -> list[tuple[str, str]]:
    """What the trial's source expected and what its grader said, as (label, text) lines for a
    transcript header: tau-bench's and tau2's expected actions, tau2's natural-language assertions
    (with the grader's verdict and justification when it checked them), communicate items and
    reward breakdown. [] for a source that records no expectation (Inspect's target and scores are
    shown by the header itself)."""
    meta = trial.metadata
    info = meta.get("reward_info") if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        return []
    out: list[tuple[str, str]] = []
    task = _dict(meta.get("task"))
    if any(k in info for k in ("db_check", "action_checks", "reward_basis")):
        criteria = _dict(task.get("evaluation_criteria"))
        expected = [
            _call_text(a["name"], a.get("arguments"))
            for a in _list(criteria.get("actions"))
            if isinstance(a, dict) and isinstance(a.get("name"), str)
        ]
        if isinstance(criteria.get("actions"), list):
            out.append(("expected actions", "; ".join(expected) or "none"))
        checked = {
            str(c.get("nl_assertion")): c
            for c in _list(info.get("nl_assertions"))
            if isinstance(c, dict)
        }
        for said in [str(a) for a in _list(criteria.get("nl_assertions"))] or list(checked):
            check = checked.get(said)
            if check is None:
                out.append(("assertion", f"{said} (not graded)"))
                continue
            met = check.get("met")
            verdict = "met" if met is True else "NOT MET" if met is False else "?"
            why = check.get("justification")
            out.append(("assertion", f"{verdict}: {said}" + (f" — {why}" if why else "")))
        wanted = [str(c) for c in _list(criteria.get("communicate_info"))]
        if wanted:
            out.append(("expected to tell the user", "; ".join(wanted)))
        breakdown = _dict(info.get("reward_breakdown"))
        if breakdown:
            parts = [
                f"{k} {v:g}" if isinstance(v, int | float) else f"{k} {v}"
                for k, v in breakdown.items()
            ]
            out.append(("reward breakdown", ", ".join(parts)))
        note = _dict(info.get("info")).get("note")
        if isinstance(note, str) and note.strip():
            out.append(("grader note", note))
        return [(label, _clip(text)) for label, text in out]
    actions = info.get("actions")
    if not isinstance(actions, list):
        actions = task.get("actions")
    if isinstance(actions, list):
        out.append(
            (
                "expected actions",
                "; ".join(
                    _call_text(a["name"], a.get("kwargs"))
                    for a in actions
                    if isinstance(a, dict) and isinstance(a.get("name"), str)
                )
                or "none",
            )
        )
        r_actions = _dict(info.get("info")).get("r_actions")
        if not (isinstance(r_actions, int | float) and r_actions >= 1):
            out += _argument_lines(actions, _calls(trial))
    outputs = _dict(_dict(info.get("info")).get("outputs"))
    if outputs:
        out.append(
            (
                "expected outputs",
                ", ".join(f"{k} ({'given' if ok else 'MISSING'})" for k, ok in outputs.items()),
            )
        )
    detail = _dict(info.get("info"))
    parts = [
        f"{k} {detail[k]:g}"
        for k in ("r_actions", "r_outputs")
        if isinstance(detail.get(k), int | float)
    ]
    # a composite reward's parts (base success, penalties, bonuses), as the grader wrote them
    parts += [
        f"{k} {v:g}"
        for k, v in _dict(info.get("components")).items()
        if isinstance(v, int | float) and not isinstance(v, bool) and k != "steps"
    ]
    if parts:
        out.append(("reward breakdown", ", ".join(parts)))
    return [(label, _clip(text)) for label, text in out]


def _inspect(trial: Trial) -> list[str]:
    scores = _dict(trial.metadata.get("scores"))
    target = trial.metadata.get("target")
    facts: list[str] = []
    for scorer, score in sorted(scores.items()):
        score = _dict(score)
        if score.get("value") not in ("I", 0, 0.0, False, "incorrect"):
            continue
        facts.append(f"scored incorrect by {scorer}")
        answer = short_value(score.get("answer"))
        want = short_value(target)
        if answer is not None and want is not None:
            facts.append(f"answered {answer!r}, expected {want!r}")
            facts.append(f"answered {answer!r}")
        elif answer is None and score.get("answer") in (None, ""):
            facts.append("gave no answer")
    return facts


def outcome_facts(trial: Trial) -> list[str]:
    """The facts about the trial's outcome that its source recorded, most specific last; [] when the
    source records no expectation."""
    meta = trial.metadata
    if not isinstance(meta, dict):
        return []
    if isinstance(meta.get("scores"), dict):
        return _dedupe(_inspect(trial))
    info = meta.get("reward_info")
    if isinstance(info, dict):
        if any(k in info for k in ("db_check", "action_checks", "reward_basis")):
            return _dedupe(_tau2(trial))
        return _dedupe(_tau_bench(trial))
    return []


_DETAIL = re.compile(r" with \S+ other than expected$|^answered '.*'$|^scored incorrect by ")


def is_detail(fact: str) -> bool:
    """A fact that refines or restates another (an argument that differed, the answer alone): it can
    name a cluster, but two trials do not belong together by it alone."""
    return bool(_DETAIL.search(fact))


def _dedupe(facts: Iterable[str]) -> list[str]:
    out: list[str] = []
    for f in facts:
        f = re.sub(r"\s+", " ", f).strip()
        if f and f not in out:
            out.append(f)
    return out
