"""Issue 27: a Claude Code session is stored whole or not at all, and a session id is one trial.

A file with a bad line stores nothing (it was stored cut short, and the fixed file then added a second
copy); importing the session again, from the fixed file, from a second file or as it grew, keeps one
trial: a newer version (ended later, or as late and longer) takes the stored one's place, with its
id, trial number and labels; an older or equal one is already stored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reviewer.store import open_store, trial_list
from reviewer.store.trial_list import TrialFilter
from tests.conftest import run_cli, stored

PROJECT = "-home-ana-shop"


def rec(n: int, kind: str, text: str, sid: str = "s-1", **extra: Any) -> dict[str, Any]:
    """Record ``n`` of a session's chain (its parent is record n - 1), at second ``n``."""
    content: Any = text if kind == "user" else [{"type": "text", "text": text}]
    return {
        "uuid": f"{sid}-{n}",
        "parentUuid": f"{sid}-{n - 1}" if n > 1 else None,
        "sessionId": sid,
        "type": kind,
        "isSidechain": False,
        "cwd": "~/shop",
        "timestamp": f"2026-02-01T10:00:{n:02d}.000Z",
        "message": {"role": kind, "content": content},
        **extra,
    }


def session(n: int, sid: str = "s-1") -> list[dict[str, Any]]:
    """The first ``n`` records of a conversation: a question, then answers and follow-ups."""
    out = []
    for i in range(1, n + 1):
        kind = "user" if i % 2 else "assistant"
        out.append(rec(i, kind, f"{kind} turn {i} word{i}x", sid))
    return out


def write(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), "utf-8"
    )
    return path


def rows(db: str = "x.db") -> list[tuple[Any, ...]]:
    with open_store(db) as s:
        return [
            tuple(r)
            for r in s.execute(
                "SELECT id, trial, n_messages, source_file, seq FROM trials ORDER BY seq"
            )
        ]


def search(word: str, db: str = "x.db") -> int:
    """Trials the full-text index finds ``word`` in (FTS5 on SQLite, a tsvector on PostgreSQL)."""
    with open_store(db) as s:
        return trial_list.count(s, TrialFilter(search=word), cached=False)


def test_a_bad_line_stores_nothing_of_the_session_and_the_fixed_file_stores_it_once(
    tmp_path: Path,
) -> None:
    good = session(6)
    broken = [json.dumps(r) for r in good]
    broken[3] = broken[3].replace('"type": "assistant"', '"type": "assistant", "n": NaN')
    f = write(tmp_path / PROJECT / "s-1.jsonl", broken)
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    (line,) = [x for x in err.splitlines() if str(f) in x]
    assert line == (
        f"reviewer: {f}:4: n: NaN is not a number reviewer stores (finite numbers only); nothing "
        "of this file imported (a Claude Code session is stored whole or not at all)"
    )
    assert code == 1 and stored() == 0
    write(f, good)  # fixed
    for _ in range(2):
        code, _, err = run_cli("--db", "x.db", "import", str(f))
        assert code == 0, err
    ((_, trial_no, n, _, _),) = rows()
    assert (trial_no, n) == (1, 6)
    assert "nothing new: the 1 trial was already stored" in err


