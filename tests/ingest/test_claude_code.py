"""Claude Code sessions, on real session files (inspect_scout's fixtures, tests/fixtures/claude_code).

Numbers checked by hand against the files: agent_session.jsonl has 4 records on its main chain (user,
assistant with a Task call, the Task result, assistant) and its subagent agent-atest01.jsonl 4 more
(user, assistant with a Bash call, the Bash result, assistant); usage 100+200 (+80+120 in the subagent)
input and 30+50 (+20+40) output tokens. tool_call_conversation.jsonl: 4 records, one Read call, usage
200 + 100 cache-creation + 50 cache-read + 250 input and 50 + 40 output tokens.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer import ingest
from reviewer.cli import cli
from reviewer.ingest import claude_code
from reviewer.models import Skip, Trial
from reviewer.store import open_store
from tests.conftest import FIXTURES, real_data

HERE = FIXTURES / "claude_code"
PREFIX = "tests__sources__claude_code_source__fixtures__"


def corpus(name: str) -> list[Any]:
    return real_data(HERE / name, "realworld", "claude_code", PREFIX + name)


def trials(path: Path) -> list[Trial]:
    out = list(claude_code.parse(path))
    assert all(isinstance(t, Trial) for t in out), out
    return [t for t in out if isinstance(t, Trial)]


@pytest.mark.parametrize("path", corpus("agent_session.jsonl"))
def test_session_is_one_unscored_trial_with_its_subagent_nested(path: Path) -> None:
    (trial,) = trials(path)
    assert trial.passed is None and trial.reward is None
    assert trial.task_id == "project"  # the last part of the session's cwd
    roles = [m.role for m in trial.messages]
    assert roles == [
        "user",
        "assistant",
        "tool",
        "system",  # ▸ subagent atest01
        "user",
        "assistant",
        "tool",
        "assistant",
        "system",  # ◂ end of subagent atest01
        "assistant",
    ]
    assert trial.messages[3].content.startswith("▸ subagent atest01")
    assert trial.messages[8].content == "◂ end of subagent atest01"
    assert trial.metadata["sidechains"] == [{"agent_id": "atest01", "start": 3, "end": 8}]
    assert [c.name for m in trial.messages for c in m.tool_calls] == ["Task", "Bash"]
    assert trial.messages[2].name == "Task" and trial.messages[2].tool_call_id == "toolu_task_001"
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (500, 140)
    assert trial.metadata["model"] == "claude-opus-4-5-20251101, claude-sonnet-4-20250514"
    assert trial.metadata["session_id"] == "test-session-004"


@pytest.mark.parametrize("path", corpus("agent-atest01.jsonl"))
def test_a_side_chain_file_on_its_own_is_skipped_with_the_reason(path: Path) -> None:
    (item,) = list(claude_code.parse(path))
    assert isinstance(item, Skip)
    assert "side-chain" in item.reason and "session file" in item.reason


@pytest.mark.parametrize("path", corpus("compaction_session.jsonl"))
def test_a_compaction_is_marked_and_its_summary_kept(path: Path) -> None:
    (trial,) = trials(path)
    assert len(trial.messages) == 6
    marker = trial.messages[2]
    assert marker.role == "system"
    assert marker.content == "── context compacted (trigger auto, preTokens 50000) ──"
    assert trial.metadata["compactions"] == [2]
    assert trial.messages[3].role == "user"
    assert trial.messages[3].content.startswith("Summary of previous conversation")


@pytest.mark.parametrize("path", corpus("clear_split_session.jsonl"))
def test_clear_is_a_marker_and_the_session_stays_one_trial(path: Path) -> None:
    (trial,) = trials(path)
    assert [m.role for m in trial.messages] == ["user", "assistant", "system", "user", "assistant"]
    assert trial.messages[2].content == "── /clear: context cleared ──"
    assert trial.metadata["clears"] == [2]


@pytest.mark.parametrize("path", corpus("tool_call_conversation.jsonl"))
def test_tool_use_thinking_and_cache_tokens(path: Path) -> None:
    (trial,) = trials(path)
    assert [m.role for m in trial.messages] == ["user", "assistant", "tool", "assistant"]
    assistant = trial.messages[1]
    assert assistant.content.startswith("[thinking] The user wants me to read the README")
    assert "I'll read the README file for you." in assistant.content
    (call,) = assistant.tool_calls
    assert (call.name, call.id) == ("Read", "toolu_read_001")
    assert call.arguments == {"file_path": "/Users/test/project/README.md"}
    result = trial.messages[2]
    assert (result.name, result.tool_call_id) == ("Read", "toolu_read_001")
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (600, 90)
    assert trial.metadata["cache_creation_input_tokens"] == 100
    assert trial.metadata["cache_read_input_tokens"] == 50


def rec(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    message.update(extra.pop("message", {}))
    return {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s-1",
        "type": kind,
        "isSidechain": False,
        "cwd": "projects/shop",  # the last part names the task (real sessions hold an absolute path)
        "message": message,
        **extra,
    }


def write(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), "utf-8"
    )
    return path


def test_main_chain_follows_parent_uuid_not_file_order(tmp_path: Path) -> None:
    # an edited prompt leaves an abandoned branch (b2, b3); the leaf is the last record, c3
    f = write(
        tmp_path / "s.jsonl",
        [
            rec("a1", None, "user", "first question"),
            rec("b2", "a1", "assistant", [{"type": "text", "text": "abandoned answer"}]),
            rec("b3", "b2", "user", "abandoned follow-up"),
            rec("c3", "c2", "assistant", [{"type": "text", "text": "second answer"}]),
            rec("c2", "a1", "assistant", [{"type": "text", "text": "first answer"}]),
        ],
    )
    (trial,) = trials(f)
    assert [m.content for m in trial.messages] == [
        "first question",
        "first answer",
        "second answer",
    ]
    assert trial.task_id == "shop"


def test_streamed_records_of_one_message_are_one_message_and_usage_counted_once(
    tmp_path: Path,
) -> None:
    usage = {"id": "msg_1", "usage": {"input_tokens": 10, "output_tokens": 5}}
    f = write(
        tmp_path / "s.jsonl",
        [
            rec("a", None, "user", "hi"),
            rec("b", "a", "assistant", [{"type": "text", "text": "Let me look."}], message=usage),
            rec(
                "c",
                "b",
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
                message=usage,
            ),
        ],
    )
    (trial,) = trials(f)
    assert len(trial.messages) == 2
    assert trial.messages[1].content == "Let me look."
    assert [c.name for c in trial.messages[1].tool_calls] == ["Bash"]
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (10, 5)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ('{"uuid": "broken", ', "invalid JSON: Expecting property name"),
        ("[1, 2]", "not a JSON object (list)"),
        ('{"type": "user", "uuid": "x", "message": {}}', "record has no sessionId"),
    ],
)
def test_a_malformed_line_stops_the_file_naming_it(tmp_path: Path, bad: str, reason: str) -> None:
    """A session is stored whole or not at all: a line that cannot be read may have been any
    session's, so nothing of the file is read (it was stored cut short at that line)."""
    f = write(
        tmp_path / "s.jsonl",
        [
            rec("a", None, "user", "hi"),
            bad,
            rec("b", "a", "assistant", [{"type": "text", "text": "hello"}]),
        ],
    )
    with pytest.raises(ingest.IngestError) as caught:
        list(claude_code.parse(f))
    assert (caught.value.file, caught.value.line) == (str(f), 2)
    assert caught.value.reason.startswith(reason)
    assert caught.value.reason.endswith(
        "; nothing of this file imported (a Claude Code session is stored whole or not at all)"
    )


