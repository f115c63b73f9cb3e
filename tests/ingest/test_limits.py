"""A limit's environment variable set to something that is not a positive finite number is refused
with one line naming it, before anything is read or written; never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import native_trial, run_cli, write_jsonl

BAD = ["inf", "-inf", "nan", "-1", "0", "lots", "1e400"]
LIMITS = ["REVIEWER_MAX_RECORD_MB", "REVIEWER_MAX_DOCUMENT_MB", "REVIEWER_MAX_ZIP_RATIO"]


@pytest.mark.parametrize("name", LIMITS)
@pytest.mark.parametrize("value", BAD)
def test_reviewer_max_record_mb_inf_is_refused_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    f = write_jsonl(tmp_path / "runs.jsonl", [native_trial("a")])
    monkeypatch.setenv(name, value)
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert code == 1 and "internal error" not in err and "cannot import" not in err, err
        assert f"reviewer: {name}={value!r} is not a limit reviewer can use" in err, err
    monkeypatch.delenv(name)
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0


def test_a_limit_of_a_plain_number_still_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = write_jsonl(tmp_path / "runs.jsonl", [native_trial("a"), native_trial("b", pad="x" * 3000)])
    monkeypatch.setenv("REVIEWER_MAX_RECORD_MB", "0.001")
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and f"{f}:2: record is" in err and "imported 1 trial" in err, err


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "soon"])
def test_reviewer_lock_timeout_inf_is_refused_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    f = write_jsonl(tmp_path / "runs.jsonl", [native_trial("a")])
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0
    monkeypatch.setenv("REVIEWER_LOCK_TIMEOUT", value)
    code, _, err = run_cli("--db", "x.db", "report")
    assert code == 1 and "internal error" not in err, err
    assert f"REVIEWER_LOCK_TIMEOUT={value!r} is not a number of seconds" in err, err