def test_a_session_that_grew_replaces_its_stored_version_in_place(tmp_path: Path) -> None:
    f = write(tmp_path / PROJECT / "s-1.jsonl", session(3))
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0
    ((tid, trial_no, n, _, seq),) = rows()
    assert n == 3 and search("word3x") == 1 and search("word5x") == 0
    with open_store("x.db") as db:  # a label given to the shorter version stays with the session
        db.execute(
            "INSERT INTO labels (trial_id, labeler, verdict, at) "
            "VALUES (?, 'ana', 'fail', '2026-02-01')",
            [tid],
        )
        db.conn.commit()
    write(f, session(5))  # the session went on
    code, out, err = run_cli("--db", "x.db", "import", str(f), "--json")
    assert code == 0, err
    assert json.loads(out)["updated"] == 1 and json.loads(out)["added"] == 0
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert "nothing new: the 1 trial was already stored" in err
    assert rows() == [(tid, trial_no, 5, str(f), seq)]
    assert search("word5x") == 1 and search("word3x") == 1 and search("word1x") == 1
    with open_store("x.db") as db:
        assert db.execute("SELECT trial_id FROM labels").fetchall() == [(tid,)]
        stats = db.execute("SELECT n, unscored, steps_sum FROM task_stats").fetchall()
        assert stats == [(1, 1, 2)]  # 2 assistant turns: the new version's steps, once
        (record,) = db.execute("SELECT record FROM trials").fetchone()
        assert json.loads(record)["metadata"]["ended_at"] == "2026-02-01T10:00:05.000Z"
    # the shorter version again (an old copy of the file): already stored, nothing changes
    old = write(tmp_path / "backup" / PROJECT / "s-1.jsonl", session(3))
    code, _, err = run_cli("--db", "x.db", "import", str(old), "--run", "claude-code · " + PROJECT)
    assert code == 0 and "nothing new: the 1 trial was already stored" in err, err
    assert rows() == [(tid, trial_no, 5, str(f), seq)]


def test_the_same_session_in_a_second_file_is_one_trial(tmp_path: Path) -> None:
    first = write(tmp_path / PROJECT / "a.jsonl", session(4))
    # a resumed session's file starts with the records of the session it resumed
    second = write(tmp_path / PROJECT / "b.jsonl", session(4) + session(2, sid="s-2"))
    code, _, err = run_cli("--db", "x.db", "import", str(tmp_path / PROJECT))
    assert code == 0, err
    assert [r[2] for r in rows()] == [4, 2]
    assert "imported 2 trials (1 run, 1 task) from 2 files; 1 already stored" in err
    assert first.exists() and second.exists()
    # a later copy of the session in a third file, imported with the others in one job
    write(tmp_path / PROJECT / "c.jsonl", session(6))
    for name in ("x.db", "y.db"):
        code, _, err = run_cli("--db", name, "import", str(tmp_path / PROJECT))
        assert code == 0 and [r[2] for r in rows(name)] == [6, 2], err
    assert (
        "imported 2 trials (1 run, 1 task) from 3 files; 1 stored session updated to a newer version; 1 already stored"
        in err
    )


def test_a_version_stored_under_an_older_id_is_still_the_same_session(tmp_path: Path) -> None:
    f = write(tmp_path / PROJECT / "s-1.jsonl", session(3))
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0
    with open_store("x.db") as db:  # ids were a hash of the content before
        db.execute("UPDATE trials SET id = 'content-hash-id'")
        db.conn.commit()
    write(f, session(4))
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0
    assert [(r[0], r[2]) for r in rows()] == [("content-hash-id", 4)]


def test_a_bad_line_in_a_subagent_file_skips_its_session_only(tmp_path: Path) -> None:
    here = Path(__file__).parents[1] / "fixtures" / "claude_code"
    folder = tmp_path / "p"
    folder.mkdir()
    shutil.copy(here / "agent_session.jsonl", folder / "agent_session.jsonl")
    agent = (here / "agent-atest01.jsonl").read_text().splitlines()
    agent[1] = agent[1][:40]  # cut short: the agent was still writing
    (folder / "agent-atest01.jsonl").write_text("\n".join(agent) + "\n")
    shutil.copy(here / "tool_call_conversation.jsonl", folder / "other.jsonl")
    code, _, err = run_cli("--db", "x.db", "import", str(folder))
    bad = folder / "agent-atest01.jsonl"
    skip, alone = sorted(x for x in err.splitlines() if f"{bad}:2" in x)
    assert skip.startswith(f"{bad}:2: invalid JSON") and skip.endswith(
        "; session test-session-004 not imported (a Claude Code session is stored whole or not "
        "at all)"
    ), skip
    # the subagent file read on its own (it is in the folder too) says the same of itself
    assert alone.startswith(f"reviewer: {bad}:2: invalid JSON") and alone.endswith(
        "nothing of this file imported (a Claude Code session is stored whole or not at all)"
    )
    assert code == 1 and stored() == 1  # the other session


