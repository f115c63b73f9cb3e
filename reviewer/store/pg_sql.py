"""The store's SQL, written for SQLite, as PostgreSQL runs it.

Every statement in ``reviewer/store/`` is written once, in the SQL both databases share; the few
SQLite spellings PostgreSQL lacks are rewritten here, token by token (strings, quoted names and
comments are never touched), and each statement is rewritten once per process:

- ``?`` parameters become psycopg's ``%s`` (and a literal ``%`` is doubled);
- ``INSERT OR IGNORE`` becomes ``INSERT ... ON CONFLICT DO NOTHING``;
- ``IFNULL`` -> ``COALESCE``, ``char(n)`` -> ``chr(n)``, two-argument ``MAX``/``MIN`` ->
  ``GREATEST``/``LEAST``, ``CAST(x AS REAL)`` -> double precision, ``x IS ?`` -> ``IS NOT DISTINCT
  FROM``;
- ``LIKE`` -> ``ILIKE`` (SQLite's LIKE ignores ASCII case);
- every ``ORDER BY`` term gets SQLite's place for NULLs (first when ascending, last when
  descending; PostgreSQL's default is the other way round).

The SQLite functions PostgreSQL lacks (``json_valid``, ``json_extract``, ``json_each``,
``group_concat``, ``total``, ``SUM`` of a comparison) are created by ``schema_postgres.sql``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<str>'(?:[^']|'')*')
  | (?P<qid>"(?:[^"]|"")*")
  | (?P<comment>--[^\n]*)
  | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<num>[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)
  | (?P<space>\s+)
  | (?P<param>\?)
  | (?P<op>.)
    """,
    re.VERBOSE | re.DOTALL,
)

#: The key of each table the store writes with ``INSERT OR REPLACE``: PostgreSQL replaces a row
#: with ``ON CONFLICT (key) DO UPDATE`` (tests/store/test_pg_sql.py checks it against the schema).
REPLACED_KEYS = {
    "audit_fingerprints": ("seq",),
    "rubrics": ("ref",),
    "audit_runs": ("run",),
    "judge_cache": ("key",),
    "monitor_trials": ("trial_id",),
    "pairs": ("pair_id", "judge"),
}

# Before a lone 1 or 0 that SQLite reads as true or false (`WHERE 1`), and after one.
_BOOL_BEFORE = {"WHERE", "AND", "OR", "HAVING", "NOT"}
_BOOL_AFTER = {"AND", "OR", "GROUP", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", ")", ";", ""}

# What ends an ORDER BY list at its own depth.
_ORDER_END = {"LIMIT", "OFFSET", "UNION", "EXCEPT", "INTERSECT", "FOR", "WINDOW", "RETURNING", "ON"}


def _tokens(sql: str) -> list[list[str]]:
    return [[m.lastgroup or "op", m.group()] for m in _TOKEN.finditer(sql)]


def _next(toks: list[list[str]], i: int) -> int:
    """The index of the next token after I that is not space or a comment (len(toks) at the end)."""
    i += 1
    while i < len(toks) and toks[i][0] in ("space", "comment"):
        i += 1
    return i


