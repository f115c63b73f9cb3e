"""Rule regexes run on RE2: a catastrophic pattern cannot hang an import, a construct RE2 lacks is
refused at load naming the rule, and deeply nested TOML or regexes are one line, not a
RecursionError. Regression tests for issue 27 part 10."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.config import ConfigError, load_config
from reviewer.labeling.rubric import RubricError, parse_rubric
from reviewer.metrics.rule_regex import RegexRefused, compile_rule_regex
from reviewer.metrics.rules import ForbidTool, RuleError, check_trial, parse_rules
from reviewer.models import Message, ToolCall, Trial
from tests.conftest import native_trial, write_jsonl


def _rule(after: str, rid: str = "hang") -> str:
    return (
        f'[[rule]]\nid = "{rid}"\ntype = "forbid_tool"\ntool = "cancel_order"\n'
        f"after_result = '{after}'\n"
    )


def _trial(result: str) -> Trial:
    return Trial(
        run="r",
        task_id="t",
        trial=0,
        messages=[
            Message(
                "assistant", "", tool_calls=[ToolCall(name="get_order", arguments={}, id="c1")]
            ),
            Message("tool", result, tool_call_id="c1", name="get_order"),
            Message(
                "assistant",
                "",
                tool_calls=[ToolCall(name="cancel_order", arguments={"id": "W1"}, id="c2")],
            ),
        ],
        passed=False,
    )


def _finishes(fn: Callable[[], object]) -> object:
    """``fn()``'s value; fails (instead of hanging the suite) when it has not returned in a minute,
    which a linear-time match never comes near and a backtracking one never leaves."""
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the rule check hung"
    return out[0]


def test_a_catastrophic_pattern_matches_in_linear_time() -> None:
    """(a+)+$ took 69 s on 30 characters under Python's re, and four times as long per 2 more."""
    (rule,) = parse_rules(_rule("(a+)+$"))
    assert isinstance(rule, ForbidTool) and rule.after_result is not None
    assert _finishes(lambda: check_trial(_trial("a" * 5000 + "!"), [rule])) == []
    assert (
        _finishes(lambda: [rule.after_result.search("a" * n + "!") for n in (30, 40, 100)])
        == [False] * 3
    )
    assert [v.rule_id for v in check_trial(_trial("a" * 40), [rule])] == ["hang"]


def test_rules_still_match_as_before() -> None:
    (rule,) = parse_rules(_rule('"status":\\s*"shipped"', "shipped"))
    assert [v.rule_id for v in check_trial(_trial('{"status": "shipped"}'), [rule])] == ["shipped"]
    assert check_trial(_trial('{"status": "pending"}'), [rule]) == []
    assert rule.to_dict()["after_result"] == '"status":\\s*"shipped"'
    assert parse_rules(_rule("é+", "x")) == parse_rules(_rule("é+", "x"))  # rules compare equal
    p = compile_rule_regex("(?i)café")
    assert p.search("au CAFÉ") and not p.search("cafe")


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        ("(?=a)b", "a lookahead"),
        ("(?!a)b", "a negative lookahead"),
        ("(?<=a)b", "a lookbehind"),
        ("(?<!a)b", "a negative lookbehind"),
        ("(a)\\1", "a backreference"),
        ("(?P<x>a)(?P=x)", "a backreference"),
        ("(?>a+)b", "an atomic group"),
        ("a*+b", "a possessive quantifier"),
        ("a\\Z", "\\Z (write \\z"),
    ],
)
def test_a_construct_re2_lacks_is_refused_naming_the_rule(pattern: str, construct: str) -> None:
    with pytest.raises(RuleError) as info:
        parse_rules(_rule(pattern, "needs-lookaround"))
    message = str(info.value)
    assert message.startswith(
        "rules.toml:5: rule 'needs-lookaround': bad regex in 'after_result': "
    )
    assert construct in message and "linear-time" in message
    assert "\n" not in message


def test_re2_writes_nothing_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RegexRefused):
        compile_rule_regex("(?=a)")
    assert capfd.readouterr().err == ""


def test_a_deeply_nested_regex_is_one_line() -> None:
    deep = "(" * 10_000 + "a" + ")" * 10_000
    with pytest.raises(RuleError) as info:
        parse_rules(_rule(deep, "deep"))
    assert (
        str(info.value)
        == "rules.toml:5: rule 'deep': bad regex in 'after_result': nested too deeply"
    )


DEEP_ARRAY = "x = " + "[" * 10_000 + "]" * 10_000 + "\n"
DEEP_TABLE = "x = " + "{ a = " * 10_000 + "1" + " }" * 10_000 + "\n"


