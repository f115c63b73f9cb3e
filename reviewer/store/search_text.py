"""What full-text search indexes of a trial (migration m011's two columns): the conversation, and
the system prompt apart, searched only when asked. Plain functions over a ``Trial``, the index's
two statements, and migration m021's indexing again (``reindex_arguments``)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict, deque
from typing import Any

from reviewer.models import Trial
from reviewer.record import decode, flat_args_json, tool_arguments

# A word of the index on PostgreSQL: letters and digits (SQLite's unicode61 tokenizer's token
# characters), lower-cased, diacritics taken off; anything else separates words.
_WORD = re.compile(r"[^\W_]+")
# the same for ASCII text: every byte but a letter or a digit is a space
_ASCII_SEPARATORS = bytes(c if c < 128 and chr(c).isalnum() else 32 for c in range(256))
#: tsvector's limits: places past 16383 are kept as 16383, 256 places per word, a word of at most
#: 2046 bytes ("word is too long (2047 bytes, max 2046 bytes)"), its words' bytes together under
#: 1 MB ("string is too long for tsvector", counting 2 bytes a place when two are joined): a long
#: text's words and places are kept to MAX_LITERAL bytes, so that a trial's two texts together
#: (``text || system``, a search of the system prompt too) stay under it
MAX_PLACE = 16383
MAX_PLACES = 256
MAX_WORD_BYTES = 2046
MAX_LITERAL = 500_000
#: a place in a literal, as text: the places of a text's words are looked up, not formatted
_PLACES = [str(i) for i in range(MAX_PLACE + 1)]

#: The statement that adds a trial's ``fts_row`` to the full-text index.
FTS_SQL = "INSERT INTO trials_fts (rowid, text, system) VALUES (?, ?, ?)"
#: What takes a trial's entry out of SQLite's index, which keeps no text of its own: the texts
#: the entry was made from.
FTS_DELETE_SQL = (
    "INSERT INTO trials_fts (trials_fts, rowid, text, system) VALUES ('delete', ?, ?, ?)"
)


def search_text(trial: Trial) -> str:
    """What full-text search sees of a trial's conversation: every message but the system prompt,
    tool call arguments, reason and error."""
    parts = [m.content for m in trial.messages if m.content and m.role != "system"]
    for m in trial.messages:
        for c in m.tool_calls:
            parts.append(c.name)
            if c.arguments:
                parts.append(arguments_text(c.arguments))
    if trial.reason:
        parts.append(trial.reason)
    if trial.error and trial.error.message:
        parts.append(trial.error.message)
    return "\n".join(parts)


def arguments_text(args: Any, *, ascii_only: bool = False) -> str:
    """A tool call's arguments as full-text search reads them: text as it is, else JSON with its
    text as written (``Zürich``, ``東京``: JSON's escapes to ASCII would make ``z u00fcrich`` of
    them, and search found nothing), escaped only where UTF-8 cannot hold it (a lone surrogate).
    ``ascii_only``: escaped to ASCII throughout, as versions before migration m021 indexed it."""
    if isinstance(args, str):
        return args
    flat = flat_args_json(args, ensure_ascii=ascii_only)
    text = flat if flat is not None else json.dumps(args, ensure_ascii=ascii_only)
    if not text.isascii():
        try:
            text.encode()
        except UnicodeEncodeError:
            return arguments_text(args, ascii_only=True)
    return text


def system_text(trial: Trial) -> str:
    """The system prompt(s) of a trial: searched only when asked (``search_system``)."""
    return "\n".join(m.content for m in trial.messages if m.content and m.role == "system")


def index_words(text: str) -> list[str]:
    """The words full-text search sees in TEXT on PostgreSQL, as SQLite's unicode61 tokenizer sees
    them: runs of letters and digits, lower-cased, without diacritics (é is e)."""
    if text.isascii():  # most text: a byte table is several times faster than the expression
        return text.encode().lower().translate(_ASCII_SEPARATORS).decode().split()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    return _WORD.findall(text.lower())


def tsvector_literal(text: str) -> str:
    """TEXT's words and their places as a PostgreSQL tsvector literal (``'word':1,5 'other':2``),
    within tsvector's limits: what the PostgreSQL index stores for a text (the same words search
    finds on SQLite, with the places phrase search needs)."""
    words = index_words(text)
    short = len(text) < MAX_LITERAL // 16 or (len(text) < MAX_LITERAL // 3 and text.isascii())
    if short and len(words) <= MAX_PLACE:
        # most texts: each word's places gathered and written by C loops (map over the words and
        # the places, already text), not a Python step per word: the same literal, 0.6x the time
        gathered: defaultdict[str, list[str]] = defaultdict(list)
        deque(map(list.append, map(gathered.__getitem__, words), _PLACES[1 : len(words) + 1]), 0)
        if not gathered:
            return ""
        if (
            max(map(len, gathered.values())) <= MAX_PLACES
            and max(map(len, gathered)) <= MAX_WORD_BYTES // 4
        ):
            return " ".join(map("'{}':{}".format, gathered, map(",".join, gathered.values())))
    places: dict[str, list[int]] = defaultdict(list)
    for i, word in enumerate(words[:MAX_PLACE], 1):
        places[word].append(i)
    for word in set(words[MAX_PLACE:]):  # PostgreSQL keeps a later place as the last one
        at = places[word]
        if not at or at[-1] != MAX_PLACE:
            at.append(MAX_PLACE)
    kept = (
        (word, at)
        for word, at in places.items()
        if len(word) <= MAX_WORD_BYTES // 4 or len(word.encode()) <= MAX_WORD_BYTES
    )
    if short:
        # under MAX_LITERAL as the server counts it: a word of n bytes read from n + 1 or more
        # takes at most n + 4 + 2 a place (lower-casing may lengthen a character, hence the
        # margin for other text)
        return " ".join(_entry(word, at[:MAX_PLACES]) for word, at in kept)
    out: list[str] = []
    size = 0
    for word, at in kept:  # as the server counts a tsvector's size: bytes, and 2 a place
        at = at[:MAX_PLACES]
        size += len(word.encode()) + 4 + 2 * len(at)
        if size > MAX_LITERAL:
            break
        out.append(_entry(word, at))
    return " ".join(out)


def _entry(word: str, places: list[int]) -> str:
    """A word of a tsvector literal with its places: ``'word':1,5``."""
    return f"'{word}':{','.join(map(str, places))}"


def search_texts(t: Trial, *, ascii_arguments: bool = False) -> tuple[str, str]:
    """The two columns of a trial's full-text entry, ``search_text`` and ``system_text`` made in
    one loop over its messages. ``ascii_arguments``: tool calls' arguments as versions before
    migration m021 indexed them (``arguments_text``)."""
    parts: list[str] = []
    system: list[str] = []
    called: list[str] = []
    for m in t.messages:
        content = m.content
        if content:
            (system if m.role == "system" else parts).append(content)
        tool_calls = m.tool_calls
        if tool_calls:
            for c in tool_calls:
                called.append(c.name)
                args = c.arguments
                if args:
                    called.append(arguments_text(args, ascii_only=ascii_arguments))
    parts += called
    if t.reason:
        parts.append(t.reason)
    if t.error and t.error.message:
        parts.append(t.error.message)
    return "\n".join(parts), "\n".join(system)


#: The trials whose stored record may hold text past ASCII, as itself or as a JSON escape: the
#: only ones whose index entry migration m021 may change.
_PAST_ASCII = {
    "sqlite": "(instr(record, '\\u') > 0 OR length(CAST(record AS BLOB)) <> length(record))",
    "postgres": "(strpos(record, '\\u') > 0 OR octet_length(record) <> char_length(record))",
}


def reindex_arguments(db: Any, page: int = 500) -> int:
    """Migration m021: index again each trial whose tool calls' arguments hold text past ASCII,
    now written as it is (``search_text.arguments_text``), in the caller's transaction. A page
    of trials at a time; returns how many entries changed. SQLite's index keeps no text of its
    own, so an entry is taken out with the text it was made from (the escaped one)."""
    changed = last = 0
    sql = (
        f"SELECT seq, run, task_id, trial, record FROM trials WHERE seq > ? AND "
        f"{_PAST_ASCII[db.dialect]} ORDER BY seq LIMIT {page}"
    )
    while rows := db.execute(sql, [last]).fetchall():
        last = rows[-1][0]
        for seq, run, task_id, trial_no, record in rows:
            try:
                arguments = tool_arguments(record)  # not the whole trial: most do not change
            except ValueError:
                continue  # a record no version could read was never indexed
            # an argument's entry changes when its text as written is past ASCII (escaped to
            # ASCII it is what was indexed)
            if not any(
                not arguments_text(a).isascii() for a in arguments if a and not isinstance(a, str)
            ):
                continue  # its text past ASCII is elsewhere: its entry stays
            trial = decode(record, run=run, task_id=task_id, trial=trial_no)
            text, system = search_texts(trial)
            old, _ = search_texts(trial, ascii_arguments=True)
            changed += 1
            if db.dialect == "sqlite":
                db.conn.execute(FTS_DELETE_SQL, [seq, old, system])
                db.conn.execute(FTS_SQL, [seq, text, system])
            else:
                db.conn.execute(
                    "UPDATE trials_fts SET text = CAST(? AS tsvector) WHERE rowid = ?",
                    [tsvector_literal(text), seq],
                )
    if changed:  # what a search counted before is out of date (trial_filter's cache key)
        db.execute("UPDATE data_edits SET n = n + 1 WHERE id = 1")
    return changed
