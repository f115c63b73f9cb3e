"""The CLI never sends an escape sequence from the data to the terminal (issue 14, item 3).

Every command runs in a real process with stdout and stderr piped; not one raw ESC, C1 control,
NUL, bidi control, zero-width or tag character may appear in either stream, and ``--json`` stays valid
JSON that loads back to the original strings.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reviewer.text import (
    distinct_elisions,
    elide_middle,
    is_terminal_safe,
    json_terminal_safe,
    table_names,
    terminal_safe,
    visible,
)
from tests.conftest import write_jsonl
from tests.support import hostile


def reviewer(db: Path, *args: str, code: int | None = 0) -> tuple[str, str]:
    """Run ``reviewer --db DB ARGS`` in a fresh process, pipes on stdout and stderr; both streams
    checked byte by byte for anything that would drive a terminal."""
    proc = subprocess.run(
        [sys.executable, "-m", "reviewer", "--db", str(db), *args],
        capture_output=True,
        env={**os.environ, "COLUMNS": "400"},
        timeout=120,
    )
    for name, raw in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        text = raw.decode("utf-8")  # strict: a lone surrogate would not even encode
        bad = hostile.DANGEROUS.search(text)
        assert bad is None, f"{args}: raw {bad.group()!r} on {name}: {text[:400]!r}"
    if code is not None:
        assert proc.returncode == code, (args, proc.returncode, proc.stderr.decode()[-800:])
    return proc.stdout.decode(), proc.stderr.decode()


def strings(x: Any) -> set[str]:
    """Every string (keys too) in a loaded JSON document."""
    if isinstance(x, str):
        return {x}
    if isinstance(x, dict):
        return set(x) | {s for v in x.values() for s in strings(v)}
    if isinstance(x, list):
        return {s for v in x for s in strings(v)}
    return set()


def json_out(db: Path, *args: str, code: int = 0) -> Any:
    out, _ = reviewer(db, *args, "--json", code=code)
    return json.loads(out)


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    os.environ.setdefault("HOME", str(home))
    folder = hostile.build(tmp_path_factory.mktemp("runs") / "runs")
    db = folder.parent / "h.db"
    out, err = reviewer(db, "import", str(folder))
    # the skip line names the file, made visible
    assert visible(hostile.FILE) in err and ":5:" in err
    return db


def test_sanitizer_rules_are_shared_by_the_cli_and_the_app() -> None:
    from reviewer.tui.safe import clean

    for s in (hostile.ESCAPES, hostile.RUN, "\u009b31m", "a\u2028b", "tag\U000e0041"):
        assert is_terminal_safe(terminal_safe(s)) and is_terminal_safe(clean(s))
        assert hostile.DANGEROUS.search(terminal_safe(s)) is None
    assert terminal_safe("a\tb\nc") == "a\tb\nc"  # our own layout stays
    assert terminal_safe("\x1b]0;t\x07\u202e\x00") == "␛]0;t␇<U+202E>␀"
    dumped = json_terminal_safe(json.dumps({"k": hostile.EVERYTHING}, ensure_ascii=False))
    assert is_terminal_safe(dumped) and json.loads(dumped) == {"k": hostile.EVERYTHING}


def test_report_and_rules_show_escape_sequences_in_names_visibly(hostile_db: Path) -> None:
    out, _ = reviewer(hostile_db, "report")
    # made visible, and cut in the middle to the table's room (--json has it whole, below)
    assert table_names([hostile.TASK])[0] in out and "␛]52;c;" in out and "<U+2028>" in out
    out, _ = reviewer(hostile_db, "rules")
    assert "␛]0;pwned␇" in out and "<U+E0041>" in out


def test_report_and_rules_json_round_trip_hostile_names(hostile_db: Path) -> None:
    report = strings(json_out(hostile_db, "report"))
    # the original strings come back (as the store keeps them: hostile.stored)
    assert hostile.stored(hostile.TASK) in report and hostile.stored(hostile.RUN) in report
    assert hostile.RULE in strings(json_out(hostile_db, "rules"))


def test_import_skip_and_error_lines_name_hostile_files_visibly(tmp_path: Path) -> None:
    folder = hostile.build(tmp_path / "again")
    missing = tmp_path / ("gone" + hostile.OSC52 + "\u202e.jsonl")
    out, err = reviewer(tmp_path / "j.db", "import", str(folder), str(missing), code=None)
    assert visible(hostile.FILE) in err and "gone␛]52;c;" in err
    summary = strings(json_out(tmp_path / "k.db", "import", str(folder), code=None))
    assert any(hostile.FILE in s for s in summary)


def test_unknown_run_and_queue_errors_show_names_visibly(hostile_db: Path) -> None:
    _, err = reviewer(hostile_db, "report", "--run", "nope" + hostile.ARG, code=1)
    assert "no run named" in err and "␛]0;pwned␇" in err  # the runs listed after it, too
    refusal = json_out(hostile_db, "report", "--run", "nope" + hostile.OSC0, code=1)
    assert refusal["error"].startswith("no run named")
    assert hostile.stored(hostile.RUN) in refusal["error"]
    reviewer(hostile_db, "sample", "--n", "2", "--name", "queue " + hostile.ARG)
    _, err = reviewer(hostile_db, "judge", "--queue", "nope" + hostile.OSC8, code=None)
    assert "no queue named" in err and "queue ␛]52;c;" in err


def test_queues_clusters_labels_and_agreement_print_no_raw_escape(
    hostile_db: Path, tmp_path: Path
) -> None:
    labeler = "who " + hostile.EVERYTHING
    reviewer(hostile_db, "sample", "--n", "2", "--name", "q2 " + hostile.ARG)
    out, _ = reviewer(hostile_db, "queues")
    assert "q2 ␛]52;c;" in out
    assert "q2 " + hostile.ARG in strings(json_out(hostile_db, "queues"))
    reviewer(hostile_db, "cluster")
    clusters = json_out(hostile_db, "cluster", "--stored")["clusters"]
    reviewer(hostile_db, "cluster", "rename", clusters[0]["id"], "cluster " + hostile.ARG)
    out, _ = reviewer(hostile_db, "cluster", "--stored")
    assert "cluster ␛]52;c;aGVsbG8=␇␛]0;pwned␇" in out
    stored = strings(json_out(hostile_db, "cluster", "--stored"))
    assert any(s.startswith("cluster " + hostile.OSC52 + hostile.OSC0) for s in stored)
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {
                "trial": {"run": hostile.RUN, "task_id": hostile.TASK, "trial": i},
                "labeler": labeler,
                "verdict": "pass",
                "note": "note " + hostile.EVERYTHING,
                "at": "2026-01-01T00:00:00+00:00",
            }
            for i in (1, 2, 3)
        ],
    )
    # a labels file's labeler with escapes is refused (a skipped line, made visible)
    _, err = reviewer(hostile_db, "labels", "import", str(labels), code=1)
    assert err.count("labeler must be 1 to 256 printable characters") == 3
    # a database written before the check holds such names all the same
    from reviewer.store import open_store
    from reviewer.store.labels import add_label, find_trial_id

    with open_store(hostile_db) as db:
        for i in (1, 2, 3):
            tid = find_trial_id(db, run=hostile.RUN, task_id=hostile.TASK, trial=i)
            assert tid is not None
            add_label(db, tid, labeler, "pass", note="note " + hostile.EVERYTHING)
    out, _ = reviewer(hostile_db, "labels", "export", "-")
    assert json.loads(out.splitlines()[0])["labeler"] == hostile.stored(labeler)
    out, _ = reviewer(hostile_db, "agreement", code=None)
    report = json_out(hostile_db, "agreement", code=None)
    assert isinstance(report, dict)


# Folded in from tests/test_text_elision.py:
# Run and task names cut in the middle to a width, never two shown alike (issue 32, item 6).

LONG = "tau-bench-retail-gpt-4o-2026-11-30-config-{}-temperature-0.0-seed-{}"


def test_a_name_that_fits_is_whole_and_a_long_one_keeps_both_ends() -> None:
    assert elide_middle("support-v1", 20) == "support-v1"
    cut = elide_middle(LONG.format("a", 1), 20)
    assert len(cut) == 20 and cut.startswith("tau-bench") and cut.endswith("seed-1")


@pytest.mark.parametrize("width", [6, 8, 12, 20, 30, 40])
def test_names_alike_at_both_ends_still_part(width: int) -> None:
    names = [LONG.format(c, s) for c in "ab" for s in (1, 2)] + ["short", "x" * 90 + "1" + "y" * 90]
    names.append("x" * 90 + "2" + "y" * 90)
    shown = distinct_elisions(names, width)
    assert len(set(shown.values())) == len(names)
    assert all(len(v) <= width for v in shown.values())
    assert shown["short"] == ("short" if width >= 5 else shown["short"])


def test_random_names_are_always_distinct_and_within_the_width() -> None:
    rng = random.Random(3)
    for _ in range(200):
        width = rng.randrange(4, 30)
        stem = "".join(rng.choice("ab-") for _ in range(rng.randrange(0, 40)))
        names = sorted(
            {
                stem + "".join(rng.choice("ab") for _ in range(rng.randrange(0, 6))) + stem
                for _ in range(rng.randrange(2, 12))
            }
        )
        shown = distinct_elisions(names, width)
        assert len(set(shown.values())) == len(names), (names, width, shown)
        assert all(len(v) <= width for v in shown.values()), (names, width, shown)


def test_a_json_error_reads_as_one_phrase() -> None:
    """Python's "Unterminated string starting at" was spliced into "starting at at column 89"
    (found by an attack)."""
    import json

    from reviewer.text import json_error

    def error(text: str) -> json.JSONDecodeError:
        try:
            json.loads(text)
        except json.JSONDecodeError as e:
            return e
        raise AssertionError(text)

    assert json_error(error('{"a": "x')) == "invalid JSON: Unterminated string starting at column 7"
    assert (
        json_error(error('{"a": "x\x01"}')) == "invalid JSON: Invalid control character at column 9"
    )
    assert json_error(error("{\n 1}"), line=True) == (
        "invalid JSON: Expecting property name enclosed in double quotes at line 2 column 2"
    )
    assert json_error(error('{"a": "x'), place=False) == "invalid JSON: Unterminated string"


def test_a_duration_under_a_second_keeps_its_milliseconds() -> None:
    """Tenths of a second showed Inspect's 66 ms and 102 ms p95 latencies both as 0.1s, a 35%
    change hidden in `reviewer compare` (found by a numbers review); a second and more keep
    their tenths, as every table showed them."""
    from reviewer.text import seconds_text

    assert seconds_text(0.066) == "0.066s" and seconds_text(0.102) == "0.102s"
    assert seconds_text(0.036, signed=True) == "+0.036s"
    assert seconds_text(-0.5, signed=True) == "-0.500s"
    assert [seconds_text(v) for v in (0.0, 0.9996, 1.0, 12.34)] == ["0.0s", "1.0s", "1.0s", "12.3s"]
    assert seconds_text(2e12) == "2e+12s" and seconds_text(1.25, signed=True) == "+1.2s"


def test_an_unknown_run_lists_the_ones_it_is_near_first() -> None:
    """Of 37 runs (the real-world corpus) `report --run tau_bench` listed the first 8 by name and
    "29 more": the one tau-bench run, 72 characters long, was not among them. The runs that hold
    the name (case, -, _ and spaces aside) and the close spellings now come first."""
    from reviewer.text import unknown_run

    tau = "tau_bench__tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646"
    runs = [f"run-{i:02}" for i in range(30)] + [
        "gpt-4o-airline",
        "swe_agent (2)",
        "swe_agent",
        tau,
    ]
    said = unknown_run("tau_bench", runs)
    assert said.startswith(f"no run named 'tau_bench'; runs: '{tau}', 'run-00'"), said
    assert "and 26 more" in said
    assert unknown_run("gpt4o-airline", runs).startswith(
        "no run named 'gpt4o-airline'; runs: 'gpt-4o-airline', "
    )
    swe = unknown_run("swe_agent (3)", runs).split("; runs: ")[1].split(", ")[:2]
    assert sorted(swe) == ["'swe_agent (2)'", "'swe_agent'"], swe
    assert (
        unknown_run("x", ["ab", "xyz"]) == "no run named 'x'; runs: 'ab', 'xyz'"
    )  # too short to tell