def test_hostile_records_never_raise(tmp_path: Path) -> None:
    f = write(
        tmp_path / "s.jsonl",
        [
            rec("a", None, "user", None),
            rec("b", "a", "assistant", "plain string content", message={"usage": "lots"}),
            rec("c", "b", "user", [None, {"type": "tool_result", "content": {"x": 1}}]),
            {"type": "assistant", "sessionId": "s-1", "uuid": 7, "parentUuid": [], "message": 3},
            {"type": "progress", "uuid": "y", "data": {"note": "not an entry, no session"}},
        ],
    )
    (trial,) = list(claude_code.parse(f))
    assert isinstance(trial, Trial)


def test_a_file_with_no_session_records_is_refused(tmp_path: Path) -> None:
    f = write(tmp_path / "s.jsonl", [{"type": "summary", "summary": "x", "leafUuid": "y"}])
    with pytest.raises(ingest.IngestError, match="no Claude Code session records"):
        list(claude_code.parse(f))


def test_the_project_folder_names_the_task(tmp_path: Path) -> None:
    folder = tmp_path / "-home-me-shop"
    folder.mkdir()
    shutil.copy(HERE / "clear_split_session.jsonl", folder / "0b7c.jsonl")
    (trial,) = trials(folder / "0b7c.jsonl")
    assert trial.task_id == "-home-me-shop"


def test_every_fixture_is_sniffed_as_claude_code() -> None:
    for path in sorted(HERE.glob("*.jsonl")):
        assert ingest.sniff(path) is claude_code, path


