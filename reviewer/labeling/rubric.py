"""The labeling rubric (``rubric.toml``): parsed and validated, every error naming file and line.

name = "support-policy"
version = "1"            # bump it whenever a criterion or the pass rule changes
pass_rule = "all"        # "all": pass when every criterion is yes; "overall": an explicit verdict
[[criteria]]
id = "looked_up"
question = "Did the agent look up the order before acting on it?"
help = "A get_order call must precede refund or cancel_order."
key = "1"                # optional: criteria without a key get the next free digit

categories = ["wrong_refund", "cancelled_shipped"]   # optional: what a fail can be tagged with
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reviewer.models import Criterion, Rubric

PASS_RULES = {
    "all": "pass when every criterion is yes",
    "overall": "the labeler gives the verdict",
}
#: Keys the labeling screen keeps for itself; digits are left for criteria.
#: (s and n stay reserved: the old skip and next keys, and n / N step through search matches)
RESERVED_KEYS = (
    "p", "f", "x", "u", "c", "v", "[", "]", "/", "j", "k", "e", "n", "s", "q", "?",
    "space", "enter", "escape",
)  # fmt: skip
_RESERVED_CHARS = {k for k in RESERVED_KEYS if len(k) == 1} | {" ", "\n", "\r", "\t", "\x1b"}
_TOP_KEYS = ("name", "version", "pass_rule", "description", "criteria", "categories")
_CRITERION_KEYS = ("id", "question", "help", "key")
_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_TOML_POS_RE = re.compile(r"\s*\(at line (\d+), column \d+\)\s*$")
_HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY_RE = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*[.=]""")


class RubricError(Exception):
    """A rubric that cannot be used: ``rubric.toml:7: criterion 'x': key '1' is already used by 'y'``."""

    def __init__(self, file: str, line: int | None, reason: str) -> None:
        super().__init__(file, line, reason)
        self.file = file
        self.line = line
        self.reason = reason

    def __str__(self) -> str:
        return (
            f"{self.file}:{self.line}: {self.reason}"
            if self.line
            else f"{self.file}: {self.reason}"
        )


