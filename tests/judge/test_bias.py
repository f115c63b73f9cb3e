"""Position-bias statistics: the MT-Bench categories, first-slot win rate, agreement with humans, the
swap rule, degenerate inputs, and LLMBar's published MT-Bench counts (fixture and corpus)."""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.ingest.pairs import read_pairs
from reviewer.judge.bias import (
    bias_report,
    classify,
    is_rating_judge,
    judge_bias,
    render_bias,
    surviving_winner,
    wilson_interval,
)
from reviewer.store import open_store
from tests.conftest import FIXTURES, real_data
from tests.fixtures.llmbar.convert import CORPUS, JUDGES, pair_lines

LLMBAR = FIXTURES / "llmbar"
FIXTURE = LLMBAR / "mtbench_pairs.jsonl"
GPT4, CHATGPT = JUDGES

#: LLMBar MT-Bench, Vanilla_NoRules: consistent, biased toward first, biased toward second, error.
EXPECTED = {GPT4: (174, 15, 11, 0), CHATGPT: (115, 83, 2, 0)}
#: LLMBar statistics.json: correct_False, correct_True, correct_both (all of 200).
EXPECTED_CORRECT = {GPT4: (159, 165, 149), CHATGPT: (140, 145, 100)}


@dataclass
class P:
    pair_id: str
    judge: str
    order_ab: str | None
    order_ba: str | None
    human: str | None = None


def pairs(*verdicts: tuple[str | None, str | None, str | None], judge: str = "j") -> list[P]:
    return [P(f"p{i}", judge, ab, ba, h) for i, (ab, ba, h) in enumerate(verdicts)]


def counts(report_judge: object) -> tuple[int, ...]:
    c = report_judge.counts  # type: ignore[attr-defined]
    return (c["consistent"], c["biased_first"], c["biased_second"], c["error"])


# --- categories ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ab", "ba", "category"),
    [
        ("a", "a", "consistent"),
        ("b", "b", "consistent"),
        ("tie", "tie", "consistent"),
        ("a", "b", "biased_first"),  # a wins shown first, b wins shown first
        ("b", "a", "biased_second"),
        # MT-Bench: a tie in one order only leans to the slot that won the other order
        ("a", "tie", "biased_first"),
        ("tie", "b", "biased_first"),
        ("b", "tie", "biased_second"),
        ("tie", "a", "biased_second"),
        (None, "a", "error"),
        ("a", None, "error"),
        (None, None, "error"),
        ("A", "a", "error"),  # not mapped back: not a verdict
    ],
)
def test_classify(ab: str | None, ba: str | None, category: str) -> None:
    assert classify(ab, ba) == category


def test_surviving_winner_keeps_only_wins_that_survive_the_swap() -> None:
    assert surviving_winner("a", "a") == "a"
    assert surviving_winner("b", "b") == "b"
    assert surviving_winner("tie", "tie") == "tie"
    assert surviving_winner("a", "b") == "tie"
    assert surviving_winner("a", "tie") == "tie"
    assert surviving_winner(None, "a") == "tie"


def test_wilson_interval() -> None:
    low, high = wilson_interval(0, 10)  # type: ignore[misc]
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(5, 10)  # type: ignore[misc]
    assert (low, high) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert wilson_interval(0, 0) is None


def test_counts_first_slot_and_aggregate() -> None:
    j = judge_bias(
        "j",
        pairs(
            ("a", "a", "a"),  # consistent, first wins AB, second wins BA
            ("a", "b", "b"),  # biased toward first: first wins both
            ("b", "a", "a"),  # biased toward second
            ("tie", "tie", "tie"),  # consistent tie
            ("a", "tie", "a"),  # a tie in one order only: biased toward first (MT-Bench)
            (None, "b", None),  # error
        ),
    )
    assert j.n == 6
    assert j.counts == {
        "consistent": 2,
        "biased_first": 2,
        "biased_second": 1,
        "error": 1,
    }
    assert j.pct("consistent") == pytest.approx(100 * 2 / 6)
    # single-order verdicts with a winner: AB a,a,b,a -> first wins 3; BA a,b,a,b -> first (b) wins 2
    assert (j.first_slot.wins, j.first_slot.decided) == (5, 8)
    assert (j.first_slot.ties, j.first_slot.errors) == (3, 1)
    assert j.first_slot.rate == pytest.approx(5 / 8)
    assert j.aggregate.a == 1 and j.aggregate.b == 0 and j.aggregate.tie == 5
    assert (j.aggregate.from_inconsistent, j.aggregate.from_error) == (3, 1)
    assert [p.category for p in j.inconsistent] == [
        "biased_first",
        "biased_second",
        "biased_first",
        "error",
    ]


