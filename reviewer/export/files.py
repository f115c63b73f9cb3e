"""Task files on disk: where they go, reading the ids of one to append to, and atomic writes."""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from reviewer.ingest.task_schema import FORMAT

DEFAULT_DIR = "regression"
FILE_NAMES = {"native": "tasks.jsonl", "inspect": "inspect.jsonl"}
# an --out with one of these suffixes is a file name with the wrong suffix, not a folder
_FILE_SUFFIXES = {".json", ".ndjson", ".txt", ".csv", ".gz"}


class ExportError(Exception):
    """An export that cannot be done as asked; the message is one line naming the file and problem."""


def resolve_out(out: str | Path | None, fmt: str) -> Path:
    """``--out``: a ``.jsonl`` file, or a folder that gets ``tasks.jsonl`` / ``inspect.jsonl``."""
    path = Path(out if out is not None else DEFAULT_DIR)
    if path.suffix.lower() == ".jsonl":
        if path.is_dir():
            raise ExportError(
                f"{path}: is a folder; give a file ending in .jsonl or another folder"
            )
        return path
    if (path.exists() and not path.is_dir()) or path.suffix.lower() in _FILE_SUFFIXES:
        raise ExportError(f"{path}: not a folder, and --out FILE must end in .jsonl")
    return path / FILE_NAMES[fmt]


def existing_ids(path: Path, fmt: str) -> list[str]:
    """The task ids of a file written by an earlier export, in file order (for ``--append``)."""
    ids: list[str] = []
    try:
        fh = path.open("rb")
    except OSError as e:
        raise ExportError(f"{path}: cannot read: {e.strerror or e}") from e
    with fh:
        for lineno, raw in enumerate(fh, 1):
            if raw.strip():
                ids.append(_line_id(path, lineno, raw, fmt))
    return ids


def _line_id(path: Path, lineno: int, raw: bytes, fmt: str) -> str:
    where = f"{path}:{lineno}"
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ExportError(f"{where}: not UTF-8; not a task file this export wrote") from None
    except ValueError as e:
        raise ExportError(
            f"{where}: invalid JSON ({e}); not a task file this export wrote"
        ) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str | int):
        raise ExportError(f"{where}: a task needs an id; not a task file this export wrote")
    if fmt == "native" and obj.get("format") != FORMAT:
        raise ExportError(f"{where}: not a native task (format {FORMAT!r}); use --format inspect?")
    if fmt == "inspect" and ("input" not in obj or obj.get("format") == FORMAT):
        raise ExportError(f"{where}: not an Inspect sample; use --format native?")
    return str(obj["id"])


def write_atomic(path: Path, chunks: Iterable[str], keep_existing: bool = False) -> None:
    """Write ``chunks`` to a temp file beside ``path``, then rename it over ``path``.

    ``keep_existing`` starts the new file with the old one's bytes (append). Any failure, even one
    raised while ``chunks`` is being produced, removes the temp file and leaves ``path`` as it was.
    An existing ``path`` that is not a regular file (``/dev/null``, a pipe) is refused (OSError):
    the rename would put a file in the device's place (as root, for every later user of it)."""
    if path.exists() and not path.is_file():
        raise OSError(
            errno.EINVAL, "not a regular file (a device, a pipe or a socket): give a file name"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # a file on the way: "afile: File exists"
        above = next((p for p in path.parents if p.exists() and not p.is_dir()), path.parent)
        raise OSError(errno.ENOTDIR, f"{above} is a file, not a folder") from None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            if keep_existing and path.exists():
                old = path.read_text(encoding="utf-8")
                fh.write(old if not old or old.endswith("\n") else old + "\n")
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp makes the file private; a task file is as readable as the old one, or 0644
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
