"""The documentation stays true to the code: the pages made from it (`docs/cli.md`, the key table in
`docs/app.md`) are what `python docs/generate.py` writes, the README's picture is drawn by the app
(`docs/screenshot.py`), every relative link of the README and of `docs/` reaches a file (and a
heading, when it names one), and the README stays a one-minute read."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from tests.conftest import REPO

DOCS = REPO / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _script(name: str) -> ModuleType:
    """A script of docs/ loaded as a module (docs/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", DOCS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generator() -> ModuleType:
    return _script("generate")


def test_generated_pages_are_fresh() -> None:
    gen = _generator()
    stale = [p.relative_to(REPO).as_posix() for p in gen.stale()]
    assert not stale, f"{', '.join(stale)} stale: run python docs/generate.py"


def test_the_cli_page_has_every_command() -> None:
    from reviewer.cli import cli

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    for name, command in cli.commands.items():
        if not command.hidden:
            assert f"\n## reviewer {name}\n" in page, name
    assert "\n## reviewer cluster merge\n" in page and "\n## reviewer baseline set\n" in page


def test_a_stale_page_is_found_and_named(tmp_path: Path) -> None:
    """The check is not vacuous: a page one line off is stale, and regenerating fixes it."""
    gen = _generator()
    cli_page = tmp_path / "cli.md"
    cli_page.write_text(gen.cli_page().replace("## reviewer import\n", "## reviewer imports\n"))
    app_page = tmp_path / "app.md"
    app_page.write_text((DOCS / "app.md").read_text(encoding="utf-8").replace("| `q` |", "| `Q` |"))
    vars(gen).update(CLI_PAGE=cli_page, APP_PAGE=app_page)
    assert gen.stale() == [cli_page, app_page]
    assert gen.main([]) == 0
    assert gen.stale() == []


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_every_relative_link_reaches_its_file_and_heading() -> None:
    pages = [REPO / "README.md", REPO / "ARCHITECTURE.md", REPO / "DEVELOPERS.md"]
    pages += sorted(DOCS.glob("*.md"))
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            goal = (page.parent / path).resolve() if path else page
            if not goal.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and goal.suffix == ".md" and anchor not in _anchors(goal):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_readme_is_short_and_links_every_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 160
    for page in DOCS.glob("*.md"):
        assert f"(docs/{page.name})" in readme, f"the README does not link docs/{page.name}"
    assert "(docs/screenshot.svg)" in readme and (DOCS / "screenshot.svg").is_file()


def test_the_screenshot_script_draws_the_app_on_the_sample_runs(tmp_path: Path) -> None:
    """`python docs/screenshot.py` draws the tasks screen of support-v1, as the README says."""
    shot = _script("screenshot")
    out = tmp_path / "shot.svg"
    vars(shot).update(OUT=out)
    assert shot.main() == 0
    svg = out.read_text(encoding="utf-8")
    assert svg.startswith("<svg")
    assert "Tasks&#160;of&#160;support-v1" in svg and "cancel_after_ship_01" in svg
    assert str(tmp_path) not in svg  # no path of the machine in the picture
