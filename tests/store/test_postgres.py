"""A store on a PostgreSQL server, as a user meets it: the URL's password never printed, one line
for a database, schema or driver that is not there, another program's database refused."""

from __future__ import annotations

import shlex

import psycopg
import pytest

from reviewer.commands.serve import app_command
from reviewer.store.db import StoreError, command_url, open_store
from reviewer.store.postgres import hide_secrets, shown_url
from tests.conftest import SAMPLE_RUNS, run_cli
from tests.support.pg_server import drop_connections

SECRET = "Hunter2secret"


def _with_password(url: str) -> str:
    return url.replace("reviewer@", f"reviewer:{SECRET}@", 1)  # the test server trusts any


def test_a_password_is_hidden_in_every_form_a_url_takes() -> None:
    assert shown_url(f"postgresql://me:{SECRET}@h:5432/db") == "postgresql://me:***@h:5432/db"
    assert shown_url(f"postgresql://me@h/db?sslmode=require&password={SECRET}") == (
        "postgresql://me@h/db?sslmode=require&password=***"
    )
    assert shown_url("postgresql://me@h/db") == "postgresql://me@h/db"
    assert command_url(f"postgresql://me:{SECRET}@h:5432/db") == "postgresql://me@h:5432/db"
    assert command_url(f"postgresql://me@h/db?password={SECRET}&sslmode=require") == (
        "postgresql://me@h/db?sslmode=require"
    )


def test_a_password_urllib_reads_otherwise_than_libpq_is_hidden_too() -> None:
    """A # or ? in a password libpq reads as the password's, and a / in it that is not
    percent-encoded, were printed in full, in the message and in the command to paste; and a URL
    without a host (a Unix socket) was printed to paste as postgresql:/db, which names a SQLite
    file (found by an attack on --db postgresql://)."""
    for url in (
        f"postgresql://me:{SECRET}#x@h:5432/db",
        f"postgresql://me:{SECRET}?x@h:5432/db",
        f"postgresql://me:{SECRET}/x@h:5432/db",
        f"postgresql://me:{SECRET}@x@h:5432/db",
    ):
        assert shown_url(url) == "postgresql://me:***@h:5432/db", url
        assert command_url(url) == "postgresql://me@h:5432/db", url
        password = url.split("me:", 1)[1].rsplit("@h", 1)[0]  # as libpq quotes it back
        assert SECRET not in hide_secrets(f"bad: {url} and {password}", url)
    assert shown_url("postgresql:///db?host=/run/pg&password=x") == (
        "postgresql:///db?host=/run/pg&password=***"
    )
    assert command_url("postgresql:///db?host=/run/pg&password=x") == (
        "postgresql:///db?host=/run/pg"
    )
    code, out, err = run_cli("--db", f"postgresql://u:{SECRET}#x@127.0.0.1:1/db", "report")
    assert code == 1 and SECRET not in out + err and "u:***@127.0.0.1:1/db" in err, err


def test_a_password_in_a_url_of_an_upper_case_scheme_is_hidden_too() -> None:
    """`--db POSTGRESQL://u:pw@h/db` is taken for a file's name, and "no database ..." printed the
    password in full (found by a review)."""
    for url in ("POSTGRESQL://u:secretpw@127.0.0.1:1/db", "Postgres://u:secretpw@h/db"):
        code, out, err = run_cli("--db", url, "report")
        assert code == 1 and "secretpw" not in out + err and "u:***@" in err, err
        assert url.split("://")[0] + "://" in err  # the scheme as typed: the mistake to see


def test_a_short_password_is_hidden_where_it_stands_alone_not_inside_words() -> None:
    """A password of two letters was taken out of every word holding them: "Name or ***rvice
    not known" (found by an attacker)."""
    url = "postgresql://bob:se@127.0.0.1:1/x"
    said = hide_secrets(f'{url}: Name or service not known; token "se"; se', url)
    assert said == 'postgresql://bob:***@127.0.0.1:1/x: Name or service not known; token "***"; ***'


