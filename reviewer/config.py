"""Settings: the project's reviewer.toml over the user's config file over defaults.

reviewer.toml (in the current folder) or ~/.config/reviewer/config.toml (XDG_CONFIG_HOME honoured):

    labeler = "ana"            # who labels on this machine (default: the login name)
    rules = "rules.toml"       # trajectory rules applied on import
    rubric = "rubric.toml"     # labeling rubric
    [keys]                     # remap any binding by its id, e.g.
    "transcript.next" = "n,right"
    [judge]
    model = "claude-sonnet-4-5"
    [import]                   # how imports decide pass / fail (the CLI options win)
    pass_threshold = 0.5       # a reward at or above this passes (default 1 − 1e-6)
    success_field = "reward_info.components.base_success"  # a field of the source record
    scorer = "match"           # Inspect logs: the scorer whose score decides
    [gate]                     # budgets of `reviewer gate` (see reviewer.metrics.gate)
    max_cost_per_task = 0.05   # or max_cost_per_task_ratio = 1.2 (to the baseline), and the same
                               # for max_p95_latency_s, max_avg_steps, max_tool_error_rate
    [monitor]                  # `reviewer monitor`
    signals = ["escalated"]    # outcome signals: metadata fields, true (or a number above 0) is bad
"""

from __future__ import annotations

import getpass
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.models import MAX_LABELER, clean_labeler, stored_labeler, threshold_problem

PROJECT_FILE = "reviewer.toml"
_KNOWN = {"labeler", "rules", "rubric", "keys", "judge", "db", "import", "gate", "monitor"}
_IMPORT_KEYS = {"pass_threshold", "success_field", "scorer"}


class ConfigError(ValueError):
    """A config file that cannot be used, named with the place and the reason."""


@dataclass
class Config:
    labeler: str | None = None
    rules: Path | None = None
    rubric: Path | None = None
    db: Path | None = None
    keys: dict[str, str] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)
    pass_threshold: float | None = None  # [import]
    success_field: str | None = None  # [import]
    scorer: str | None = None  # [import]: the Inspect scorer that decides
    gate: dict[str, Any] = field(default_factory=dict)  # [gate], checked by _merge_gate
    monitor: dict[str, Any] = field(default_factory=dict)  # [monitor], checked by _merge_monitor
    sources: list[Path] = field(default_factory=list)

    def labeler_name(self, override: str | None = None) -> str:
        """--labeler, else the config, else the login name ("unknown" when there is none)."""
        return self.known_labeler(override) or "unknown"

    def known_labeler(self, override: str | None = None) -> str | None:
        """--labeler, else the config, else the login name; None when none names anyone (a
        container's user with no login name): a label then asks who gives it, since everyone
        labeling as "unknown" would replace each other's labels."""
        if override:
            return override
        if self.labeler:
            return self.labeler
        try:  # a login name as it is (labels files carry it back), if a labels file could
            return stored_labeler(getpass.getuser())
        except (KeyError, OSError):
            return None


#: What a command that labels says when no one is named (known_labeler is None).
NO_LABELER = (
    "who is labeling? there is no login name to go by: give --labeler NAME (or set "
    'REVIEWER_LABELER, or labeler = "NAME" in reviewer.toml)'
)


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "reviewer" / "config.toml"


#: A rules, rubric or settings file is a few KB: one bigger than this is not one (a device such
#: as /dev/zero given by mistake was read whole, gigabytes of memory before anything was said).
SMALL_FILE_MAX = 16 << 20


class FileTooBig(ValueError):
    """A file given as a small text file (rules, rubric) that is over SMALL_FILE_MAX."""


def path_is(path: str | Path, what: str) -> bool:
    """``Path(path).is_dir()`` / ``is_file()`` / ``exists()`` (WHAT), False when the path cannot be
    looked at: a folder we may not enter raises PermissionError there, a name past the system's
    limits OSError, a NUL byte ValueError."""
    try:
        return bool(getattr(Path(path), what)())
    except (OSError, ValueError):
        return False


def read_small_text(path: str | Path) -> str:
    """The UTF-8 text of a small file, read at most SMALL_FILE_MAX bytes (a pipe from process
    substitution works; a device or a huge file is refused): FileTooBig, OSError or
    UnicodeDecodeError."""
    with open(path, "rb") as fh:
        data = fh.read(SMALL_FILE_MAX + 1)
    if len(data) > SMALL_FILE_MAX:
        raise FileTooBig(f"over {SMALL_FILE_MAX >> 20} MiB: not a rules, rubric or settings file")
    return data.decode("utf-8")


