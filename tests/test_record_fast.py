"""The C parser's path (``record.fast_loads``, msgspec): the same value as the standard library's
checked path for every text it takes, and every text it must not take (a value the store cannot
keep, a number it would change, JSON it does not read) left to that path, which names the problem."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.record import (
    _SLOW,
    FAST_MAX,
    MAX_DEPTH,
    decode_at,
    fast_loads,
    loads,
    loads_unchecked,
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


def same(a: Any, b: Any) -> bool:
    """Equal with the same types throughout (1 is not 1.0) and the same key order."""
    return json.dumps(a) == json.dumps(b)


@settings(max_examples=400, deadline=None)
@given(values, st.booleans())
def test_what_the_fast_path_takes_it_reads_as_the_checked_path_does(
    value: Any, ascii: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii)
    fast = fast_loads(text)
    checked, _, problem = decode_at(text, 0)
    if fast is _SLOW:
        return
    assert problem is None and same(fast, checked)
    assert same(fast_loads(text.encode("utf-8", "surrogatepass")), fast)


@pytest.mark.parametrize(
    "text",
    [
        "NaN",
        '{"x": Infinity}',
        "[-Infinity]",
        "[1e400]",
        f"[{2**63}]",
        f"[{-(2**63) - 1}]",
        f"[{2**64}]",
        f"[{2**64 + 1}]",
        "[" + "9" * 5000 + "]",
        '["\\ud800"]',
        '{"\\udc00": 1}',
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "[" * 1100 + "]" * 1100,
        '{"a": 1} x',
        "",
        '["\x00"]',
        "\ufeff[1]",
    ],
)
def test_a_text_the_store_cannot_keep_or_that_is_not_json_takes_the_named_path(text: str) -> None:
    assert fast_loads(text) is _SLOW
    with pytest.raises(ValueError):  # RecordError or json.JSONDecodeError, as before
        loads(text)


def test_the_deepest_nesting_allowed_and_the_numbers_at_the_edges_are_read_fast() -> None:
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert fast_loads(deep) is not _SLOW and loads(deep) == json.loads(deep)
    wide = "[" + ",".join(["[]"] * 5000) + "]"  # many containers, none deep: walked, kept
    assert same(fast_loads(wide), json.loads(wide))
    edges = f"[{2**63 - 1}, {-(2**63)}, 123456789012345678, -0, -0.0, 1.0, 1e5, 5e-324]"
    assert same(loads(edges), json.loads(edges))
    assert same(fast_loads("[123456789012345678]"), [123456789012345678])
    assert fast_loads("[1234567890123456789]") is _SLOW  # 19 digits: the checked path decides
    assert loads("[1234567890123456789]") == [1234567890123456789]


def test_loads_unchecked_keeps_what_json_problem_names_later() -> None:
    assert same(loads_unchecked('{"a": [1, 2.5, "x"]}'), {"a": [1, 2.5, "x"]})
    kept = loads_unchecked('[NaN, "\\ud800", ' + "9" * 30 + "]")
    assert kept[0] != kept[0] and kept[1] == "\ud800" and kept[2] == 2**63


def test_a_whole_document_takes_the_standard_librarys_path_with_the_same_value() -> None:
    big = json.dumps([{"id": i, "text": "x" * 100} for i in range(FAST_MAX // 100)])
    assert len(big) > FAST_MAX and fast_loads(big) is _SLOW
    assert same(loads(big), json.loads(big)) and same(loads_unchecked(big), json.loads(big))


def test_a_stored_record_written_by_hand_is_read_as_the_standard_library_reads_it() -> None:
    from reviewer.record import decode

    for text in ('{"messages": [], "reason": "\ud800"}', '{"messages": [], "reward": NaN}'):
        trial = decode(text, run="r", task_id="t", trial=1)
        assert trial.task_id == "t" and trial.messages == []
    assert (
        decode('{"messages": [], "reason": "\ud800"}', run="r", task_id="t", trial=1).reason
        == "\ud800"
    )


@settings(max_examples=300, deadline=None)
@given(values)
def test_a_record_written_in_c_holds_what_the_standard_library_would_write(value: Any) -> None:
    """``dumps`` (msgspec) writes the same JSON value as ``json.dumps(..., ensure_ascii=False,
    default=str)``: the same types, key order and text, whatever it holds (control characters,
    line separators, 64-bit edges, lone surrogates, which it leaves to the standard library)."""
    from reviewer.record import dumps

    text = dumps(value)
    assert isinstance(text, str)
    assert same(json.loads(text), json.loads(json.dumps(value, ensure_ascii=False, default=str)))


def test_what_json_has_no_type_for_is_written_as_text_and_a_lone_surrogate_kept() -> None:
    from reviewer.record import dumps

    class Odd:
        def __str__(self) -> str:
            return "odd"

    assert json.loads(dumps({"a": Odd(), "b": [1, "é\u2028"]})) == {"a": "odd", "b": [1, "é\u2028"]}
    assert dumps({"x": "\ud800"}) == '{"x": "\ud800"}'  # as json.dumps writes it


#: Values holding, here and there, what the store cannot keep: NaN, ±Infinity, integers past 64
#: bits, lone surrogates in text and in keys, and (wrapped below) nesting past MAX_DEPTH.
unfit_scalars = (
    scalars
    | st.sampled_from([float("nan"), float("inf"), -float("inf"), 2**63, -(2**63) - 1, 2**70])
    | st.sampled_from(["\ud800", "a\udfffb", "é\ud83d"])
)
unfit_values = st.recursive(
    unfit_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=4) | st.just("k\udc00"), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=600, deadline=None)
@given(unfit_values, st.integers(min_value=0, max_value=3))
def test_the_quick_walk_flags_exactly_what_the_naming_walk_names(value: Any, deep: int) -> None:
    """``json_problem`` passes a clean value after a walk without paths and names the field only
    when that walk found something: the two walks agree on every value, nested near the limit
    or not."""
    from reviewer.record import _named_problem, _suspect, json_problem

    if deep:
        for _ in range(MAX_DEPTH - 2 + deep):
            value = [value]
    if not isinstance(value, dict | list):
        value = [value]
    named = _named_problem(value)
    assert _suspect(value) == (named is not None)
    assert json_problem(value) == named


clean_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    clean_values,
    st.sampled_from(
        [float("nan"), float("inf"), -float("inf"), 2**63, -(2**63) - 1, 2**70, "\ud800", "é\udfff"]
    ),
    st.sampled_from(["value", "item", "key"]),
    st.integers(min_value=0, max_value=3),
)
def test_one_unfit_value_anywhere_in_a_clean_one_is_found_and_named(
    value: Any, bad: Any, place: str, depth: int
) -> None:
    """A clean value passes both walks; the same with one unfit scalar put in an object, an array
    or (text) a key, at some depth, is flagged by the quick walk and named by the other."""
    from reviewer.record import _named_problem, _suspect, json_problem

    clean = value if isinstance(value, dict | list) else [value]
    assert not _suspect(clean) and json_problem(clean) is None
    if place == "key" and not isinstance(bad, str):
        place = "value"
    holder: Any = {"k": bad} if place == "value" else [bad] if place == "item" else {bad: 1}
    for i in range(depth):
        holder = [clean, holder] if i % 2 else {"x": clean, "y": holder}
    named = _named_problem(holder)
    assert named is not None and _suspect(holder) and json_problem(holder) == named


@settings(max_examples=400, deadline=None)
@given(st.lists(unfit_values, min_size=1, max_size=4), st.booleans(), st.booleans())
def test_a_document_said_clean_holds_nothing_unfit_but_its_nesting(
    parts: list[Any], deep: bool, c_parser: bool
) -> None:
    """``loads_unchecked(text, clean)`` says a document is clean only when none of its parts holds
    what ``json_problem`` would name but nesting (an Inspect ``.json`` log's samples are then
    checked by ``depth_problem`` alone): NaN, ±Infinity and integers past 64 bits are seen as
    they are parsed, lone surrogates by their escapes, by the C parser's path or the other."""
    import reviewer.record as record
    from reviewer.record import depth_problem, json_problem

    if deep:
        nested: Any = parts[0]
        for _ in range(MAX_DEPTH + 1):
            nested = [nested]
        parts = [*parts, nested]
    text = json.dumps({"eval": {}, "samples": parts})  # escapes to ASCII, NaN written as NaN
    with pytest.MonkeyPatch.context() as mp:
        if not c_parser:
            mp.setattr(record, "FAST_MAX", 0)  # the standard library's path, as a big log takes
        clean: list[bool] = []
        doc = loads_unchecked(text, clean)
    assert len(clean) == 1
    unfit = [json_problem(p) for p in doc["samples"]]
    if clean[0]:
        assert unfit == [depth_problem(p) for p in doc["samples"]]
    else:  # said unclean: something in it is unfit (a surrogate's escape may also be quoted text)
        assert any(unfit) or "\\\\u" in text or "\\ud" in text.lower()


@pytest.mark.parametrize(
    "number", ["1e400", "-1e400", "1" + "0" * 400 + ".5", "2e308", "9" * 320 + "e0"]
)
def test_a_number_too_big_for_a_float_makes_a_document_unclean(number: str) -> None:
    """``float("1e400")`` is Infinity without a constant written: the document was said clean and
    its sample stored with the value changed (found by a review)."""
    import reviewer.record as record
    from reviewer.record import json_problem

    text = '{"samples": [{"ok": 1.5}, {"x": ' + number + "}]}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(record, "FAST_MAX", 0)  # the path a big document takes
        clean: list[bool] = []
        doc = loads_unchecked(text, clean)
    assert clean == [False]
    assert json_problem(doc["samples"][1]) is not None and json_problem(doc["samples"][0]) is None