def test_agreement_with_humans_per_order_and_on_the_consistent_subset() -> None:
    j = judge_bias(
        "j",
        pairs(
            ("a", "a", "a"),
            ("b", "b", "b"),
            ("a", "b", "b"),
            ("b", "b", "a"),
            (None, "a", "a"),
            ("a", "a", None),
        ),
    )
    scopes = {v.scope: v for v in j.vs_human}
    ab, ba = scopes["order AB"], scopes["order BA"]
    assert (ab.n, ab.correct, ab.left_out) == (4, 2, 1)  # the error in AB is left out
    assert (ba.n, ba.correct) == (5, 4)
    consistent = scopes["swap-consistent"]
    assert (consistent.n, consistent.correct) == (3, 2)  # (b, b) against human a is wrong
    assert consistent.left_out == 2  # the biased pair and the error
    assert consistent.kappa == pytest.approx(0.4) and consistent.band == "fair"
    surviving = scopes["swap-surviving"]
    assert surviving.n == 5  # every pair with a human preference, inconsistent ones as ties
    assert j.n_human == 5


@pytest.mark.parametrize(
    ("verdicts", "scope", "needle"),
    [
        ([("a", "a", None), ("b", "b", None)], "order AB", "no pair has a human preference"),
        ([(None, None, "a"), (None, None, "b")], "order AB", "no pair with a human preference"),
        ([("a", "a", "a")], "order AB", "at least 2 pairs"),
        ([("a", "a", "a"), ("a", "a", "a")], "order AB", "undefined"),
        ([("a", "a", "a"), ("a", "a", "b")], "order AB", "every judge winner is 'a'"),
    ],
)
def test_degenerate_cases_explain_and_never_give_nan(
    verdicts: list[tuple[str | None, str | None, str | None]], scope: str, needle: str
) -> None:
    report = bias_report(pairs(*verdicts))
    v = next(v for v in report.judges[0].vs_human if v.scope == scope)
    assert v.explanation is not None and needle in v.explanation
    json.dumps(report.to_dict(), allow_nan=False)
    assert "nan" not in render_bias(report).lower()


def test_no_pairs_and_a_judge_without_pairs() -> None:
    assert bias_report([]).judges == []
    assert "no pair judgements" in render_bias(bias_report([]))
    only_errors = bias_report(pairs((None, None, None)))
    assert only_errors.judges[0].first_slot.rate is None
    assert "n/a" in render_bias(only_errors)
    json.dumps(only_errors.to_dict(), allow_nan=False)
    assert "'x'" in (bias_report(pairs(("a", "a", None)), judge="x").explanation or "")


def test_render_is_an_mtbench_table_with_counts_and_percentages() -> None:
    text = render_bias(bias_report(pairs(("a", "a", "a"), ("a", "b", "a"), ("b", "a", "b"))))
    header = text.splitlines()[1]
    for column in (
        "consistent",
        "biased toward first",
        "biased toward second",
        "error",
    ):
        assert column in header
    assert "other inconsistent" not in header  # MT-Bench has no such column
    assert "1 (33.3%)" in text.splitlines()[2]
    assert "first-slot win rate" in text and "95% CI" in text
    assert "swap-surviving winners" in text


