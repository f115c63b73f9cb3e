"""The judge's answers about failure clusters: the two forced tools and the strict reading of their
input. Model output is untrusted: a name is one plain line of bounded length, a merge proposal names
clusters by id, and anything else is a problem said in one line (never a traceback).

``record_cluster_name`` gives one cluster a short sentence of what the agent did; ``propose_merges``
lists groups of clusters that describe the same failure. Ids are checked against the clusters asked
about by ``check_merges`` (the reply's shape is checked here, as the runner reads it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

NAME_TOOL = "record_cluster_name"
MERGES_TOOL = "propose_merges"
#: The runner's job kinds for these tools (``judge.reply`` reads their replies through this module).
TOOLS = {"cluster_name": NAME_TOOL, "cluster_merges": MERGES_TOOL}

#: The longest name kept (a longer one is cut at a word with an ellipsis): names are shown on one line.
MAX_NAME = 100
#: The shortest name that says anything.
MIN_NAME = 3
#: The longest reason of a merge proposal kept.
MAX_REASON = 200
#: More proposals than this in one reply are not read (the rest are left out with a warning).
MAX_PROPOSALS = 50

NAME_TOOL_SPEC: dict[str, Any] = {
    "name": NAME_TOOL,
    "description": "Record the cluster's name: one short sentence saying what the agent did.",
    "input_schema": {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": (
                    "What the agent did in these failures, in at most 12 words, past tense, "
                    "no count and no ids: e.g. 'called cancel_order on shipped orders'."
                ),
            }
        },
        "required": ["name"],
    },
}

MERGES_TOOL_SPEC: dict[str, Any] = {
    "name": MERGES_TOOL,
    "description": "Propose merges of clusters that describe the same failure (none is fine).",
    "input_schema": {
        "type": "object",
        "properties": {
            "merges": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "clusters": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Two or more cluster ids, as given.",
                        },
                        "reason": {"type": "string"},
                    },
                    "required": ["clusters", "reason"],
                },
            }
        },
        "required": ["merges"],
    },
}

_SPACE = re.compile(r"\s+")
# a C0/C1 control, DEL, or an invisible / bidi / tag character: never part of a name
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
    "\ufff9-\ufffb\U000e0000-\U000e007f\ud800-\udfff]"
)
# "(12 of 19)" or "(12/19 failures)" at the end: we add the count ourselves
_COUNT = re.compile(r"\s*[(\[]\s*\d+\s*(?:of|/)\s*\d+[^)\]]*[)\]]\s*$", re.IGNORECASE)


def one_line(text: str, limit: int) -> str:
    """``text`` as one plain line: controls and invisible characters dropped, whitespace runs as one
    space, at most ``limit`` characters (cut at a word, with an ellipsis)."""
    line = _SPACE.sub(" ", _UNSAFE.sub(" ", text)).strip()
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-") + "…"


def clean_name(raw: str) -> str:
    """A model's cluster name as we keep it: one line, no quotes around it, no final full stop,
    no count of its own, at most MAX_NAME characters."""
    name = one_line(raw, 10 * MAX_NAME)
    for _ in range(2):
        name = name.strip().strip("\"'`“”‘’").strip()
        name = _COUNT.sub("", name).rstrip(" .").strip()
    return one_line(name, MAX_NAME)


def name_problem(args: dict[str, Any]) -> tuple[str | None, str | None]:
    """(the cleaned name, None) or (None, why the input holds no usable name)."""
    raw = args.get("name")
    if not isinstance(raw, str):
        return None, f"{NAME_TOOL}.name must be a string, got {type(raw).__name__}"
    name = clean_name(raw)
    if len(name) < MIN_NAME:
        return None, f"{NAME_TOOL}.name is empty or too short ({name!r})"
    return name, None


@dataclass(frozen=True)
class Proposal:
    """Merge these clusters (ids as asked, two or more, in the order given), for this reason."""

    clusters: tuple[str, ...]
    reason: str

    @property
    def id(self) -> str:
        """A short stable id to accept it by (``--apply-merge``): from its sorted cluster ids."""
        import hashlib

        digest = hashlib.sha256("\0".join(sorted(self.clusters)).encode()).hexdigest()
        return "m-" + digest[:8]


@dataclass
class Proposals:
    """The proposals that passed every check, and one warning line per one that did not."""

    accepted: list[Proposal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def merges_problem(args: dict[str, Any]) -> str | None:
    """Why a ``propose_merges`` input is not of its shape (a list of objects under ``merges``)."""
    merges = args.get("merges")
    if not isinstance(merges, list):
        return f"{MERGES_TOOL}.merges must be a list, got {type(merges).__name__}"
    return None


def check_merges(args: dict[str, Any], known: set[str]) -> Proposals:
    """The proposals of a ``propose_merges`` input checked strictly against the cluster ids asked
    about: an entry that is not an object with a list of ids, names an unknown id or fewer than two
    clusters is left out; a cluster named by two proposals leaves both out (which one the model
    meant cannot be told). Each left-out entry is one warning line."""
    out = Proposals()
    merges = args.get("merges")
    if not isinstance(merges, list):
        out.warnings.append(merges_problem(args) or "no merges")
        return out
    if len(merges) > MAX_PROPOSALS:
        out.warnings.append(
            f"{len(merges)} merge proposals: only the first {MAX_PROPOSALS} are read"
        )
        merges = merges[:MAX_PROPOSALS]
    candidates: list[tuple[int, Proposal]] = []
    for n, entry in enumerate(merges, 1):
        where = f"merge proposal {n}"
        if not isinstance(entry, dict):
            out.warnings.append(f"{where}: not an object; ignored")
            continue
        ids = entry.get("clusters")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            out.warnings.append(f"{where}: 'clusters' is not a list of ids; ignored")
            continue
        unknown = [i for i in ids if i not in known]
        if unknown:
            shown = one_line(unknown[0], 40)
            out.warnings.append(f"{where}: no cluster with id {shown!r} was asked about; ignored")
            continue
        distinct = tuple(dict.fromkeys(ids))
        if len(distinct) < 2:
            out.warnings.append(f"{where}: fewer than two different clusters; ignored")
            continue
        reason = entry.get("reason")
        text = one_line(reason, MAX_REASON) if isinstance(reason, str) else ""
        candidates.append((n, Proposal(distinct, text)))
    seen: dict[str, int] = {}
    for _, p in candidates:
        for cid in p.clusters:
            seen[cid] = seen.get(cid, 0) + 1
    for n, p in candidates:
        twice = [c for c in p.clusters if seen[c] > 1]
        if twice:
            out.warnings.append(
                f"merge proposal {n}: cluster {twice[0]} is in two proposals; both ignored"
            )
            continue
        out.accepted.append(p)
    return out


def input_problem(kind: str, args: dict[str, Any]) -> tuple[str | None, str | None]:
    """For ``judge.reply``: (the value kept, None) or (None, the problem) for a cluster tool's input.
    A name is kept cleaned; merges are kept as the input's JSON, checked against ids later."""
    import json

    if kind == "cluster_name":
        return name_problem(args)
    problem = merges_problem(args)
    if problem is not None:
        return None, problem
    return json.dumps(args, ensure_ascii=False, sort_keys=True), None
