"""House rules that are easy to break silently."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

from click.testing import CliRunner

import reviewer
from reviewer.cli import cli


def _core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(reviewer.__path__, "reviewer."):
        if info.name.startswith("reviewer.tui") or info.name == "reviewer.__main__":
            continue
        names.append(info.name)
    return names


def test_core_modules_never_import_textual() -> None:
    modules = _core_modules()
    assert "reviewer.store.db" in modules and "reviewer.ingest.native" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"textual imported by a core module: {out.stdout}"


def test_cli_help_does_not_import_heavy_packages() -> None:
    code = (
        "import sys\n"
        "from reviewer.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('sklearn', 'anthropic', 'textual', 'numpy') if m in sys.modules]\n"
        "print(','.join(heavy), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == ""


def test_every_command_has_help() -> None:
    runner = CliRunner()
    for name, command in cli.commands.items():
        if command.hidden:
            continue
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, name
        assert command.help, f"{name} has no help text"
        assert name in result.output