def test_a_kill_while_a_session_is_replaced_leaves_the_stored_version(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from reviewer.workflows import import_files
    from reviewer.workflows.imports import import_paths

    f = write(tmp_path / PROJECT / "s-1.jsonl", session(3))
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0
    before = rows()
    write(f, session(5))

    def killed(*args: Any) -> None:
        raise KeyboardInterrupt  # the process dies after the row was rewritten, before the commit

    with monkeypatch.context() as m:
        m.setattr(import_files.audit, "fingerprint_batch", killed)
        with open_store("x.db") as db, pytest.raises(KeyboardInterrupt):
            import_paths(db, [f])
    assert rows() == before and search("word3x") == 1 and search("word5x") == 0
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0
    assert [r[2] for r in rows()] == [5] and search("word5x") == 1


def test_a_file_rewritten_between_the_two_passes_is_one_line(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from reviewer.ingest import claude_code

    f = write(tmp_path / PROJECT / "s-1.jsonl", session(4))
    real = claude_code._index

    def index_then_rewrite(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        f.write_text(f.read_text().replace('"uuid": "s-1-2"', '"uuid": "s-1-X"'))
        return found

    monkeypatch.setattr(claude_code, "_index", index_then_rewrite)
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 1 and stored() == 0
    assert f"reviewer: {f}:2: the file changed while it was read; import it again" in err


def test_versions_are_ordered_by_their_last_time_then_their_length() -> None:
    from reviewer.ingest.files import newer_version
    from reviewer.models import Message, Trial

    def version(end: str | None, n: int) -> Trial:
        meta = {} if end is None else {"ended_at": end}
        return Trial(task_id="t", messages=[Message("user", "x")] * n, metadata=meta)

    at = "2026-02-01T10:00:05.000Z"
    assert newer_version(version("2026-02-01T10:00:06Z", 1), at, 9)  # later wins, even shorter
    assert not newer_version(version("2026-02-01T10:00:05+00:00", 3), at, 3)  # one moment
    assert newer_version(version("2026-02-01T10:00:05+00:00", 4), at, 3)  # as late, longer
    assert not newer_version(version("2026-02-01T09:00:00Z", 50), at, 3)  # older
    assert newer_version(version(None, 4), None, 3) and not newer_version(version(None, 3), None, 3)


def test_monitor_follow_keeps_a_growing_session_as_one_trial(tmp_path: Path) -> None:
    from reviewer.workflows.monitor import MonitorRequest, follow

    f = write(tmp_path / PROJECT / "s-1.jsonl", session(3))
    four, five, six = (json.dumps(r) + "\n" for r in session(6)[3:])
    # Claude Code writes on: a line; a line and half of the next; the rest of it
    steps = [four, five + six[:25], six[25:]]
    notes: list[str] = []

    def grow(_seconds: float) -> None:
        with f.open("a", encoding="utf-8") as out:
            out.write(steps.pop(0))

    with open_store("x.db") as db:
        follow(
            db,
            f,
            MonitorRequest(judge=False),
            lambda *_: None,
            passes=4,
            sleep=grow,
            on_note=notes.append,
        )
    ((_, trial_no, n, _, _),) = rows()
    assert (trial_no, n) == (1, 6) and notes == [], notes  # the half line waited a look


def test_the_summaries_stay_true_after_a_session_is_replaced(tmp_path: Path) -> None:
    from reviewer.store.writer import rebuild_task_stats
    from tests.store.test_summaries import _verdict, assert_summaries_true

    f = write(tmp_path / PROJECT / "s-1.jsonl", session(3))
    other = write(tmp_path / PROJECT / "s-2.jsonl", session(4, sid="s-2"))
    assert run_cli("--db", "x.db", "import", str(tmp_path / PROJECT))[0] == 0
    with open_store("x.db") as db:
        _verdict(db, rows()[0][0], "judge", "fail")
    write(f, session(7))
    assert other.exists() and run_cli("--db", "x.db", "import", str(f))[0] == 0
    with open_store("x.db") as db:
        assert_summaries_true(db)
        kept = db.execute("SELECT * FROM task_stats ORDER BY run, task_id").fetchall()
        rebuild_task_stats(db)
        assert db.execute("SELECT * FROM task_stats ORDER BY run, task_id").fetchall() == kept
        assert_summaries_true(db)
