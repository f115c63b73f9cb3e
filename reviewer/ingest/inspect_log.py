"""Inspect AI eval logs, ``.json`` (one document) and ``.eval`` (a zip read one sample member at a time)."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import IO, Any

from reviewer.ingest.base import (
    IngestError,
    Kind,
    Record,
    as_dict,
    as_text,
    canonical,
    load_document,
    parse_arguments,
)
from reviewer.ingest.inspect_scores import score_outcome, scores_kept, short
from reviewer.ingest.limits import MIB, RATIO_FREE, Limits, limits, size_text
from reviewer.ingest.reading import place
from reviewer.models import Message, Skip, ToolCall, Trial, TrialError, Usage
from reviewer.record import (
    RecordError,
    depth_problem,
    json_problem,
    loads,
    loads_unchecked,
    text_or_none,
)
from reviewer.text import json_error

NAME = "inspect"
KIND: Kind = "trials"
#: Runs are named after the eval's task and model; two evals of one task and model (two log files)
#: are two runs: the importer tells them apart by this metadata key (``name (2)``, ...).
RUN_KEY = "eval"
KEYS = ("version", "status", "eval", "samples")

_ZIP_MAGIC = b"PK\x03\x04"
_ZSTD = 93  # zip method id of Zstandard, which Inspect uses when INSPECT_USE_ZSTD is set
_JSON_EVAL = re.compile(rb'"eval"\s*:\s*\{')
_JSON_TOP = re.compile(rb'^\s*\{\s*"(version|status|eval)"\s*:')
_SAMPLE = re.compile(r"^samples/.+\.json$")
#: What zipfile, zlib and json raise on damaged bytes (RuntimeError covers NotImplementedError).
_DAMAGE = (
    zipfile.BadZipFile,
    ValueError,
    EOFError,
    OSError,
    RuntimeError,
    zlib.error,
    struct.error,
)
#: The one flag the import options read: ``--scorer NAME`` picks the score that decides.
HAS_SCORERS = True
_MEDIA = {"image", "audio", "video", "document"}
_EXC_NAME = re.compile(r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b")


def sniff(path: Path, head: bytes) -> bool:
    """A zip whose members are Inspect's (``samples/``, ``header.json``), or a JSON log with ``eval`` near the top."""
    if head.startswith(_ZIP_MAGIC):
        return path.suffix == ".eval" or any(
            m in head for m in (b"header.json", b"samples/", b"_journal/")
        )
    if not _JSON_TOP.match(head.removeprefix(b"\xef\xbb\xbf")):
        return False
    return bool(_JSON_EVAL.search(head[:16384])) and (b'"samples"' in head or b'"version"' in head)


def parse(path: Path) -> Iterator[Record]:
    """Trials of an Inspect log: one per sample and epoch."""
    try:
        with path.open("rb") as fh:
            is_zip = fh.read(4) == _ZIP_MAGIC
    except OSError as exc:
        raise IngestError(str(path), f"cannot read: {exc.strerror or exc}") from None
    yield from _parse_eval(path) if is_zip or path.suffix == ".eval" else _parse_json(path)


def _parse_json(path: Path) -> Iterator[Record]:
    file = str(path)
    clean: list[bool] = []
    data = load_document(path, lambda text: loads_unchecked(text, clean))
    # a document with no unfit value anywhere: each sample needs only its nesting checked
    problem_of = depth_problem if clean == [True] else json_problem
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        raise IngestError(file, "not an Inspect log: no eval header")
    samples = data.get("samples")
    if not isinstance(samples, list) or not samples:
        raise IngestError(file, f"log has no samples (status: {data.get('status', 'unknown')})")
    header = as_dict(data.get("eval"))
    if problem := json_problem(header):
        raise IngestError(file, f"eval: {problem}")
    reached = place()
    reached.total = len(samples)
    for index, sample in enumerate(samples, start=1):
        reached.done = index
        # named by its place in the samples: the document is parsed whole, with no lines kept
        if problem := problem_of(sample):
            yield Skip(file, None, f"sample {index}: {problem}")
            continue
        yield _sample(file, index, None, f"sample {index}", sample, header)


