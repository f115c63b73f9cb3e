"""The import's fast paths give what the plain computations they replace give (issue 21): the one pass
over a trial's messages (search text, system prompt, counts), tool-call arguments written without the
JSON encoder, and the audit's adjusted pass^k per finding from a kept sum."""

from __future__ import annotations

import json
import random
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import pytest

from reviewer.ingest import inspect_log
from reviewer.metrics.audit import _average, _Mean
from reviewer.metrics.audit_trial import _ARGS_JSON, _args_text
from reviewer.models import Message, Skip, ToolCall, Trial, TrialError
from reviewer.store.search_text import arguments_text, search_text, system_text
from reviewer.store.writer import scan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

ARGUMENTS: list[Any] = [
    {},
    {"order_id": "W5521"},
    {"z": 1, "a": 'quote " backslash \\ newline \n é \u2028 \ud800 \x00'},
    {"a": True},
    {"a": False, "b": "x"},
    {"a": 1.5},
    {"b": None, "a": "x"},
    {"a": [1, {"b": 2}]},
    {"a": {"nested": "x"}},
    {1: "x"},
    {"a": -(10**30)},
    {"é": "ü", "B": "2", "a": "1"},
    [1, 2],
    "already text",
    None,
    7,
]


@pytest.mark.parametrize("arguments", ARGUMENTS, ids=range(len(ARGUMENTS)))
def test_arguments_are_written_as_the_json_encoder_writes_them(arguments: Any) -> None:
    if isinstance(arguments, str):
        assert arguments_text(arguments) == arguments_text(arguments, ascii_only=True) == arguments
    else:  # search reads text past ASCII as written, but for what UTF-8 cannot hold
        assert arguments_text(arguments, ascii_only=True) == json.dumps(arguments)
        written = json.dumps(arguments, ensure_ascii=False)
        utf8 = "\\ud800" not in repr(arguments)
        assert arguments_text(arguments) == (written if utf8 else json.dumps(arguments))
    if isinstance(arguments, str):
        assert _args_text(arguments) == arguments
        return
    try:
        want = _ARGS_JSON.encode(arguments)
    except (TypeError, ValueError):
        want = str(arguments)
    assert _args_text(arguments) == want


def _odd_trial(rng: random.Random) -> Trial:
    roles = ["system", "user", "assistant", "tool", "developer"]
    messages = []
    for i in range(rng.randint(0, 12)):
        calls = [
            ToolCall(f"tool{j}", rng.choice(ARGUMENTS[:12] + ["raw {", ""]), f"c{i}{j}")
            for j in range(rng.choice([0, 0, 1, 2]))
        ]
        messages.append(
            Message(
                rng.choice(roles),
                rng.choice(["", "text", "Error: x", "système"]),
                calls,
                None,
                None,
                rng.random() < 0.3,
            )
        )
    error = rng.choice([None, TrialError(message="boom"), TrialError(type="T", message=None)])
    return Trial(task_id="t", messages=messages, reason=rng.choice([None, "", "why"]), error=error)


def test_one_pass_over_the_messages_gives_the_search_text_and_counts() -> None:
    rng = random.Random(21)
    for _ in range(500):
        t = _odd_trial(rng)
        want = (search_text(t), system_text(t), t.assistant_turns, t.tool_call_count, t.tool_errors)
        assert scan(t) == want


def test_adjusted_pass_hat_k_from_the_kept_sum_equals_the_mean_over_every_task() -> None:
    rng = random.Random(5)
    for _ in range(200):
        k = rng.randint(1, 4)
        base = {}
        for i in range(rng.randint(0, 30)):
            n = rng.randint(0, 6)
            base[f"t{i}"] = (n, rng.randint(0, n))
        mean = _Mean(base, k)
        assert mean.with_changes({}) == _average(base.values(), k)[0]
        for _ in range(5):
            changed = {}
            for task in rng.sample(sorted(base), min(len(base), rng.randint(0, 3))) + ["new"]:
                n = rng.randint(0, 6)
                changed[task] = (n, rng.randint(0, n))
            assert mean.with_changes(changed) == _average({**base, **changed}.values(), k)[0]