def test_a_password_libpq_quotes_back_is_hidden_too() -> None:
    """libpq quotes a token it cannot read, a password with a stray % among them: the URL was
    hidden and the password printed in the message after it (found by a review)."""
    for url in (
        "postgresql://u:hunter2%G1@127.0.0.1:1/db",
        "postgresql://u@127.0.0.1:1/db?password=hunter2%G1",
    ):
        code, out, err = run_cli("--db", url, "report", "--json")
        assert code == 1 and "hunter2" not in out + err, out + err
        assert 'invalid percent-encoded token: "***"' in err
    assert hide_secrets("bad: p%41ss and pAss", "postgresql://u:p%41ss@h/db") == (
        "bad: *** and ***"
    )


def test_a_role_that_may_only_read_opens_a_database_lacking_m021(pg_url: str) -> None:
    """m021 indexes text again: a database the version before wrote opens for a role that may
    not write, for its reports (its search finds what it found before)."""
    code, _, err = run_cli("--db", pg_url, "import", str(SAMPLE_RUNS))
    assert code == 0, err
    name = pg_url.rsplit("/", 1)[1]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "DELETE FROM _reviewer_migrations WHERE name = 'm021_fts_arguments_as_written'"
        )
        conn.execute(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reader') THEN "
            "CREATE ROLE reader LOGIN; END IF; END $$"
        )
        conn.execute(f"GRANT CONNECT ON DATABASE {name} TO reader")
        conn.execute("GRANT USAGE ON SCHEMA public TO reader")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    reader = pg_url.replace("reviewer@", "reader@", 1)
    code, out, err = run_cli("--db", reader, "report", "--run", "support-v1", "--json")
    assert code == 0, err
    assert '"support-v1"' in out
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the writer applies it next time
        missing = conn.execute(
            "SELECT COUNT(*) FROM _reviewer_migrations WHERE name = 'm021_fts_arguments_as_written'"
        ).fetchone()
    assert missing == (0,)
    open_store(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        done = conn.execute(
            "SELECT COUNT(*) FROM _reviewer_migrations WHERE name = 'm021_fts_arguments_as_written'"
        ).fetchone()
    assert done == (1,)


def test_commands_hints_and_the_served_command_never_print_the_password(pg_url: str) -> None:
    url = _with_password(pg_url)
    printed = []
    for args in (
        ("import", str(SAMPLE_RUNS)),
        ("sample", "--shared", "--size", "6", "--name", "team"),
        ("queues", "team", "--next", "--labeler", "ann"),
        ("report",),
    ):
        code, out, err = run_cli("--db", url, *args)
        assert code == 0, err
        printed.append(out + err)
    assert not [p for p in printed if SECRET in p]
    # a command to paste: the URL without its password (libpq reads PGPASSWORD or ~/.pgpass),
    # never "***", which failed to log in when pasted (found by a review)
    assert "label it with reviewer --db postgresql://reviewer@" in printed[2]
    assert "label it in the app: reviewer --db postgresql://reviewer@" in printed[1]
    assert "***" not in printed[1] + printed[2]
    # a shared queue's labelers each open the app under their own name
    app = next(line for line in printed[1].splitlines() if "label it in the app" in line)
    assert shlex.split(app.split(": ", 1)[1])[-2:] == ["--labeler", "NAME"]
    give = next(line for line in printed[2].splitlines() if "label it with" in line)
    command = shlex.split(give.split("label it with ", 1)[1].split(" (VERDICT")[0])
    assert command[:3] == ["reviewer", "--db", pg_url]  # the URL as given, less its password
    # each browser session's command: the URL goes in REVIEWER_DB, not on a command line
    words = shlex.split(app_command(url))
    assert SECRET not in " ".join(words) and "--db" not in words


def test_a_missing_database_or_schema_is_one_line_at_once(pg_url: str) -> None:
    gone = pg_url.rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(StoreError, match="the server has no database 'no_such_db': create it"):
        open_store(gone)
    no_schema = pg_url + "?options=-csearch_path%3Dnot_made"
    with pytest.raises(StoreError, match=r"no schema of its search_path \(not_made\) exists"):
        open_store(no_schema)
    code, out, err = run_cli("--db", no_schema, "report")
    assert code == 1 and out == "" and len(err.splitlines()) == 1, err


def test_a_schema_of_its_own_keeps_reviewer_beside_another_programs_tables(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id int); CREATE SCHEMA evals")
    code, out, err = run_cli("--db", pg_url, "report")
    assert code == 1 and "a PostgreSQL database of something else (tables: invoices)" in err
    own = pg_url + "?options=-csearch_path%3Devals"
    code, _, err = run_cli("--db", own, "import", str(SAMPLE_RUNS))
    assert code == 0, err
    with psycopg.connect(pg_url, autocommit=True) as conn:
        made = conn.execute("SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'evals'").fetchone()
        public = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    assert made is not None and made[0] > 20
    assert public == [("invoices",)]


def test_the_large_columns_are_compressed_with_lz4_and_read_back_whole(pg_url: str) -> None:
    db = open_store(pg_url)
    try:
        with psycopg.connect(pg_url) as conn:
            lz4 = conn.execute(
                "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
                "AND 'lz4' = ANY(enumvals)"
            ).fetchone()
            methods: dict[str, str] = dict(
                conn.execute(
                    "SELECT attrelid::regclass::text || '.' || attname, attcompression "
                    "FROM pg_attribute WHERE attrelid IN ('trials'::regclass, "
                    "'trials_fts'::regclass) AND attname IN ('record', 'text', 'system')"
                ).fetchall()
            )
        assert methods == dict.fromkeys(
            ("trials.record", "trials_fts.text", "trials_fts.system"), "l" if lz4 else ""
        )
    finally:
        db.close()
    code, _, err = run_cli("--db", pg_url, "import", str(SAMPLE_RUNS))
    assert code == 0, err
    whole = run_cli("--db", pg_url, "trials", "--json")
    found = run_cli("--db", pg_url, "trials", "--search", "refund", "--json")
    assert whole[0] == found[0] == 0, whole[2] + found[2]
    assert 0 < found[1].count('"id"') < whole[1].count('"id"')


def test_a_url_naming_no_database_is_refused_before_anything_is_made(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """postgresql://me@host (or .../) took libpq's default database, the one named after the user:
    as postgres, the server's own database got reviewer's tables from a `reviewer report`."""
    server, name = pg_url.rsplit("/", 1)
    monkeypatch.delenv("PGDATABASE", raising=False)
    monkeypatch.delenv("PGSERVICE", raising=False)
    for url in (server, server + "/"):
        code, out, err = run_cli("--db", url, "report")
        assert code == 1 and out == "" and len(err.splitlines()) == 1, err
        assert f"{url}: the URL names no database" in err and "createdb reviewer" in err
    for given in (f"{server}/?dbname={name}", f"{server}?dbname={name}"):
        open_store(given).close()
    monkeypatch.setenv("PGDATABASE", name)
    open_store(server).close()


def test_a_role_that_may_only_read_reads_and_is_told_why_a_write_fails(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A team's read-only role labeling got 'database error (permission denied for table
    queue_leases)': the line now says the role may read but not write, and what a write needs."""
    import uuid

    from reviewer import cli

    role = f"reader_{uuid.uuid4().hex[:8]}"
    as_role = pg_url.replace("reviewer@", f"{role}@", 1)
    assert run_cli("--db", pg_url, "import", str(SAMPLE_RUNS / "support-v1.jsonl"))[0] == 0
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    try:
        code, out, err = run_cli("--db", as_role, "report")
        assert code == 0 and "refund_simple" in out, err
        capsys.readouterr()
        for args in (("sample", "--size", "4", "--name", "ro"), ("import", str(SAMPLE_RUNS))):
            with pytest.raises(SystemExit) as exited:
                cli.main(["--db", as_role, *args])
            err = capsys.readouterr().err
            assert exited.value.code == 1 and len(err.splitlines()) == 1, err
            assert "this PostgreSQL role may not write reviewer's tables (permission denied" in err
            assert "nothing was written" in err
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")


def test_a_role_that_may_not_create_tables_is_told_what_lets_it(pg_url: str) -> None:
    """PostgreSQL 15 lets only a database's owner create in its schema public: a team role on a
    database an administrator made was told only 'database error (permission denied for schema
    public)'."""
    import uuid

    role = f"team_{uuid.uuid4().hex[:8]}"
    as_role = pg_url.replace("reviewer@", f"{role}@", 1)
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    try:
        code, out, err = run_cli("--db", as_role, "report")
        assert code == 1 and out == "" and len(err.splitlines()) == 1, err
        assert f"the role {role} may not create reviewer's tables in schema public" in err
        assert f"createdb -O {role} NAME" in err
        assert f"GRANT CREATE ON SCHEMA public TO {role}" in err
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"GRANT CREATE ON SCHEMA public TO {role}")
        code, _, err = run_cli("--db", as_role, "import", str(SAMPLE_RUNS / "support-v1.jsonl"))
        assert code == 0, err
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")


@pytest.mark.parametrize("where", ["url", "environment"])
def test_a_connect_timeout_of_the_url_or_environment_is_kept(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that takes the connection and never answers was waited for 10 s whatever the URL's
    connect_timeout or PGCONNECT_TIMEOUT said: reviewer's own 10 s overrode both (found by an
    attacker)."""
    import socket
    import time

    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        url = f"postgresql://nobody@127.0.0.1:{silent.getsockname()[1]}/none"
        if where == "url":
            url += "?connect_timeout=2"
        else:
            monkeypatch.setenv("PGCONNECT_TIMEOUT", "2")
        began = time.monotonic()
        with pytest.raises(StoreError, match="cannot connect to the PostgreSQL server"):
            open_store(url)
        assert time.monotonic() - began < 6


def test_a_server_that_takes_no_writes_is_named_for_what_it_is(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A write to a standby or a connection with default_transaction_read_only on said 'the
    database is read-only (file or folder not writable); the folder postgresql:/me@host does not
    exist': the file's reasons, for a URL (found by an attacker)."""
    code, _, err = run_cli("--db", pg_url, "import", str(SAMPLE_RUNS / "support-v1.jsonl"))
    assert code == 0, err
    read_only = pg_url + "?options=-cdefault_transaction_read_only%3Don"
    from reviewer import cli

    with pytest.raises(SystemExit) as exited:
        cli.main(["--db", read_only, "sample", "--size", "2", "--name", "q"])
    assert exited.value.code == 1
    assert capsys.readouterr().err == (
        f"reviewer: {read_only}: the PostgreSQL server takes no writes on this connection (a "
        "standby, or default_transaction_read_only on): cannot execute INSERT in a read-only "
        "transaction; nothing was written\n"
    )
    code, out, err = run_cli("--db", read_only, "report")  # reading is as before
    assert code == 0 and "refund_simple" in out, err


@pytest.mark.parametrize("server_back", [True, False])
def test_an_import_whose_connection_the_server_dropped_goes_on_or_is_one_line(
    server_back: bool,
    pg_url: str,
    tmp_path: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An import whose connection the server dropped (a restart) between two files stopped with
    'internal error: OperationalError: the connection is closed' (exit 70), and psycopg's own
    warning ('error ignored terminating <psycopg.Copy [BAD]>') beside it: a closed connection
    refuses even a cursor, which was asked for outside the errors the store turns into its own
    (found by an attacker). The connection is now made again: with the server back, the import
    goes on and stores both files; with it still down, it is one line naming the database and
    the first file stays stored."""
    import sqlite3

    from reviewer import cli
    from reviewer.store import postgres
    from reviewer.workflows import imports

    real = imports.import_file
    calls: list[object] = []
    connect = postgres.connect

    def refused_after_the_drop(url: str) -> object:
        if len(calls) >= 2 and not server_back:
            raise sqlite3.OperationalError("connection failed: Connection refused")
        return connect(url)

    monkeypatch.setattr(postgres, "connect", refused_after_the_drop)

    def drop_before_the_second(*args: object, **kw: object) -> object:
        calls.append(args[1])
        if len(calls) == 2:  # the server restarts between the two files
            drop_connections(pg_url)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(imports, "import_file", drop_before_the_second)
    first, second = SAMPLE_RUNS / "support-v1.jsonl", SAMPLE_RUNS / "support-v2.jsonl"
    with pytest.raises(SystemExit) as exited:
        cli.main(["--db", pg_url, "import", str(first), str(second)])
    err = capsys.readouterr().err
    assert "internal error" not in err and "psycopg" not in err
    monkeypatch.setattr(postgres, "connect", connect)
    with open_store(pg_url) as db:
        runs = db.execute("SELECT DISTINCT run FROM trials ORDER BY run").fetchall()
    if server_back:
        assert exited.value.code in (0, None), err
        assert runs == [("support-v1",), ("support-v2",)]
    else:
        assert exited.value.code == 1, err
        assert f"reviewer: {pg_url}: lost the connection to the PostgreSQL server" in err
        assert runs == [("support-v1",)]