def _parse_eval(path: Path) -> Iterator[Record]:
    file = str(path)
    try:
        zf = zipfile.ZipFile(path)
    except _DAMAGE as exc:
        raise IngestError(file, f"truncated or corrupt .eval archive: {exc}") from None
    with zf, path.open("rb") as raw:
        names = [i for i in zf.infolist() if _SAMPLE.match(i.filename)]
        header: dict[str, Any] = {}
        limit = limits()
        for member in ("header.json", "_journal/start.json"):
            if member in zf.NameToInfo:
                try:
                    loaded = _load_member(zf, raw, zf.getinfo(member), limit)
                except _DAMAGE as exc:
                    yield Skip(file, None, f"{member}: {_why(exc)}")
                    continue
                if not isinstance(loaded, dict):
                    yield Skip(file, None, f"{member}: not a JSON object")
                    continue
                header = as_dict(loaded.get("eval"))
                break
        if not names:
            raise IngestError(file, "log has no samples (samples/*.json)")
        reached = place()
        reached.total = len(names)
        for index, info in enumerate(names, start=1):
            reached.done = index
            try:
                sample = _load_member(zf, raw, info, limit)
            except _DAMAGE as exc:
                yield Skip(file, None, f"{info.filename}: {_why(exc)}")
                continue
            yield _sample(file, index, None, info.filename, sample, header)


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return json_error(exc, line=True)
    if isinstance(exc, _Refused):
        return str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8: {exc.reason} at byte {exc.start}"
    return f"unreadable member: {exc}"


class _Refused(ValueError):
    """A member that is not read: over a size limit, or holding a value the store cannot keep."""


def _load_member(zf: zipfile.ZipFile, raw: IO[bytes], info: zipfile.ZipInfo, limit: Limits) -> Any:
    """One member parsed and checked, its size limits applied before and while reading."""
    try:
        return loads(_member(zf, raw, info, limit).decode("utf-8-sig"))
    except RecordError as exc:
        raise _Refused(str(exc)) from None


def _member(
    zf: zipfile.ZipFile, raw: IO[bytes], info: zipfile.ZipInfo, limit: Limits | None = None
) -> bytes:
    """One member's bytes; a Zstandard member (zipfile reads those only from Python 3.14) via libzstd.

    The sizes the zip declares are checked first (uncompressed size and compression ratio), and the
    bytes are counted while they stream, so a member that lies about its size stops at the limit."""
    limit = limit or limits()
    if info.file_size > limit.record:
        raise _Refused(f"member is {limit.over_record(info.file_size)}")
    if info.file_size > RATIO_FREE and info.file_size > limit.ratio * max(info.compress_size, 1):
        raise _Refused(
            f"member expands {info.file_size / max(info.compress_size, 1):.0f} times "
            f"({size_text(info.compress_size)} to {size_text(info.file_size)}), over the limit of "
            f"{limit.ratio:g} (REVIEWER_MAX_ZIP_RATIO)"
        )
    if info.compress_type == _ZSTD:
        return _zstd_member(zf, raw, info)
    try:
        with zf.open(info) as member:
            chunks, size = [], 0
            while chunk := member.read(MIB):
                size += len(chunk)
                if size > limit.record:
                    raise _Refused(f"member is {limit.over_record(size)} (more than it declares)")
                chunks.append(chunk)
            return b"".join(chunks)
    except NotImplementedError:
        raise zipfile.BadZipFile(f"unsupported compression method {info.compress_type}") from None


def _zstd_member(zf: zipfile.ZipFile, raw: IO[bytes], info: zipfile.ZipInfo) -> bytes:
    """A Zstandard member's bytes, read straight from the archive (zipfile cannot open one before
    Python 3.14, and trying first costs a header read and a refusal per member): the local header
    checked as ``ZipFile.open`` checks it, with its messages, then libzstd and the CRC."""
    raw.seek(info.header_offset)
    local = raw.read(30)
    if len(local) != 30:
        raise zipfile.BadZipFile("Truncated file header")
    if not local.startswith(_ZIP_MAGIC):
        raise zipfile.BadZipFile("Bad magic number for file header")
    (flags,) = struct.unpack("<H", local[6:8])
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    fname = raw.read(name_len)
    name = (
        fname.decode("utf-8")
        if flags & 0x800
        else fname.decode(getattr(zf, "metadata_encoding", None) or "cp437")
    )
    if name != info.orig_filename:
        raise zipfile.BadZipFile(
            f"File name in directory {info.orig_filename!r} and header {fname!r} differ."
        )
    if info.flag_bits & 0x1:
        raise RuntimeError(f"File {info!r} is encrypted, password required for extraction")
    raw.seek(info.header_offset + 30 + name_len + extra_len)
    data = raw.read(info.compress_size)
    if len(data) < info.compress_size:
        raise zipfile.BadZipFile("member data is truncated")
    out = _zstd()(data, info.file_size)
    if zlib.crc32(out) != info.CRC:
        raise zipfile.BadZipFile("CRC-32 mismatch")
    return out


