"""Start-up cost: opening a database must not import numpy (sqlite-utils would, for 60 ms), and numpy
stays importable afterwards for the commands that compute with it."""

from __future__ import annotations

import subprocess
import sys


def test_opening_a_database_does_not_import_numpy(tmp_path: object) -> None:
    code = (
        "import sys\n"
        "from reviewer.store import open_store\n"
        f"db = open_store({str(tmp_path)!r} + '/x.db')\n"
        "db.execute('SELECT COUNT(*) FROM trials').fetchone()\n"
        "db.close()\n"
        "assert 'numpy' not in sys.modules, 'numpy was imported'\n"
        "import numpy\n"
        "assert numpy.zeros(2).sum() == 0\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
