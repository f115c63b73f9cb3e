"""`reviewer serve`: the app served to browsers by textual-serve, each browser session its own
process and its own labeler. The end-to-end test starts the real server on a free port of
127.0.0.1 and talks to it as the browser page does (its websocket), nothing mocked."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from reviewer.commands.serve import allowed_origins, app_command, is_loopback, public_url_of
from tests.conftest import native_trial, run_cli, write_jsonl

aiohttp = pytest.importorskip("aiohttp")
pytest.importorskip("textual_serve")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _db(tmp_path: Path) -> Path:
    db = tmp_path / "r.db"
    path = write_jsonl(tmp_path / "r.jsonl", [native_trial(f"t{i}", run="r1") for i in range(3)])
    assert run_cli("--db", str(db), "import", str(path))[0] == 0
    return db


def _serve(tmp_path: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`reviewer --db DB serve ARGS` run to its end in its own process (a refusal ends it), from
    TMP_PATH with it as HOME."""
    return subprocess.run(
        [sys.executable, "-m", "reviewer", "--db", str(db), "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "HOME": str(tmp_path)},
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    db, port = _db(tmp_path), _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewer", "--db", str(db), "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "HOME": str(tmp_path)},  # the user's own config stays out
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    yield port, proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _session(port: int, name: str) -> tuple[bool, bool]:
    """One browser session: the page's websocket, a terminal of 100x30; answers who labels."""
    url = f"http://127.0.0.1:{port}/ws?width=100&height=30"
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await ws.send_json(["resize", {"width": 100, "height": 30}])
        seen = b""

        async def until(text: str, seconds: float = 40) -> bool:
            nonlocal seen
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                try:
                    message = await asyncio.wait_for(ws.receive(), 1)
                except TimeoutError:
                    continue
                if message.type == aiohttp.WSMsgType.BINARY:
                    seen += message.data
                elif message.type == aiohttp.WSMsgType.TEXT:
                    seen += message.data.encode()
                else:
                    return False
                if text.encode() in seen:
                    return True
            return False

        asked = await until("Who is labeling")
        await ws.send_json(["stdin", f"{name}\r"])
        return asked, await until(f"Labeling as {name}")


def tmp_db_of(proc: subprocess.Popen[str]) -> str:
    args = list(proc.args)  # type: ignore[arg-type]
    return str(args[args.index("--db") + 1])


def test_each_browser_session_runs_the_app_and_names_its_labeler(
    server: tuple[int, subprocess.Popen[str]],
) -> None:
    port, proc = server
    import urllib.request

    page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read().decode()
    assert f"ws://127.0.0.1:{port}/ws" in page

    async def both() -> list[tuple[bool, bool]]:
        return list(await asyncio.gather(_session(port, "alice"), _session(port, "bob")))

    assert asyncio.run(both()) == [(True, True), (True, True)]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=15)
    assert "no authentication of its own" in err.splitlines()[0]
    # which database the sessions label, whatever gave it (--db here, REVIEWER_DB as well)
    assert f"reviewer: serving {tmp_db_of(proc)} at http://127.0.0.1:{port}" in err, err
    assert "Traceback" not in err


def test_a_database_that_does_not_open_is_said_before_serving(tmp_path: Path) -> None:
    bad = tmp_path / "not.db"
    bad.write_bytes(b"this is not a database" * 100)
    code, out, err = run_cli("--db", str(bad), "serve", "--port", str(_free_port()))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"reviewer: {bad}")


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    db = _db(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve(tmp_path, db, "--port", str(port))
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""  # no banner saying it serves
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"reviewer: cannot listen on 127.0.0.1:{port}: ")


def test_the_command_each_session_runs_is_quoted_and_asks_who_labels(tmp_path: Path) -> None:
    import shlex

    db = tmp_path / "a folder; rm -rf x" / "r.db"
    words = shlex.split(app_command(db))
    assert words == [sys.executable, "-m", "reviewer", "--db", str(db), "open", "--ask-labeler"]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
        ("example.com", False),
        ("127.1", True),  # the system's other spellings of an address (found by an attacker)
        ("0x7f000001", True),
        ("0", False),
        ("", False),
    ],
)
def test_a_host_beyond_this_machine_is_told_apart(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_web_page_of_another_origin_cannot_open_a_session(
    server: tuple[int, subprocess.Popen[str]],
) -> None:
    """A browser lets any page open a websocket to 127.0.0.1: the server takes only its own page's
    (and no app process is started for the other)."""
    port, _ = server

    async def attempt(origin: str) -> int | None:
        async with aiohttp.ClientSession() as http:
            try:
                async with http.ws_connect(
                    f"http://127.0.0.1:{port}/ws?width=80&height=24", headers={"Origin": origin}
                ):
                    return 101
            except aiohttp.WSServerHandshakeError as e:
                return e.status

    assert asyncio.run(attempt("https://evil.example")) == 403
    assert asyncio.run(attempt(f"http://localhost:{port}")) == 101


def test_the_page_finds_its_server_by_an_address_that_works() -> None:
    assert public_url_of("127.0.0.1", 8000, None) == "http://127.0.0.1:8000"
    assert public_url_of("::1", 8000, None) == "http://[::1]:8000"
    assert public_url_of("0.0.0.0", 80, "https://r.example.com/") == "https://r.example.com"
    with pytest.raises(Exception, match="--public-url"):
        public_url_of("0.0.0.0", 8000, None)
    assert allowed_origins("https://R.example.com", "0.0.0.0", 8000) == {"https://r.example.com"}


@pytest.mark.parametrize("host", ["", "0", "0.0"])
def test_an_empty_host_listens_on_every_address_and_needs_a_public_url(host: str) -> None:
    """--host "" (an unset --host "$HOST") and --host 0 listen on every address, as 0.0.0.0 does,
    but served on it as a name: the page at http://:8000, and the warning 'listening on ,'
    (found by an attacker)."""
    with pytest.raises(click.UsageError, match="listens on every address.*--public-url"):
        public_url_of(host, 8000, None)
    assert public_url_of("127.1", 8000, None) == "http://127.0.0.1:8000"


def test_an_empty_host_is_refused_before_serving(tmp_path: Path) -> None:
    db = _db(tmp_path)
    with socket.create_server(("127.0.0.1", 0)) as taken:  # were it served, it would stop there
        port = str(taken.getsockname()[1])
        done = _serve(tmp_path, db, "--host", "", "--port", port)
    assert done.returncode == 2 and done.stdout == ""
    assert "Error: --host '' listens on every address" in done.stderr


def test_a_key_remap_that_lies_is_said_before_serving(tmp_path: Path) -> None:
    db = _db(tmp_path)
    (tmp_path / "reviewer.toml").write_text('[keys]\n"no.such.id" = "z"\n', encoding="utf-8")
    done = _serve(tmp_path, db, "--port", str(_free_port()))
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "no.such.id" in line
