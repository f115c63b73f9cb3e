"""Issue 27: hostile values in the formats read whole or through nested JSON strings (OpenTelemetry,
Harbor ATIF, SWE-agent, OpenHands), through every entry point (`import`, `import --check`,
`gate --import`, `monitor --import` / `--follow`): a number of 5,000 digits, NaN and a lone
surrogate inside a string that is itself JSON are one `file[:line]: ...` line for their record, and
the rest of the file and of the folder is imported. Also the paths: an empty one is refused, an
unreadable named folder is one line while the others are imported."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reviewer.store import open_store
from tests.conftest import FIXTURES, native_trial, run_cli, stored, write_jsonl

BIG = "9" * 5000  # more digits than Python converts from text (4,300)
EVENTS = json.loads((FIXTURES / "openhands" / "basic.json").read_text())
OTLP = json.loads((FIXTURES / "otel_genai" / "two_traces.otlp.json").read_text())


def _otel_lines(tmp_path: Path, bad: Callable[[dict[str, Any]], str]) -> Path:
    """OTLP JSON lines: three requests of one trace each, the second made hostile by ``bad``
    (which returns the request's JSON text)."""
    spans = OTLP["resourceSpans"][0]["scopeSpans"][0]["spans"]
    first = spans[0]["traceId"]
    lines = []
    for i in range(3):
        trace = [
            dict(copy.deepcopy(s), traceId=f"trace{i}") for s in spans if s["traceId"] == first
        ]
        request = {"resourceSpans": [{"scopeSpans": [{"spans": trace}]}]}
        lines.append(bad(request) if i == 1 else json.dumps(request))
    f = tmp_path / "otel" / "spans.jsonl"
    f.parent.mkdir(exist_ok=True)
    f.write_text("\n".join(lines) + "\n")
    return f


def _attr(request: dict[str, Any], key: str, value: str) -> None:
    """Set the string attribute ``key`` of the request's first chat span to ``value``."""
    for span in request["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        names = [a["key"] for a in span["attributes"]]
        if key in names:
            span["attributes"][names.index(key)]["value"] = {"stringValue": value}
            return
    raise AssertionError(key)


def _big_otel(tmp_path: Path) -> Path:
    def bad(request: dict[str, Any]) -> str:
        request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["x"] = 0
        return json.dumps(request).replace('"x": 0', f'"x": {BIG}')

    return _otel_lines(tmp_path, bad)


def _big_atif(tmp_path: Path) -> Path:
    text = (FIXTURES / "atif" / "openhands_hello-world.trajectory.json").read_text()
    folder = tmp_path / "atif"
    folder.mkdir()
    (folder / "good.trajectory.json").write_text(text)
    bad = folder / "bad.trajectory.json"
    bad.write_text(text.replace('"schema_version"', f'"x": {BIG}, "schema_version"', 1))
    return bad


def _big_swe(tmp_path: Path) -> Path:
    text = (FIXTURES / "swe_agent" / "swe-agent__test-repo-i1.traj").read_text()
    folder = tmp_path / "swe"
    folder.mkdir()
    (folder / "good.traj").write_text(text)
    bad = folder / "bad.traj"
    bad.write_text(text.replace('"trajectory"', f'"x": {BIG}, "trajectory"', 1))
    return bad


def _big_openhands_events(tmp_path: Path) -> Path:
    text = (FIXTURES / "openhands" / "basic.json").read_text()
    folder = tmp_path / "oh"
    folder.mkdir()
    (folder / "good.json").write_text(text)
    bad = folder / "bad.json"
    last = text.rstrip().removesuffix("]").rstrip().removesuffix("}")  # the last event, open
    bad.write_text(f'{last}, "x": {BIG}}}]')
    return bad


def _big_openhands_lines(tmp_path: Path) -> Path:
    lines = (FIXTURES / "openhands" / "output.jsonl").read_text().splitlines()
    recs = [json.loads(line) for line in lines[:1]] * 3
    out = [json.dumps(dict(r, instance_id=f"i{n}")) for n, r in enumerate(recs)]
    out[1] = out[1].replace('"instance_id"', f'"x": {BIG}, "instance_id"', 1)
    f = tmp_path / "oh" / "output.jsonl"
    f.parent.mkdir()
    f.write_text("\n".join(out) + "\n")
    return f


#: format: (make the hostile file beside good ones, where its line says, trials stored in its folder)
BIG_CASES: dict[str, tuple[Callable[[Path], Path], str, int]] = {
    "otel": (_big_otel, ":2: trace trace1: [0].x: ", 2),
    "atif": (_big_atif, ": x: ", 1),
    "swe-agent": (_big_swe, ": x: ", 1),
    "openhands-events": (_big_openhands_events, f": [{len(EVENTS) - 1}].x: ", 1),
    "openhands-output": (_big_openhands_lines, ":2: x: ", 2),
}
OUT_OF_RANGE = "integer out of range (reviewer stores 64-bit integers)"


def _said(err: str, f: Path) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(str(f))]


@pytest.mark.parametrize("fmt", list(BIG_CASES))
def test_a_5000_digit_number_skips_its_record_in_every_entry_point(
    tmp_path: Path, fmt: str
) -> None:
    make, where, kept = BIG_CASES[fmt]
    bad = make(tmp_path)
    (tmp_path / "later").mkdir()
    later = write_jsonl(tmp_path / "later" / "z.jsonl", [native_trial("z")])
    expected = [f"{bad}{where}{OUT_OF_RANGE}"]
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(bad.parent), str(later))
        assert "internal error" not in err and "Traceback" not in err, err
        assert _said(err, bad) == expected, err
    assert code == 0 and stored() == kept + 1
    code, _, err = run_cli("--db", "g.db", "gate", "--import", str(bad.parent), "--baseline", "x")
    assert _said(err.replace("reviewer: ", ""), bad) == expected, err
    assert "internal error" not in err and stored("g.db") == kept
    code, _, err = run_cli("--db", "m.db", "monitor", "--import", str(bad.parent), "--no-judge")
    assert "internal error" not in err and code == 0, err
    assert _said(err.replace("reviewer: ", ""), bad) == expected, err
    assert stored("m.db") == kept


