"""Claude Code sessions: ``~/.claude/projects/<project>/<session>.jsonl``, one record per line.

Records form a tree through ``uuid`` / ``parentUuid``. One session (``sessionId``) is one trial with no
outcome (unscored), stored whole or not at all (a line that cannot be read stops the file), and one
trial however often it is imported (``SESSION_KEY``: a newer version replaces the stored one). Its main chain is read from the leaf back to the root through ``parentUuid`` (and
``logicalParentUuid`` across a compaction), not in file order, so abandoned branches (edits, retries) are
left out. Consecutive records of one streamed assistant message (same ``message.id``) are one message,
their usage counted once.

- ``tool_use`` blocks are tool calls; ``tool_result`` blocks are tool messages; ``thinking`` blocks are
  kept in front of the assistant's text as ``[thinking] …``.
- A compaction (``compact_boundary`` system record) is a system marker message
  ``── context compacted … ──``; the summary that follows (``isCompactSummary``) stays a user message.
  The marker indices are in ``metadata["compactions"]``.
- ``/clear`` does not end the trial: it is a system marker ``── /clear: context cleared ──``
  (``metadata["clears"]``). One session id stays one trial.
- Side-chains (subagents): ``isSidechain`` records in the session file, and ``agent-<id>.jsonl`` files
  beside the session file (or in ``<session>/subagents/``) whose agent id a ``Task`` tool result names,
  are inserted after that tool result between system markers ``▸ subagent <id> …`` and
  ``◂ end of subagent <id>``; side-chain records no Task result places (older files name no agent)
  follow the main chain, one ``▸ side-chain`` block per root. ``metadata["sidechains"]`` lists each
  block with its message index range. A side-chain file imported on its own is skipped with a reason
  (its session file reads it).
- Task id: the project folder's name when the file is under ``~/.claude/projects/<folder>/`` (the
  folder starts with ``-``), else the last part of the session's ``cwd``, else its ``slug``, else the
  session id. The model names go to ``metadata["model"]``.
- Usage: ``input_tokens`` is input plus cache-creation plus cache-read tokens of every message (main
  chain and side-chains), ``output_tokens`` the output tokens; the cache parts are in metadata.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from reviewer.ingest.base import (
    BOM,
    IngestError,
    Kind,
    Record,
    RecordError,
    as_dict,
    as_text,
    jsonl_spans,
    load_line,
)
from reviewer.ingest.reading import place
from reviewer.models import Message, Skip, ToolCall, Trial, Usage

NAME = "claude-code"
KIND: Kind = "trials"
#: A session id is one trial in its run: another version of a stored session (it grew, or was cut
#: short before) replaces it when newer (``ingest.files.newer_version``), else is already stored.
SESSION_KEY = "session_id"

_TYPES = (b'"type":"user"', b'"type":"assistant"', b'"type":"system"', b'"type":"summary"')
_ENTRY_TYPES = {"user", "assistant", "system"}
_CLEAR = re.compile(r"<command-name>\s*/clear\s*</command-name>")
_AGENT_ID = re.compile(r"agentId:\s*([\w-]+)")


def sniff(path: Path, head: bytes) -> bool:
    """JSON lines whose records carry Claude Code's ``sessionId`` and ``parentUuid``/``leafUuid``."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text.startswith(b"{"):
        return False
    compact = re.sub(rb'"\s*:\s*"', b'":"', text)
    return (
        b'"sessionId"' in text
        and (b'"parentUuid"' in text or b'"leafUuid"' in text)
        and any(t in compact for t in _TYPES)
    )


def parse(path: Path) -> Iterator[Record]:
    """One unscored trial per session id in the file, in order of first appearance.

    A session is stored whole or not at all: a line that cannot be read (invalid, a value the
    store cannot keep, too long, an entry without a session id) stops the whole file with an
    IngestError naming it, since it cannot be told which session it belonged to; a subagent file
    with such a line skips the session that reads it. The file is read in two passes so that a
    session of hundreds of MB is never held parsed: the first keeps only each record's place in
    the tree (:data:`_KEEP`) and where its line is; the second reads the lines of each session's
    chain again, one at a time, as its messages are built."""
    file = str(path)
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise IngestError(file, f"cannot read: {exc.strerror or exc}") from None
    with fh:
        sessions, summaries, bad = _index(fh, file)
        if bad is not None:
            raise IngestError(file, f"{bad.reason}; nothing of this file {_WHOLE}", line=bad.line)
        if not sessions:
            raise IngestError(
                file, "no Claude Code session records (user/assistant lines with sessionId)"
            )
        lines = _Lines(fh, file)
        reached = place()
        reached.total = len(sessions)
        for sid, recs in sessions.items():
            reached.done += 1
            try:
                yield _session(path, sid, recs, summaries, lines)
            except _SideProblem as side:
                yield Skip(
                    side.skip.file,
                    side.skip.line,
                    f"{side.skip.reason}; session {sid} not {_WHOLE}",
                )
            except (TypeError, ValueError, AttributeError, KeyError) as exc:
                yield Skip(file, recs[0].get("_line"), f"session {sid}: malformed session: {exc!r}")


