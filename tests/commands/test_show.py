"""`reviewer show TRIAL`: one trial as the app's transcript shows it, as text or JSON (the CLI face
of Enter on a trial; workflows.trials.show_trial)."""

from __future__ import annotations

import json
from pathlib import Path

from reviewer.store import open_store
from reviewer.workflows.trials import native_record
from tests.conftest import native_trial, run_cli, write_jsonl


def _db(tmp_path: Path, *records: dict[str, object]) -> str:
    db = str(tmp_path / "x.db")
    code, _, err = run_cli(
        "--db", db, "import", str(write_jsonl(tmp_path / "r.jsonl", list(records)))
    )
    assert code == 0, err
    return db


def _ids(db: str) -> list[str]:
    with open_store(db) as store:
        return [str(r[0]) for r in store.execute("SELECT id FROM trials ORDER BY seq").fetchall()]


def test_a_trial_shows_its_header_messages_calls_verdict_and_label(tmp_path: Path) -> None:
    rec = native_trial(
        "refund-1",
        passed=False,
        reason="refunded the wrong order",
        judge={"verdict": "fail", "rationale": "wrong order", "id": "j1"},
    )
    db = _db(tmp_path, rec)
    (trial_id,) = _ids(db)
    code, _, err = run_cli(
        "--db", db, "--labeler", "ann", "labels", "give", trial_id, "fail", "--note", "W5521"
    )
    assert code == 0, err
    code, out, err = run_cli("--db", db, "show", trial_id[:8])  # a prefix is enough
    assert code == 0, err
    lines = out.splitlines()
    assert (
        lines[0] == f"trial {trial_id} · run r1 · task refund-1 · trial 1 ({tmp_path / 'r.jsonl'})"
    )
    assert lines[1].startswith("fail · steps ")
    assert "reason: refunded the wrong order" in lines
    roles = [line for line in lines if line.startswith("── ")]
    assert roles == [
        "── system #0 ──",
        "── user #1 ──",
        "── assistant #2 ──",
        "── tool get_order #3 ──",
        "── assistant #4 ──",
    ]
    assert '→ get_order {"order_id": "W5521"}' in lines
    assert "judge j1: fail — wrong order" in lines
    assert lines[-1] == "label ann: fail — W5521"


def test_blind_leaves_the_judge_out_of_the_text_and_the_json(tmp_path: Path) -> None:
    rec = native_trial(judge={"verdict": "fail", "rationale": "secret reasoning", "id": "j1"})
    db = _db(tmp_path, rec)
    (trial_id,) = _ids(db)
    code, out, _ = run_cli("--db", db, "show", trial_id, "--blind")
    assert code == 0 and "secret reasoning" not in out and "judge: hidden (--blind)" in out
    code, out, _ = run_cli("--db", db, "show", trial_id, "--blind", "--json")
    data = json.loads(out)
    assert data["verdicts"] is None and "judge" not in data["record"]
    assert "secret reasoning" not in out
    code, out, _ = run_cli("--db", db, "show", trial_id, "--json")
    data = json.loads(out)
    with open_store(db) as store:
        stored = native_record(store, trial_id)
    assert stored is not None and data["record"] == json.loads(stored)
    assert [v["rationale"] for v in data["verdicts"]] == ["secret reasoning"]
    assert data["trial"]["outcome"] == "pass" and data["trial"]["task_id"] == "t1"


def test_hostile_text_reaches_the_terminal_visible_never_as_escapes(tmp_path: Path) -> None:
    evil = "\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 [bold]m[/] \u202eevil"
    rec = native_trial("\x1b[2Jtask", reason=evil)
    rec["messages"][1]["content"] = evil  # type: ignore[index]
    db = _db(tmp_path, rec)
    (trial_id,) = _ids(db)
    code, out, err = run_cli("--db", db, "show", trial_id)
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "[bold]m[/]" in out  # markup is text here, shown as it is


def test_the_system_prompt_is_folded_unless_asked(tmp_path: Path) -> None:
    rec = native_trial()
    rec["messages"][0]["content"] = "Be kind.\nRule one.\nRule two."  # type: ignore[index]
    db = _db(tmp_path, rec)
    (trial_id,) = _ids(db)
    _, out, _ = run_cli("--db", db, "show", trial_id)
    assert "Be kind." in out and "Rule two." not in out
    assert "… 2 more lines (--system shows them)" in out
    _, out, _ = run_cli("--db", db, "show", trial_id, "--system")
    assert "Rule two." in out and "more lines" not in out


def test_a_rule_violation_shows_after_the_message_it_happened_at(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rule]]\nid = "no-refund-lookup"\ntype = "forbid_tool"\ntool = "get_order"\n'
        'severity = "forbidden"\n',
        encoding="utf-8",
    )
    db = str(tmp_path / "x.db")
    assert run_cli("--db", db, "rules", str(rules))[0] == 0
    write_jsonl(tmp_path / "r.jsonl", [native_trial()])
    assert run_cli("--db", db, "import", str(tmp_path / "r.jsonl"))[0] == 0
    (trial_id,) = _ids(db)
    code, out, err = run_cli("--db", db, "show", trial_id)
    assert code == 0, err
    lines = out.splitlines()
    flag = next(i for i, line in enumerate(lines) if line.startswith("⚑ forbidden rule"))
    # numbered as the app's transcript numbers it (#2) and as a rule's detail names a message: it
    # said 'message 3' beside a detail's 'after the tool result at message 3' meaning #3
    assert "(message #2)" in lines[flag]
    assert lines[flag - 2] == "── assistant #2 ──"
    assert lines[flag - 1] == '→ get_order {"order_id": "W5521"}'  # after the call it flags
    code, out, _ = run_cli("--db", db, "show", trial_id, "--json")
    assert [v["rule_id"] for v in json.loads(out)["violations"]] == ["no-refund-lookup"]


def test_an_unknown_or_ambiguous_trial_is_one_line(tmp_path: Path) -> None:
    db = _db(tmp_path, native_trial("a"), native_trial("b"))
    for ref in ("zzzzzz", "ab", ""):
        code, out, err = run_cli("--db", db, "show", ref)
        assert code == 1 and out == "" and len(err.splitlines()) == 1, (ref, err)
        assert "no trial with id" in err
    code, _, err = run_cli("--db", str(tmp_path / "empty.db"), "show", "abcdef")
    assert code == 1 and "no runs" in err