def test_monitor_follow_skips_a_5000_digit_number_and_keeps_following(tmp_path: Path) -> None:
    bad = _big_otel(tmp_path)
    code, _, err = run_cli(
        "--db", "f.db", "monitor", "--follow", str(bad), "--passes", "1", "--no-judge"
    )
    assert "internal error" not in err and code == 0, err
    assert _said(err.replace("reviewer: ", ""), bad) == [
        f"{bad}:2: trace trace1: [0].x: {OUT_OF_RANGE}"
    ]
    assert stored("f.db") == 2


def _nested(request: dict[str, Any], key: str, raw: str) -> str:
    """The request with attribute ``key`` set to the JSON text ``raw`` (a string holding JSON)."""
    _attr(request, key, raw)
    return json.dumps(request)


_CALL = '[{"role": "assistant", "parts": [{"type": "tool_call", "name": "f", "arguments": @@}]}]'
NESTED: dict[str, tuple[str, str, str]] = {
    # a lone surrogate as a parsed value inside the string: it made the whole file fail when
    # written (SQLite refuses it)
    "surrogate in the messages": (
        "gen_ai.input.messages",
        '[{"role": "user", "parts": [{"type": "text", "content": "\\ud800"}]}]',
        "trace trace1: gen_ai.input.messages: [0].parts[0].content: has a lone surrogate \\ud800",
    ),
    "surrogate in a tool result": (
        "gen_ai.tool.call.result",
        '{"temp": "\\udfff"}',
        "trace trace1: gen_ai.tool.call.result: temp: has a lone surrogate \\udfff",
    ),
    # arguments given as a string that is itself JSON, inside the messages' JSON string
    "surrogate in an arguments string": (
        "gen_ai.output.messages",
        _CALL.replace("@@", json.dumps('{"location": "\\udfff"}')),
        "messages[5].tool_calls[0].arguments: location: has a lone surrogate \\udfff",
    ),
    # NaN is not JSON: Python reads it, and it was stored as NaN
    "NaN in the messages": (
        "gen_ai.output.messages",
        _CALL.replace("@@", '{"x": NaN}'),
        "trace trace1: gen_ai.output.messages: [0].parts[0].arguments.x: NaN is not a number",
    ),
    "NaN in a tool result": (
        "gen_ai.tool.call.result",
        '{"t": -Infinity}',
        "trace trace1: gen_ai.tool.call.result: t: -Infinity is not a number",
    ),
    "5000 digits in the messages": (
        "gen_ai.input.messages",
        f'[{{"role": "user", "parts": [{{"type": "text", "content": {BIG}}}]}}]',
        f"trace trace1: gen_ai.input.messages: [0].parts[0].content: {OUT_OF_RANGE}",
    ),
}