def test_judge_names_are_shown_literally() -> None:
    text = render_bias(bias_report(pairs(("a", "a", None), judge="evil\x1b[31m[red]x[/]")))
    assert "\x1b" not in text and "␛[31m[red]x[/]" in text


# --- LLMBar MT-Bench -----------------------------------------------------------------------------


def _report_of(records: list[object]) -> dict[str, object]:
    return {j.judge: j for j in bias_report(records).judges}  # type: ignore[arg-type]


def test_llmbar_fixture_gives_the_published_counts() -> None:
    records, skips = read_pairs(FIXTURE)
    assert not skips and len(records) == 400
    by_judge = _report_of(records)  # type: ignore[arg-type]
    for judge, expected in EXPECTED.items():
        j = by_judge[judge]
        assert j.n == 200  # type: ignore[attr-defined]
        assert counts(j) == expected


def test_llmbar_fixture_accuracy_matches_llmbar_statistics() -> None:
    records, _ = read_pairs(FIXTURE)
    for judge, (ab, ba, both) in EXPECTED_CORRECT.items():
        j = _report_of(records)[judge]  # type: ignore[arg-type]
        scopes = {v.scope: v for v in j.vs_human}  # type: ignore[attr-defined]
        assert (scopes["order AB"].correct, scopes["order AB"].n) == (ab, 200)
        assert (scopes["order BA"].correct, scopes["order BA"].n) == (ba, 200)
        assert scopes["swap-consistent"].correct == both
    gpt4 = {v.scope: v for v in _report_of(records)[GPT4].vs_human}  # type: ignore[attr-defined]
    # Cohen's kappa of judge vs the human label (not LLMBar's mis-encoded kappa_* fields)
    assert gpt4["order AB"].kappa == pytest.approx(0.5899, abs=1e-4)
    assert gpt4["order BA"].kappa == pytest.approx(0.6501, abs=1e-4)
    chatgpt = _report_of(records)[CHATGPT]
    assert (chatgpt.first_slot.wins, chatgpt.first_slot.decided) == (281, 400)  # type: ignore[attr-defined]


_WINNERS = {"1": "a", "2": "b", "": None}


@pytest.mark.parametrize(
    "source",
    real_data(LLMBAR / "llmbar_verdicts.csv", "judge", "llmbar", "Processed", "MT-Bench"),
)
def test_the_fixture_is_what_llmbar_says(source: Path) -> None:
    """The pairs fixture matches LLMBar: its verdict table here, and convert.py on the corpus there."""
    lines = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    if source.is_dir():
        assert lines == list(pair_lines(CORPUS))
        return
    with source.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["subset"] == "Processed/MT-Bench"]
    from_table = sorted(
        (
            r["evaluator"],
            f"mtb-{int(r['item']):03d}",
            _WINNERS[r["order1_winner"]],
            _WINNERS[r["order2_winner"]],
            _WINNERS[r["label"]],
        )
        for r in rows
        if r["evaluator"] in JUDGES
    )
    from_fixture = sorted(
        (p["judge"], p["pair_id"], p["order_ab"], p["order_ba"], p["human"]) for p in lines
    )
    assert len(from_fixture) == 400 and from_fixture == from_table


