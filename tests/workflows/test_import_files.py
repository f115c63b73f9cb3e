"""Import edge cases around whole files: kills after a commit, files sniffed wrong, zip bombs,
unreadable folders and files, and a run spread over many files."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest

from reviewer.store import open_store
from tests.conftest import FIXTURES, native_trial, run_cli, stored, write_jsonl

RULES = '[[rule]]\nid = "no-lookups"\ntype = "forbid_tool"\ntool = "get_order"\n'


def test_killing_an_import_after_its_commit_keeps_the_rule_violations(tmp_path: Path) -> None:
    from reviewer.workflows.imports import import_paths

    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "rules.toml").write_text(RULES, encoding="utf-8")
    f = write_jsonl(tmp_path / "r.jsonl", [native_trial(f"t{i}") for i in range(3)])

    def killed(_result: object) -> None:
        raise KeyboardInterrupt  # the process dies right after the file's commit

    with open_store(tmp_path / "x.db") as db:
        import_paths(db, [rules])
        with pytest.raises(KeyboardInterrupt):
            import_paths(db, [f], on_file=killed)
    code, _, err = run_cli("--db", str(tmp_path / "x.db"), "import", str(f))
    assert code == 0 and "nothing new" in err
    with open_store(tmp_path / "x.db") as db:
        assert db.execute("SELECT COUNT(*) FROM violations").fetchone()[0] == 3


def test_native_jsonl_with_a_bom_is_read(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps(native_trial("a")).encode() + b"\n")
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and "imported 1 trial" in err, err


def test_a_first_record_with_64_kib_before_outcome_is_read(tmp_path: Path) -> None:
    rec: dict[str, Any] = {"task_id": "a", "metadata": {"blob": "x" * 70_000}}
    rec.update({k: v for k, v in native_trial("a").items() if k != "task_id"})
    f = write_jsonl(tmp_path / "r.jsonl", [rec, native_trial("b")])
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and "imported 2 trials" in err, err


def test_unknown_format_says_what_it_saw_and_the_closest_format(tmp_path: Path) -> None:
    f = tmp_path / "odd.jsonl"
    f.write_text('{"task_id": "a", "msgs": [], "result": 1}\n')
    b = tmp_path / "bin.json"
    b.write_bytes(b"\x00\x01binary\x1b]52;c;x\x07")
    code, _, err = run_cli("--db", "x.db", "import", str(f), str(b))
    assert code == 1
    assert (
        f'{f}: unknown format: a JSON object with keys "task_id", "msgs", "result"; closest is '
        "native, which also needs messages, outcome; reviewer reads" in err
    )
    assert f'{b}: unknown format: it starts with "\\x00\\x01binary\\x1b]52;c;x\\x07"' in err
    assert "\x1b" not in err


BROKEN_FIRST = b'{"run": "fb", "task_id": "t0", "outcome": {"passed": tru\n'


def test_a_broken_first_line_is_skipped_and_the_rest_imported(tmp_path: Path) -> None:
    """A native file whose first record was cut short was refused whole as 'unknown format' (read
    alone, and ignored in a folder): the format is known by the next line, the bad one skipped."""
    folder = tmp_path / "runs"
    folder.mkdir()
    f = folder / "fb.jsonl"
    good = b"".join(json.dumps(native_trial(f"t{i}")).encode() + b"\n" for i in range(5))
    f.write_bytes(BROKEN_FIRST + good)
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0, err
    assert f"{f}:1: invalid JSON: Expecting value at column 54" in err
    assert "unknown format" not in err and "imported 5 trials" in err and stored() == 5
    code, _, err = run_cli("--db", "y.db", "import", str(folder))
    assert code == 0 and "ignored" not in err and stored("y.db") == 5, err


def test_a_jsonl_file_of_every_line_format_is_known_past_a_broken_first_line(
    tmp_path: Path,
) -> None:
    from reviewer import ingest
    from reviewer.models import Skip
    from tests.ingest.test_pairs_import import line as pair_line

    fixtures = Path(__file__).parent.parent / "fixtures"
    otlp = json.dumps(json.loads((fixtures / "otel_genai/two_traces.otlp.json").read_text()))
    files = {
        "openai-chat": (fixtures / "openai_chat/support.jsonl").read_bytes(),
        "openhands": (fixtures / "openhands/output.jsonl").read_bytes(),
        "pairs": json.dumps(pair_line()).encode() + b"\n",
        "otel-genai": f"{otlp}\n".encode(),
        "native": json.dumps(native_trial("a")).encode() + b"\n",
    }
    for name, good in files.items():
        f = tmp_path / f"{name}.jsonl"
        f.write_bytes(b"\xef\xbb\xbf\n" + BROKEN_FIRST.replace(b'"outcome"', b'"x"') + good)
        fmt = ingest.sniff(f)
        items = list(fmt.parse(f))
        skips = [str(i) for i in items if isinstance(i, Skip)]
        assert fmt.NAME == name and skips[0] == f"{f}:2: invalid JSON: Expecting value at column 48"
        assert len(items) > len(skips), name


def test_a_file_of_broken_lines_is_unknown_and_says_where_and_why(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_bytes(BROKEN_FIRST * 3)
    late = tmp_path / "late.jsonl"  # sniffing stops after a few lines: the sixth is not looked at
    late.write_bytes(BROKEN_FIRST * 5 + json.dumps(native_trial("a")).encode() + b"\n")
    known = tmp_path / "odd.jsonl"  # a first line that is JSON of no format: not looked past
    known.write_bytes(b'{"hello": 1}\n' + json.dumps(native_trial("a")).encode() + b"\n")
    code, _, err = run_cli("--db", "x.db", "import", str(f), str(late), str(known))
    assert code == 1
    for bad in (f, late):
        assert (
            f'{bad}:1: unknown format: invalid JSON: Expecting value at column 54; it starts with "{{"run"'
            in err
        )
    assert f'{known}: unknown format: a JSON object with keys "hello"' in err
    assert stored() == 0


def test_a_git_lfs_pointer_is_named_as_one(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    lfs = folder / "big.jsonl"
    lfs.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 12\n")
    write_jsonl(folder / "ok.jsonl", [native_trial("a")])
    code, _, err = run_cli("--db", "x.db", "import", str(folder))
    assert f"reviewer: {lfs}: a Git LFS pointer, not the file: run git lfs pull" in err
    assert stored() == 1 and code == 1


def test_check_counts_a_file_it_could_not_read_as_import_does(tmp_path: Path) -> None:
    """--check said "0 problems" beside a file it could not read at all, where the import of the
    same folder said "1 file failed"."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "big.jsonl").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:ab\n")
    write_jsonl(folder / "ok.jsonl", [native_trial("a")])
    code, _, err = run_cli("--db", "x.db", "import", "--check", str(folder))
    assert code == 1
    assert "checked 1 file: 1 valid trial (1 run, 1 task), 0 problems; 1 file failed" in err, err
    code, _, err = run_cli("--db", "x.db", "import", str(folder))
    assert "1 file failed" in err and stored() == 1


