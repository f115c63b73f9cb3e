"""The judge on a database on a PostgreSQL server (a URL, not a file): it ran nowhere, saying
"no room on the disk" (its room for replies was a file named after the URL). The room and the
side file of replies that cannot be stored are this machine's own, under the user's data folder,
named after the database without its password."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.judge.pending import pending_path, side_folder
from reviewer.judge.standin import StandIn
from reviewer.store.db import open_store
from tests.conftest import SAMPLE_RUNS


def test_the_judge_runs_on_a_postgresql_url(pg_url: str, standin: StandIn) -> None:
    done = CliRunner().invoke(cli, ["--db", pg_url, "import", str(SAMPLE_RUNS)])
    assert done.exit_code == 0, done.output
    judged = CliRunner().invoke(
        cli, ["--db", pg_url, "judge", "--run", "support-v1", "--limit", "3", "--json"]
    )
    assert judged.exit_code == 0, judged.output
    assert "no room" not in judged.output
    data = json.loads(judged.stdout)
    assert (data["done"], data["requests"]) == (3, 3), judged.stdout
    assert standin.message_requests == 3
    # the room set aside while requests were out is given back
    folder = side_folder()
    assert not folder.exists() or not [p for p in folder.iterdir() if p.suffix == ".judge-room"]


def test_the_side_file_of_a_server_database_is_local_and_names_no_password(pg_url: str) -> None:
    secret = pg_url.replace("reviewer@", "reviewer:hunter2@", 1)  # the test server trusts any
    assert "hunter2" in secret
    with open_store(secret) as db:
        path = pending_path(db)
    assert path is not None and side_folder() in path.parents
    assert "hunter2" not in str(path) and path.name.endswith(".judge-pending.jsonl")
    assert str(side_folder()).startswith(os.environ["XDG_DATA_HOME"])


def test_a_database_file_keeps_its_side_file_beside_it(tmp_path: Path) -> None:
    with open_store(tmp_path / "r.db") as db:
        if db.dialect != "sqlite":  # under --backend postgres a file name stands for a server's
            return
        assert pending_path(db) == Path(str(tmp_path / "r.db") + ".judge-pending.jsonl")
