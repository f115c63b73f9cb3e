"""The gate's CI formats: a Markdown job summary and JUnit XML (valid under the JUnit schema Jenkins'
xUnit plugin reads). Data (task ids, rule ids, run names) is escaped for each: never Markdown, HTML
or an XML character 1.0 cannot hold."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from reviewer.metrics.compare import format_value as _fmt
from reviewer.metrics.gate import TASKS_FAILED, UNDECIDED
from reviewer.metrics.noise import MIN_TASKS
from reviewer.text import visible

if TYPE_CHECKING:
    from reviewer.metrics.gate import GateResult


def markdown(result: GateResult) -> str:
    """A CI job summary: the verdict and its warnings, the table, the forbidden rules' tests, the
    judge's drift on the anchors, the tasks that fell beyond noise with their trials."""
    mark = "PASS" if result.passed else "FAIL"
    lines = [
        f"## reviewer gate: {mark}",
        "",
        f"**{mark}**: " + _md(result.verdict_line().removeprefix(f"gate: {mark}: ")),
        "",
        *[f"> {_md(w)}" for w in [*result.warning_lines(), *result.warnings]],
        *([""] if result.warnings or result.warning_lines() else []),
        "| check | baseline | new | limit | result |",
        "| --- | ---: | ---: | --- | --- |",
    ]
    for c in result.checks:
        verdict = f"**{c.status.upper()}**" if c.failed else c.status
        lines.append(
            f"| {_md(c.label)} | {_fmt(c.old, c.unit)} | {_fmt(c.new, c.unit)} | "
            f"{_md(', '.join(c.limits))} | {verdict} |"
        )
    if tests := result.forbidden_lines():
        lines += ["", *[f"- {_md(t)}" for t in tests]]
    if result.anchors is not None:
        head, *rest = result.anchors.lines()
        lines += ["", f"**{_md(head)}**", *[f"- {_md(r.strip())}" for r in rest]]
    bad = result.regressed_tasks
    lines += [
        "",
        f"### {TASKS_FAILED[0].upper()}{TASKS_FAILED[1:]} ({len(bad)} of {result.tested_tasks})",
        "",
    ]
    if not bad:
        lines.append("None.")
    else:
        lines += [
            "| task | baseline c/n | new c/n | why | failed trials |",
            "| --- | ---: | ---: | --- | --- |",
        ]
        for t in bad:
            links = ", ".join(_link(result, i) for i in t.trial_ids) or "-"
            lines.append(
                f"| {_md(t.task_id)} | {t.old_c}/{t.old_n} | {t.new_c}/{t.new_n} | "
                f"{_md(t.why)} | {links} |"
            )
    if note := result.descriptive_lines():
        lines += ["", _md(" ".join(n.strip() for n in note))]
    lines += [
        "",
        f"k = {result.k}. Open a trial with `reviewer` (ctrl+p, its id) or "
        "`reviewer export --trial ID`.",
    ]
    return "\n".join(lines) + "\n"


def _link(result: GateResult, trial_id: str) -> str:
    tid = _md(trial_id)
    if result.trial_url:
        return f"[`{tid}`]({result.trial_url.replace('{trial_id}', trial_id)})"
    return f"`{tid}`"


def junit(result: GateResult) -> str:
    """JUnit XML: a suite ``gate`` with one case per check (the verdict), and a suite of the
    run's tasks with one case per task (failed when its pass rate fell beyond noise, Holm-adjusted;
    skipped with a warning when it dropped within noise, skipped when not measured); an undecided
    check (too few tasks, within noise, a forbidden rule still broken) is skipped, and so is a
    check worse beyond noise that no budget fails (a warning)."""
    root = ET.Element("testsuites", name=_x(f"reviewer gate: {result.new} vs {result.baseline}"))
    gate = ET.SubElement(root, "testsuite", name="reviewer.gate")
    for c in result.checks:
        case = ET.SubElement(gate, "testcase", classname="reviewer.gate", name=_x(c.label))
        case.set("time", "0")
        if c.failed:
            failure = ET.SubElement(case, "failure", type=c.status, message=_x(c.why))
            test = next(
                (r.forbidden_words for r in result.comparison.rows if r.metric == c.metric), ""
            )
            failure.text = _x(
                f"{c.label}: baseline {_fmt(c.old, c.unit)}, new {_fmt(c.new, c.unit)}"
                + (f"; limits {', '.join(c.limits)}" if c.limits else "")
                + (f"; {test}" if test else "")
            )
        elif c.status in UNDECIDED or c.status == "worse":
            # a check with a reason of its own (a ratio budget exceeded within noise) says it
            why = f"warning: {c.status}: {c.why}" if c.why else _UNDECIDED_WHY.get(c.status, "")
            ET.SubElement(case, "skipped", message=_x(why))
    n_undecided = sum(
        1 for c in result.checks if not c.failed and (c.status in UNDECIDED or c.status == "worse")
    )
    _counts(gate, len(result.checks), len(result.failures), n_undecided)
    suite = ET.SubElement(root, "testsuite", name=_x(f"reviewer.tasks.{result.new}"))
    for t in result.tasks:
        case = ET.SubElement(
            suite, "testcase", classname=_x(f"reviewer.tasks.{result.new}"), name=_x(t.task_id)
        )
        case.set("time", "0")
        if t.status == "failed":
            failure = ET.SubElement(case, "failure", type="fell beyond noise", message=_x(t.why))
            failure.text = _x(
                f"baseline {t.old_c}/{t.old_n} passed, new {t.new_c}/{t.new_n}; "
                f"failed trials: {', '.join(t.trial_ids) or '-'}"
            )
        elif t.status == "warning":
            ET.SubElement(case, "skipped", message=_x(f"warning: {t.why}"))
        elif t.status == "skipped":
            ET.SubElement(case, "skipped", message=_x(t.why))
    n_skip = sum(1 for t in result.tasks if t.status in ("skipped", "warning"))
    _counts(suite, len(result.tasks), len(result.regressed_tasks), n_skip)
    root.set("tests", str(len(result.checks) + len(result.tasks)))
    root.set("failures", str(len(result.failures) + len(result.regressed_tasks)))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


_UNDECIDED_WHY = {
    "too few tasks": f"too few tasks: compare decides nothing on fewer than {MIN_TASKS} shared tasks",
    "within noise": "within noise: the interval of the difference includes zero, nothing decided",
    "n/a": "n/a: a run has no value for this check",
    "worse": "warning: worse beyond noise; no [gate] budget fails it",
}


def _counts(suite: ET.Element, tests: int, failures: int, skipped: int) -> None:
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", "0")


_MD_SPECIAL = set("\\`*_[]|~")


def _md(s: str) -> str:
    """Data as literal Markdown text: every character Markdown or HTML could read escaped."""
    out = []
    for ch in visible(s, single_line=True):
        if ch in _MD_SPECIAL:
            out.append("\\" + ch)
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == "&":
            out.append("&amp;")
        else:
            out.append(ch)
    return "".join(out)


def _x(s: str) -> str:
    """Text XML 1.0 can hold: controls made visible, the two non-characters replaced."""
    return visible(s, single_line=True).replace("\ufffe", "<U+FFFE>").replace("\uffff", "<U+FFFF>")
