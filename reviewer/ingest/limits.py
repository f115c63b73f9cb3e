"""How big one record may be, so a hostile file is refused with a line instead of filling memory.

Set by environment variables (read on every import, so a test or a shell can change them):

- ``REVIEWER_MAX_RECORD_MB`` (default 128): one record, i.e. a JSONL line, an element of a tau-bench
  array, an Inspect ``.eval`` member uncompressed.
- ``REVIEWER_MAX_DOCUMENT_MB`` (default 512): a file that is read whole (tau2-bench results, an
  Inspect ``.json`` log).
- ``REVIEWER_MAX_ZIP_RATIO`` (default 200): how many times larger than its compressed bytes an
  ``.eval`` member above 1 MiB may be (a zip bomb is thousands of times larger).

A value that is not a positive finite number (``inf``, ``nan``, ``-1``, ``0``, ``lots``) is refused:
:class:`LimitError`, one line naming the variable, and the import reads no file.
"""

from __future__ import annotations

import math
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


#: The largest value a limit may be set to (MiB or a ratio): beyond it a limit limits nothing.
_MAX_SETTING = 1e12


class LimitError(ValueError):
    """A limit's environment variable that is not a positive finite number; says which."""


def _env(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= _MAX_SETTING):
        shown = raw if len(raw) <= 40 else raw[:39] + "…"
        raise LimitError(
            f"{name}={shown!r} is not a limit reviewer can use: give a positive number "
            f"(at most 1e12), or unset it for the default {default:g}"
        )
    return value


def limits() -> Limits:
    """The limits in force now (environment variables over the defaults); LimitError naming the
    variable when one is set to something that is not a positive finite number."""
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