def _damaged_eval(tmp_path: Path, where: int, flip: int, name: str) -> Path:
    src = FIXTURES / "inspect" / "support.eval"
    with zipfile.ZipFile(src) as zf:
        info = zf.getinfo(name)
    assert info.compress_type == 93  # Zstandard: the member zipfile cannot open before 3.14
    blob = bytearray(src.read_bytes())
    blob[info.header_offset + where] ^= flip
    path = tmp_path / "damaged.eval"
    path.write_bytes(bytes(blob))
    return path


@pytest.mark.parametrize(
    ("where", "flip", "reason"),
    [
        (0, 0xFF, "unreadable member: Bad magic number for file header"),
        (31, 0x01, "unreadable member: File name in directory"),
        (6, 0x01, "unreadable member: File <ZipInfo filename="),  # the encrypted flag
    ],
    ids=["magic", "name", "encrypted"],
)
def test_a_zstd_member_read_directly_is_checked_as_zipfile_checks_it(
    tmp_path: Path, where: int, flip: int, reason: str
) -> None:
    """A Zstandard member is read straight from the archive (no ZipFile.open first): its local
    header is still checked as ZipFile.open checks it, with the same messages."""
    name = "samples/cancel_after_ship_epoch_2.json"
    path = _damaged_eval(tmp_path, where, flip, name)
    if where == 6:  # the flag is read from the central directory, as zipfile does
        with zipfile.ZipFile(path) as zf:
            zf.getinfo(name).flag_bits |= 1
            with path.open("rb") as raw, pytest.raises(RuntimeError, match="is encrypted"):
                inspect_log._member(zf, raw, zf.getinfo(name))
        return
    out = list(inspect_log.parse(path))
    (skip,) = [r for r in out if isinstance(r, Skip)]
    assert skip.reason.startswith(f"{name}: {reason}")
    assert len(out) == 16


@pytest.mark.sqlite_only  # SQLite's write-ahead log: its PRAGMAs and the file read without it
def test_an_import_logs_with_fewer_checkpoints_and_ends_with_one(tmp_path: Path) -> None:
    """While a file is written the log is checkpointed every IMPORT_CHECKPOINT_PAGES pages, not
    every 1,000; the import job ends with a checkpoint, so the database file itself (read without
    its log) holds every imported trial."""
    from urllib.parse import quote

    from reviewer.store import open_store
    from reviewer.store.writer import IMPORT_CHECKPOINT_PAGES, import_cache
    from reviewer.workflows.imports import import_paths

    lines = [
        json.dumps({"task_id": f"t{i}", "outcome": {"passed": True}, "messages": []})
        for i in range(300)
    ]
    (tmp_path / "a.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = tmp_path / "x.db"
    with open_store(path) as db:
        before = db.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        with import_cache(db):
            assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == IMPORT_CHECKPOINT_PAGES
        assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == before
        assert import_paths(db, [tmp_path / "a.jsonl"]).added == 300
        assert (tmp_path / "x.db-wal").stat().st_size > 0  # the log is still there, checkpointed
        main_file = sqlite3.connect(f"file:{quote(str(path))}?immutable=1", uri=True)
        try:
            assert main_file.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 300
        finally:
            main_file.close()


@pytest.mark.parametrize("obj", [*ARGUMENTS, {"b": {"z": 1, "a": [3, {"y": "é"}]}, "a": Path("p")}])
def test_one_encoder_made_once_writes_what_json_dumps_wrote(obj: Any) -> None:
    """The identity hash of formats without raw lines and the stored record of a parsed trial use
    encoders made once: the identity is the text ``json.dumps`` with the same options gave (ids
    unchanged), the record the same JSON value."""
    from reviewer.ingest.base import canonical
    from reviewer.record import _body, encode

    if isinstance(obj, dict) and any(not isinstance(k, str) for k in obj):
        return  # sort_keys refuses mixed keys either way
    want = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    try:
        expected: bytes | type[Exception] = want.encode()
    except UnicodeEncodeError:  # a lone surrogate: refused either way (the import gate skips it)
        expected = UnicodeEncodeError
    if isinstance(expected, bytes):
        assert canonical(obj) == expected
    else:
        with pytest.raises(UnicodeEncodeError):
            canonical(obj)
    trial = Trial(task_id="t", messages=[], metadata={"x": obj})
    # the record holds what json.dumps wrote (written by msgspec: the same value, compact)
    stored = json.loads(encode(trial))
    assert stored == json.loads(json.dumps(_body(trial), ensure_ascii=False, default=str))
