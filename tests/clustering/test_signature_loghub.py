"""`reviewer signatures` on real log lines (issue 28, item 4): a 351-line subset of the 16 Loghub-2k
datasets (tests/fixtures/loghub, see its SOURCE.md), and the masking and template rules it needs."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from reviewer.clustering.masking import mask
from reviewer.clustering.signature import line_templates, signatures_of_lines
from reviewer.clustering.templates import pair_templates_of, templates_of
from tests.clustering.logs import grouping_accuracy

LOGHUB = Path(__file__).resolve().parent.parent / "fixtures" / "loghub"


def _datasets() -> dict[str, tuple[list[str], list[str]]]:
    out = {}
    for path in sorted(LOGHUB.glob("*/*_sample.log_structured.csv")):
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        out[path.parent.name] = ([r["Content"] for r in rows], [r["EventId"] for r in rows])
    return out


def test_loghub_subset_groups_by_event() -> None:
    """Measured 0.958 on average over the 16 datasets (0.783 before issue 28; Drain3 with its
    example masking 0.856 on the same lines); no dataset below 0.75 (Mac 0.76: its scheduler lines
    start with the job's name, which Loghub counts as a variable)."""
    datasets = _datasets()
    assert len(datasets) == 16
    scores = {
        name: grouping_accuracy(list(signatures_of_lines(lines)), truth)  # type: ignore[arg-type]
        for name, (lines, truth) in datasets.items()
    }
    assert sum(scores.values()) / len(scores) >= 0.95, scores
    assert min(scores.values()) >= 0.75, scores


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a key's value through one level of brackets, and over a part masked already
        ("release lock=1, ws=null, uid=10037", "release lock=2, ws=WorkSource{10113}, uid=1000"),
        ("auth failure; rhost=218.188.2.4", "auth failure; rhost=061092085098.ctinets.com"),
        # an ip is not the start of a host name
        ("ruser= rhost=112.95.230.3", "ruser= rhost=5.36.59.76.dynamic-dsl-ip.omantel.net.om"),
        # host:port
        ("www.qq.com:80 open through proxy", "proxy.cse.cuhk.edu.hk:5070 open through proxy"),
        # a size restated in parentheses, a size with its unit apart, a bound on a duration
        (
            "close, 403 bytes sent, lifetime <1 sec",
            "close, 451 bytes (1.1 KB) sent, lifetime 00:02",
        ),
        ("estimated size 5.2 KB, free 5.2 KB", "estimated size 850.0 B, free 320.3 KB"),
        # numbers joined by _ are one id
        ("Session: 30546173_4261722401 initialized", "Session: 30546173_4262462443 initialized"),
        # octal-escaped quotes quote
        (
            r"Component \042alt0\042 is unavailable",
            r"Component \042SCSI-WWID:0100-08b4\042 is unavailable",
        ),
    ],
)
def test_instances_of_log_lines_mask_alike(a: str, b: str) -> None:
    assert mask(a) == mask(b)
    assert mask(mask(a)) == mask(a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            '1.2.3.4 "GET /v2/servers/detail HTTP/1.1" status: 200',
            '1.2.3.4 "POST /v2/events HTTP/1.1" status: 200',
        ),
        ("failed at main.go:42", "failed at www.example.com:42"),
        ("www.example.com:443/a/b open", "www.example.com:443 open"),
        ("read 5 bytes", "read 5 KB"),
    ],
)
def test_kinds_of_log_lines_stay_apart(a: str, b: str) -> None:
    assert mask(a) != mask(b)
    assert mask(mask(a)) == mask(a) and mask(mask(b)) == mask(b)


def test_a_masked_word_joins_the_template_of_its_line() -> None:
    """`test9` was masked, `webmaster` was not: both are the user of one event."""
    lines = [
        f"Invalid user {u} from 1.2.3.{i}"
        for i, u in enumerate(["webmaster", "chen", "pgadmin", "test9"])
    ]
    assert set(signatures_of_lines(lines)) == {"invalid user <*> from <ip>"}
    # not where the caller is clustering failures: a placeholder is no value of a word there
    counts = {f"user {u} not found": 1 for u in ("a", "b", "c")} | {"user <id> not found": 1}
    assert "user <id> not found" not in templates_of(counts, min_values=3)


def test_the_first_word_of_a_line_is_never_a_variable() -> None:
    """HPC's `boot (command N)`, `wait (command N)`, `halt (command N)` are three events."""
    sigs = [f"{w} (command <num>)" for w in ("boot", "wait", "halt", "risboot")] * 2
    assert line_templates(sigs) == sigs
    # a variable after it still is one
    users = [f"session opened for user {u} by (uid=<v>)" for u in ("cyrus", "news", "test")]
    assert set(line_templates(users)) == {"session opened for user <*> by (uid=<v>)"}


def test_two_words_vary_together_when_one_is_a_name() -> None:
    classes = [
        ("jobhistory.eventtype", "jobhistory.handler"),
        ("job.jobeventtype", "app.dispatcher"),
        ("job.taskeventtype", "app.taskdispatcher"),
        ("commit.eventtype", "commit.handler"),
    ]
    sigs = [f"registering class {a} for class {b}" for a, b in classes]
    assert set(line_templates(sigs)) == {"registering class <*> for class <*>"}
    # plain words that vary together are kinds: Hadoop's job state transitions are four events
    states = [
        ("new", "inited"),
        ("inited", "setup"),
        ("setup", "running"),
        ("running", "committing"),
    ]
    sigs = [f"<id> transitioned from {a} to {b}" for a, b in states]
    assert line_templates(sigs) == sigs
    assert pair_templates_of(sigs, 3) == {}