def load_config(cwd: Path | None = None) -> Config:
    """Merge the user's file and then the project's file over the defaults. Only ``Settings``
    calls it (tests/test_layers.py checks): a process reads its settings once."""
    cfg = Config()
    for path in (user_config_path(), (cwd or Path.cwd()) / PROJECT_FILE):
        try:
            present = path.is_file()
        except OSError as e:  # a folder on the way not readable (is_file raises on EACCES)
            raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from e
        if present:
            _merge(cfg, path, _read(path))
    return cfg


class Settings:
    """A process's settings: made once at each entry point (the CLI's group, the app) and passed
    down to every job, which never reads reviewer.toml itself. The files are read on first use, so a
    command that needs no setting runs whatever they hold; a file that does not load raises the same
    ConfigError (one line) at every use."""

    def __init__(self, cwd: Path | None = None, config: Config | None = None) -> None:
        import threading

        self._cwd = cwd
        self._config = config
        self._error: str | None = None
        self._lock = threading.Lock()  # the app's workers ask from several threads

    def get(self) -> Config:
        with self._lock:
            if self._config is None and self._error is None:
                try:
                    self._config = load_config(self._cwd)
                except ConfigError as e:
                    self._error = str(e)
            if self._error is not None:
                raise ConfigError(self._error)
            assert self._config is not None
            return self._config


def resolve_config(cfg: Config | Settings | None) -> Config:
    """The Config a job runs with: the one given, the settings' (ConfigError when they do not
    load), else the defaults (a library caller that passed none reads no file)."""
    if isinstance(cfg, Settings):
        return cfg.get()
    return cfg if cfg is not None else Config()


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from e
    except RecursionError as e:  # tomllib recurses once per nested array or inline table
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from e
    except ValueError as e:  # an integer of more than 4,300 digits (Python's limit)
        raise ConfigError(f"{path}: invalid TOML: {toml_value_error(e)}") from e
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from e


def toml_value_error(e: ValueError) -> str:
    """What tomllib's own ValueError (not a TOMLDecodeError) means, in a few words: Python refuses
    to read an integer of more than 4,300 digits, and says so in terms of its own settings."""
    if "integer string conversion" in str(e):
        return "an integer too long to read (more than 4,300 digits)"
    return str(e)


def _merge(cfg: Config, path: Path, data: dict[str, Any]) -> None:
    unknown = set(data) - _KNOWN
    if unknown:
        raise ConfigError(
            f"{path}: unknown setting {sorted(unknown)[0]!r}; known: {', '.join(sorted(_KNOWN))}"
        )
    cfg.sources.append(path)
    base = path.parent
    for key in ("rules", "rubric", "db"):
        if key in data:
            if not isinstance(data[key], str):
                raise ConfigError(f"{path}: {key} must be a path string")
            setattr(cfg, key, (base / data[key]).resolve())
    if "labeler" in data:
        name = clean_labeler(data["labeler"]) if isinstance(data["labeler"], str) else None
        if name is None:
            raise ConfigError(
                f"{path}: labeler must be a name of 1 to {MAX_LABELER} printable characters"
            )
        cfg.labeler = name
    if "keys" in data:
        keys = data["keys"]
        if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
            raise ConfigError(
                f'{path}: [keys] maps binding ids to key strings, e.g. "app.quit" = "q"'
            )
        cfg.keys.update(keys)
    if "judge" in data:
        if not isinstance(data["judge"], dict):
            raise ConfigError(f"{path}: [judge] must be a table")
        cfg.judge.update(data["judge"])
    if "import" in data:
        _merge_import(cfg, path, data["import"])
    if "gate" in data:
        _merge_gate(cfg, path, data["gate"])
    if "monitor" in data:
        _merge_monitor(cfg, path, data["monitor"])


