"""Importers, one module per input format, and the sniffing that picks one for a file.

Every importer is a pure streaming parser: ``parse(path)`` yields Trials and Skips, never touches SQL.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from reviewer.ingest.base import IngestError, Record

HEAD_BYTES = 64 * 1024

# Order matters: the more specific sniffers go first.
_MODULES = ("inspect_log", "tau2_bench", "tau_bench", "pairs", "task_list", "native", "openai_chat")

FORMAT_NAMES = (
    "native JSONL (reviewer), tau-bench results JSON, tau2-bench results JSON, "
    "Inspect AI logs (.eval, .json), OpenAI chat JSONL, regression task lists (reviewer export), "
    "pair judgements JSONL"
)


def formats() -> list[ModuleType]:
    return [importlib.import_module(f"reviewer.ingest.{name}") for name in _MODULES]


def format_by_name(name: str) -> ModuleType:
    for mod in formats():
        if mod.NAME == name:
            return mod
    raise KeyError(name)


def sniff(path: Path) -> ModuleType:
    """The importer for ``path``; IngestError naming the formats we read when none fits."""
    try:
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError as e:
        raise IngestError(str(path), f"cannot read: {e.strerror or e}") from e
    if not head.strip():
        raise IngestError(str(path), "empty file")
    for mod in formats():
        if mod.sniff(path, head):
            return mod
    raise IngestError(str(path), f"unknown format; reviewer reads {FORMAT_NAMES}")


def parse(path: Path) -> Iterator[Record]:
    return sniff(path).parse(path)


__all__ = ["FORMAT_NAMES", "IngestError", "Record", "format_by_name", "formats", "parse", "sniff"]
