"""House rules that are easy to break silently."""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

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


REPO = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    """The shell commands of the README's "Set up" section, in order."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)


def test_readme_set_up_is_two_commands_and_ci_runs_the_second_verbatim() -> None:
    app, tests = _setup_commands()
    venv = "python3 -m venv .venv && . .venv/bin/activate && "
    assert app == venv + "pip install -e . && reviewer sample_runs/"
    assert tests.startswith(venv + "pip install -e '.[test]'") and tests.endswith(
        "python -m pytest"
    )
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert any(line.startswith(tests) for line in ci.splitlines()), "CI runs another command"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "Python 3.11 or newer" in readme
    assert 'requires-python = ">=3.11"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


def test_real_data_fixtures_are_small_and_attributed() -> None:
    fixtures = REPO / "tests" / "fixtures"
    total = sum(p.stat().st_size for p in fixtures.rglob("*") if p.is_file())
    assert total < 5_000_000, f"tests/fixtures holds {total} bytes"
    for folder in (p for p in fixtures.iterdir() if p.is_dir() and p.name != "__pycache__"):
        notes = {"SOURCE.md", "README.md", "ATTRIBUTION.md"} & {p.name for p in folder.iterdir()}
        assert notes, f"{folder.name} has no SOURCE.md saying where its data came from"


def test_no_test_skips_for_want_of_the_shared_corpora() -> None:
    for path in (REPO / "tests").rglob("*.py"):
        if path == Path(__file__).resolve():
            continue
        text = path.read_text(encoding="utf-8")
        assert "corpus not available" not in text, path
