"""Where an import is, for both faces' progress bars: measured in bytes of the files, so one big file
moves the bar as its parser reads it (``ingest.reading``), not only when it is done."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from reviewer.ingest.files import Progress
from reviewer.ingest.reading import reading


@dataclass(frozen=True)
class ImportProgress:
    """``done`` of ``total`` bytes: the files behind the import whole, and the share of the file
    being read (``file``, ``records`` of it read so far) that its parser has got through."""

    file: str
    records: int
    done: int
    total: int
    files_done: int
    files: int

    @property
    def fraction(self) -> float:
        return min(self.done / self.total, 1.0) if self.total > 0 else 0.0


OnProgress = Callable[[ImportProgress], None]


class Meter:
    """Turns the per-file reports of ``import_file`` (file, records) into ImportProgress for the
    whole job: the first report says the total, then each file's reports and one when it ends."""

    def __init__(self, paths: Sequence[Path], report: OnProgress | None) -> None:
        self.sizes = [_size(p) for p in paths] if report is not None else [0] * len(paths)
        self.total = sum(self.sizes)
        self.report = report
        self.behind = 0  # bytes of the files done
        self.files_done = 0
        if report is not None:
            report(ImportProgress("", 0, 0, self.total, 0, len(self.sizes)))

    @contextmanager
    def file(self, index: int, name: str) -> Iterator[Progress | None]:
        """The progress callback for the ``index``-th file, its parse's place read by it; the file
        counts as done when the block ends without an exception."""
        report = self.report
        if report is None:
            yield None
            return
        size, records = self.sizes[index], [0]
        with reading() as reached:

            def tick(file: str, count: int) -> None:
                records[0] = count
                done = self.behind + round(reached.fraction * size)
                report(
                    ImportProgress(file, count, done, self.total, self.files_done, len(self.sizes))
                )

            yield tick
        self.behind += size
        self.files_done += 1
        report(
            ImportProgress(
                name, records[0], self.behind, self.total, self.files_done, len(self.sizes)
            )
        )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # discover found it; a file gone since is said by its import