def _merge_import(cfg: Config, path: Path, table: Any) -> None:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [import] must be a table")
    unknown = set(table) - _IMPORT_KEYS
    if unknown:
        raise ConfigError(
            f"{path}: [import]: unknown setting {sorted(unknown)[0]!r}; known: "
            f"{', '.join(sorted(_IMPORT_KEYS))}"
        )
    if "pass_threshold" in table:
        value = table["pass_threshold"]
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise ConfigError(
                f"{path}: [import] pass_threshold must be a number, got {shown(value)}"
            )
        if problem := threshold_problem(value):
            raise ConfigError(f"{path}: [import] pass_threshold {shown(value)}: {problem}")
        cfg.pass_threshold = float(value)
    if "success_field" in table:
        value = table["success_field"]
        if not isinstance(value, str) or not value.strip() or "" in value.strip().split("."):
            raise ConfigError(
                f"{path}: [import] success_field must be a dotted path, e.g. "
                '"reward_info.components.base_success"'
            )
        cfg.success_field = value.strip()
    if "scorer" in table:
        value = table["scorer"]
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f'{path}: [import] scorer must be a scorer name, e.g. "match"')
        cfg.scorer = value.strip()


#: [gate] budgets: each an absolute limit on the new run, or (``_ratio``) a limit on new / baseline.
GATE_BUDGETS = {
    "max_cost_per_task": "max_cost_per_task_ratio",
    "max_p95_latency_s": "max_p95_latency_ratio",
    "max_avg_steps": "max_avg_steps_ratio",
    "max_tool_error_rate": "max_tool_error_rate_ratio",
}
_GATE_KEYS = {
    *GATE_BUDGETS,
    *GATE_BUDGETS.values(),
    "k",
    "trial_url",
    "budget_noise",
    "new_forbidden",
    "outcome",
    "anchors",
    "anchors_max_cost",
}
#: [gate] new_forbidden values (reviewer.metrics.gate.NEW_FORBIDDEN)
GATE_NEW_FORBIDDEN = ("red flag", "test")


def _unknown(path: Path, section: str, table: dict[str, Any], known: set[str]) -> None:
    unknown = set(table) - known
    if unknown:
        raise ConfigError(
            f"{path}: [{section}] {sorted(unknown)[0]}: unknown setting; known: "
            f"{', '.join(sorted(known))}"
        )


def shown(value: Any) -> str:
    """A TOML value as an error message shows it: numbers and strings as written, the rest by kind
    (a date, a list), never Python's repr of a datetime."""
    import datetime as dt

    if isinstance(value, dt.datetime):
        return "a date and time"
    if isinstance(value, dt.date):
        return "a date"
    if isinstance(value, dt.time):
        return "a time of day"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value.bit_length() > 64:  # TOML hex can hold any size
        return f"an integer of {value.bit_length()} bits"
    return repr(value)


def _positive(path: Path, section: str, key: str, value: Any, zero: bool = False) -> float:
    bad = isinstance(value, bool) or not isinstance(value, int | float)
    if bad or not (value >= 0 if zero else value > 0):
        above = "of 0 or more" if zero else "above 0"
        raise ConfigError(
            f"{path}: [{section}] {key}: must be a number {above}, got {shown(value)}"
        )
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any float (TOML hex holds any size)
        number = float("inf")
    if number == float("inf"):
        raise ConfigError(f"{path}: [{section}] {key}: must be a finite number")
    return number


#: The largest k the gate takes (``[gate] k``, ``reviewer gate --k``), as `reviewer compare`: pass^k of
#: more trials than any task has is n/a.
MAX_K = 1000


def _merge_gate(cfg: Config, path: Path, table: Any) -> None:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [gate] must be a table")
    _unknown(path, "gate", table, _GATE_KEYS)
    for key, value in table.items():
        if key == "k":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
                raise ConfigError(
                    f"{path}: [gate] k: a whole number from 1 to {MAX_K:,}, got {shown(value)}"
                )
            cfg.gate[key] = value
        elif key == "outcome":
            if value not in ("harness", "human", "judge"):
                raise ConfigError(
                    f'{path}: [gate] outcome: "harness", "human" or "judge", got {shown(value)}'
                )
            cfg.gate[key] = value
        elif key == "anchors":
            cfg.gate[key] = _anchors(path, value)
        elif key == "anchors_max_cost":
            cfg.gate[key] = _positive(path, "gate", key, value, zero=True)
        elif key == "budget_noise":
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: [gate] budget_noise: true or false, got {shown(value)}")
            cfg.gate[key] = value
        elif key == "new_forbidden":
            if value not in GATE_NEW_FORBIDDEN:
                raise ConfigError(
                    f'{path}: [gate] new_forbidden: "red flag" or "test", got {shown(value)}'
                )
            cfg.gate[key] = value
        elif key == "trial_url":
            if not isinstance(value, str) or "{trial_id}" not in value:
                raise ConfigError(
                    f"{path}: [gate] trial_url: must be a string holding {{trial_id}}, e.g. "
                    '"https://ci.example/trials/{trial_id}"'
                )
            cfg.gate[key] = value
        else:
            number = _positive(path, "gate", key, value)
            if key == "max_tool_error_rate" and number > 1:
                raise ConfigError(
                    f"{path}: [gate] max_tool_error_rate: a rate between 0 and 1, got {shown(value)}"
                )
            cfg.gate[key] = number