@cache
def _zstd() -> Callable[[bytes, int], bytes]:
    """libzstd through ctypes: no Python package needed; zipfile itself reads zstd from 3.14 on."""
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    except OSError:
        raise zipfile.BadZipFile("Zstandard-compressed member and no libzstd found") from None
    c = ctypes
    lib.ZSTD_decompress.restype = c.c_size_t
    lib.ZSTD_decompress.argtypes = [c.c_void_p, c.c_size_t, c.c_char_p, c.c_size_t]
    lib.ZSTD_isError.restype = c.c_uint
    lib.ZSTD_isError.argtypes = [c.c_size_t]
    lib.ZSTD_getErrorName.restype = c.c_char_p
    lib.ZSTD_getErrorName.argtypes = [c.c_size_t]

    def decompress(data: bytes, size: int) -> bytes:
        dst = c.create_string_buffer(max(size, 1))
        n = lib.ZSTD_decompress(dst, size, data, len(data))
        if lib.ZSTD_isError(n):
            raise zipfile.BadZipFile(f"zstd: {lib.ZSTD_getErrorName(n).decode()}")
        return c.string_at(dst, n)  # one copy (``dst.raw[:n]`` makes two)

    return decompress


def _sample(
    file: str, index: int, line: int | None, where: str, sample: Any, header: dict[str, Any]
) -> Record:
    """One sample as a Trial; ``where`` names it in a Skip ("sample 3" or its zip member)."""
    try:
        return _convert(file, index, line, where, sample, header)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        return Skip(file, line, f"{where}: malformed sample: {exc!r}")


def _convert(
    file: str, index: int, line: int | None, where: str, sample: Any, header: dict[str, Any]
) -> Record:
    def skip(reason: str) -> Skip:
        return Skip(file, line, f"{where}: {reason}")

    if not isinstance(sample, dict):
        return skip(f"not a JSON object ({type(sample).__name__})")
    if sample.get("id") is None:
        return skip("no sample id")
    task_id, epoch = str(sample["id"]), sample.get("epoch")
    if epoch is not None and (type(epoch) is not int or epoch < 0):
        return skip(f"epoch {short(repr(epoch))} is not a whole number of 0 or more")
    raw_messages = sample.get("messages")
    if not isinstance(raw_messages, list):
        return skip(f"{task_id} epoch {epoch}: no messages list")
    try:
        messages = _messages(raw_messages)
    except (TypeError, ValueError, AttributeError) as exc:
        return skip(f"{task_id} epoch {epoch}: malformed messages: {exc}")
    error = _error(sample.get("error"))
    passed, reward, reason, scorer, unread = None, None, None, None, None
    if sample.get("scores") not in (None, {}) and not isinstance(sample.get("scores"), dict):
        return skip(f"{task_id} epoch {epoch}: no score (scores is not an object)")
    scores = as_dict(sample.get("scores"))
    if scores:
        # the first scorer decides unless --scorer names another (ingest.outcome); the run's pass
        # rule names it when a sample has several
        scorer, score = next(iter(scores.items()))
        passed, reward, reason, unread = score_outcome(scorer, score)
    # no score and no error: an eval without a scorer (or not scored yet), an unscored trial
    if error is not None:
        # Inspect leaves a sample that errored out of its metrics: the run broke, not the model
        reason = "infrastructure error: " + short(error.message or "sample error")
    limit = as_dict(sample.get("limit"))
    meta = {
        "eval_task": header.get("task"),
        "model": header.get("model"),
        "run_id": header.get("run_id"),
        "eval_id": header.get("eval_id"),
        "eval": header.get("eval_id") or header.get("run_id"),  # which eval: RUN_KEY
        "sample_uuid": sample.get("uuid"),
        "target": sample.get("target"),
        "scorer": scorer,
        "scores": scores_kept(scores) or None,
        "score_unread": unread,
        "sample_metadata": sample.get("metadata") or None,
    }
    return Trial(
        task_id=task_id,
        messages=messages,
        passed=passed,
        reward=reward,
        run=run_name(header),
        infra_error=error is not None,
        trial=epoch,
        reason=reason,
        usage=_usage(sample.get("model_usage")),
        latency_s=_first_number(sample.get("total_time"), sample.get("working_time")),
        error=error,
        metadata={k: v for k, v in meta.items() if v is not None},
        instruction=_instruction(sample.get("input")),
        termination=f"{limit['type']} limit" if isinstance(limit.get("type"), str) else None,
        source_line=index,
        source=sample,
        fingerprint=_identity(header, sample),
        source_member=where if line is None else None,  # an .eval member: named, it has no line
    )