@pytest.mark.parametrize(
    "path", real_data(LLMBAR / "llmbar_verdicts.csv", "judge", "llmbar", "llmbar_verdicts.csv")
)
def test_llmbar_gives_the_published_counts(path: Path) -> None:
    rows: list[P] = []
    with path.open(encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            if r["subset"] == "Processed/MT-Bench" and r["evaluator"] in EXPECTED:
                rows.append(
                    P(
                        r["item"],
                        r["evaluator"],
                        _WINNERS[r["order1_winner"]],
                        _WINNERS[r["order2_winner"]],
                        _WINNERS[r["label"]],
                    )
                )
    by_judge = _report_of(rows)  # type: ignore[arg-type]
    for judge, expected in EXPECTED.items():
        assert counts(by_judge[judge]) == expected
    stats = json.loads(path.with_name("llmbar_statistics.json").read_text())
    for judge in EXPECTED:
        equal = stats[f"Processed/MT-Bench/evaluators/{judge}"]["equal"]
        assert equal.startswith(f"{EXPECTED[judge][0]} / 200")


# --- the command ---------------------------------------------------------------------------------


def _imported(tmp_path: Path) -> Path:
    db = tmp_path / "b.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "import", str(FIXTURE)])
    assert result.exit_code == 0, result.output
    return db


def test_bias_command_reports_the_fixture(tmp_path: Path) -> None:
    db = _imported(tmp_path)
    result = CliRunner().invoke(cli, ["--db", str(db), "bias"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    gpt4 = next(line for line in lines if line.startswith(GPT4))
    assert "174 (87.0%)" in gpt4 and "15 (7.5%)" in gpt4 and "11 (5.5%)" in gpt4
    chatgpt = next(line for line in lines if line.startswith(CHATGPT))
    assert "115 (57.5%)" in chatgpt and "83 (41.5%)" in chatgpt and "2 (1.0%)" in chatgpt
    assert "not consistent" in result.stderr


def test_bias_command_json_and_one_judge(tmp_path: Path) -> None:
    db = _imported(tmp_path)
    result = CliRunner().invoke(cli, ["--db", str(db), "bias", "--judge", CHATGPT, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (j,) = data["judges"]
    assert j["judge"] == CHATGPT
    assert {k: v["n"] for k, v in j["counts"].items()} == {
        "consistent": 115,
        "biased_first": 83,
        "biased_second": 2,
        "error": 0,
    }
    assert Counter(p["category"] for p in j["inconsistent"]) == {
        "biased_first": 83,
        "biased_second": 2,
    }
    first = next(p for p in j["inconsistent"] if p["category"] == "biased_first")
    assert (first["order_ab"], first["order_ba"]) == ("a", "b")
    assert j["first_slot"]["ci"][0] < j["first_slot"]["rate"] < j["first_slot"]["ci"][1]


def test_bias_command_errors(tmp_path: Path) -> None:
    open_store(tmp_path / "e.db").close()  # nothing in it (a missing database: its own line)
    empty = CliRunner().invoke(cli, ["--db", str(tmp_path / "e.db"), "bias"])
    assert empty.exit_code == 1 and "no pair judgements stored" in empty.stderr
    db = _imported(tmp_path)
    unknown = CliRunner().invoke(cli, ["--db", str(db), "bias", "--judge", "nope"])
    assert unknown.exit_code == 1 and GPT4 in unknown.stderr
    run = CliRunner().invoke(cli, ["--db", str(db), "bias", "--pairs", "5", "--seed", "1"])
    # the imported pairs' trials are not in this store, so there is nothing to sample
    assert run.exit_code == 1 and "no pairs to judge" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


# --- issue 18: the pair as the unit, MT-Bench ties, rating-based judges ---------------------------


def _split_judge(rng: object, n: int, first: float, second: float) -> list[object]:
    """A judge whose pairs are biased toward first with chance ``first``, toward second with
    ``second``, else consistent (a or b at random): the true first-slot rate is first + rest / 2."""
    import random

    assert isinstance(rng, random.Random)
    out = []
    for i in range(n):
        u = rng.random()
        if u < first:
            ab, ba = "a", "b"
        elif u < first + second:
            ab, ba = "b", "a"
        else:
            ab = ba = rng.choice("ab")
        out.append(P(f"p{i}", "j", ab, ba, None))
    return out


def test_first_slot_interval_with_the_pair_as_the_unit_keeps_its_coverage() -> None:
    # the defect: a judge split 45/45/10 got a Wilson interval over verdicts covering about 85%
    import random

    rng = random.Random(18)
    sims, n = 1500, 60
    truth = 0.45 + 0.10 / 2
    pair_hits = verdict_hits = 0
    for _ in range(sims):
        j = judge_bias("j", _split_judge(rng, n, 0.45, 0.45))  # type: ignore[arg-type]
        f = j.first_slot
        assert f.ci is not None and f.pairs == n
        pair_hits += f.ci[0] <= truth <= f.ci[1]
        naive = wilson_interval(f.wins, f.decided)
        assert naive is not None
        verdict_hits += naive[0] <= truth <= naive[1]
    assert pair_hits / sims >= 0.93
    assert verdict_hits / sims < 0.9  # what the old interval did


def test_a_consistent_judge_keeps_the_plain_wilson_interval() -> None:
    given = pairs(*[("a", "a", None)] * 10, *[("b", "b", None)] * 10)
    j = judge_bias("j", given)
    f = j.first_slot
    assert f.rate == 0.5 and f.ci == wilson_interval(20, 40)
    # every pair splits one win each: a design effect of 0, counted as 1, and the line says the
    # interval is over the 40 verdicts (it said "the 20 pairs as the unit", found by a review)
    assert f.design_effect == 0.0 and not f.design_effect_assumed
    text = render_bias(bias_report(given))
    assert (
        "95% CI 0.352 .. 0.648 (Wilson over the 40 verdicts: the pairs' design effect 0.00 is "
        "below 1, counted as 1)"
    ) in text


def test_a_judge_that_always_picks_the_first_slot_gets_the_pair_as_the_unit() -> None:
    # 20 pairs, each verdict for the answer shown first: 40 of 40 first-slot wins. Counted as 40
    # independent verdicts the interval would start at 0.912; the 20 pairs are the evidence.
    j = judge_bias("j", pairs(*[("a", "b", None)] * 20))
    f = j.first_slot
    assert (f.wins, f.decided, f.pairs, f.rate) == (40, 40, 20, 1.0)
    assert f.design_effect == 2.0 and f.design_effect_assumed
    assert f.ci == wilson_interval(20, 20)
    assert f.ci is not None and f.ci[0] == pytest.approx(20 / (20 + 1.959963984540054**2))
    text = "\n".join(render_bias(bias_report(pairs(*[("a", "b", None)] * 20))).splitlines())
    assert "(Wilson, the 20 pairs as the unit, design effect 2.00 assumed" in text
    # the same for a judge that always picks the second slot, and for a single pair
    last = judge_bias("j", pairs(*[("b", "a", None)] * 20)).first_slot
    assert last.rate == 0.0 and last.ci == wilson_interval(0, 20)
    one = judge_bias("j", pairs(("a", "a", None))).first_slot
    assert one.rate == 0.5 and one.ci == wilson_interval(0.5, 1) and one.design_effect_assumed
    # a rate strictly inside (0, 1) over several pairs keeps its measured design effect
    mixed = judge_bias("j", pairs(*[("a", "b", None)] * 5, ("a", "a", None))).first_slot
    assert not mixed.design_effect_assumed


def test_a_score_tie_of_a_rating_judge_is_a_tie_not_a_bias() -> None:
    assert is_rating_judge("GPT-4/Rating_NoRules") and is_rating_judge("ChatGPT/Rating")
    assert not is_rating_judge("GPT-4/Vanilla_NoRules") and not is_rating_judge("Rating")
    assert classify("b", "a", rating=True) == "consistent"
    assert classify("b", "a") == "biased_second"
    assert classify("a", "b", rating=True) == "biased_first"
    report = bias_report(
        [
            P("p1", "GPT-4/Rating", "b", "a", "a"),
            P("p2", "GPT-4/Rating", "a", "a", "a"),
            P("p1", "GPT-4/CoT", "b", "a", "a"),
        ]
    )
    rating, cot = {j.judge: j for j in report.judges}["GPT-4/Rating"], report.judges[0]
    assert rating.counts["consistent"] == 2 and rating.counts["biased_second"] == 0
    assert rating.aggregate.tie == 1 and rating.aggregate.a == 1
    assert cot.judge == "GPT-4/CoT" and cot.counts["biased_second"] == 1


@pytest.mark.parametrize(
    "path", real_data(LLMBAR / "llmbar_verdicts.csv", "judge", "llmbar", "llmbar_verdicts.csv")
)
def test_llmbar_rating_runs_have_no_score_ties_read_as_bias(path: Path) -> None:
    rows: list[P] = []
    with path.open(encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            if "/Rating" in r["evaluator"]:
                rows.append(
                    P(
                        f"{r['subset']}/{r['item']}",
                        f"{r['subset']}|{r['evaluator']}",
                        _WINNERS[r["order1_winner"]],
                        _WINNERS[r["order2_winner"]],
                        _WINNERS[r["label"]],
                    )
                )
    if not rows:
        pytest.skip("this file has no rating-based runs (the full corpus does)")
    assert len(rows) == 2933
    judges = bias_report(
        [P(p.pair_id, p.judge.split("|")[1], p.order_ab, p.order_ba, p.human) for p in rows]
    ).judges
    assert sum(j.counts["biased_second"] for j in judges) == 0  # was 714 score ties
    assert sum(j.counts["biased_first"] for j in judges) == 5
    # the 714 score ties are ties; the 5 pairs biased toward first become ties under the swap rule
    assert sum(j.aggregate.tie for j in judges) == 714 + 5
    assert sum(j.aggregate.from_inconsistent for j in judges) == 5


def test_the_first_slot_count_line_says_what_its_numbers_count() -> None:
    """'30 / 40 single-order verdicts with a winner; 0 ties and 0 errors left out' read as 30 of
    40 verdicts having a winner (and then where did the other 10 go?): 30 is how many of the 40
    picked the first slot."""
    consistent = [("a", "a", None)] * 10
    first = [("a", "b", None)] * 10
    text = render_bias(bias_report(pairs(*consistent, *first)))
    assert (
        "    30 of the 40 single-order verdicts with a winner picked the first slot; 0 ties and "
        "0 errors left out"
    ) in text.splitlines()


def test_a_judge_of_one_order_says_it_measures_no_position_bias(tmp_path: Path) -> None:
    """PandaLM's pairs hold each judge's verdict in order AB alone: the report gave a first-slot
    win rate of 0.491 with an interval, as if it measured the judge's position bias, and listed
    all 1,998 pair judgements as "not consistent" (found by a numbers review). With no verdict in
    the other order, the answer shown first is the one listed first: the report says so instead of
    a rate, and lists none; a judge with both orders beside it keeps its figures."""
    lines = [
        {"pair_id": f"p{i}", "a": f"x{i}", "b": f"y{i}", "judge": "one-way", "human": "a",
         "order_ab": "a" if i % 3 else "b", "order_ba": None}
        for i in range(30)
    ] + [
        {"pair_id": f"p{i}", "a": f"x{i}", "b": f"y{i}", "judge": "both", "human": "a",
         "order_ab": "a", "order_ba": "a" if i % 4 else None}
        for i in range(30)
    ]  # fmt: skip
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    db = str(tmp_path / "p.db")
    assert CliRunner().invoke(cli, ["--db", db, "import", str(path)]).exit_code == 0
    result = CliRunner().invoke(cli, ["--db", db, "bias"])
    assert result.exit_code == 0, result.output
    one_way = result.stdout.split("\none-way\n")[1]
    assert one_way.startswith("  no verdict in order BA: no pair was judged with its answers")
    assert "first-slot win rate: n/a (every verdict is in order AB" in one_way
    both = result.stdout.split("\nboth\n")[1].split("\none-way\n")[0]
    assert "first-slot win rate 0.5" in both and "no verdict in order" not in both
    assert "8 pair judgements not consistent" in result.stderr  # the 8 errors of "both" alone
    data = json.loads(CliRunner().invoke(cli, ["--db", db, "bias", "--json"]).stdout)
    by_judge = {j["judge"]: j for j in data["judges"]}
    assert by_judge["one-way"]["one_order"] == "AB" and by_judge["both"]["one_order"] is None
    assert by_judge["one-way"]["first_slot"]["rate"] is None
    assert by_judge["one-way"]["inconsistent"] == [] and len(by_judge["both"]["inconsistent"]) == 8