_WHOLE = "imported (a Claude Code session is stored whole or not at all)"
#: What the first pass keeps of a record: its place in the tree and the few strings the trial's
#: metadata takes from the chain; never its content.
_KEEP = (
    "uuid",
    "parentUuid",
    "logicalParentUuid",
    "type",
    "sessionId",
    "isSidechain",
    "agentId",
    "cwd",
    "gitBranch",
    "version",
    "slug",
    "timestamp",
)


class _SideProblem(Exception):
    """A subagent file of a session holds a line that cannot be read: the session is skipped."""

    def __init__(self, skip: Skip) -> None:
        super().__init__(skip.reason)
        self.skip = skip


def _index(
    fh: BinaryIO, file: str, side: bool = False
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str], Skip | None]:
    """The first pass over an open session file: the kept part of each entry record by session id
    (``_line``, ``_at`` and ``_len`` say where its line is), the compaction summaries by leaf
    uuid, and the first line that cannot be read (None when every line can). In a subagent file
    (``side``) an entry without a session id is kept under ``""``."""
    sessions: dict[str, list[dict[str, Any]]] = {}
    summaries: dict[str, str] = {}
    for span, line in jsonl_spans(fh, file):
        if isinstance(span, Skip):
            return sessions, summaries, span
        lineno, at, length = span
        try:
            obj = load_line(line)
        except RecordError as exc:
            return sessions, summaries, Skip(file, lineno, str(exc))
        if not isinstance(obj, dict):
            return (
                sessions,
                summaries,
                Skip(file, lineno, f"not a JSON object ({type(obj).__name__})"),
            )
        kind = obj.get("type")
        if kind == "summary":
            if isinstance(obj.get("leafUuid"), str) and isinstance(obj.get("summary"), str):
                summaries[obj["leafUuid"]] = obj["summary"]
            continue
        sid = obj.get("sessionId")
        if not (isinstance(sid, str) and sid):
            if kind in _ENTRY_TYPES and not side:
                return sessions, summaries, Skip(file, lineno, "record has no sessionId")
            if kind not in _ENTRY_TYPES:
                continue
            sid = ""
        kept = {k: obj[k] for k in _KEEP if k in obj}
        kept["_line"], kept["_at"], kept["_len"] = lineno, at, length
        sessions.setdefault(sid, []).append(kept)
    return sessions, summaries, None


class _Lines:
    """The second pass: a record read again from its line, through the file the first pass read."""

    def __init__(self, fh: BinaryIO, file: str) -> None:
        self.fh = fh
        self.file = file

    def load(self, kept: dict[str, Any]) -> dict[str, Any]:
        self.fh.seek(kept["_at"])
        raw = self.fh.read(kept["_len"])
        try:
            obj = load_line(raw.strip().removeprefix(BOM))
        except RecordError:
            obj = None
        if not isinstance(obj, dict) or obj.get("uuid") != kept.get("uuid"):
            raise IngestError(
                self.file, "the file changed while it was read; import it again", kept["_line"]
            )
        return obj


