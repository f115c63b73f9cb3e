"""Write the pages made from the code: `docs/cli.md` (every command of the click tree
`reviewer.cli:cli` with its help and options) and the key table in `docs/app.md`
(`reviewer.tui.keys.markdown_table()`).

Run from anywhere: `python docs/generate.py` writes both; `--check` writes nothing and exits 1 when
either is stale. `tests/test_docs.py` fails on a stale page and names this command.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

DOCS = Path(__file__).resolve().parent
CLI_PAGE = DOCS / "cli.md"
APP_PAGE = DOCS / "app.md"
COMMAND = "python docs/generate.py"
KEYS_BEGIN = (
    f"<!-- the key table: written by `{COMMAND}` from reviewer/tui/keys.py; do not edit -->"
)
KEYS_END = "<!-- end of the key table -->"
#: Help is wrapped at this width, whatever the terminal, so the page is the same on every machine.
WIDTH = 100


def _commands(
    command: click.Command, name: str, parent: click.Context | None = None
) -> list[click.Context]:
    """A context for ``command`` and each command under it, each group's commands in name order;
    hidden commands are left out. Each context has its parent's, so help shows the whole command
    path and the group's settings (``-h``) as the shell would."""
    settings = dict(command.context_settings)
    if parent is None:
        settings.update(terminal_width=WIDTH, max_content_width=WIDTH)
    ctx = click.Context(command, info_name=name, parent=parent, **settings)
    out = [ctx]
    if isinstance(command, click.Group):
        for sub_name in command.list_commands(ctx):
            sub = command.get_command(ctx, sub_name)
            if sub is not None and not sub.hidden:
                out += _commands(sub, sub_name, ctx)
    return out


def cli_page() -> str:
    """The text of docs/cli.md."""
    from reviewer.cli import cli

    entries = _commands(cli, "reviewer")
    lines = [
        "# CLI reference",
        "",
        f"Every command of `reviewer`, as its `--help` prints it. Written by `{COMMAND}` from the",
        "click command tree (`reviewer.cli:cli`); `tests/test_docs.py` fails when it is stale. The",
        "group's `--db` and `--labeler` may also follow any command's name (`reviewer report --db",
        "runs.db`). What each command is for, with its output on the sample runs, is in",
        "[the tour](tour.md) and the pages it links to.",
        "",
    ]
    for ctx in entries:
        path = ctx.command_path
        indent = "  " * max(path.count(" ") - 1, 0)
        summary = ctx.command.get_short_help_str(limit=80)
        lines.append(f"{indent}- [`{path}`](#{path.replace(' ', '-')}): {summary}")
    lines.append("")
    for ctx in entries:
        lines += [f"## {ctx.command_path}", "", "```", ctx.get_help().rstrip(), "```", ""]
    return "\n".join(lines)


def app_page(current: str) -> str:
    """``current`` (docs/app.md) with the key table between its markers made from the key map."""
    from reviewer.tui.keys import markdown_table

    head, sep, rest = current.partition(KEYS_BEGIN)
    _, sep2, tail = rest.partition(KEYS_END)
    if not sep or not sep2:
        raise SystemExit(f"{APP_PAGE.name}: the key table's markers are missing")
    return f"{head}{KEYS_BEGIN}\n{markdown_table()}\n{KEYS_END}{tail}"


def pages() -> dict[Path, str]:
    """Each generated page and the text it should hold."""
    return {CLI_PAGE: cli_page(), APP_PAGE: app_page(APP_PAGE.read_text(encoding="utf-8"))}


def stale() -> list[Path]:
    """The pages whose text differs from what the code makes."""
    return [
        p for p, text in pages().items() if not p.exists() or p.read_text(encoding="utf-8") != text
    ]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        out = stale()
        for p in out:
            print(f"docs/{p.name} is stale: run {COMMAND}", file=sys.stderr)
        return 1 if out else 0
    if argv:
        print(f"usage: {COMMAND} [--check]", file=sys.stderr)
        return 2
    for p, text in pages().items():
        if not p.exists() or p.read_text(encoding="utf-8") != text:
            p.write_text(text, encoding="utf-8")
            print(f"wrote docs/{p.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
