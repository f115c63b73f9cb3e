"""One language of keys: every binding of every screen and widget is in the key map, each key means
one thing, and the key table in docs/app.md is the map."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

from textual.binding import Binding
from textual.dom import DOMNode

import reviewer.tui
from reviewer.tui.app import ReviewerApp
from reviewer.tui.keys import KEY_MAP, key_display, markdown_table

APP_PAGE = Path(__file__).resolve().parents[2] / "docs" / "app.md"


def all_bindings() -> list[tuple[str, Binding]]:
    """(class name, binding) for the app and every screen, modal and widget class of reviewer.tui."""
    found: dict[str, type] = {"ReviewerApp": ReviewerApp}
    for mod in pkgutil.walk_packages(reviewer.tui.__path__, "reviewer.tui."):
        module = importlib.import_module(mod.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, DOMNode):
                found[name] = cls
    out = []
    for name, cls in found.items():
        for b in cls.__dict__.get("BINDINGS", []):
            assert isinstance(b, Binding), f"{name}: a binding that is not a Binding: {b!r}"
            out.append((name, b))
    return out


def test_every_binding_is_in_the_key_map_under_its_key() -> None:
    rows = {r.key: r for r in KEY_MAP}
    missing = []
    for name, b in all_bindings():
        assert b.id, f"{name}: binding {b.key} → {b.action} has no id (the [keys] table needs one)"
        for key in b.key.split(","):
            row = rows.get(key.strip())
            if row is None or b.id not in row.ids:
                missing.append(f"{name}: {key} ({b.id})")
    assert not missing, "bindings missing from reviewer/tui/keys.py KEY_MAP: " + ", ".join(missing)


def test_no_key_has_two_rows_and_no_row_names_a_binding_that_is_gone() -> None:
    keys = [r.key for r in KEY_MAP]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1]
    real = {(key.strip(), b.id) for _, b in all_bindings() for key in b.key.split(",")}
    stale = [(r.key, i) for r in KEY_MAP for i in r.ids if (r.key, i) not in real]
    assert not stale, stale


def test_a_binding_id_is_one_action() -> None:
    """A remappable id names one action, so `[keys]` never moves two meanings at once."""
    actions: dict[str, str] = {}
    for name, b in all_bindings():
        assert b.id is not None
        if b.id in actions:
            assert actions[b.id] == b.action, f"{b.id} is {actions[b.id]} and {b.action} ({name})"
        actions[b.id] = b.action


def test_the_labeling_keys_do_not_clash_with_navigation() -> None:
    """p, f, x, u, c, v are the labeling keys: no other screen binds them."""
    for key in "pfxucv":
        row = next(r for r in KEY_MAP if r.key == key)
        assert all(i.startswith("label.") for i in row.ids), (key, row.ids)


def test_the_key_table_in_the_docs_is_the_key_map() -> None:
    text = APP_PAGE.read_text(encoding="utf-8")
    table = markdown_table()
    assert table in text, (
        "docs/app.md's key table differs from reviewer.tui.keys.markdown_table(): "
        "run python docs/generate.py"
    )
    # and only one key table
    assert len(re.findall(r"^\| key \| means \| on \|$", text, flags=re.M)) == 1


def test_key_names_read_as_typed() -> None:
    assert key_display("right_square_bracket") == "]"
    assert key_display("question_mark,escape") == "?, Esc"
    assert key_display("ctrl+p") == "Ctrl+P"
    assert "right_square_bracket" not in markdown_table()


def test_conflicting_and_unknown_remaps_are_named() -> None:
    """`"label.pass" = "f"` made f store PASS while help said Fail; mapping q elsewhere removed Quit."""
    from reviewer.tui.keys import keymap_problems

    assert keymap_problems({"label.pass": "f"}) == [
        "[keys] label.pass = 'f': f already means label.fail there; give label.pass another key "
        "(or move label.fail too)"
    ]
    assert "q already means app.quit" in keymap_problems({"trials.search": "q"})[0]
    assert "no binding has these ids" in keymap_problems({"label.pas": "z", "app.quitt": "x"})[0]
    # a swap, a free key, and the app's own key moved are fine
    assert keymap_problems({"label.pass": "f", "label.fail": "p"}) == []
    assert keymap_problems({"label.pass": "P", "app.quit": "Q"}) == []


def test_the_app_refuses_to_open_with_a_lying_keymap(tmp_path: Path, monkeypatch: object) -> None:
    from tests.conftest import run_cli

    (tmp_path / "reviewer.toml").write_text('[keys]\n"label.pass" = "f"\n', encoding="utf-8")
    code, out, err = run_cli("--db", str(tmp_path / "k.db"))
    assert code == 2 and out == ""
    assert err.strip().endswith(
        "[keys] label.pass = 'f': f already means label.fail there; give label.pass another key "
        "(or move label.fail too)"
    )
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "k.db").exists()


NOT_KEYS = {("n", "counts")}  # the tasks screen's "· n counts scored trials": n is a column


def test_a_screens_hint_line_names_only_keys_that_screen_binds() -> None:
    """The Audit view's line under its table said `r audit again` while its key was R (r did
    nothing there): every `· K word` hint written in a screen's module names a key bound by a
    class of that module (or one it inherits from)."""
    import reviewer.tui.screens

    wrong = []
    for mod in pkgutil.walk_packages(reviewer.tui.screens.__path__, "reviewer.tui.screens."):
        module = importlib.import_module(mod.name)
        bound: set[str] = set()
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not issubclass(cls, DOMNode):
                continue
            for base in cls.__mro__:
                for b in base.__dict__.get("BINDINGS", []):
                    if isinstance(b, Binding):
                        bound.update(key_display(k.strip()) for k in b.key.split(","))
        source = inspect.getsource(module)
        for key, word in re.findall(r"· ([A-Za-z!/?<>{}\[\]]) ([a-z][a-z/-]*)", source):
            if key not in bound and (key, word) not in NOT_KEYS:
                wrong.append(f"{mod.name}: '· {key} {word}' but {key} is not bound there")
    assert not wrong, wrong
