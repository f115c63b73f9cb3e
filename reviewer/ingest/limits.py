"""How big one record may be, so a hostile file is refused with a line instead of filling memory.

Set by environment variables (read on every import, so a test or a shell can change them):

- ``REVIEWER_MAX_RECORD_MB`` (default 128): one record, i.e. a JSONL line, an element of a tau-bench
  array, an Inspect ``.eval`` member uncompressed.
- ``REVIEWER_MAX_DOCUMENT_MB`` (default 512): a file that is read whole (tau2-bench results, an
  Inspect ``.json`` log).
- ``REVIEWER_MAX_ZIP_RATIO`` (default 200): how many times larger than its compressed bytes an
  ``.eval`` member above 1 MiB may be (a zip bomb is thousands of times larger).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MIB = 1 << 20
#: Members up to this size are not held to the ratio: small, very repetitive JSON compresses well.
RATIO_FREE = MIB


@dataclass(frozen=True)
class Limits:
    record: int
    document: int
    ratio: float

    def over_record(self, size: int) -> str:
        return f"{_size(size)}, over the {_size(self.record)} limit per record (REVIEWER_MAX_RECORD_MB)"

    def over_document(self, size: int) -> str:
        return (
            f"{_size(size)}, over the {_size(self.document)} limit for a file read whole "
            "(REVIEWER_MAX_DOCUMENT_MB)"
        )


def _env(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default


def limits() -> Limits:
    """The limits in force now (environment variables over the defaults)."""
    return Limits(
        record=int(_env("REVIEWER_MAX_RECORD_MB", 128) * MIB),
        document=int(_env("REVIEWER_MAX_DOCUMENT_MB", 512) * MIB),
        ratio=_env("REVIEWER_MAX_ZIP_RATIO", 200),
    )


def _size(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GiB"
    if n >= MIB:
        return f"{n / MIB:.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} bytes"


def size_text(n: int) -> str:
    """A byte count for a message: 512 bytes, 3.2 KiB, 1.0 GiB."""
    return _size(n)
