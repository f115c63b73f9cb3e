"""Every real file (tests/fixtures and, when beside the checkout, ../shared/corpora/realworld) is
claimed by exactly one sniffer, the right one: new formats never take another format's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer import ingest
from tests.conftest import CORPORA, FIXTURES

#: folder -> the format its files are in (None: refused as unknown)
EXPECTED = {
    "claude_code": "claude-code",
    "atif": "atif",
    "atif_openhands_terminus": "atif",
    "swe_agent": "swe-agent",
    "openhands": "openhands",
    "otel_genai": "otel-genai",
    "inspect": "inspect",
    "inspect_ai": "inspect",
    "inspect_scout": "inspect",
    "tau_bench": "tau-bench",
    "tau2": "tau2-bench",
    "openai_chat": "openai-chat",
}
#: files whose format is not their folder's
SPECIAL = {
    "log__test_eval_log__long_log.eval": None,  # a Git LFS pointer, not a log
}
NOT_DATA = {".md", ".py", ".csv"}


def files() -> list[Path]:
    roots = [FIXTURES, CORPORA / "realworld"]
    out = []
    for root in roots:
        if not root.is_dir():
            continue
        for folder in sorted(p for p in root.iterdir() if p.name in EXPECTED):
            out += [f for f in sorted(folder.iterdir()) if f.is_file() and f.suffix not in NOT_DATA]
    return out


@pytest.mark.parametrize("path", files(), ids=lambda p: f"{p.parent.name}/{p.name[-50:]}")
def test_each_real_file_is_sniffed_by_exactly_its_format(path: Path) -> None:
    expected = SPECIAL.get(path.name, EXPECTED[path.parent.name])
    head = path.read_bytes()[: ingest.HEAD_BYTES]
    claimed = [fmt.NAME for fmt in ingest.FORMATS if fmt.sniff(path, head)]
    assert claimed == ([expected] if expected else []), path
