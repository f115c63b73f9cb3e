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
"""

from __future__ import annotations

import getpass
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT_FILE = "reviewer.toml"
_KNOWN = {"labeler", "rules", "rubric", "keys", "judge", "db", "import"}
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
    sources: list[Path] = field(default_factory=list)

    def labeler_name(self, override: str | None = None) -> str:
        """--labeler, else the config, else the login name."""
        if override:
            return override
        if self.labeler:
            return self.labeler
        try:
            return getpass.getuser()
        except (KeyError, OSError):
            return "unknown"


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "reviewer" / "config.toml"


def load_config(cwd: Path | None = None) -> Config:
    """Merge the user's file and then the project's file over the defaults."""
    cfg = Config()
    for path in (user_config_path(), (cwd or Path.cwd()) / PROJECT_FILE):
        if path.is_file():
            _merge(cfg, path, _read(path))
    return cfg


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from e
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from e


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
        if not isinstance(data["labeler"], str) or not data["labeler"].strip():
            raise ConfigError(f"{path}: labeler must be a non-empty string")
        cfg.labeler = data["labeler"].strip()
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
            raise ConfigError(f"{path}: [import] pass_threshold must be a number")
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
