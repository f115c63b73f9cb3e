"""A JSON file read whole (an Inspect ``.json`` log, a tau2-bench results file) costs its own size in
memory, not the document limit: asking the file object for limit + 1 bytes allocated a buffer of the
whole limit (512 MiB by default) before reading, which was the import's memory peak."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from reviewer.ingest.base import IngestError, read_document


def test_reading_a_small_document_allocates_about_its_size(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    body = b'{"samples": [' + b",".join(b'{"id": %d}' % i for i in range(20_000)) + b"]}"
    path.write_bytes(body)
    tracemalloc.start()
    try:
        with path.open("rb") as fh:
            data = read_document(fh, str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert data == body
    assert peak < 4 * len(body) + (1 << 20)  # not the 512 MiB limit


def test_a_document_over_the_limit_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_DOCUMENT_MB", "1")
    path = tmp_path / "big.json"
    path.write_bytes(b"[" + b"0," * (1 << 20) + b"0]")
    with path.open("rb") as fh, pytest.raises(IngestError) as err:
        read_document(fh, str(path))
    assert "limit" in str(err.value)
