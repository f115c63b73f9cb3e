"""The search text as a PostgreSQL tsquery (search_query.ts_query): its shape, and on a PostgreSQL
server (the run's, or one started for the session) that PostgreSQL accepts whatever a user types
and that it finds the trials FTS5 finds."""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from reviewer.store.postgres import make_test_database
from reviewer.store.search_query import (
    MAX_DEPTH,
    MAX_TEXT,
    NOTHING,
    SearchError,
    TsQuery,
    match_query,
    ts_query,
)
from reviewer.store.search_text import (
    MAX_LITERAL,
    MAX_PLACE,
    MAX_PLACES,
    MAX_WORD_BYTES,
    index_words,
    tsvector_literal,
)


def tsq(text: str) -> str:
    q = ts_query(text, system=True)
    assert q is not None
    return q.query


# ---- shape ------------------------------------------------------------------------------------------


def test_words_are_quoted_lexemes_anded() -> None:
    assert tsq("refund") == "'refund'"
    assert tsq("refund card") == "( 'refund' & 'card' )"
    # split and lower-cased as the indexed text is (SQLite's unicode61 rule): runs of letters
    # and digits
    assert tsq("order#W5521 status:pending") == (
        "( ( 'order' <-> 'w5521' ) & ( 'status' <-> 'pending' ) )"
    )
    assert tsq("and or not") == "( 'and' & 'or' & 'not' )"


def test_phrases_and_prefixes() -> None:
    assert tsq('"partial refund"') == "( 'partial' <-> 'refund' )"
    assert tsq("refun*") == "'refun':*"
    assert tsq("refun *") == "'refun':*"
    assert tsq('"partial ref"*') == "( 'partial' <-> 'ref':* )"
    assert tsq('"partial !!"*') == "'partial':*"  # the last word with letters is the prefix
    assert tsq("^refund") == "'refund'"  # no column start in PostgreSQL: anywhere


def test_operators_and_parentheses() -> None:
    assert tsq("card OR exchange") == "( 'card' | 'exchange' )"
    assert tsq("refund NOT partial") == "( 'refund' & !'partial' )"
    assert tsq("a NOT b NOT c") == "( 'a' & !'b' & !'c' )"
    assert tsq("(a OR b) NOT c:d") == "( ( 'a' | 'b' ) & !( 'c' <-> 'd' ) )"
    assert tsq("x NOT (y OR z)") == "( 'x' & !( 'y' | 'z' ) )"
    # FTS5's precedence: side by side binds tightest, then NOT, AND, OR
    assert tsq("a OR b c") == "( 'a' | ( 'b' & 'c' ) )"
    assert tsq("a OR b AND c NOT d") == "( 'a' | ( 'b' & ( 'c' & !'d' ) ) )"
    assert tsq('a NOT "b c"') == "( 'a' & !( 'b' <-> 'c' ) )"


def test_near() -> None:
    assert tsq("NEAR(a b, 1)") == "( 'a' <1> 'b' | 'b' <1> 'a' | 'a' <2> 'b' | 'b' <2> 'a' )"
    assert tsq("NEAR(a b)").count("<") == 2 * 11  # FTS5's default distance, 10
    assert tsq("NEAR(a b c, 2)") == "( 'a' & 'b' & 'c' )"
    assert tsq("NEAR(a b, 99)") == "( 'a' & 'b' )"
    assert tsq("NEAR(a a, 3)") == "'a'"
    assert tsq("NEAR(a)") == "'a'"
    assert tsq('NEAR("a b" c, 0)') == "( ( 'a' <-> 'b' ) <1> 'c' | 'c' <1> ( 'a' <-> 'b' ) )"


def test_phrases_without_words() -> None:
    assert tsq('a "!!"') == "'a'"  # side by side, left out (as FTS5 does)
    assert tsq('a OR "!!"') == "'a'"
    assert tsq('a NOT "!!"') == "'a'"
    assert tsq('a AND "!!"') == NOTHING  # matches nothing, as in FTS5
    assert tsq('"!!" OR "??"') == NOTHING


def test_system_and_blank() -> None:
    assert ts_query("refund") == TsQuery("'refund'", False)
    assert ts_query("refund", system=True) == TsQuery("'refund'", True)
    assert ts_query("") is None and ts_query("  \t") is None


def test_quotes_backslashes_and_unsendable_characters() -> None:
    assert tsq("it's") == "( 'it' <-> 's' )"
    assert tsq("a\\b") == "( 'a' <-> 'b' )"
    assert tsq("x'\\'y") == "( 'x' <-> 'y' )"
    assert tsq("ab\ud800cd") == "( 'ab' <-> 'cd' )"  # a lone surrogate separates, as NUL does
    assert tsq("ab\x00cd") == "( 'ab' <-> 'cd' )"
    assert tsq("\udfff x") == "'x'"