def _eval_with_a_bomb(path: Path, size: int) -> Path:
    sample = {
        "id": 1,
        "epoch": 1,
        "messages": [{"role": "user", "content": "hi"}],
        "scores": {"s": {"value": "C"}},
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        zf.writestr("samples/1_epoch_1.json", json.dumps(sample))
        bomb = json.dumps(dict(sample, id=2))[:-1] + ', "pad": "' + "0" * size + '"}'
        zf.writestr("samples/2_epoch_1.json", bomb)
    return path


def test_an_eval_member_over_the_size_limit_is_one_line_and_the_rest_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_RECORD_MB", "10")
    monkeypatch.setenv("REVIEWER_MAX_ZIP_RATIO", "100000")
    f = _eval_with_a_bomb(tmp_path / "log.eval", 50_000_000)
    assert f.stat().st_size < 1_000_000
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0, err
    assert (
        f"{f}: samples/2_epoch_1.json: member is 47.7 MiB, over the 10.0 MiB limit per record "
        "(REVIEWER_MAX_RECORD_MB)" in err
    )
    assert stored() == 1


def test_an_eval_member_over_the_compression_ratio_is_one_line(tmp_path: Path) -> None:
    f = _eval_with_a_bomb(tmp_path / "log.eval", 5_000_000)
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0, err
    line = next(x for x in err.splitlines() if "samples/2_epoch_1.json" in x)
    assert line.startswith(f"{f}: samples/2_epoch_1.json: member expands ")
    assert "over the limit of 200 (REVIEWER_MAX_ZIP_RATIO)" in line
    assert stored() == 1


def test_an_unreadable_subfolder_is_reported_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "runs"
    (folder / "locked").mkdir(parents=True)
    write_jsonl(folder / "locked" / "a.jsonl", [native_trial("a")])
    write_jsonl(folder / "b.jsonl", [native_trial("b")])
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:  # chmod 000 does not stop root, so refuse here
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, _, err = run_cli("--db", "x.db", "import", str(folder))
    assert f"reviewer: {folder / 'locked'}: cannot read folder: Permission denied; skipped" in err
    assert stored() == 1 and code == 1


def test_an_unreadable_path_on_the_command_line_is_reported_and_the_others_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret" / "a.jsonl"
    ok = write_jsonl(tmp_path / "ok.jsonl", [native_trial("b")])
    real_stat = Path.stat

    def stat(self: Path, **kwargs: Any) -> Any:  # a file inside a folder we may not enter
        if self == secret:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    code, _, err = run_cli("--db", "x.db", "import", str(secret), str(ok))
    assert "internal error" not in err
    assert f"reviewer: {secret}: cannot read: Permission denied" in err
    assert stored() == 1 and code == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_reported_and_the_others_import(tmp_path: Path) -> None:
    secret = write_jsonl(tmp_path / "secret.jsonl", [native_trial("a")])
    secret.chmod(0)
    ok = write_jsonl(tmp_path / "ok.jsonl", [native_trial("b")])
    code, _, err = run_cli("--db", "x.db", "import", str(secret), str(ok))
    assert f"reviewer: {secret}: cannot read: Permission denied" in err
    assert stored() == 1 and code == 1


def test_a_run_spread_over_many_files_is_read_from_the_database_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewer.store import writer
    from reviewer.workflows.imports import import_paths

    folder = tmp_path / "runs"
    folder.mkdir()
    for i in range(5):
        write_jsonl(folder / f"part{i}.jsonl", [native_trial(f"t{i}", run="one")])
    built: list[str] = []
    real_init = writer.RunIndex.__init__

    def counting_init(self: Any, db: Any, run: str) -> None:
        built.append(run)
        real_init(self, db, run)

    monkeypatch.setattr(writer.RunIndex, "__init__", counting_init)
    with open_store(tmp_path / "x.db") as db:
        assert import_paths(db, [folder]).added == 5
    assert built == ["one"]  # not once per file: that made N files of one run O(N^2)


def test_check_names_the_runs_an_import_would_make(tmp_path: Path) -> None:
    """Two Inspect logs of two evals under one task and model: --check listed one run ('support ·
    model') where the import makes two ('support · model' and 'support · model (2)')."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in ("support.eval", "support.json"):
        (folder / name).write_bytes((FIXTURES / "inspect" / name).read_bytes())
    code, _, err = run_cli("--db", "x.db", "import", "--check", str(folder))
    assert code == 0, err
    assert "32 valid trials (2 runs, 4 tasks)" in err, err
    assert "runs: 'support · model', 'support · model (2)'" in err, err
    assert "would be imported as run 'support · model (2)'" in err, err
    code, _, after = run_cli("--db", "x.db", "import", str(folder))
    assert "runs: 'support · model', 'support · model (2)'" in after, after
    assert "imported as run 'support · model (2)'" in after and "would be" not in after