def _close(toks: list[list[str]], i: int) -> int:
    """The index of the ')' that closes the '(' at I."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j][1] == "(":
            depth += 1
        elif toks[j][1] == ")":
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def _top_commas(toks: list[list[str]], start: int, end: int) -> int:
    depth, n = 0, 0
    for j in range(start, end):
        t = toks[j][1]
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
        elif t == "," and depth == 0:
            n += 1
    return n


#: Keys ordered by that are never NULL wherever they are read (identity and primary keys): ordering
#: by one gets no NULLS clause, so PostgreSQL reads an index in its order instead of sorting.
NEVER_NULL = frozenset({"seq", "id", "rowid", "position"})


def _order_terms(toks: list[list[str]], i: int) -> None:
    """Give each term of the ORDER BY list starting at I SQLite's NULL placement."""
    depth = 0
    j = i
    term_end: list[int] = []
    while j < len(toks):
        kind, text = toks[j]
        if text == "(":
            depth += 1
        elif text == ")":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (text == ";" or (kind == "word" and text.upper() in _ORDER_END)):
            break
        elif depth == 0 and text == ",":
            term_end.append(j)
        j += 1
    term_end.append(j)
    start = i
    for end in term_end:
        words = [t[1].upper() for t in toks[start:end] if t[0] == "word"]
        shape = "".join(t[1] for t in toks[start:end] if t[0] not in ("space", "comment"))
        column = re.fullmatch(r"(?:\w+\.)?(\w+?)(?:ASC|DESC)?", shape, re.IGNORECASE)
        if column is not None and column.group(1).lower() in NEVER_NULL:
            start = end + 1
            continue  # never NULL: no NULLS clause, so an index can give the order
        if "NULLS" not in words:
            last = end - 1
            while last > start and toks[last][0] in ("space", "comment"):
                last -= 1
            nulls = " NULLS LAST" if words and words[-1] == "DESC" else " NULLS FIRST"
            toks[last][1] += nulls
        start = end + 1


_NOT_ALIAS = {
    "WHERE",
    "GROUP",
    "ORDER",
    "LIMIT",
    "UNION",
    "EXCEPT",
    "INTERSECT",
    "ON",
    "JOIN",
    "LEFT",
    "INNER",
    "CROSS",
    "OFFSET",
    "HAVING",
    "WINDOW",
    "USING",
    "NATURAL",
}


def _alias_subqueries(toks: list[list[str]]) -> None:
    """Name each unnamed subquery in FROM or JOIN (PostgreSQL 15 requires a name; SQLite not)."""
    n = 0
    for i, (_kind, text) in enumerate(toks):
        if text != "(":
            continue
        before = i - 1
        while before >= 0 and toks[before][0] in ("space", "comment"):
            before -= 1
        if before < 0 or toks[before][1].upper() not in ("FROM", "JOIN"):
            continue
        inside = _next(toks, i)
        if inside >= len(toks) or toks[inside][1].upper() not in ("SELECT", "WITH", "VALUES"):
            continue
        end = _close(toks, i)
        after = _next(toks, end)
        word = toks[after][1].upper() if after < len(toks) else ""
        if after < len(toks) and toks[after][0] in ("word", "qid") and word not in _NOT_ALIAS:
            continue  # named already (`AS x` or `x`)
        n += 1
        toks[end][1] += f" AS _q{n}"


def _upsert(toks: list[list[str]], action: int) -> str:
    """The ON CONFLICT clause that makes ``INSERT OR REPLACE INTO table (columns)`` (its REPLACE
    at ACTION) replace the row with the same key."""
    into = _next(toks, action)
    table_at = _next(toks, into)
    table = toks[table_at][1].strip('"')
    key = REPLACED_KEYS.get(table)
    if key is None:
        raise ValueError(f"INSERT OR REPLACE INTO {table}: its key is not in REPLACED_KEYS")
    opened = _next(toks, table_at)
    columns = [
        t[1].strip('"') for t in toks[opened : _close(toks, opened)] if t[0] in ("word", "qid")
    ]
    sets = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
    return f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {sets}"


