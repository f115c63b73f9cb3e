"""Trajectory rules: each rule type on hand-written trials, and load errors that name file:line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reviewer.metrics.rules import (
    Budget,
    ForbidTool,
    RequireBefore,
    RuleError,
    Violation,
    check_trial,
    load_rules,
    parse_rules,
    severities,
)
from reviewer.models import Message, ToolCall, Trial, Usage

SAMPLE = """\
[[rule]]
id = "no-cancel-after-shipped"
type = "forbid_tool"
tool = "cancel_order"
after_result = '"status":\\s*"shipped"'
description = "Never cancel an order that has already shipped; offer a return instead."

[[rule]]
id = "no-cancel-w9"
type = "forbid_tool"
tool = "cancel_order"
args = { order_id = "^W9" }

[[rule]]
id = "lookup-before-refund"
type = "require_before"
tool = "refund"
before = ["get_order", "find_order"]
severity = "policy"

[[rule]]
id = "budget"
type = "budget"
max_steps = 6
max_cost_usd = 0.08
max_latency_s = 45
max_tool_errors = 1
"""


def call(name: str, cid: str, **args: Any) -> Message:
    return Message("assistant", "", [ToolCall(name, args, cid)])


def result(cid: str, name: str, content: str, is_error: bool = False) -> Message:
    return Message("tool", content, tool_call_id=cid, name=name, is_error=is_error)


def trial(*messages: Message, cost: float | None = 0.01, latency: float | None = 5.0) -> Trial:
    return Trial(
        task_id="t1",
        messages=[Message("system", "policy"), Message("user", "help"), *messages],
        passed=True,
        usage=Usage(cost_usd=cost),
        latency_s=latency,
    )


@pytest.fixture
def rules() -> list[Any]:
    return list(parse_rules(SAMPLE))


def ids(violations: list[Violation]) -> list[str]:
    return [v.rule_id for v in violations]


def test_sample_parses_with_defaults(rules: list[Any]) -> None:
    forbid, forbid_args, require, budget = rules
    assert isinstance(forbid, ForbidTool) and forbid.severity == "forbidden"
    assert forbid.after_result is not None and forbid.line == 1
    assert (
        isinstance(forbid_args, ForbidTool) and dict(forbid_args.args)["order_id"].pattern == "^W9"
    )
    assert isinstance(require, RequireBefore) and require.before == ("get_order", "find_order")
    assert (
        isinstance(budget, Budget) and budget.severity == "budget" and budget.max_latency_s == 45.0
    )
    assert severities(rules)["lookup-before-refund"] == "policy"
    assert require.to_dict()["before"] == ["get_order", "find_order"]


def test_forbid_after_shipped_fires_at_the_call(rules: list[Any]) -> None:
    t = trial(
        call("get_order", "c1", order_id="W1"),
        result("c1", "get_order", '{"status": "shipped"}'),
        call("cancel_order", "c2", order_id="W1"),
        result("c2", "cancel_order", "ok"),
        Message("assistant", "Cancelled."),
    )
    vs = check_trial(t, rules[:1])
    assert ids(vs) == ["no-cancel-after-shipped"]
    assert vs[0].message_index == 4
    assert vs[0].severity == "forbidden"
    assert "message 3" in vs[0].detail


def test_forbid_after_result_must_not_fire_before_the_match(rules: list[Any]) -> None:
    # The cancel comes first, the "shipped" result afterwards: not a violation.
    t = trial(
        call("cancel_order", "c1", order_id="W1"),
        result("c1", "cancel_order", '{"status": "shipped"}'),
        call("get_order", "c2", order_id="W1"),
        result("c2", "get_order", '{"status":"pending"}'),
        Message("assistant", "Done."),
    )
    assert check_trial(t, rules[:1]) == []


def test_forbid_with_args_filter(rules: list[Any]) -> None:
    t = trial(
        call("cancel_order", "c1", order_id="W5521"),
        result("c1", "cancel_order", "ok"),
        call("cancel_order", "c2", order_id="W9001"),
        result("c2", "cancel_order", "ok"),
    )
    vs = check_trial(t, rules[1:2])
    assert [(v.rule_id, v.message_index) for v in vs] == [("no-cancel-w9", 4)]


def test_forbid_args_never_match_unparsed_arguments(rules: list[Any]) -> None:
    t = trial(Message("assistant", "", [ToolCall("cancel_order", '{"order_id": "W9', "c1")]))
    assert check_trial(t, rules[1:2]) == []


def test_plain_forbid_fires_on_every_call() -> None:
    (rule,) = parse_rules('[[rule]]\nid = "no-transfer"\ntype = "forbid_tool"\ntool = "transfer"\n')
    t = trial(call("transfer", "c1"), result("c1", "transfer", "ok"), call("transfer", "c2"))
    assert [v.message_index for v in check_trial(t, [rule])] == [2, 4]


def test_require_before(rules: list[Any]) -> None:
    bad = trial(call("refund", "c1", order_id="W1"), result("c1", "refund", "ok"))
    vs = check_trial(bad, rules[2:3])
    assert [(v.rule_id, v.message_index, v.severity) for v in vs] == [
        ("lookup-before-refund", 2, "policy")
    ]
    good = trial(
        call("find_order", "c1", email="a@b"),
        result("c1", "find_order", "W1"),
        call("refund", "c2", order_id="W1"),
    )
    assert check_trial(good, rules[2:3]) == []
    # Looking up *after* the refund does not count.
    late = trial(call("refund", "c1"), result("c1", "refund", "ok"), call("get_order", "c2"))
    assert ids(check_trial(late, rules[2:3])) == ["lookup-before-refund"]


def test_budget_steps_and_errors_point_at_the_message(rules: list[Any]) -> None:
    # steps: each assistant turn counts 1, each tool call 1 more; max_steps = 6.
    t = trial(
        call("a", "c1"),  # index 2: steps 2
        result("c1", "a", "boom", is_error=True),  # 3: errors 1
        call("b", "c2"),  # 4: steps 4
        result("c2", "b", "boom", is_error=True),  # 5: errors 2 > 1
        call("c", "c3"),  # 6: steps 6
        result("c3", "c", "ok"),
        Message("assistant", "done"),  # 8: steps 7 > 6
    )
    assert t.steps == 7
    vs = check_trial(t, rules[3:])
    assert {v.detail.split(" >")[0]: v.message_index for v in vs} == {
        "tool errors 2": 5,
        "steps 7": 8,
    }
    assert all(v.rule_id == "budget" and v.severity == "budget" for v in vs)


def test_budget_cost_and_latency_are_trial_level(rules: list[Any]) -> None:
    t = trial(Message("assistant", "hi"), cost=0.2, latency=50.0)
    vs = check_trial(t, rules[3:])
    assert len(vs) == 2
    assert {v.message_index for v in vs} == {None}
    assert any("cost" in v.detail for v in vs) and any("latency" in v.detail for v in vs)


def test_budget_within_limits_and_unknown_cost_do_not_fire(rules: list[Any]) -> None:
    t = trial(call("a", "c1"), result("c1", "a", "ok"), Message("assistant", "ok"), cost=None)
    assert check_trial(t, rules[3:]) == []


def test_violations_are_ordered_by_message(rules: list[Any]) -> None:
    t = trial(
        call("refund", "c1"),
        result("c1", "refund", '{"status": "shipped"}'),
        call("cancel_order", "c2", order_id="W9"),
        cost=1.0,
    )
    vs = check_trial(t, rules)
    assert [v.message_index for v in vs] == [2, 4, 4, None]


# --- load errors -----------------------------------------------------------------------------------


def error_of(text: str) -> RuleError:
    with pytest.raises(RuleError) as info:
        parse_rules(text, file="rules.toml")
    return info.value


def test_unknown_type_names_the_line() -> None:
    text = '[[rule]]\nid = "a"\ntype = "budget"\nmax_steps = 3\n\n[[rule]]\nid = "b"\ntype = "forbid"\n'
    e = error_of(text)
    assert e.line == 8
    assert str(e) == (
        "rules.toml:8: rule 'b': unknown rule type 'forbid'; "
        "expected one of budget, forbid_tool, require_before"
    )


def test_unknown_field_lists_the_allowed_ones() -> None:
    e = error_of('[[rule]]\nid = "a"\ntype = "forbid_tool"\ntool = "x"\nafter = "y"\n')
    assert e.line == 5
    assert "unknown field 'after'" in e.reason and "after_result" in e.reason


def test_bad_regex_reports_re_error() -> None:
    e = error_of(
        '[[rule]]\nid = "a"\ntype = "forbid_tool"\ntool = "x"\nafter_result = "(shipped"\n'
    )
    assert e.line == 5
    assert "bad regex in 'after_result'" in e.reason and "missing )" in e.reason


def test_bad_regex_in_args_points_at_args_line() -> None:
    e = error_of('[[rule]]\nid = "a"\ntype = "forbid_tool"\ntool = "x"\nargs = { id = "[" }\n')
    assert (e.line, "args.id" in e.reason) == (5, True)
    sub = '[[rule]]\nid = "a"\ntype = "forbid_tool"\ntool = "x"\n\n[rule.args]\nid = "["\n'
    assert error_of(sub).line == 7


def test_missing_required_field_points_at_the_header() -> None:
    e = error_of('# rules\n\n[[rule]]\nid = "a"\ntype = "require_before"\ntool = "refund"\n')
    assert e.line == 3 and "missing required field 'before'" in e.reason
    assert error_of('[[rule]]\ntype = "budget"\nmax_steps = 1\n').reason.endswith(
        "missing required field 'id' for type budget"
    )


@pytest.mark.parametrize(
    ("body", "line", "words"),
    [
        ("tool = 3\n", 4, "'tool' must be a string"),
        ('tool = "x"\nseverity = "fatal"\n', 5, "unknown severity 'fatal'"),
        ('tool = "x"\nargs = "order_id"\n', 5, "'args' must be a table"),
    ],
)
def test_wrong_value_types(body: str, line: int, words: str) -> None:
    e = error_of(f'[[rule]]\nid = "a"\ntype = "forbid_tool"\n{body}')
    assert e.line == line and words in e.reason


def test_budget_value_checks() -> None:
    e = error_of('[[rule]]\nid = "b"\ntype = "budget"\nmax_steps = 2.5\n')
    assert e.line == 4 and "'max_steps' must be an integer" in e.reason
    e = error_of('[[rule]]\nid = "b"\ntype = "budget"\nmax_cost_usd = -1\n')
    assert "must be a number >= 0" in e.reason
    # inf (or 1e400) was taken, then written as Infinity into `rules --json` and exported tasks,
    # which are then not JSON (found by an attack)
    for value in ("inf", "+inf", "1e400"):
        e = error_of(f'[[rule]]\nid = "b"\ntype = "budget"\nmax_latency_s = {value}\n')
        assert e.line == 4 and "'max_latency_s' must be a finite number" in e.reason
    e = error_of('[[rule]]\nid = "b"\ntype = "budget"\nmax_tool_errors = true\n')
    assert "got a boolean" in e.reason
    e = error_of('[[rule]]\nid = "b"\ntype = "budget"\n')
    assert e.line == 1 and "at least one of max_steps" in e.reason
    e = error_of('[[rule]]\nid = "a"\ntype = "require_before"\ntool = "r"\nbefore = []\n')
    assert e.line == 5 and "'before'" in e.reason


def test_duplicate_ids_point_at_the_second() -> None:
    rule = '[[rule]]\nid = "same"\ntype = "budget"\nmax_steps = 1\n'
    e = error_of(rule + "\n" + rule)
    assert e.line == 7 and "duplicate rule id 'same'" in e.reason


def test_toml_syntax_error_keeps_its_line() -> None:
    e = error_of('[[rule]]\nid = "a"\ntype = budget\n')
    assert e.line == 3 and e.reason.startswith("invalid TOML")
    assert str(e).startswith("rules.toml:3: invalid TOML")


def test_unknown_top_level_key() -> None:
    e = error_of('version = 1\n[[rule]]\nid = "a"\ntype = "budget"\nmax_steps = 1\n')
    assert e.line == 1 and "unknown top-level key 'version'" in e.reason


def test_load_rules_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "my-rules.toml"
    path.write_text('[[rule]]\nid = "a"\ntype = "nope"\n', encoding="utf-8")
    with pytest.raises(RuleError) as info:
        load_rules(path)
    assert str(info.value).startswith(f"{path}:3: ")
    ok = tmp_path / "ok.toml"
    ok.write_text(SAMPLE, encoding="utf-8")
    assert [r.id for r in load_rules(ok)][0] == "no-cancel-after-shipped"
    with pytest.raises(RuleError, match="cannot read rules"):
        load_rules(tmp_path / "missing.toml")


def test_empty_file_has_no_rules() -> None:
    assert parse_rules("# nothing yet\n") == []


def test_a_rule_naming_a_tool_no_trial_calls_is_warned_of(tmp_path: Path, sample_db: Path) -> None:
    """A forbidden rule on `cancel_ordr` was taken without a word and never broken, which keeps
    the gate's RED FLAG off for good (found by an attack): setting rules names each tool a rule
    names that no stored trial calls, with the tools that are called; a database with no trial
    yet says nothing, nor does a rule whose tool is called."""
    from click.testing import CliRunner

    from reviewer.cli import cli

    typo = tmp_path / "typo.toml"
    typo.write_text(
        '[[rule]]\nid = "no-cancel"\ntype = "forbid_tool"\ntool = "cancel_ordr"\n'
        'severity = "forbidden"\n\n[[rule]]\nid = "lookup"\ntype = "require_before"\n'
        'tool = "refund"\nbefore = "get_order"\n'
    )
    got = CliRunner().invoke(cli, ["--db", str(sample_db), "rules", str(typo)])
    assert got.exit_code == 0, got.output
    (warning,) = [line for line in got.stderr.splitlines() if line.startswith("warning:")]
    assert warning.startswith(
        "warning: rule 'no-cancel': no trial calls tool 'cancel_ordr', so the rule cannot be"
    )
    assert "tools called: 'cancel_order', " in warning
    fixed = tmp_path / "fixed.toml"
    fixed.write_text(typo.read_text().replace("cancel_ordr", "cancel_order"))
    got = CliRunner().invoke(cli, ["--db", str(sample_db), "rules", str(fixed)])
    assert got.exit_code == 0 and "warning" not in got.stderr
    empty = str(tmp_path / "empty.db")
    got = CliRunner().invoke(cli, ["--db", empty, "rules", str(typo)])
    assert got.exit_code == 0 and "warning" not in got.stderr


def test_a_folders_rules_are_warned_of_once_its_trials_are_in(tmp_path: Path) -> None:
    """The warning of a folder's rules.toml was made before the folder's trials were stored, so
    with another run stored it said the sample's rules on cancel_order and refund could never be
    broken while the import's own trials broke them 12 times (found by a review). It is now said
    after the files are in, of the tools no trial at all calls; on an empty database too."""
    import shutil

    from tests.conftest import SAMPLE_RUNS, native_trial, run_cli, write_jsonl

    folder = tmp_path / "samp"
    shutil.copytree(SAMPLE_RUNS, folder, ignore=shutil.ignore_patterns("*.py"))
    other = write_jsonl(tmp_path / "o.jsonl", [native_trial("t1", run="other")])  # get_order
    db = str(tmp_path / "w.db")
    assert run_cli("--db", db, "import", str(other))[0] == 0
    code, out, err = run_cli("--db", db, "import", str(folder))
    assert code == 0 and "warning: " not in out + err, out + err
    rules = folder / "rules.toml"
    rules.write_text(rules.read_text().replace('tool = "cancel_order"', 'tool = "cancel_ordr"'))
    code, out, err = run_cli("--db", str(tmp_path / "fresh.db"), "import", str(folder))
    assert code == 0, err
    (line,) = [x for x in (out + err).splitlines() if x.startswith("warning: ")]
    assert "no trial calls tool 'cancel_ordr'" in line and "'cancel_order'" in line
