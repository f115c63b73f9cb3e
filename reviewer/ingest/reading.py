"""How far a parser has got through the file being imported, for the import's progress bar.

A parser cannot say how many trials a file holds before reading it, but it knows where it is: the
bytes of a JSONL file read so far, the samples of a document or the members of an archive gone
through. The import runs each file's parse inside :func:`reading` and reads the ``Reading`` between
records; a parser (or a shared reader such as ``base.jsonl_lines``) writes its place into
:func:`place` as it goes. Outside an import ``place()`` is a throwaway, so parsing stays pure.

Inside :func:`holding_last_line` (``monitor --follow``'s looks at a growing log) the JSONL readers
leave out a last line that has no newline yet: its writer may be mid-line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(slots=True)
class Reading:
    """``done`` of ``total`` in the parser's own unit (bytes, samples, members); 0 of 0 until the
    parser says."""

    done: int = 0
    total: int = 0

    @property
    def fraction(self) -> float:
        """How much of the file is behind the parser, from 0 to 1 (0 when it has said nothing)."""
        if self.total <= 0:
            return 0.0
        return min(max(self.done / self.total, 0.0), 1.0)


_CURRENT: ContextVar[Reading | None] = ContextVar("reviewer_reading", default=None)


@contextmanager
def reading() -> Iterator[Reading]:
    """The Reading a parse run inside this block writes its place into (per thread)."""
    where = Reading()
    token = _CURRENT.set(where)
    try:
        yield where
    finally:
        _CURRENT.reset(token)


def place() -> Reading:
    """Where the parser of the file being imported writes its place; a throwaway outside an import.
    A parser asks once, when it starts, and writes ``done`` (and ``total``) as it goes."""
    return _CURRENT.get() or Reading()


_HOLD: ContextVar[bool] = ContextVar("reviewer_hold_last_line", default=False)


@contextmanager
def holding_last_line(hold: bool = True) -> Iterator[None]:
    """Inside this block (when ``hold``), a JSONL file's last line without a newline is left out, not
    read nor reported: a writer may still be writing it, and a later look reads it once its newline
    is there. Outside it such a line is read like any other."""
    token = _HOLD.set(hold)
    try:
        yield
    finally:
        _HOLD.reset(token)


def holds_last_line() -> bool:
    """Whether a last line without a newline is left out (see :func:`holding_last_line`)."""
    return _HOLD.get()