def _session(
    path: Path,
    sid: str,
    recs: list[dict[str, Any]],
    summaries: dict[str, str],
    lines: _Lines,
) -> Record:
    file = str(path)
    entries = [r for r in recs if r.get("type") in _ENTRY_TYPES]
    main = [r for r in entries if not r.get("isSidechain")]
    if not main:
        return Skip(
            file,
            recs[0].get("_line"),
            f"session {sid}: only side-chain (subagent) records; they are read with their session file",
        )
    chain = _chain(main)
    inline_side = [r for r in entries if r.get("isSidechain")]
    state = _State()
    messages: list[Message] = []
    sidechains: list[dict[str, Any]] = []
    for rec in chain:
        added = _entry(lines.load(rec), state)
        messages.extend(added)
        for m in added:
            if m.role != "tool" or not m.tool_call_id:
                continue
            agent = state.agents.get(m.tool_call_id)
            if agent is None:
                continue
            side_state = _State()
            side_state.seen_ids = state.seen_ids
            side_msgs = _subagent(path, agent, sid, side_state) or [
                x
                for r in _chain([r for r in inline_side if r.get("agentId") == agent])
                for x in _entry(lines.load(r), side_state)
            ]
            if side_msgs:
                start = len(messages)
                state.absorb(side_state)
                messages.append(
                    Message(
                        role="system", content=f"▸ subagent {agent} ({len(side_msgs)} messages)"
                    )
                )
                messages.extend(side_msgs)
                messages.append(Message(role="system", content=f"◂ end of subagent {agent}"))
                sidechains.append({"agent_id": agent, "start": start, "end": len(messages) - 1})
    placed = {s["agent_id"] for s in sidechains}
    unplaced = [
        r for r in inline_side if r.get("agentId") not in placed or r.get("agentId") is None
    ]
    for side_chain in _roots(unplaced) if unplaced else []:
        # side-chain records in the session file that no Task result placed: after the main chain
        start = len(messages)
        side_state = _State()
        side_state.seen_ids = state.seen_ids
        side_msgs = [x for r in side_chain for x in _entry(lines.load(r), side_state)]
        state.absorb(side_state)
        messages.append(Message(role="system", content=f"▸ side-chain ({len(side_msgs)} messages)"))
        messages.extend(side_msgs)
        messages.append(Message(role="system", content="◂ end of side-chain"))
        sidechains.append({"agent_id": None, "start": start, "end": len(messages) - 1})
    first = chain[0]
    metadata: dict[str, Any] = {"session_id": sid}
    for key in ("cwd", "gitBranch", "version", "slug"):
        value = next((r.get(key) for r in chain if isinstance(r.get(key), str)), None)
        if value:
            metadata[key] = value
    if state.models:
        metadata["model"] = ", ".join(state.models)
    if state.cache_creation or state.cache_read:
        metadata["cache_creation_input_tokens"] = state.cache_creation
        metadata["cache_read_input_tokens"] = state.cache_read
    compactions = [
        i for i, m in enumerate(messages) if m.content.startswith("── context compacted")
    ]
    clears = [i for i, m in enumerate(messages) if m.content == _CLEAR_MARK]
    if compactions:
        metadata["compactions"] = compactions
    if clears:
        metadata["clears"] = clears
    if sidechains:
        metadata["sidechains"] = sidechains
    summary = summaries.get(str(chain[-1].get("uuid")))
    if summary:
        metadata["summary"] = summary
    times = [r["timestamp"] for r in chain if isinstance(r.get("timestamp"), str)]
    if times:
        metadata["started_at"], metadata["ended_at"] = times[0], times[-1]
    instruction = next((m.content for m in messages if m.role == "user" and m.content), None)
    task = _task_id(path, metadata, sid)
    return Trial(
        task_id=task,
        run=f"claude-code · {task}",  # one run per project: its sessions side by side
        messages=messages,
        passed=None,
        reward=None,
        usage=Usage(
            input_tokens=state.input_tokens if state.seen_usage else None,
            output_tokens=state.output_tokens if state.seen_usage else None,
        ),
        metadata=metadata,
        instruction=instruction,
        source_line=first.get("_line"),
        # the session is the trial: every version of it has this id (see SESSION_KEY)
        fingerprint=b"claude-code session\0" + sid.encode(),
    )


_CLEAR_MARK = "── /clear: context cleared ──"