@pytest.mark.parametrize("case", list(NESTED))
def test_a_bad_value_in_a_json_string_attribute_skips_only_its_trace(
    tmp_path: Path, case: str
) -> None:
    key, raw, said = NESTED[case]
    f = _otel_lines(tmp_path, lambda r: _nested(r, key, raw))
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert "internal error" not in err and "cannot import" not in err, err
        (line,) = _said(err, f)
        assert line.startswith(f"{f}:2: {said}"), line
    assert code == 0 and stored() == 2
    with open_store("x.db") as db:
        records = [r[0] for r in db.execute("SELECT record FROM trials")]
    assert all("NaN" not in r and "Infinity" not in r for r in records)
    assert all(json.loads(r) for r in records)


def test_a_json_string_attribute_that_is_not_json_stays_text(tmp_path: Path) -> None:
    f = _otel_lines(
        tmp_path, lambda r: _nested(r, "gen_ai.tool.call.result", '{"t": 1} and then some')
    )
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and stored() == 3, err


def test_an_empty_path_is_refused_not_the_current_folder(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "here.jsonl", [native_trial("a")])  # the current folder
    for args in (("import", ""), ("gate", "--import", ""), ("monitor", "--import", "")):
        code, _, err = run_cli("--db", "x.db", *args)
        assert code != 0 and "internal error" not in err, (args, err)
        assert "reviewer: an empty path" in err, err
        assert stored() == 0, args


def test_monitor_follow_refuses_an_empty_path_without_walking_the_current_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def walked(*args: Any) -> Any:
        raise AssertionError("walked the current folder")

    monkeypatch.setattr(Path, "rglob", walked)
    code, _, err = run_cli("--db", "x.db", "monitor", "--follow", "", "--passes", "1")
    assert code == 2 and err.startswith("reviewer: an empty path ''"), err


def test_an_unreadable_named_folder_is_one_line_and_the_others_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    write_jsonl(locked / "a.jsonl", [native_trial("a")])
    ok = write_jsonl(tmp_path / "ok.jsonl", [native_trial("b")])
    real_stat = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:  # chmod 000 does not stop root
        p = Path(os.fsdecode(path)) if not isinstance(path, int) else None
        if p is not None and p.parent == locked:
            raise PermissionError(13, "Permission denied", str(p))
        return real_stat(path, *args, **kwargs)

    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "scandir", scandir)
    code, _, err = run_cli("--db", "x.db", "import", str(locked), str(ok))
    assert "internal error" not in err, err
    assert f"reviewer: {locked}: cannot read folder: Permission denied; skipped" in err
    assert stored() == 1 and code == 1


def test_a_sniffed_first_line_with_5000_digits_is_its_own_skip(tmp_path: Path) -> None:
    lines = [json.dumps(native_trial(t)) for t in "abc"]
    lines[0] = lines[0].replace('"task_id"', f'"x": {BIG}, "task_id"', 1)
    f = tmp_path / "n.jsonl"
    f.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert _said(err, f) == [f"{f}:1: x: {OUT_OF_RANGE}"] and code == 0
    assert stored() == 2


@pytest.mark.parametrize("content", [b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf \r\n\n", b"  \n"])
def test_a_file_of_nothing_but_a_byte_order_mark_or_blanks_is_empty(
    tmp_path: Path, content: bytes
) -> None:
    """A byte-order mark alone said 'unknown format: it starts with ""'; it is an empty file."""
    f = tmp_path / "x.jsonl"
    f.write_bytes(content)
    code, _, err = run_cli("--db", str(tmp_path / "x.db"), "import", str(f))
    assert code == 1 and f"{f}: empty file" in err, err
