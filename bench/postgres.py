"""The store on PostgreSQL against SQLite, in the same run: the import of the same files, and the
app's first screen (runs table filled) on the same trials.

Generates ``--trials`` native trials (~30 distinct messages each, as bench/import_speed.py makes
them), imports them into a new SQLite file and into a new PostgreSQL database, ``--repeat`` times,
interleaved, and prints the medians and the ratio PostgreSQL / SQLite (target: <= 1.0, the import on
PostgreSQL at least as fast). Then it opens the app on each database and times its first screen,
interleaved (target: <= 1.5). A PostgreSQL server is started for the run (initdb and pg_ctl, as the
tests do) unless ``--url`` names one whose databases this may create and drop.

Run: python bench/postgres.py [--trials 10000] [--repeat 3] [--screen-trials 100000] [--url URL]
(``--screen-trials 0``: the import alone).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.import_speed import write_files  # noqa: E402
from bench.million import build, first_screen  # noqa: E402
from reviewer.store import open_store  # noqa: E402
from reviewer.workflows.imports import import_paths  # noqa: E402


def new_database(server: str) -> str:
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + "/" + name


def drop_database(server: str, url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def timed_import(target: str, files: list[Path]) -> float:
    with open_store(target) as db:  # the schema made before the clock starts, on both
        start = time.perf_counter()
        import_paths(db, [str(f) for f in files])
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--screen-trials", type=int, default=100_000)
    parser.add_argument("--url", help="a PostgreSQL server's URL (default: start one)")
    args = parser.parse_args()

    server_handle = None
    if args.url:
        server = args.url
    else:
        from tests.support import pg_server

        server_handle = pg_server.start()
        server = server_handle.url
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            files = write_files(root, args.trials, random.Random(5))
            sqlite_s, pg_s = [], []
            for i in range(args.repeat):
                sqlite_s.append(timed_import(str(root / f"s{i}.db"), files))
                url = new_database(server)
                pg_s.append(timed_import(url, files))
                drop_database(server, url)
                print(
                    f"  import round {i + 1}: SQLite {sqlite_s[-1]:.2f} s, PostgreSQL {pg_s[-1]:.2f} s"
                )
            s_med, p_med = statistics.median(sqlite_s), statistics.median(pg_s)
            ratio = p_med / s_med
            print(
                f"import of {args.trials:,} trials: SQLite {s_med:.2f} s ({args.trials / s_med:,.0f}/s), "
                f"PostgreSQL {p_med:.2f} s ({args.trials / p_med:,.0f}/s); ratio {ratio:.2f} "
                f"(target <= 1.0: {'met' if ratio <= 1.0 else 'not met'})"
            )

            n = args.screen_trials
            if n <= 0:  # the import alone
                return
            small = root / "screen.db"
            print(f"building {n:,} trials on each (bench/million.py's generator) ...")
            build(small, n, 12)
            url = new_database(server)
            build(url, n, 12)  # type: ignore[arg-type]
            s_screen, p_screen = [], []
            for _ in range(args.repeat + 2):
                s_screen.append(asyncio.run(first_screen(small)))
                p_screen.append(asyncio.run(first_screen(url)))  # type: ignore[arg-type]
            s_med, p_med = statistics.median(s_screen), statistics.median(p_screen)
            ratio = p_med / s_med
            print(
                f"the app's first screen on {n:,} trials: SQLite {s_med:.2f} s, PostgreSQL "
                f"{p_med:.2f} s; ratio {ratio:.2f} (target <= 1.5: {'met' if ratio <= 1.5 else 'not met'})"
            )
            drop_database(server, url)
    finally:
        if server_handle is not None:
            server_handle.stop()


if __name__ == "__main__":
    main()