def test_reviewer_import_stores_the_sessions_unscored(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("agent_session.jsonl", "agent-atest01.jsonl", "compaction_session.jsonl"):
        shutil.copy(HERE / name, folder / name)
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "import", str(folder)])
    assert result.exit_code == 0, result.output
    db = open_store(tmp_path / "r.db")
    try:
        rows = db.execute(
            "SELECT task_id, n_messages, success FROM trials ORDER BY n_messages"
        ).fetchall()
    finally:
        db.close()
    assert [(r[0], r[1]) for r in rows] == [("project", 6), ("project", 10)]
    assert "side-chain" in result.output


def test_side_chains_in_the_session_file_without_agent_ids_follow_the_main_chain(
    tmp_path: Path,
) -> None:
    def side(uuid: str, parent: str | None, kind: str, text: str) -> dict[str, Any]:
        return rec(uuid, parent, kind, text, isSidechain=True)

    f = write(
        tmp_path / "s.jsonl",
        [
            rec("m1", None, "user", "explore twice"),
            side("x1", None, "user", "first subagent prompt"),
            side("y1", None, "user", "second subagent prompt"),
            side("x2", "x1", "assistant", "first subagent answer"),
            side("y2", "y1", "assistant", "second subagent answer"),
            rec("m2", "m1", "assistant", "both done"),
        ],
    )
    (trial,) = trials(f)
    assert [m.content for m in trial.messages] == [
        "explore twice",
        "both done",
        "▸ side-chain (2 messages)",
        "first subagent prompt",
        "first subagent answer",
        "◂ end of side-chain",
        "▸ side-chain (2 messages)",
        "second subagent prompt",
        "second subagent answer",
        "◂ end of side-chain",
    ]
    assert [s["start"] for s in trial.metadata["sidechains"]] == [2, 6]


def test_sessions_of_one_project_share_one_run_named_after_it(tmp_path: Path) -> None:
    """Run names come from the project, not from each session's file name (a uuid)."""
    project = tmp_path / "-home-ana-shop"
    project.mkdir()
    for name in ("compaction_session.jsonl", "tool_call_conversation.jsonl"):
        (project / name).write_bytes((HERE / name).read_bytes())
    runs = {
        t.run
        for f in sorted(project.glob("*.jsonl"))
        for t in claude_code.parse(f)
        if isinstance(t, Trial)
    }
    assert runs == {"claude-code · -home-ana-shop"}


@pytest.mark.parametrize("layout", ["beside", "subagents"])
def test_a_project_folder_with_subagent_files_imports_without_a_problem(
    tmp_path: Path, layout: str
) -> None:
    """Claude Code keeps a subagent's records in agent-<id>.jsonl beside <session id>.jsonl (or
    in <session id>/subagents/). Walking such a project folder read them with their session, yet
    called each one '1 skipped: only side-chain (subagent) records', and `reviewer PATHS` opened
    on the import-problems panel for it (found by a new user importing a project folder)."""
    project = tmp_path / "-Users-test-project"
    project.mkdir()
    shutil.copy(HERE / "agent_session.jsonl", project / "test-session-004.jsonl")
    side = project if layout == "beside" else project / "test-session-004" / "subagents"
    side.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "agent-atest01.jsonl", side / "agent-atest01.jsonl")
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "import", str(project)])
    assert result.exit_code == 0, result.output
    assert "skipped" in result.output and "1 skipped" not in result.output
    assert "side-chain" not in result.output
    db = open_store(tmp_path / "r.db")
    try:
        rows = db.execute("SELECT n_messages FROM trials").fetchall()
    finally:
        db.close()
    assert [r[0] for r in rows] == [10]  # the subagent's messages are in the session's trial
    # named on its own, the subagent file is still skipped with its reason
    alone = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "r2.db"), "import", str(side / "agent-atest01.jsonl")]
    )
    assert "side-chain" in alone.output


@pytest.mark.parametrize("sid", ["x" * 300, "a\x00b"], ids=["too-long", "nul"])
def test_a_subagent_file_whose_session_id_names_no_file_is_skipped_not_a_crash(
    tmp_path: Path, sid: str
) -> None:
    """Walking a folder looks for a subagent file's session beside it by the id its records give:
    an id too long for a file name stopped the import with an internal error (exit 70)."""
    folder = tmp_path / "p"
    folder.mkdir()
    lines = (HERE / "agent-atest01.jsonl").read_text(encoding="utf-8").splitlines()
    records = [dict(json.loads(line), sessionId=sid) for line in lines if line.strip()]
    (folder / "agent-atest01.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "import", str(folder)])
    assert result.exit_code in (0, 1) and "internal error" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "side-chain" in result.output  # skipped with its reason, as a file named on its own
