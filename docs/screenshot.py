"""Make `docs/screenshot.svg`, the README's picture: the app on `sample_runs/` (what `reviewer
sample_runs/` opens), the tasks screen of `support-v1`, drawn by Textual's own `save_screenshot`.

Run from anywhere: `python docs/screenshot.py`. The database and the app's config live in a
temporary folder, so nothing of the user's is read or written.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
OUT = DOCS / "screenshot.svg"
SIZE = (110, 30)


async def _shoot(db: Path) -> None:
    from reviewer.tui.app import ReviewerApp

    app = ReviewerApp(db_path=db, labeler="docs")
    async with app.run_test(size=SIZE) as pilot:
        for keys in ((), ("enter",), ("down", "down", "down")):
            await pilot.press(*keys)
            for _ in range(3):
                await app.workers.wait_for_complete()
                await pilot.pause()
        app.save_screenshot(filename=OUT.name, path=str(OUT.parent))


def main() -> int:
    from reviewer.cli import main as cli_main

    saved = {name: os.environ.get(name) for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME")}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name in saved:
                os.environ[name] = str(Path(tmp) / name.lower())
            db = Path(tmp) / "reviewer.db"
            try:
                cli_main(["--db", str(db), "import", str(DOCS.parent / "sample_runs")])
            except SystemExit as done:
                if done.code:
                    return int(done.code)
            asyncio.run(_shoot(db))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    print(f"wrote docs/{OUT.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