class _State:
    """What a walk over records gathers: token totals, models, Task tool calls' agent ids."""

    def __init__(self) -> None:
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_creation = 0
        self.cache_read = 0
        self.seen_usage = False
        self.models: list[str] = []
        self.seen_ids: set[str] = set()
        self.names: dict[str, str] = {}
        self.agents_pending: set[str] = set()  # tool_use ids of Task (subagent) calls
        self.agents: dict[str, str] = {}  # tool_use id of a Task call -> agent id
        self.last_message_id: str | None = None
        self.last_assistant: Message | None = None

    def absorb(self, other: _State) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_creation += other.cache_creation
        self.cache_read += other.cache_read
        self.seen_usage = self.seen_usage or other.seen_usage
        self.models.extend(m for m in other.models if m not in self.models)

    def usage(self, message: dict[str, Any]) -> None:
        usage = as_dict(message.get("usage"))
        if not usage:
            return
        mid = message.get("id")
        if isinstance(mid, str):
            if mid in self.seen_ids:
                return
            self.seen_ids.add(mid)
        numbers = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
        self.cache_creation += numbers.get("cache_creation_input_tokens", 0)
        self.cache_read += numbers.get("cache_read_input_tokens", 0)
        self.input_tokens += (
            numbers.get("input_tokens", 0)
            + numbers.get("cache_creation_input_tokens", 0)
            + numbers.get("cache_read_input_tokens", 0)
        )
        self.output_tokens += numbers.get("output_tokens", 0)
        self.seen_usage = True


