"""Defects found with the judge on a full disk."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.judge.standin import StandIn
from reviewer.store.db import open_store


def test_a_run_with_no_room_for_its_replies_sends_nothing(
    db_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a disk with no room left the run sent its first round anyway: the replies, paid for,
    could be neither stored nor kept in the side file ("4 replies could not be kept (No space left
    on device)"). The room for them is set aside before anything is sent, or the run stops."""

    def no_space(*args: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", no_space)
    real_open = open

    def opener(file: Any, mode: str = "r", *args: Any, **kw: Any) -> Any:
        handle = real_open(file, mode, *args, **kw)
        if str(file).endswith(".judge-room") and "w" in mode:
            handle.write = no_space  # the fallback write fails as well
        return handle

    monkeypatch.setattr("builtins.open", opener)
    result = CliRunner().invoke(cli, ["--db", str(db_path), "judge", "--limit", "4"])
    assert result.exit_code == 1
    assert "no room on the disk for this run's replies" in result.output
    assert "Traceback" not in result.output
    assert standin.message_requests == 0
    with open_store(db_path) as db:  # its claims let go: the next run sends them
        assert db.execute("SELECT COUNT(*) FROM judge_claims").fetchone()[0] == 0
    assert not Path(str(db_path) + ".judge-room").exists()