def _identity(header: dict[str, Any], sample: dict[str, Any]) -> bytes:
    """What makes a sample the same trial: its eval (the eval id; in logs older than eval ids, the
    run id and task id), sample id and epoch, so the .eval and .json copies of one log, serialized
    apart (attachments, events, transcript), are one trial; the whole sample when the log names no
    eval."""
    eval_id = header.get("eval_id")
    run_id, task_id = header.get("run_id"), header.get("task_id")
    if isinstance(eval_id, str) and eval_id:
        ident: Any = eval_id
    elif isinstance(run_id, str) and run_id and isinstance(task_id, str) and task_id:
        ident = [run_id, task_id]
    else:
        return canonical(sample)
    return canonical({"eval_id": ident, "id": sample.get("id"), "epoch": sample.get("epoch")})


def _messages(raw: list[Any]) -> list[Message]:
    # every message of every sample passes here: positional construction, no empty comprehension
    out: list[Message] = []
    append = out.append
    for m in raw:
        if not isinstance(m, dict):
            continue
        get = m.get
        role = str(get("role") or "user")
        raw_calls = get("tool_calls")
        calls = (
            [
                ToolCall(
                    str(c.get("function", "")),
                    parse_arguments(c.get("arguments")),
                    text_or_none(c.get("id")),
                )
                for c in raw_calls
                if isinstance(c, dict)
            ]
            if raw_calls
            else []
        )
        tool = role == "tool"
        error = get("error") if tool else None
        content = get("content")
        content = content if type(content) is str else _content(content)
        if error and not content.strip():
            kind, text = as_dict(error).get("type"), as_dict(error).get("message") or error
            content = f"{kind}: {text}" if kind else str(text)
        append(
            Message(
                role,
                content,
                calls,
                text_or_none(get("tool_call_id")),
                text_or_none(get("function")) if tool else None,
                bool(error),
            )
        )
    return out


def _content(value: Any) -> str:
    """Text of Inspect content: media parts become placeholders, not their base64 payloads."""
    if isinstance(value, list):
        value = [
            f"[{p['type']}]" if isinstance(p, dict) and p.get("type") in _MEDIA else p
            for p in value
            if not (isinstance(p, dict) and p.get("type") == "reasoning" and p.get("redacted"))
        ]
    return as_text(value)


def _error(value: Any) -> TrialError | None:
    """Inspect's ``EvalError``; the type is the exception name on the traceback's last line."""
    if not value:
        return None
    if not isinstance(value, dict):
        return TrialError(message=str(value))
    last = (str(value.get("traceback") or "").strip().splitlines() or [""])[-1]
    found = _EXC_NAME.match(last)
    message = value.get("message")
    return TrialError(found.group(1) if found else None, str(message) if message else None)


def _usage(value: Any) -> Usage:
    """Tokens (and cost, when Inspect recorded it) summed over the models a sample used."""
    models = [u for u in as_dict(value).values() if isinstance(u, dict)]
    if not models:
        return Usage()

    def total(key: str) -> int | None:
        values = [u[key] for u in models if isinstance(u.get(key), int)]
        return sum(values) if values else None

    costs = [c for u in models if (c := _number(u.get("total_cost"))) is not None]
    return Usage(total("input_tokens"), total("output_tokens"), sum(costs) if costs else None)


def _instruction(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [
            _content(m.get("content"))
            for m in value
            if isinstance(m, dict) and m.get("role") == "user"
        ]
        return "\n\n".join(t for t in texts if t) or None
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _first_number(*values: Any) -> float | None:
    return next((n for v in values if (n := _number(v)) is not None), None)


def run_name(header: dict[str, Any]) -> str | None:
    """A run named after the eval's task and model (``popularity · claude-sonnet-4``), the model
    without its provider prefix; None when the header names neither."""
    task = header.get("task")
    model = header.get("model")
    task = task.split("/")[-1] if isinstance(task, str) and task.strip() else None
    model = model.split("/")[-1] if isinstance(model, str) and model.strip() else None
    if task is None and model is None:
        return None
    return " · ".join(p for p in (task, model) if p)
