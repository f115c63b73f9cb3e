"""`reviewer agreement` end to end: text and JSON on stdout, one-line errors, the trust threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.labels import add_label
from tests.conftest import sample_copy

IMPORTED = "claude-sonnet-4-5:support-policy@1"


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def labeled_db() -> str:
    """The sample runs with 40 labels by ana (the harness outcome) and 20 by bo."""
    sample_copy("s.db")
    db = open_store("s.db")
    try:
        rows = db.conn.execute("SELECT id, success FROM trials ORDER BY seq LIMIT 40").fetchall()
        for i, (tid, ok) in enumerate(rows):
            add_label(db, tid, "ana", "pass" if ok else "fail", rubric_ref="support-policy@1")
            if i % 2:
                add_label(db, tid, "bo", "fail" if ok else "pass", rubric_ref="support-policy@1")
    finally:
        db.close()
    return "s.db"


def test_text_report_has_every_part(labeled_db: str) -> None:
    code, out, err = invoke("--db", labeled_db, "agreement")
    assert code == 0, err
    for part in (
        f"judge    {IMPORTED}",
        "human    ana",
        "rubric   support-policy@1",
        "Cohen's kappa",
        "    95% CI             ",
        "labels to verdict",
        "majority baseline",
        "judge TPR",
        "judge TNR",
        "human pass",
        "Human vs human agreement (the ceiling)",
        "ana ~ bo",
    ):
        assert part in out
    assert "judge is trusted" in out or "judge is not trusted" in out
    # the analytic and bootstrap intervals cover as little as 28% at n = 20: --json only
    assert "analytic" not in out and "bootstrap" not in out
    if "Disagreements (" in out:
        assert "judge rationale" in out and "support-v1" in out


def test_json_is_strict_and_seeded(labeled_db: str) -> None:
    code, out, err = invoke("--db", labeled_db, "agreement", "--json", "--seed", "5")
    assert code == 0, err
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert data["judge"] == IMPORTED and data["labeler"] == "ana"
    assert data["agreement"]["n"] == 40 and data["agreement"]["seed"] == 5
    assert set(data["agreement"]["confusion"]) == {
        "human pass/judge pass",
        "human pass/judge fail",
        "human fail/judge pass",
        "human fail/judge fail",
    }
    assert data["human"]["pairwise"][0]["n"] == 20
    again = invoke("--db", labeled_db, "agreement", "--json", "--seed", "5")[1]
    assert again == out


def test_labeler_option_compares_with_that_labeler(labeled_db: str) -> None:
    code, out, _ = invoke("--db", labeled_db, "agreement", "--labeler", "bo", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["labeler"] == "bo" and not data["labeler_default"]
    assert data["agreement"]["n"] == 20


def test_threshold_option_and_config_decide_the_trust_verdict(labeled_db: str) -> None:
    low = json.loads(invoke("--db", labeled_db, "agreement", "--json", "--threshold", "-1")[1])
    lower = low["agreement"]["kappa_lower"]
    assert lower is not None and low["agreement"]["trusted"] is True
    assert low["agreement"]["verdict"].startswith("judge is trusted")
    Path("reviewer.toml").write_text("[judge]\ntrust_threshold = 1.0\n", encoding="utf-8")
    high = json.loads(invoke("--db", labeled_db, "agreement", "--json")[1])
    assert high["agreement"]["threshold"] == 1.0 and high["agreement"]["trusted"] is False
    Path("reviewer.toml").write_text('[judge]\ntrust_threshold = "high"\n', encoding="utf-8")
    code, out, err = invoke("--db", labeled_db, "agreement")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert "trust_threshold must be a number" in err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--judge", "nope", f"no verdicts by judge 'nope'; judges: '{IMPORTED}'"),
        ("--labeler", "zed", "no labels by 'zed'; labelers: 'ana', 'bo'"),
        ("--rubric", "x@9", "no current labels under rubric 'x@9'; rubrics: support-policy@1"),
    ],
)
def test_unknown_scope_is_a_one_line_error(
    labeled_db: str, option: str, value: str, message: str
) -> None:
    code, out, err = invoke("--db", labeled_db, "agreement", option, value)
    assert code == 1 and out == ""
    assert err.strip() == f"reviewer: {message}"
    assert "Traceback" not in err


def test_no_labels_explains_instead_of_failing() -> None:
    sample_copy("s.db")
    code, out, err = invoke("--db", "s.db", "agreement", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["agreement"]["n"] == 0 and data["agreement"]["explanation"]
    assert "no pass/fail labels yet" in err
    code, out, _ = invoke("--db", "s.db", "agreement")
    assert code == 0 and "no trial has both a human label and a judge verdict" in out


def test_agreement_has_help() -> None:
    code, out, _ = invoke("agreement", "--help")
    assert code == 0
    for option in ("--judge", "--labeler", "--rubric", "--threshold", "--seed", "--json"):
        assert option in out


def test_the_plain_verdict_is_in_text_and_json(labeled_db: str) -> None:
    code, out, _ = invoke("--db", labeled_db, "agreement")
    assert code == 0
    assert "(small-sample; the verdict uses it)" in out
    code, raw, _ = invoke("--db", labeled_db, "agreement", "--json")
    a = json.loads(raw)["agreement"]
    assert a["status"] in ("trusted", "not trusted", "undecided", "too few labels")
    assert a["plain"].startswith(f"Kappa {a['kappa']:.2f}: the judge agrees with ana on")
    assert (
        " ".join(out.split()).count(" ".join(a["plain"].split())) == 1
    )  # the same sentence, wrapped
    assert a["ci_adjusted"][0] <= a["kappa"] <= a["ci_adjusted"][1]
    assert a["kappa_lower"] == a["ci_adjusted"][0]
    assert a["labels_needed"] is None or a["labels_needed"] >= 0
    assert a["ci"] == a["ci_adjusted"] and a["not_for_decisions"] == ["ci_analytic", "ci_bootstrap"]
    assert a["ci_analytic"] is not None and a["ci_bootstrap"] is not None  # kept for scripts
    assert a["labels_outlook"]["labels"] == a["labels_needed"]
    assert a["labels_outlook"]["assurance"] == 0.8
    for key in ("tpr_ci", "tnr_ci"):
        lo, hi = a[key]
        assert 0 <= lo <= a[key[:3]] <= hi <= 1
    # the sample runs' judge graded every trial; the 40 labels are the first 40 of them
    assert sum(a["judge_mix"].values()) > 40


def test_the_judges_mix_line_says_whose_pass_share_it_gives(labeled_db: str) -> None:
    """`(judge: 85% pass of 693 verdicts; labels 50%)` read as the labels passing 50% where the
    humans passed 30%: the 50% is the judge's pass share on the labeled trials, and says so."""
    db = open_store(labeled_db)
    try:  # ana changes her mind on 8 passes, so her pass share is not the judge's
        rows = db.conn.execute(
            "SELECT id FROM trials WHERE success = 1 ORDER BY seq LIMIT 8"
        ).fetchall()
        for (tid,) in rows:
            add_label(db, tid, "ana", "fail", rubric_ref="support-policy@1")
    finally:
        db.close()
    code, out, _ = invoke("--db", labeled_db, "agreement")
    assert code == 0
    a = json.loads(invoke("--db", labeled_db, "agreement", "--json")[1])["agreement"]
    judge_on_labeled = f"{a['judge_pass_rate']:.0%}"
    assert judge_on_labeled != f"{a['human_pass_rate']:.0%}"  # the two would be confused
    mix = next(line for line in out.splitlines() if line.startswith("  kappa, judge's mix"))
    assert mix.endswith(f" verdicts, {judge_on_labeled} of labeled)"), mix
    assert len(mix) <= 80
    plain = " ".join(a["plain"].split())
    assert f"graded, {judge_on_labeled} of the labeled ones) kappa is" in plain
    assert "these labels" not in plain