def _anchors(path: Path, value: Any) -> list[Any] | dict[str, str]:
    """[gate] anchors: a list of trial references (ids, or tables with run, task_id and trial),
    or a table naming a queue or a run whose trials are the anchors."""
    usage = (
        f'{path}: [gate] anchors: a list of trial ids (or {{ run = "R", task_id = "T", trial = 1 }}'
        ' tables), or { queue = "NAME" } or { run = "NAME" }'
    )
    if isinstance(value, dict):
        if len(value) != 1 or next(iter(value)) not in ("queue", "run"):
            raise ConfigError(usage)
        name = next(iter(value.values()))
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(usage)
        return {next(iter(value)): name}
    if not isinstance(value, list) or not value:
        raise ConfigError(usage)
    out: list[Any] = []
    for ref in value:
        if isinstance(ref, str) and ref.strip():
            out.append(ref.strip())
        elif (
            isinstance(ref, dict)
            and set(ref) == {"run", "task_id", "trial"}
            and isinstance(ref["run"], str)
            and isinstance(ref["task_id"], str)
            and isinstance(ref["trial"], int)
            and not isinstance(ref["trial"], bool)
        ):
            out.append(dict(ref))
        else:
            raise ConfigError(usage)
    return out


#: The most earlier windows an alert compares with (``--baseline-windows``, ``[monitor]
#: baseline_windows``): ten thousand, more than a year of hour windows (8,760).
MAX_BASELINE_WINDOWS = 10_000

_MONITOR_KEYS = {
    "signals",
    "window",
    "sample",
    "max_cost",
    "baseline_windows",
    "baseline",
    "run",
    "seed",
}


def _merge_monitor(cfg: Config, path: Path, table: Any) -> None:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [monitor] must be a table")
    _unknown(path, "monitor", table, _MONITOR_KEYS)
    for key, value in table.items():
        if key == "signals":
            if not isinstance(value, list) or not all(
                isinstance(v, str) and v.strip() and "" not in v.strip().split(".") for v in value
            ):
                raise ConfigError(
                    f'{path}: [monitor] signals: a list of field names, e.g. ["escalated", '
                    '"ticket.reopened"]'
                )
            cfg.monitor[key] = [v.strip() for v in value]
        elif key == "window":
            if value not in ("day", "hour"):
                raise ConfigError(f"{path}: [monitor] window: day or hour, got {shown(value)}")
            cfg.monitor[key] = value
        elif key == "baseline":
            if value not in ("recent", "same-weekday", "same-hour"):
                raise ConfigError(
                    f"{path}: [monitor] baseline: recent, same-weekday or same-hour, "
                    f"got {shown(value)}"
                )
            cfg.monitor[key] = value
        elif key == "sample":
            number = _positive(path, "monitor", key, value, zero=True)  # as --sample: 0 to 1
            if number > 1:
                raise ConfigError(
                    f"{path}: [monitor] sample: a share between 0 and 1, got {shown(value)}"
                )
            cfg.monitor[key] = number
        elif key == "max_cost":
            cfg.monitor[key] = _positive(path, "monitor", key, value)
        elif key in ("baseline_windows", "seed"):
            low = 1 if key == "baseline_windows" else 0
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or value < low
                or value.bit_length() > 63
            ):
                raise ConfigError(
                    f"{path}: [monitor] {key}: a whole number of {low} or more (below 2^63)"
                )
            if key == "baseline_windows" and value > MAX_BASELINE_WINDOWS:
                raise ConfigError(
                    f"{path}: [monitor] baseline_windows: at most {MAX_BASELINE_WINDOWS:,}, "
                    f"got {value:,}"
                )
            cfg.monitor[key] = value
        elif key == "run":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{path}: [monitor] run: a run name")
            cfg.monitor[key] = value
