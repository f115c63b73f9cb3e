"""The import's progress is measured in bytes of the files, so one big file moves the bar as it is read
(found by a review: importing one file showed 0% until it was done, as progress counted files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reviewer.ingest import files as ingest_files
from reviewer.ingest.reading import place, reading
from reviewer.store import open_store
from reviewer.workflows import import_files
from reviewer.workflows.imports import ImportProgress, import_paths
from tests.conftest import FIXTURES, native_trial, write_jsonl


def within(reports: list[ImportProgress]) -> list[ImportProgress]:
    """The reports made while the first file was being read (not the job's first, not its ends)."""
    return [r for r in reports if r.file and r.files_done == 0]


def test_one_big_jsonl_moves_within_the_file(tmp_path: Path) -> None:
    big = write_jsonl(tmp_path / "big.jsonl", [native_trial(f"t{i}") for i in range(5000)])
    reports: list[ImportProgress] = []
    with open_store(tmp_path / "x.db") as db:
        summary = import_paths(db, [big], progress=reports.append)
    assert summary.added == 5000
    size = big.stat().st_size
    assert reports[0] == ImportProgress("", 0, 0, size, 0, 1)  # the total, before any byte is read
    middle = [r for r in within(reports) if 0 < r.done < size]
    assert middle, [(r.done, r.records) for r in reports]  # after each batch of 2,000 at least
    assert all(0.3 < r.fraction < 0.9 for r in middle if r.records in (2000, 4000))
    assert [r.done for r in reports] == sorted(r.done for r in reports)
    assert reports[-1].done == size and reports[-1].files_done == 1
    assert reports[-1].records == 5000


@pytest.mark.parametrize("name", ["support.json", "support.eval"])
def test_an_inspect_log_moves_sample_by_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A log of a few big samples fills no write batch: it reports as time passes (here at once)."""
    monkeypatch.setattr(import_files, "PROGRESS_EVERY", 0.0)
    log = Path(shutil.copy(FIXTURES / "inspect" / name, tmp_path / name))
    reports: list[ImportProgress] = []
    with open_store(tmp_path / "x.db") as db:
        summary = import_paths(db, [log], progress=reports.append)
    assert summary.added == 16
    size = log.stat().st_size
    steps = sorted({r.done for r in within(reports) if 0 < r.done < size})
    assert len(steps) >= 8, steps  # 16 samples: the bar moves with each
    assert reports[-1].done == size


def test_check_moves_within_the_file_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest_files, "PROGRESS_EVERY", 0.0)
    f = write_jsonl(tmp_path / "r.jsonl", [native_trial(f"t{i}") for i in range(50)])
    reports: list[ImportProgress] = []
    summary = import_paths(None, [f], check=True, progress=reports.append)
    assert summary.checked == 50
    size = f.stat().st_size
    assert len({r.done for r in within(reports) if 0 < r.done < size}) >= 40


def test_files_count_by_their_bytes(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    small = write_jsonl(folder / "a.jsonl", [native_trial("a", run="a")])
    large = write_jsonl(folder / "b.jsonl", [native_trial(f"b{i}", run="b") for i in range(40)])
    reports: list[ImportProgress] = []
    with open_store(tmp_path / "x.db") as db:
        import_paths(db, [folder], progress=reports.append)
    sizes = [small.stat().st_size, large.stat().st_size]
    first_after = {r.files_done: r.done for r in reversed(reports)}  # each file's end report
    assert first_after == {0: 0, 1: sizes[0], 2: sum(sizes)}
    assert all(r.total == sum(sizes) and r.files == 2 for r in reports)


def test_a_parse_outside_an_import_writes_to_a_throwaway() -> None:
    assert place() is not place()  # nothing shared: parsing stays pure outside an import
    with reading() as reached:
        assert place() is reached
    assert place() is not reached