def load_rubric(path: str | Path) -> Rubric:
    """Read and validate ``path``; raises RubricError."""
    from reviewer.config import FileTooBig, read_small_text

    name = str(path)
    try:
        text = read_small_text(path)
    except FileTooBig as e:
        raise RubricError(name, None, f"cannot read: {e}") from None
    except FileNotFoundError:
        raise RubricError(name, None, "no such file") from None
    except UnicodeDecodeError as e:
        raise RubricError(name, None, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise RubricError(name, None, f"cannot read: {e.strerror or e}") from None
    return parse_rubric(text, name)


def parse_rubric(text: str, file: str = "rubric.toml") -> Rubric:
    """Validate the TOML ``text`` of a rubric; ``file`` names it in errors."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = _TOML_POS_RE.search(msg)
        line = int(m.group(1)) if m else None
        raise RubricError(file, line, f"not valid TOML: {_TOML_POS_RE.sub('', msg)}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise RubricError(file, None, "not valid TOML: nested too deeply") from None
    except ValueError as e:  # an integer of more than 4,300 digits (Python's limit)
        from reviewer.config import toml_value_error

        raise RubricError(file, None, f"not valid TOML: {toml_value_error(e)}") from None
    lines = _Lines(text)

    def err(reason: str, line: int | None = None) -> RubricError:
        return RubricError(file, line, reason)

    for key in data:
        if key not in _TOP_KEYS:
            raise err(
                f"unknown setting {key!r}; known: {', '.join(sorted(_TOP_KEYS))}",
                lines.top(key),
            )
    name = data.get("name")
    if name is None:
        raise err("missing 'name' (e.g. name = \"support-policy\")")
    if not isinstance(name, str) or not name.strip() or "@" in name:
        raise err("name must be a non-empty string without '@'", lines.top("name"))
    version = data.get("version")
    if version is None:
        raise err("missing 'version' (e.g. version = \"1\"; bump it when the rubric changes)")
    if isinstance(version, bool) or not isinstance(version, str | int) or not str(version).strip():
        raise err("version must be a non-empty string or a whole number", lines.top("version"))
    pass_rule = data.get("pass_rule", "all")
    if pass_rule not in PASS_RULES:
        rules = "; ".join(f'"{k}" ({v})' for k, v in PASS_RULES.items())
        raise err(f"pass_rule must be {rules}, got {pass_rule!r}", lines.top("pass_rule"))
    description = data.get("description", "")
    if not isinstance(description, str):
        raise err("description must be a string", lines.top("description"))
    raw = data.get("criteria")
    if raw is None:
        raise err("missing 'criteria': add at least one [[criteria]] table")
    if not isinstance(raw, list) or not all(isinstance(c, dict) for c in raw):
        raise err("criteria must be an array of tables ([[criteria]])", lines.top("criteria"))
    if not raw:
        raise err("criteria is empty: add at least one [[criteria]] table", lines.top("criteria"))
    criteria = _criteria(raw, lines, err)
    categories = _categories(data.get("categories", []), lines.top("categories"), err)
    return Rubric(
        name=name.strip(),
        version=str(version).strip(),
        criteria=criteria,
        pass_rule=pass_rule,
        categories=categories,
    )


def _categories(
    raw: Any, line: int | None, err: Callable[[str, int | None], RubricError]
) -> list[str]:
    """The failure categories a fail can be tagged with: distinct one-line strings."""
    from reviewer.labeling.tags import MAX_CATEGORIES, MAX_TAG

    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise err('categories must be a list of strings, e.g. categories = ["wrong_refund"]', line)
    if len(raw) > MAX_CATEGORIES:
        raise err(f"categories: at most {MAX_CATEGORIES}, not {len(raw)}", line)
    out: list[str] = []
    seen: dict[str, str] = {}
    for c in raw:
        cat = " ".join(c.split())
        if not cat:
            raise err("categories: a category must not be empty", line)
        if len(cat) > MAX_TAG or not cat.isprintable():
            raise err(
                f"categories: {cat[:40]!r} must be printable, {MAX_TAG} characters at most", line
            )
        if cat.casefold() in seen:
            raise err(f"categories: {cat!r} is listed twice", line)
        seen[cat.casefold()] = cat
        out.append(cat)
    return out


def _criteria(
    raw: list[dict[str, Any]], lines: _Lines, err: Callable[[str, int | None], RubricError]
) -> list[Criterion]:
    out: list[Criterion] = []
    id_lines: dict[str, int | None] = {}
    key_owner: dict[str, str] = {}
    pending_keys: list[tuple[int, Criterion]] = []
    for i, c in enumerate(raw):
        cid = c.get("id")
        label = f"criterion {cid!r}" if isinstance(cid, str) and cid else f"criterion {i + 1}"
        for key in c:
            if key not in _CRITERION_KEYS:
                raise err(
                    f"{label}: unknown field {key!r}; known: {', '.join(sorted(_CRITERION_KEYS))}",
                    lines.field(i, key),
                )
        if cid is None:
            raise err(f"{label}: missing 'id'", lines.header(i))
        if not isinstance(cid, str) or not _ID_RE.match(cid):
            raise err(
                f"{label}: id must be letters, digits, '_', '.' or '-' (no spaces)",
                lines.field(i, "id"),
            )
        if cid in id_lines:
            where = f" at line {id_lines[cid]}" if id_lines[cid] else ""
            raise err(f"{label}: id is already used{where}", lines.field(i, "id"))
        id_lines[cid] = lines.field(i, "id")
        question = c.get("question")
        if not isinstance(question, str) or not question.strip():
            raise err(f"{label}: question must be a non-empty string", lines.field(i, "question"))
        help_text = c.get("help", "")
        if not isinstance(help_text, str):
            raise err(f"{label}: help must be a string", lines.field(i, "help"))
        crit = Criterion(id=cid, question=question.strip(), help=help_text.strip())
        if "key" not in c:
            pending_keys.append((i, crit))
        else:
            key = c["key"]
            if isinstance(key, int) and not isinstance(key, bool) and 0 <= key <= 9:
                key = str(key)
            if not isinstance(key, str) or len(key) != 1 or not key.isprintable():
                raise err(
                    f'{label}: key must be one character, e.g. key = "1"', lines.field(i, "key")
                )
            if key in _RESERVED_CHARS or key.lower() in _RESERVED_CHARS:
                raise err(
                    f"{label}: key {key!r} is a fixed labeling key "
                    f"(reserved: {' '.join(RESERVED_KEYS)}; digits are free for criteria)",
                    lines.field(i, "key"),
                )
            if key in key_owner:
                raise err(
                    f"{label}: key {key!r} is already used by {key_owner[key]!r}",
                    lines.field(i, "key"),
                )
            key_owner[key] = cid
            crit.key = key
        out.append(crit)
    free = [d for d in "1234567890" if d not in key_owner]
    for i, crit in pending_keys:
        if not free:
            raise err(
                f"criterion {crit.id!r}: no key given and every digit is taken; give it a key",
                lines.header(i),
            )
        crit.key = free.pop(0)
    return out


def verdict_from_criteria(rubric: Rubric, criteria: Mapping[str, bool | None]) -> str | None:
    """The verdict the answers imply: with pass_rule "all", any no -> fail, every yes -> pass.

    None while the answers do not decide it yet, and always for pass_rule "overall".
    """
    if rubric.pass_rule != "all" or not rubric.criteria:
        return None
    answers = [criteria.get(c.id) for c in rubric.criteria]
    if any(a is False for a in answers):
        return "fail"
    if all(a is True for a in answers):
        return "pass"
    return None


def contradiction(
    rubric: Rubric | None, criteria: Mapping[str, bool | None], verdict: str
) -> str | None:
    """Why ``verdict`` goes against the rubric's pass rule, or None when it does not.

    "criterion 3 is no: the rubric says fail" for a pass with a no answer under pass_rule "all";
    "every criterion is yes: the rubric says pass" for a fail with every answer yes.
    """
    if rubric is None or verdict not in ("pass", "fail"):
        return None
    implied = verdict_from_criteria(rubric, criteria)
    if implied is None or implied == verdict:
        return None
    if implied == "pass":
        return "every criterion is yes: the rubric says pass"
    no = [c.key or c.id for c in rubric.criteria if criteria.get(c.id) is False]
    which = f"criterion {no[0]} is" if len(no) == 1 else f"criteria {', '.join(no)} are"
    return f"{which} no: the rubric says fail"


def criterion_for_key(rubric: Rubric, key: str) -> Criterion | None:
    return next((c for c in rubric.criteria if c.key == key), None)


class _Lines:
    """Where keys sit in the TOML text (tomllib gives values, not positions)."""

    def __init__(self, text: str) -> None:
        self._top: dict[str, int] = {}
        self._headers: list[int] = []
        self._fields: dict[tuple[int, str], int] = {}
        section: str | None = None
        in_multiline: str | None = None
        for no, line in enumerate(text.splitlines(), 1):
            if in_multiline:
                if line.count(in_multiline) % 2 == 1:
                    in_multiline = None
                continue
            header = _HEADER_RE.match(line)
            if header:
                section = header.group(2).strip().strip("\"'")
                self._top.setdefault(section.split(".")[0], no)
                if header.group(1) == "[[" and section == "criteria":
                    self._headers.append(no)
                continue
            key = _KEY_RE.match(line)
            if key:
                name = key.group(1).strip("\"'")
                if section is None:
                    self._top.setdefault(name, no)
                elif section == "criteria" and self._headers:
                    self._fields.setdefault((len(self._headers) - 1, name), no)
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    in_multiline = quote
                    break

    def top(self, key: str) -> int | None:
        return self._top.get(key)

    def header(self, index: int) -> int | None:
        return self._headers[index] if index < len(self._headers) else self._top.get("criteria")

    def field(self, index: int, key: str) -> int | None:
        return self._fields.get((index, key)) or self.header(index)
