"""A throwaway PostgreSQL server for `pytest --backend postgres`: initdb and pg_ctl (the Debian
`postgresql` package's, or any on PATH) into a temporary folder, on a free port of 127.0.0.1,
with trust authentication and fsync off; stopped and deleted by ``stop``. As root, the server runs
as the `postgres` user (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return versions[-1] if versions else None


def available() -> bool:
    return _binary("initdb") is not None and _binary("pg_ctl") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    folder: Path
    port: int
    as_user: list[str]

    @property
    def url(self) -> str:
        return f"postgresql://reviewer@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        pg_ctl = _binary("pg_ctl") or "pg_ctl"
        subprocess.run(
            [*self.as_user, pg_ctl, "-D", str(self.folder / "data"), "-m", "immediate", "stop"],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


def start() -> Server:
    """A new server, running; RuntimeError naming what failed."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise RuntimeError(
            "PostgreSQL's initdb and pg_ctl are not installed (apt install postgresql)"
        )
    folder = Path(tempfile.mkdtemp(prefix="reviewer-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data = folder / "data"
    made = subprocess.run(
        [
            *as_user,
            initdb,
            "-D",
            str(data),
            "-U",
            "reviewer",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        raise RuntimeError(f"initdb failed: {made.stderr.strip()[-500:]}")
    port = _free_port()
    options = (
        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    started = subprocess.run(
        [
            *as_user,
            pg_ctl,
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(folder / "log"),
            "-w",
            "start",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if started.returncode != 0:
        log = (
            (folder / "log").read_text(errors="replace")[-500:] if (folder / "log").exists() else ""
        )
        raise RuntimeError(f"pg_ctl start failed: {started.stderr.strip()} {log}")
    return Server(folder, port, as_user)


def drop_connections(url: str, pid: int | None = None) -> None:
    """The server ends every other connection to URL's database (or the one of backend PID), as
    its restart, an idle timeout or a failover does, and this returns once they are gone, not
    only told to go."""
    import time

    import psycopg

    which = (
        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        if pid is None
        else f"FROM pg_stat_activity WHERE pid = {int(pid)}"
    )
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"SELECT pg_terminate_backend(pid) {which}")
        while admin.execute(f"SELECT COUNT(*) {which}").fetchone()[0]:  # type: ignore[index]
            time.sleep(0.01)