@pytest.mark.parametrize("text", [DEEP_ARRAY, DEEP_TABLE], ids=["arrays", "inline tables"])
def test_deeply_nested_toml_is_one_line_in_every_file(tmp_path: Path, text: str) -> None:
    with pytest.raises(RuleError) as rules:
        parse_rules(text, file="runs/rules.toml")
    assert str(rules.value) == "runs/rules.toml: invalid TOML: nested too deeply"
    with pytest.raises(RubricError) as rubric:
        parse_rubric(text, "runs/rubric.toml")
    assert str(rubric.value) == "runs/rubric.toml: not valid TOML: nested too deeply"
    (tmp_path / "reviewer.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as config:
        load_config(tmp_path)
    assert str(config.value).endswith("reviewer.toml: invalid TOML: nested too deeply")


def test_a_5000_digit_integer_in_toml_is_one_line_in_every_file(tmp_path: Path) -> None:
    """tomllib raises a plain ValueError (Python's 4,300-digit limit), not a TOMLDecodeError:
    `reviewer rules`, `rubric --check` and every command reading reviewer.toml said 'internal
    error: ValueError: Exceeds the limit ... use sys.set_int_max_str_digits()', exit 70."""
    number = "9" * 5000
    text = f"x = {number}\n"
    said = "an integer too long to read (more than 4,300 digits)"
    with pytest.raises(RuleError) as rules:
        parse_rules(text, file="runs/rules.toml")
    assert str(rules.value) == f"runs/rules.toml: invalid TOML: {said}"
    with pytest.raises(RubricError) as rubric:
        parse_rubric(text, "runs/rubric.toml")
    assert str(rubric.value) == f"runs/rubric.toml: not valid TOML: {said}"
    (tmp_path / "reviewer.toml").write_text(f"[gate]\nk = {number}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as config:
        load_config(tmp_path)
    assert str(config.value).endswith(f"reviewer.toml: invalid TOML: {said}")
    (tmp_path / "rules.toml").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["rules", str(tmp_path / "rules.toml")])
    assert result.exit_code != 70 and "internal error" not in result.output


def test_import_of_a_folder_with_a_catastrophic_rule_does_not_hang(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    rec = native_trial("t1", passed=False)
    rec["messages"].insert(
        2,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c9", "name": "get_order", "arguments": {}}],
        },
    )
    rec["messages"].insert(
        3, {"role": "tool", "tool_call_id": "c9", "name": "get_order", "content": "a" * 40 + "!"}
    )
    write_jsonl(runs / "t.jsonl", [rec])
    (runs / "rules.toml").write_text(_rule("(a+)+$"), encoding="utf-8")
    db = str(tmp_path / "r.db")
    result = _finishes(lambda: CliRunner().invoke(cli, ["--db", db, "import", str(runs)]))
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    (runs / "rules.toml").write_text(_rule("(?<=x)y", "lookbehind"), encoding="utf-8")
    write_jsonl(runs / "t.jsonl", [native_trial("t2", passed=False)])
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "import", str(runs)])
    assert "rule 'lookbehind': bad regex in 'after_result': a lookbehind" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_repetition_with_no_lower_bound_is_refused_not_read_as_text() -> None:
    """Python reads W\\d{,3} as W and up to three digits, RE2 as the text '{,3}': a rule written for
    Python's re (as every rule was before RE2) loaded and silently never matched, so its forbidden
    tool was never flagged. It is refused now, saying what to write; an escaped or bracketed {,3}
    is the text in both and stays."""
    with pytest.raises(RuleError) as info:
        parse_rules(_rule("^W\\d{,3}$", "short-id"))
    message = str(info.value)
    assert "rule 'short-id'" in message and "write {0,3}" in message and "\\{,3}" in message
    for pattern in ("x{,}", "(?:ab){,2}c"):
        with pytest.raises(RegexRefused):
            compile_rule_regex(pattern)
    assert compile_rule_regex("W\\{,3}").search("W{,3}")
    assert compile_rule_regex("W[{,3}]").search("W,")
    assert compile_rule_regex("^W\\d{0,3}$").search("W12")


def test_python_warnings_about_a_pattern_stay_off_the_terminal() -> None:
    """[[:alpha:]] (RE2's POSIX class) made Python's parser print a FutureWarning with a source line
    of reviewer's on stderr."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert compile_rule_regex("^[[:alpha:]]+$").search("abc")
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("limit", ["max_steps", "max_cost_usd", "max_latency_s"])
def test_a_budget_limit_beyond_any_float_is_one_line(limit: str) -> None:
    """A TOML hex integer has no size limit: max_cost_usd = 0xfff... (5,000 digits) was an
    internal error (OverflowError), max_steps one was taken as a limit."""
    text = f'[[rule]]\nid = "b"\ntype = "budget"\n{limit} = 0x{"f" * 5000}\n'
    with pytest.raises(RuleError) as info:
        parse_rules(text)
    assert str(info.value) == (
        f"rules.toml:4: rule 'b': '{limit}' must be a number below 2^63, got 20000 bits"
    )


@pytest.mark.parametrize(
    "args",
    [["rules", "/dev/zero"], ["rubric", "/dev/zero", "--check"], ["labels", "import", "/dev/zero"]],
    ids=["rules", "rubric", "labels"],
)
def test_a_device_given_as_a_small_file_is_one_line_not_all_memory(
    tmp_path: Path, args: list[str]
) -> None:
    """`reviewer rules /dev/zero` (and rubric --check, labels import) read the device whole: 24 GB
    of memory before anything was said. Run under a 2 GB address-space limit, so a regression
    fails here instead of taking the machine's memory."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run(
        [sys.executable, "-c", "from reviewer.cli import main; main()", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("reviewer: /dev/zero: ")
    assert len(done.stderr.strip().splitlines()) == 1 and "internal error" not in done.stderr