@functools.lru_cache(maxsize=4096)
def to_postgres(sql: str) -> str:
    """SQL written for SQLite, as PostgreSQL runs it (see the module's docstring)."""
    toks = _tokens(sql)
    ignore = False
    replace: str | None = None
    for i, (kind, text) in enumerate(toks):
        if kind == "num" and text in ("0", "1"):
            before = i - 1
            while before >= 0 and toks[before][0] in ("space", "comment"):
                before -= 1
            after = _next(toks, i)
            nxt_up = toks[after][1].upper() if after < len(toks) else ""
            if before >= 0 and toks[before][1].upper() in _BOOL_BEFORE and nxt_up in _BOOL_AFTER:
                toks[i][1] = "TRUE" if text == "1" else "FALSE"
        if kind == "num" and ("e" in text or "E" in text) and float(text) == float("inf"):
            toks[i][1] = "'Infinity'::float8"  # SQLite's spelling of infinity, 9e999
        if kind == "param":
            toks[i][1] = "%s"
        elif kind in ("str", "qid", "comment", "op") and "%" in text:
            toks[i][1] = text.replace("%", "%%")
        if kind != "word":
            continue
        up = text.upper()
        nxt = _next(toks, i)
        nxt_text = toks[nxt][1] if nxt < len(toks) else ""
        if up == "INSERT" and nxt_text.upper() == "OR":
            action = _next(toks, nxt)
            verb = toks[action][1].upper()
            if verb in ("IGNORE", "REPLACE"):
                if verb == "IGNORE":
                    ignore = True
                else:
                    replace = _upsert(toks, action)
                for k in range(i + 1, action + 1):
                    toks[k][1] = ""
        elif up == "IFNULL" and nxt_text == "(":
            toks[i][1] = "COALESCE"
        elif up == "CHAR" and nxt_text == "(":
            toks[i][1] = "chr"
        elif up in ("MAX", "MIN") and nxt_text == "(":
            if _top_commas(toks, nxt + 1, _close(toks, nxt)) >= 1:
                toks[i][1] = "GREATEST" if up == "MAX" else "LEAST"
        elif up == "LIKE":
            toks[i][1] = "ILIKE"
        elif up == "AS" and nxt_text.upper() == "REAL":
            toks[nxt][1] = "double precision"
        elif up == "IS":
            after = nxt
            negate = nxt_text.upper() == "NOT"
            if negate:
                after = _next(toks, nxt)
            if after < len(toks) and toks[after][0] == "param":
                toks[i][1] = "IS DISTINCT FROM" if negate else "IS NOT DISTINCT FROM"
                if negate:
                    toks[nxt][1] = ""
        elif up == "ORDER" and nxt_text.upper() == "BY":
            _order_terms(toks, _next(toks, nxt))
    _alias_subqueries(toks)
    out = "".join(t[1] for t in toks)
    if replace is not None:
        out = out.rstrip().rstrip(";").rstrip() + replace
    if ignore:
        body = out.rstrip().rstrip(";").rstrip()
        at = re.search(r"\bRETURNING\b", body, re.IGNORECASE)
        if at is None:
            out = body + " ON CONFLICT DO NOTHING"
        else:
            out = body[: at.start()] + "ON CONFLICT DO NOTHING " + body[at.start() :]
    return out


_BULK_INSERT = re.compile(
    r"\s*INSERT\s+(OR\s+IGNORE\s+)?INTO\s+([A-Za-z_][A-Za-z_0-9]*)\s*\(([A-Za-z_0-9,\s]+)\)\s*"
    r"VALUES\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*;?\s*",
    re.IGNORECASE,
)
_VALUE = re.compile(r"\s*(?:\?|([A-Za-z_][A-Za-z_0-9]*)\(\s*\?\s*\))\s*")


@dataclass(frozen=True)
class BulkInsert:
    """An insert of one row of parameters, each a plain ``?`` or a function of one (``f(?)``),
    maybe ``OR IGNORE``: many such rows go by COPY (several times faster on PostgreSQL)."""

    table: str
    columns: tuple[str, ...]
    functions: tuple[str | None, ...]  # per column: the function its parameter goes through
    ignore: bool

    @property
    def direct(self) -> bool:
        """Whether the rows can be copied straight into the table."""
        return not self.ignore and not any(self.functions)


@functools.lru_cache(maxsize=256)
def bulk_insert(sql: str) -> BulkInsert | None:
    """The BulkInsert SQL is, None when it is anything else (a conflict clause, an expression)."""
    m = _BULK_INSERT.fullmatch(sql)
    if m is None:
        return None
    columns = tuple(c.strip() for c in m.group(3).split(","))
    values = m.group(4).split(",")
    if len(values) != len(columns):
        return None
    functions: list[str | None] = []
    for value in values:
        v = _VALUE.fullmatch(value)
        if v is None:
            return None
        functions.append(v.group(1))
    return BulkInsert(m.group(2), columns, tuple(functions), bool(m.group(1)))
