"""The monitoring loop of docs/ci-and-monitoring.md runs as written on the generated production
stream: the generator, the stand-in judge, `reviewer rules` and `reviewer monitor` print the alerts
the page shows; the
planted drop on day 10 alerts within one window; the queue's confirmed failure exports as a
production regression task."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from textual.binding import Binding

from reviewer.judge.standin import StandIn
from tests.conftest import REAL_SAMPLE_RUNS, REPO, run_cli
from tests.test_gate_readme import _blocks


def _section() -> str:
    text = (REPO / "docs" / "ci-and-monitoring.md").read_text(encoding="utf-8")
    start = text.index("## In production: the monitor")
    end = text.find("\n## ", start + 5)
    return text[start : end if end >= 0 else len(text)]


def test_monitor_loop_runs_as_the_docs_say(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(REAL_SAMPLE_RUNS, tmp_path / "sample_runs")
    section = _section()
    (tmp_path / "reviewer.toml").write_text(
        next(b for b in _blocks(section, "toml") if "signals" in b), encoding="utf-8"
    )
    loop, after = [b for b in _blocks(section, "sh")][:2]
    shown = next(b for b in _blocks(section, "") if b.startswith("monitor: "))
    server = StandIn().start()
    try:
        last = ""
        for line in loop.splitlines():
            if line.startswith("python sample_runs/generate.py"):
                args = shlex.split(line)[1:]
                subprocess.run([sys.executable, *args], check=True, cwd=tmp_path)
            elif line.startswith("python -m reviewer.judge.standin"):
                pass  # started above, in this process, on a free port
            elif line.startswith("export "):
                for pair in shlex.split(line)[1:]:
                    key, _, value = pair.partition("=")
                    monkeypatch.setenv(key, server.url if key == "ANTHROPIC_BASE_URL" else value)
            else:
                assert line.startswith("reviewer "), line
                code, out, err = run_cli(*shlex.split(line)[1:])
                last = out
        assert code == 1, err  # alerts: exit 1 for cron
        assert server.message_requests == 329
    finally:
        server.stop()
    lines = last.splitlines()
    expected = shown.splitlines()
    assert lines[0] == expected[0]
    alerts = [ln for ln in lines if ln.startswith("ALERT ")]
    assert alerts == [ln for ln in expected if ln.startswith("ALERT ")]
    # the planted incident: the rule and the judge, within one window of day 10
    assert alerts[0].startswith("ALERT day 2025-06-10: rule no-cancel-after-shipped")
    judge = [a for a in alerts if "judge fail rate" in a]
    assert judge and judge[0].startswith(("ALERT day 2025-06-10", "ALERT day 2025-06-11"))
    assert not any(a < "ALERT day 2025-06-10" for a in alerts)  # no alarm before the change
    assert "queue production-review: made with 50 of 2488 flagged" in err

    # label one conversation of the queue fail, then the page's export line
    from reviewer.config import Config
    from reviewer.store import open_store
    from reviewer.store.labels import add_label
    from reviewer.store.queues import get_queue

    with open_store("reviewer.db") as db:
        first = get_queue(db, "production-review").items[0].trial_id
        add_label(db, first, Config().labeler_name(), "fail", note="cancelled a shipped order")
    export = next(ln for ln in after.splitlines() if ln.startswith("reviewer export"))
    code, _, err = run_cli(*shlex.split(export)[1:])
    assert code == 0, err
    task = json.loads(
        Path("regression/production.jsonl").read_text(encoding="utf-8").splitlines()[0]
    )
    assert task["provenance"]["origin"] == "production"
    assert task["provenance"]["trial_id"] == first


def test_the_label_line_names_the_labeling_keys() -> None:
    """The docs said `p / f / s as usual` for labeling the production queue; skip is x (s does
    nothing on the labeling screen)."""
    from reviewer.tui.screens.label import LabelScreen

    after = [b for b in _blocks(_section(), "sh")][1]
    line = next(ln for ln in after.splitlines() if "production-review:" in ln)
    named = line.split("production-review:", 1)[1].split("as usual", 1)[0].split("/")
    keys = {b.id: b.key for b in LabelScreen.BINDINGS if isinstance(b, Binding)}
    assert [k.strip() for k in named] == [
        keys["label.pass"],
        keys["label.fail"],
        keys["label.skip"],
    ]