def _chain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records from the root to the leaf written last (a record no other names as parent),
    following ``parentUuid``.

    A record whose parent is not in the file (a resumed or compacted session) starts the chain; a
    ``logicalParentUuid`` bridges a compaction. Records not on the chain are left out."""
    by_uuid = {r["uuid"]: r for r in records if isinstance(r.get("uuid"), str)}
    if not by_uuid:
        return records
    parents = {
        r.get(key)
        for r in records
        for key in ("parentUuid", "logicalParentUuid")
        if isinstance(r.get(key), str)
    }
    leaf = next(
        (
            r
            for r in reversed(records)
            if isinstance(r.get("uuid"), str) and r["uuid"] not in parents
        ),
        next((r for r in reversed(records) if isinstance(r.get("uuid"), str)), records[-1]),
    )
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    node: dict[str, Any] | None = leaf
    while node is not None and node["uuid"] not in seen:
        seen.add(node["uuid"])
        out.append(node)
        parent = node.get("parentUuid") or node.get("logicalParentUuid")
        node = by_uuid.get(parent) if isinstance(parent, str) else None
    out.reverse()
    return out


def _roots(records: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """One chain per tree of ``records`` (several subagents written into the session file), in the
    order their roots appear."""
    by_uuid = {r["uuid"]: r for r in records if isinstance(r.get("uuid"), str)}

    def root_of(rec: dict[str, Any]) -> int:
        seen: set[int] = set()
        while id(rec) not in seen:
            seen.add(id(rec))
            parent = rec.get("parentUuid")
            if not isinstance(parent, str) or parent not in by_uuid:
                break
            rec = by_uuid[parent]
        return id(rec)

    trees: dict[int, list[dict[str, Any]]] = {}
    for rec in records:
        trees.setdefault(root_of(rec), []).append(rec)
    return [_chain(tree) for tree in trees.values()]


def _entry(rec: dict[str, Any], state: _State) -> list[Message]:
    """The messages of one record (a user record may hold tool results and text)."""
    kind = rec.get("type")
    if kind == "system":
        state.last_assistant = None
        if rec.get("subtype") == "compact_boundary":
            meta = as_dict(rec.get("compactMetadata"))
            bits = [f"{k} {meta[k]}" for k in ("trigger", "preTokens") if meta.get(k) is not None]
            detail = f" ({', '.join(bits)})" if bits else ""
            return [Message(role="system", content=f"── context compacted{detail} ──")]
        return []
    message = as_dict(rec.get("message"))
    content = message.get("content")
    if kind == "assistant":
        return _assistant(message, content, state)
    state.last_assistant = None
    if rec.get("isMeta"):
        return []
    if isinstance(content, str):
        if _CLEAR.search(content):
            return [Message(role="system", content=_CLEAR_MARK)]
        return [Message(role="user", content=content)]
    out: list[Message] = []
    texts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            call_id = block.get("tool_use_id")
            call_id = str(call_id) if call_id is not None else None
            text = as_text(block.get("content"))
            if call_id and call_id in state.agents_pending:
                agent = _agent_of(rec, text)
                if agent:
                    state.agents[call_id] = agent
            out.append(
                Message(
                    role="tool",
                    content=text,
                    tool_call_id=call_id,
                    name=state.names.get(call_id or ""),
                    is_error=bool(block.get("is_error")),
                )
            )
        elif block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") in ("image", "document"):
            texts.append(f"[{block.get('type')}]")
    if texts:
        text = "\n".join(texts)
        out.append(
            Message(role="system", content=_CLEAR_MARK)
            if _CLEAR.search(text)
            else Message(role="user", content=text)
        )
    return out


def _agent_of(rec: dict[str, Any], text: str) -> str | None:
    result = as_dict(rec.get("toolUseResult"))
    if isinstance(result.get("agentId"), str):
        return str(result["agentId"])
    match = _AGENT_ID.search(text)
    return match.group(1) if match else None


def _assistant(message: dict[str, Any], content: Any, state: _State) -> list[Message]:
    model = message.get("model")
    if isinstance(model, str) and model and model != "<synthetic>" and model not in state.models:
        state.models.append(model)
    state.usage(message)
    texts: list[str] = []
    calls: list[ToolCall] = []
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "thinking":
            thought = str(block.get("thinking", ""))
            if thought:
                texts.append(f"[thinking] {thought}")
        elif kind == "redacted_thinking":
            texts.append("[thinking redacted]")
        elif kind in ("tool_use", "server_tool_use"):
            call = ToolCall(
                name=str(block.get("name", "")),
                arguments=block.get("input"),
                id=str(block["id"]) if block.get("id") is not None else None,
            )
            if call.id:
                state.names[call.id] = call.name
                if call.name in ("Task", "Agent"):
                    state.agents_pending.add(call.id)
            calls.append(call)
    mid = message.get("id")
    previous = state.last_assistant
    if previous is not None and isinstance(mid, str) and mid == state.last_message_id:
        # one streamed message written as several records: merge into the message before
        if texts:
            previous.content = "\n".join(x for x in (previous.content, *texts) if x)
        previous.tool_calls.extend(calls)
        return []
    msg = Message(role="assistant", content="\n".join(texts), tool_calls=calls)
    state.last_assistant = msg
    state.last_message_id = mid if isinstance(mid, str) else None
    return [msg]


def subagent_beside_session(path: Path) -> bool:
    """``path`` is a subagent's ``agent-<id>.jsonl`` lying where its session's import reads it:
    beside ``<session id>.jsonl``, or in ``<session id>/subagents/`` beside it. An import walking
    the folder passes over it without a word (the session reads it); elsewhere, or named on its
    own, it is skipped with its reason."""
    if not path.name.startswith("agent-") or path.suffix != ".jsonl":
        return False
    try:
        with path.open("rb") as fh:
            first = json.loads(fh.readline(1 << 20).removeprefix(BOM))
    except (OSError, ValueError):
        return False
    sid = first.get("sessionId") if isinstance(first, dict) else None
    if not isinstance(sid, str) or not sid or first.get("isSidechain") is not True:
        return False
    session = f"{sid}.jsonl"
    beside = path.parent
    if path.parent.name == "subagents" and path.parent.parent.name == sid:
        beside = path.parent.parent.parent
    try:  # the id is the file's text: a name too long or with a NUL is no session beside it
        return (beside / session).is_file()
    except (OSError, ValueError):
        return False


def _subagent(path: Path, agent: str, sid: str, state: _State) -> list[Message]:
    """The messages of subagent ``agent`` from its own file beside the session file, if there is
    one (none otherwise); _SideProblem when that file has a line that cannot be read."""
    candidates = [
        *sorted(path.parent.glob(f"*agent-{agent}.jsonl")),
        *sorted((path.parent / path.stem / "subagents").glob(f"agent-{agent}.jsonl")),
    ]
    for candidate in candidates:
        if candidate == path:
            continue
        try:
            fh = candidate.open("rb")
        except OSError:
            continue
        with fh:
            sessions, _, bad = _index(fh, str(candidate), side=True)
            side = [
                r
                for r in sessions.get(sid, []) + sessions.get("", [])
                if r.get("type") in _ENTRY_TYPES
            ]
            if side and bad is not None:
                raise _SideProblem(bad)
            if side:
                lines = _Lines(fh, str(candidate))
                return [x for r in _chain(side) for x in _entry(lines.load(r), state)]
    return []


def _task_id(path: Path, metadata: dict[str, Any], sid: str) -> str:
    folder = path.resolve().parent.name
    if folder.startswith("-"):
        return folder
    cwd = metadata.get("cwd")
    if isinstance(cwd, str) and cwd.strip("/\\"):
        return re.split(r"[/\\]", cwd.rstrip("/\\"))[-1]
    slug = metadata.get("slug")
    return slug if isinstance(slug, str) and slug else sid