@pytest.mark.parametrize("text", [":", "*", "^", "!!", "(", "))", '"', "\ud800", "\x00", "'"])
def test_nothing_to_search_is_the_fts5_error(text: str) -> None:
    with pytest.raises(SearchError, match="nothing to search"):
        ts_query(text)
    with pytest.raises(SearchError, match="nothing to search"):
        match_query(text)


@pytest.mark.parametrize(
    "text",
    [
        "refund AND",
        "NOT refund",
        "(refund OR card",
        "a AND NOT b",
        "a OR OR b",
        "(a OR b) c",
        "a (b OR c)",
        "NEAR()",
        "NEAR(a b, x)",
        "NEAR(a b,)",
        "a* *",
        "a OR *",
        "(a OR b) *",
    ],
)
def test_what_fts5_rejects_is_a_search_error(text: str) -> None:
    with pytest.raises(SearchError, match="invalid search"):
        ts_query(text)


def test_limits() -> None:
    deep = "(" * MAX_DEPTH + "a OR b" + ")" * MAX_DEPTH
    assert tsq(deep) == "( 'a' | 'b' )"
    with pytest.raises(SearchError, match="parentheses"):
        ts_query("(" + deep + ")")
    assert ts_query("w " * (MAX_TEXT // 2)) is not None
    with pytest.raises(SearchError, match="at most"):
        ts_query("w " * (MAX_TEXT // 2) + "w")
    # SQLite's search takes the same limit: one search, one answer on both (found by an attack)
    assert match_query("w " * (MAX_TEXT // 2)) is not None
    with pytest.raises(SearchError, match="a search of 4001 characters: at most 4000"):
        match_query("w " * (MAX_TEXT // 2) + "w")


# ---- on PostgreSQL ------------------------------------------------------------------------------------

HOSTILE = [
    "'",
    "''",
    "'a'",
    "a'b",
    "\\",
    "a\\",
    "\\'",
    "'\\'",
    "a:b:c",
    "a:*",
    "a:A",
    "a:*B",
    "!a",
    "!!a",
    "a & b",
    "a|b",
    "a <-> b",
    "a <2> b",
    "<1>",
    "<->",
    "<99999>",
    "a <16385> b",
    "&|!<>():*",
    "(a",
    "a)",
    "'a' & 'b'",
    "'a'::tsquery",
    "<b>bold</b>",
    "<script>alert(1)</script>",
    "[red]x[/]",
    "\ud800",
    "a\ud800b",
    "\udfff\ud800",
    "a\x00b",
    "\x01\x02\x1f",
    "tab\there\nnew line",
    "https://example.com/a?b=c&d=e",
    "x@y.org",
    "foo-bar-baz",
    "3.14 -1 1e10",
    "日本語 テキスト",
    "İstanbul straße ǅ",
    "emoji \U0001f600 here",
    "soft\u00adhyphen zero\u200bwidth",
    '"unclosed phrase',
    '"a" "b"*',
    "NEAR(a b, 99999999999999999999999)",
    "NEAR(' \\, 2)",
    "a" * 3000,
    "-".join(["ab"] * 1300),
    " OR ".join(f"w{i}" for i in range(MAX_TEXT // 6)),
    "(" * MAX_DEPTH + "'" + ")" * MAX_DEPTH,
]

FUZZ_ALPHABET = [
    *"\"'\\:!&|<>()*^+,-_.#@/ \t\n$%;=?[]{}~`",
    *("AND", "OR", "NOT", "NEAR(", "NEAR", "a", "B", "1", "42", "é", "日本", "\ud800", "\x00"),
    *("<b>", "http://x.y/z", "a.b", "x-y", "\u00ad", "ß", "²", "\U0001f600"),
]


@pytest.fixture
def pg(pg_server_url: str) -> Iterator[Any]:
    """A database of the PostgreSQL server (started for the session when the run has none),
    holding reviewer's schema and functions."""
    import psycopg

    url = make_test_database(pg_server_url, "search_query_checks")
    with psycopg.connect(url, autocommit=True) as conn:
        yield conn


def accepted(pg: Any, query: str) -> str:
    return str(pg.execute("SELECT CAST(%s AS tsquery)::text", [query]).fetchone()[0])


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_a_valid_tsquery(pg: Any, text: str) -> None:
    try:
        q = ts_query(text)
    except SearchError:
        return
    assert q is not None
    accepted(pg, q.query)


def test_random_text_is_a_valid_tsquery(pg: Any) -> None:
    rnd = random.Random(5)
    for _ in range(2000):
        text = "".join(rnd.choice(FUZZ_ALPHABET) for _ in range(rnd.randint(1, 25)))
        try:
            q = ts_query(text)
        except SearchError:
            continue
        if q is not None:
            accepted(pg, q.query)


def test_words_are_split_as_the_indexed_text_is(pg: Any) -> None:
    """A search's words are split as the indexed text's were (search_text.index_words), so
    what a text holds is found whatever separates its words."""
    texts = {
        "order#W5521 please": "order#W5521",
        "status:pending": "status:pending",
        "see https://example.com/a/b now": "example.com",
        "a foo-bar thing": "foo-bar",
        "cancel_order": "cancel_order",
        "ÜBER straße": "über STRASSE ÜBER",
        'say "AND(" then': "AND(",
        "it's done": "it's",
        "v1.2.3 released": "v1.2*",
    }
    for doc, search in texts.items():
        q = ts_query(search)
        assert q is not None
        row = pg.execute(
            "SELECT CAST(%s AS tsvector) @@ CAST(%s AS tsquery)", [tsvector_literal(doc), q.query]
        ).fetchone()
        assert row[0] is (search != "über STRASSE ÜBER"), (doc, search, q.query)


def _random_search(rnd: random.Random, vocab: list[str], depth: int = 0) -> str:
    r = rnd.random()
    if depth > 2 or r < 0.35:
        words = []
        for _ in range(rnd.randint(1, 2)):
            w, k = rnd.choice([*vocab, "zzz"]), rnd.random()
            if k < 0.15:
                w = w[:2] + "*"
            elif k < 0.2:
                w = f'"{w} {rnd.choice(vocab)}"'
            elif k < 0.25:
                w = "!!"
            elif k < 0.3:
                w = f"{w.upper()}:{rnd.choice(vocab)}"
            words.append(w)
        return " ".join(words)
    if r < 0.5:
        return "(" + _random_search(rnd, vocab, depth + 1) + ")"
    if r < 0.6:
        n = rnd.choice(["", ", 0", ", 1", ", 3"])
        return "NEAR(" + " ".join(rnd.choice(vocab) for _ in range(rnd.randint(1, 2))) + n + ")"
    op = rnd.choice(["AND", "OR", "NOT"])
    return f"{_random_search(rnd, vocab, depth + 1)} {op} {_random_search(rnd, vocab, depth + 1)}"


def test_finds_what_fts5_finds(pg: Any) -> None:
    """The same searches over the same texts: FTS5's MATCH and PostgreSQL's @@ find the same rows,
    and reject the same searches (NEAR of three phrases, an AND on PostgreSQL, is left out)."""
    rnd = random.Random(11)
    vocab = ["apple", "apply", "bear", "beard", "cat", "Dog", "egg", "fig", "go", "x1", "42"]
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE VIRTUAL TABLE f USING fts5(text, content='', tokenize='unicode61')")
    pg.execute("CREATE TEMP TABLE docs (id INT, v TSVECTOR)")
    for i in range(1, 200):
        doc = " ".join(rnd.choice(vocab) for _ in range(rnd.randint(1, 8)))
        lite.execute("INSERT INTO f (rowid, text) VALUES (?, ?)", [i, doc])
        pg.execute("INSERT INTO docs VALUES (%s, CAST(%s AS tsvector))", [i, tsvector_literal(doc)])
    compared = 0
    for _ in range(1500):
        text = _random_search(rnd, vocab)
        fts5: set[int] | str
        try:
            m = match_query(text, system=True)
            fts5 = {r[0] for r in lite.execute("SELECT rowid FROM f WHERE f MATCH ?", [m])}
        except (SearchError, sqlite3.OperationalError):
            fts5 = "error"
        postgres: set[int] | str
        try:
            q = ts_query(text)
            assert q is not None
            found = pg.execute("SELECT id FROM docs WHERE v @@ CAST(%s AS tsquery)", [q.query])
            postgres = {r[0] for r in found}
        except SearchError:
            postgres = "error"
        if re.search(r"NEAR\(\w+ \w+ \w+", text):
            continue
        assert fts5 == postgres, text
        compared += 1
    assert compared > 1000


def _grouped(text: str) -> str:
    """A tsvector literal the plain way: each word once, with its places (the first 256)."""
    places: dict[str, list[int]] = {}
    for i, word in enumerate(index_words(text), 1):
        places.setdefault(word, []).append(min(i, MAX_PLACE))
    return " ".join(
        f"'{w}':{','.join(map(str, sorted(set(at))[:MAX_PLACES]))}"
        for w, at in places.items()
        if len(w.encode()) <= MAX_WORD_BYTES
    )


def test_a_texts_literal_is_the_tsvector_of_its_words_and_places(pg: Any) -> None:
    """What the server stores of tsvector_literal's literal is what the plain grouped literal
    gives (256 places a word, 16383 the last place, a long text's literal within its limit), and
    a word too long for a tsvector (2047 bytes) is left out instead of failing the row."""
    rnd = random.Random(5)
    vocab = ["order", "Refund", "ÉTÉ", "été", "naïve", "日本語", "x1", "42", "foo_bar", "it's"]
    texts = ["", "!!", " ".join(["same"] * 300 + ["other"] * 3), "x " * 17_000]
    texts += [" ".join(rnd.choice(vocab) for _ in range(rnd.randint(0, 600))) for _ in range(300)]
    # past the last place, with words seen before it and words first seen after it
    texts += [" ".join(rnd.choice(vocab) for _ in range(16_500)) + " late same late"]
    texts += ["日本 " * 9_000 + "x" * 600]  # a long word in text of other alphabets
    texts += ["a " + "b" * 2046 + " c", "a " + "b" * 2047 + " c", "é" * 600 + " d"]
    assert tsvector_literal("a b a") == "'a':1,3 'b':2"
    for text in texts:
        mine, plain = tsvector_literal(text), _grouped(text)
        row = pg.execute(
            "SELECT CAST(%s AS tsvector)::text, CAST(%s AS tsvector)::text", [mine, plain]
        ).fetchone()
        assert row[0] == row[1], text[:60]
    stored = pg.execute("SELECT CAST(%s AS tsvector)::text", [tsvector_literal(texts[-2])])
    assert stored.fetchone()[0] == "'a':1 'c':3"


def test_a_long_text_of_many_byte_words_stays_under_the_tsvector_limit(pg: Any) -> None:
    """PostgreSQL counts a tsvector's words in bytes (at most 1 MB): long texts of three- and
    four-byte characters, under the limit in characters and over it in bytes, were refused, and
    the whole import with them; their literal keeps the first words up to MAX_LITERAL bytes, so
    that two such texts joined (a search of the system prompt too) fit as well."""
    rnd = random.Random(3)
    han = [chr(rnd.randint(0x4E00, 0x9FFF)) for _ in range(20_000)]
    four = [chr(rnd.randint(0x20000, 0x2A6DF)) for _ in range(50_000)]
    texts = [
        " ".join("".join(rnd.choices(han, k=29)) for _ in range(13_500)),  # 403k chars, 1.2 MB
        " ".join("".join(rnd.choices(four, k=7)) for _ in range(37_000)),  # 296k chars, 1.2 MB
        "a" * 200 + " " + "b" * 250_000,  # ASCII, one word past the limit: left out
    ]
    for text in texts:
        literal = tsvector_literal(text)
        words = pg.execute(
            "SELECT length(CAST(%s AS tsvector)), octet_length(array_to_string("
            "tsvector_to_array(CAST(%s AS tsvector)), ''))",
            [literal, literal],
        ).fetchone()
        assert words[0] >= 1 and words[1] <= MAX_LITERAL, text[:20]
        first = index_words(text)[0]
        # the conversation's and the system prompt's, joined (--search-system), fit too
        joined = pg.execute(
            "SELECT length(CAST(%s AS tsvector) || CAST(%s AS tsvector))",
            [literal, tsvector_literal(texts[1])],
        )
        assert joined.fetchone()[0] >= 1
        assert pg.execute(
            "SELECT CAST(%s AS tsvector) @@ CAST(%s AS tsquery)", [literal, f"'{first}'"]
        ).fetchone()[0]


def test_the_literal_of_a_usual_text_is_the_plain_one_word_for_word() -> None:
    """The literal of a usual text is gathered by C loops over its words (tsvector_literal's first
    branch); it is, string for string, the literal the plain loop writes: the words in the order
    first seen, each with its places. Texts past that branch's bounds (a word of 257 places, a
    word of 512 characters) go the plain way and are written the same too."""
    rnd = random.Random(11)
    vocab = ["order", "Refund", "ÉTÉ", "été", "naïve", "日本語", "x1", "42", "foo_bar", "it's", "a"]
    texts = ["", "!!", "a b a", " ".join(["same"] * 256), " ".join(["same"] * 257 + ["x"])]
    texts += [" ".join(rnd.choice(vocab) for _ in range(rnd.randint(0, 900))) for _ in range(500)]
    texts += ["a " + "b" * 511 + " a", "a " + "b" * 512 + " a"]
    for text in texts:
        places: dict[str, list[int]] = {}
        for i, word in enumerate(index_words(text)[:MAX_PLACE], 1):
            places.setdefault(word, []).append(i)
        plain = " ".join(f"'{w}':{','.join(map(str, at[:MAX_PLACES]))}" for w, at in places.items())
        assert tsvector_literal(text) == plain, text[:60]
