"""`reviewer import --run ""` (an unset variable in `--run "$RUN"`) imported the files under the run
names they give, silently, into a run the user did not name (and a blank --run made a run named
' ⏎ '), while `--task ""` was refused: a blank --run is a usage error now and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import native_trial, run_cli, write_jsonl


@pytest.mark.parametrize("name", ["", " ", "\n", "\t"])
def test_a_blank_run_option_is_refused_and_writes_nothing(tmp_path: Path, name: str) -> None:
    src = write_jsonl(tmp_path / "a.jsonl", [native_trial("t", trial=1)])
    db = tmp_path / "x.db"
    code, out, err = run_cli("--db", str(db), "import", "--run", name, str(src))
    assert code == 2
    assert (
        err == "reviewer: --run must not be empty (leave it out for the run names the files give)\n"
    )
    assert not db.exists()


def test_a_run_option_still_names_the_run(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "a.jsonl", [native_trial("t", trial=1)])
    code, out, err = run_cli("--db", str(tmp_path / "x.db"), "import", "--run", "mine", str(src))
    assert code == 0, err
    assert "run: 'mine'" in err
