"""Every real file under ../shared/corpora/realworld imports with the numbers its source states, or
is refused with one line saying why (issue 15). Skipped when the corpus is not beside the checkout;
the attributed subsets in tests/fixtures cover the same formats in a fresh clone."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from tests.conftest import CORPORA

REAL = CORPORA / "realworld"
INSPECT = "inspect_ai/"
SCOUT = "inspect_scout/tests__recorder__logs__"
CC = "claude_code/tests__sources__claude_code_source__fixtures__"
ATIF = "atif_openhands_terminus/tests__sources__atif_source__fixtures__"
SWE = "swe_agent/tests__test_data__trajectories__gpt4__"
GROK = "tau_bench/tau_bench__tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"
DEEPSEEK = (
    "tau_bench/results_test_company_model__tool-calling-deepseek-v3-0.0_range_0-1_"
    "user-gpt-4o-human_0612073827.json"
)
UNSCORED_SESSION = "one session, no outcome in the format"

# (file, pass, fail, infra, unscored, refused with, what the source itself says)
CASES = [
    (f"{ATIF}openhands_hello-world.trajectory.json", 0, 0, 0, 1, None, "no result.json beside it"),
    (
        f"{ATIF}openhands_hello-world.trajectory.no_function_calling.json",
        *(0, 0, 0, 1, None),
        "no result.json beside it",
    ),
    (
        f"{ATIF}terminus_2_hello-world-context-summarization-linear-history.trajectory.cont-1.json",
        *(0, 0, 0, 0, "continuation of"),
        "a continuation, read with the file that names it",
    ),
    (
        f"{ATIF}terminus_2_hello-world-context-summarization-linear-history.trajectory.json",
        *(0, 0, 0, 1, None),
        "no result.json beside it",
    ),
    (
        f"{CC}agent-atest01.jsonl",
        *(0, 0, 0, 0, "only side-chain (subagent) records"),
        "a subagent file",
    ),
    (f"{CC}agent_session.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}clear_split_session.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}compaction_session.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}simple_conversation.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}slug_clear_partner.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}slug_clear_session.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}slug_multi_clear_file1.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}slug_multi_clear_file2.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}slug_session_1.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}slug_session_2.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (f"{CC}tool_call_conversation.jsonl", 0, 0, 0, 1, None, UNSCORED_SESSION),
    (
        f"{INSPECT}_helpers__fixtures__legacy__retry-2-then-success.eval",
        *(0, 0, 0, 1, None),
        "1 sample, no scorer",
    ),
    (
        f"{INSPECT}_helpers__fixtures__postfix__retry-2-then-success.eval",
        *(0, 0, 0, 1, None),
        "1 sample, no scorer",
    ),
    (
        f"{INSPECT}analysis__test_logs__2025-05-12T20-27-36-04-00_browser.json",
        *(1, 0, 0, 0, None),
        "accuracy 1.0 of 1",
    ),
    (
        f"{INSPECT}analysis__test_logs__2025-05-12T20-28-13-04-00_no-samples.json",
        *(0, 0, 0, 0, "log has no samples"),
        "no samples kept",
    ),
    (
        f"{INSPECT}analysis__test_logs__2025-05-12T20-28-13-04-00_popularity.json",
        *(2, 1, 0, 0, None),
        "accuracy 0.667 of 3",
    ),
    (
        f"{INSPECT}analysis__test_logs__2025-05-12T20-28-26-04-00_security-guide.json",
        *(3, 0, 0, 0, None),
        "accuracy 1.0 of 3",
    ),
    (
        f"{INSPECT}analysis__test_logs_choices__mmlu-no-summary-choices.eval",
        *(0, 1, 0, 0, None),
        "accuracy 0.0 of 1",
    ),
    (
        f"{INSPECT}analysis__test_logs_choices__mmlu-summary-choices.eval",
        *(0, 1, 0, 0, None),
        "accuracy 0.0 of 1",
    ),
    (
        f"{INSPECT}eval-set1__2025-09-12T11-41-56-04-00_popularity_HdSVrmTDEge636qZ2op64f.eval",
        *(0, 1, 0, 0, None),
        "accuracy 0.0 of 1",
    ),
    (f"{INSPECT}log__test_eval_log__log_formats.eval", 0, 1, 0, 0, None, "accuracy 0.0 of 1"),
    (f"{INSPECT}log__test_eval_log__log_formats.json", 0, 1, 0, 0, None, "accuracy 0.0 of 1"),
    (f"{INSPECT}log__test_eval_log__log_images.json", 0, 1, 0, 0, None, "accuracy 0.0 of 1"),
    (f"{INSPECT}log__test_eval_log__log_images_tc.json", 0, 1, 0, 0, None, "accuracy 0.0 of 1"),
    (
        f"{INSPECT}log__test_eval_log__log_message_deduplication.eval",
        *(0, 1, 0, 0, None),
        "accuracy 0.0 of 1",
    ),
    (f"{INSPECT}log__test_eval_log__log_read_sample.eval", 1, 0, 0, 0, None, "accuracy 1.0 of 1"),
    (f"{INSPECT}log__test_eval_log__log_read_sample.json", 1, 0, 0, 0, None, "accuracy 1.0 of 1"),
    (f"{INSPECT}log__test_eval_log__log_streaming.eval", 3, 1, 0, 0, None, "accuracy 0.75 of 4"),
    (
        f"{INSPECT}log__test_eval_log__log_tool_call_error.json",
        *(0, 0, 0, 1, None),
        "1 of 4 samples kept, with no score",
    ),
    (
        f"{INSPECT}log__test_eval_log__long_log.eval",
        *(0, 0, 0, 0, "a Git LFS pointer"),
        "a Git LFS pointer, not the log",
    ),
    (
        f"{INSPECT}log__test_list_logs__2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json",
        *(1, 0, 0, 0, None),
        "accuracy 1.0 of 1",
    ),
    (
        f"{INSPECT}log__test_list_logs__2024-11-05T13-32-37-05-00_input-task_hxs4q9azL3ySGkjJirypKZ.eval",
        *(1, 0, 0, 0, None),
        "accuracy 1.0 of 1",
    ),
    (f"{INSPECT}log__test_list_logs__custom.eval", 1, 0, 0, 0, None, "accuracy 1.0 of 1"),
    (
        f"{INSPECT}scorer__logs__2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval",
        *(0, 0, 0, 10, None),
        "10 samples, no scores in the results",
    ),
    (
        f"{INSPECT}scorer__logs__2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
        *(8, 2, 0, 0, None),
        "accuracy 0.8 of 10",
    ),
    (
        f"{SCOUT}2025-09-23T08-09-58-04-00_popularity_DN2wbX2ZvACsBpjwptzBRo.eval",
        *(63, 37, 0, 0, None),
        "accuracy 0.63 of 100",
    ),
    (
        f"{SCOUT}2025-09-23T08-09-58-04-00_security-guide_LuxZJVwvymC3S3SyoJczxB.eval",
        *(11, 5, 0, 0, None),
        "accuracy 0.6875 of 16",
    ),
    (
        f"{SCOUT}2025-09-23T08-09-58-04-00_theory-of-mind_bbB4eRCx2rFJLyPH42Cj9r.eval",
        *(83, 17, 0, 0, None),
        "accuracy 0.83 of 100",
    ),
    (
        f"{SCOUT}2025-11-07T10-59-47-05-00_websearch-addition-problem_LqPDntDnkk4h2fSqQ8i6CE.eval",
        *(1, 0, 0, 0, None),
        "accuracy 1.0 of 1",
    ),
    (
        "openhands/evaluation__benchmarks__multi_swe_bench__examples__output.jsonl",
        *(0, 0, 0, 3, None),
        "3 instances, no test_result (unscored)",
    ),
    ("openhands/tests__runtime__trajs__basic.json", 0, 0, 0, 1, None, "an event list, no outcome"),
    (
        "openhands/tests__unit__resolver__mock_output__output.jsonl",
        *(2, 0, 0, 0, None),
        "2 records with success: true",
    ),
    (
        f"{SWE}swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__"
        "swe-agent__test-repo-i1.traj",
        *(0, 0, 0, 1, None),
        "a .traj does not say whether it resolved",
    ),
    (
        f"{SWE}swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1__all_preds.jsonl",
        *(0, 0, 0, 0, "predictions"),
        "predictions (patches), not trajectories",
    ),
    (
        f"{SWE}swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1__"
        "pydicom__pydicom-1458.traj",
        *(0, 0, 0, 1, None),
        "a .traj does not say whether it resolved",
    ),
    (
        "swe_agent/trajectories__demonstrations__replay__marshmallow-code__marshmallow-1867__"
        "function_calling_replace__install-1__marshmallow-code__marshmallow-1867.traj",
        *(0, 0, 0, 1, None),
        "a .traj does not say whether it resolved",
    ),
    (DEEPSEEK, 0, 0, 1, 0, None, "1 record: info.error 'EOF when reading a line', empty traj"),
    (GROK, 78, 37, 0, 0, None, "78 of 115 with reward_info.components.base_success = 1"),
]


def test_every_real_file_is_listed() -> None:
    if not REAL.is_dir():
        pytest.skip("../shared/corpora/realworld is not beside the checkout")
    on_disk = {
        f"{p.parent.name}/{p.name}" for p in REAL.glob("*/*") if p.is_file() and p.suffix != ".md"
    }
    assert on_disk == {c[0] for c in CASES}


@pytest.mark.parametrize(
    ("name", "passed", "failed", "infra", "unscored", "refused", "source"),
    CASES,
    ids=[c[0].split("/")[-1][-60:] for c in CASES],
)
def test_real_file_imports_with_its_sources_numbers(
    name: str,
    passed: int,
    failed: int,
    infra: int,
    unscored: int,
    refused: str | None,
    source: str,
) -> None:
    path = REAL / name
    if not path.exists():
        pytest.skip("../shared/corpora/realworld is not beside the checkout")
    extra = ["--success-field", "reward_info.components.base_success"] if name == GROK else []
    r = CliRunner().invoke(cli, ["--db", "x.db", "import", "--json", *extra, str(path)])
    assert "Traceback" not in r.stderr
    data = json.loads(r.stdout)
    outcomes = data["outcomes"]
    got = tuple(outcomes.get(k, 0) for k in ("pass", "fail", "infra", "unscored"))
    assert got == (passed, failed, infra, unscored), source
    if refused is None:
        assert data["added"] == sum(got) and not data["skipped"] and not data["errors"]
    else:
        # refused with one line that says why
        lines = [f["error"] for f in data["files"] if f["error"]]
        lines += [s["reason"] for s in data["skipped"]]
        assert len(lines) == 1 and refused in lines[0], lines
        assert "\n" not in lines[0]
