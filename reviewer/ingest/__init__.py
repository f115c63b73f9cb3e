"""Input formats, one module per format, registered once in ``FORMATS``; sniffing picks one for a file.

Every format satisfies :class:`reviewer.ingest.base.Format`: a pure streaming parser that never touches
SQL. Adding a format is one new module and one line in ``FORMATS``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from reviewer.ingest import (
    atif,
    claude_code,
    inspect_log,
    native,
    openai_chat,
    openhands,
    otel_genai,
    pairs,
    swe_agent,
    task_list,
    tau2_bench,
    tau_bench,
)
from reviewer.ingest.base import Format, IngestError, Item

HEAD_BYTES = 64 * 1024

#: Every format reviewer reads. Order matters: the more specific sniffers go first.
FORMATS: tuple[Format, ...] = (
    inspect_log,
    tau2_bench,
    tau_bench,
    claude_code,
    atif,
    swe_agent,
    openhands,
    otel_genai,
    pairs,
    task_list,
    native,
    openai_chat,
)

FORMAT_NAMES = (
    "native JSONL (reviewer), tau-bench results JSON, tau2-bench results JSON, "
    "Inspect AI logs (.eval, .json), OpenAI chat JSONL, regression task lists (reviewer export), "
    "pair judgements JSONL, Claude Code sessions (.jsonl), Harbor ATIF trajectories (trajectory.json), "
    "SWE-agent trajectories (.traj), OpenHands output.jsonl and trajectories, "
    "OpenTelemetry GenAI spans (OTLP JSON)"
)


def formats() -> list[Format]:
    return list(FORMATS)


def format_by_name(name: str) -> Format:
    for fmt in FORMATS:
        if fmt.NAME == name:
            return fmt
    raise KeyError(name)


def sniff(path: Path) -> Format:
    """The format of ``path``; IngestError naming the formats we read when none fits."""
    try:
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError as e:
        raise IngestError(str(path), f"cannot read: {e.strerror or e}") from e
    if not head.strip():
        raise IngestError(str(path), "empty file")
    for fmt in FORMATS:
        if fmt.sniff(path, head):
            return fmt
    raise IngestError(str(path), f"unknown format; reviewer reads {FORMAT_NAMES}")


def parse(path: Path) -> Iterator[Item]:
    return sniff(path).parse(path)


__all__ = [
    "FORMATS",
    "FORMAT_NAMES",
    "Format",
    "IngestError",
    "format_by_name",
    "formats",
    "parse",
    "sniff",
]
