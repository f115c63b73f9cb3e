"""Judge settings: model, sampling parameters, prompt version, concurrency, retries, prices.

Read from ``[judge]`` in reviewer.toml (or the user config) and overridden by command-line options::

    [judge]
    model = "claude-sonnet-4-5"
    # temperature = 0.0          # not sent unless set: API version 2026-10-21 refuses sampling
    #                            # parameters; set it only for an endpoint that accepts it
    max_tokens = 1024
    prompt_version = "v1"          # part of the judge id; change it when you change instructions
    instructions = "judge.txt"     # optional extra instructions appended to the judge's prompt
    concurrency = 8
    max_retries = 4                # retries per request (429, 5xx, overloaded, timeouts); one budget
    max_wait_s = 60                # the longest retry-after honoured; a longer one stops the run
    timeout_s = 120
    max_chars = 60000              # transcript budget before trimming (see prompt.py)
    trust_threshold = 0.6          # kappa lower bound the agreement report needs to trust a judge
    [judge.prices]                 # USD per million tokens; overrides and adds to the defaults
    "claude-sonnet-4-5" = { input = 3.0, output = 15.0 }
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reviewer.config import path_is

DEFAULT_MODEL = "claude-sonnet-4-5"
#: The cost cap of a judge run when none is set (--max-cost, [judge] max_cost): one Enter in the app
#: or one forgotten flag never spends more than this.
DEFAULT_MAX_COST = 10.0
PROMPT_VERSION = "v1"
#: Message Batches are billed at half the price of the same request made directly.
BATCH_DISCOUNT = 0.5
#: Prompt-cache input tokens, as a multiple of the input price: a (5-minute) cache write, a read.
CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1

#: USD per million input / output tokens (Anthropic's list prices; override in [judge.prices]).
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-0": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4-0": (3.0, 15.0),
    "claude-3-7-sonnet-latest": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku-latest": (0.8, 4.0),
}

KNOWN_SETTINGS = {
    "model",
    "temperature",
    "max_tokens",
    "prompt_version",
    "instructions",
    "concurrency",
    "max_retries",
    "max_wait_s",
    "timeout_s",
    "max_chars",
    "trust_threshold",
    "prices",
    "max_cost",
}


class JudgeConfigError(ValueError):
    """A [judge] setting that cannot be used; the message names the setting and the reason."""


@dataclass(frozen=True)
class Prices:
    input_per_mtok: float
    output_per_mtok: float

    def cost(
        self,
        input_tokens: int,
        output_tokens: int,
        *,
        cache_write: int = 0,
        cache_read: int = 0,
        batch: bool = False,
    ) -> float:
        """USD for a reply's usage: prompt-cache writes at 1.25× and reads at 0.1× the input price."""
        tokens_in = input_tokens + cache_write * CACHE_WRITE_FACTOR + cache_read * CACHE_READ_FACTOR
        usd = (tokens_in * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6
        return usd * BATCH_DISCOUNT if batch else usd


@dataclass(frozen=True)
class JudgeSettings:
    model: str = DEFAULT_MODEL
    temperature: float | None = None
    max_tokens: int = 1024
    prompt_version: str = PROMPT_VERSION
    instructions: str = ""
    concurrency: int = 8
    max_retries: int = 4
    max_wait_s: float = 60.0
    timeout_s: float = 120.0
    max_chars: int = 60_000
    max_cost: float | None = None
    #: ``max_cost`` is DEFAULT_MAX_COST because none was set (the run says how to raise it)
    cap_is_default: bool = False
    trust_threshold: float = 0.6
    prices: Mapping[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))

    def price(self) -> Prices | None:
        """The price of this model: an exact entry, else the longest known prefix (dated ids)."""
        if self.model in self.prices:
            return Prices(*self.prices[self.model])
        best = max((m for m in self.prices if self.model.startswith(m)), key=len, default=None)
        return Prices(*self.prices[best]) if best else None

    @property
    def version_tag(self) -> str:
        """The prompt version, plus a digest of any extra instructions (they change the prompt)."""
        if not self.instructions:
            return self.prompt_version
        digest = hashlib.sha256(self.instructions.encode()).hexdigest()[:8]
        return f"{self.prompt_version}+{digest}"

    def judge_id(self, rubric_ref: str, kind: str = "verdict") -> str:
        """``model/prompt version/rubric`` — recorded with every verdict; pairwise judges add ``pair``."""
        base = f"{self.model}/{self.version_tag}/{rubric_ref}"
        return base if kind == "verdict" else f"{base}/pair"

    def with_overrides(self, **values: Any) -> JudgeSettings:
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def settings_from_config(judge: Mapping[str, Any], base_dir: Path | None = None) -> JudgeSettings:
    """Settings from a config's [judge] table, with one-line errors for values that cannot be used."""
    unknown = set(judge) - KNOWN_SETTINGS
    if unknown:
        raise JudgeConfigError(
            f"[judge]: unknown setting {sorted(unknown)[0]!r}; known: {', '.join(sorted(KNOWN_SETTINGS))}"
        )
    values: dict[str, Any] = {}
    for key, kind in (
        ("model", str),
        ("prompt_version", str),
        ("temperature", float),
        ("timeout_s", float),
        ("max_wait_s", float),
        ("trust_threshold", float),
        ("max_cost", float),
        ("max_tokens", int),
        ("concurrency", int),
        ("max_retries", int),
        ("max_chars", int),
    ):
        if key in judge:
            values[key] = _typed(key, judge[key], kind)
    if "instructions" in judge:
        values["instructions"] = _instructions(judge["instructions"], base_dir)
    if "prices" in judge:
        values["prices"] = {**DEFAULT_PRICES, **_prices(judge["prices"])}
    settings = JudgeSettings(**values)
    validate(settings)
    return settings


def validate(s: JudgeSettings) -> None:
    if not s.model.strip():
        raise JudgeConfigError("judge model must not be empty")
    if s.temperature is not None and not 0.0 <= s.temperature <= 1.0:
        raise JudgeConfigError(f"temperature must be between 0 and 1, got {s.temperature:g}")
    if s.max_tokens < 16:
        raise JudgeConfigError(f"max_tokens must be at least 16, got {s.max_tokens}")
    if s.concurrency < 1:
        raise JudgeConfigError(f"concurrency must be at least 1, got {s.concurrency}")
    if s.max_retries < 0:
        raise JudgeConfigError(f"max_retries must be 0 or more, got {s.max_retries}")
    # "not x > 0" rather than "x <= 0": NaN compares false either way, and a NaN cap or wait
    # let every request through (a run with "cost cap $nan" spent without limit)
    if not 0 <= s.max_wait_s < math.inf:
        raise JudgeConfigError(f"max_wait_s must be a number of 0 or more, got {s.max_wait_s:g}")
    if not 0 < s.timeout_s < math.inf:
        raise JudgeConfigError(f"timeout_s must be a positive number, got {s.timeout_s:g}")
    if s.max_chars < 2000:
        raise JudgeConfigError(f"max_chars must be at least 2000, got {s.max_chars}")
    if s.max_cost is not None and not 0 < s.max_cost < math.inf:
        raise JudgeConfigError(f"max cost must be a positive number of USD, got {s.max_cost:g}")
    if not s.prompt_version.strip() or "/" in s.prompt_version:
        raise JudgeConfigError("prompt_version must be a non-empty string without '/'")


def _price(value: float) -> float:
    try:
        return float(value)
    except OverflowError:  # a TOML hex integer beyond any float
        return math.inf


def _typed(key: str, value: Any, kind: type) -> Any:
    from reviewer.config import shown

    big = isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 63
    if big and kind is not str:
        # TOML's hex integers have no size limit: beyond a float (OverflowError) or a printable
        # number (Python's 4,300-digit limit) they were an internal error
        raise JudgeConfigError(f"[judge] {key} must be a number below 2^63, got {shown(value)}")
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind is str and isinstance(value, str):
        return value.strip()
    names = {float: "a number", int: "an integer", str: "a string"}
    raise JudgeConfigError(f"[judge] {key} must be {names[kind]}, got {shown(value)}")


def _instructions(value: Any, base_dir: Path | None) -> str:
    if not isinstance(value, str):
        raise JudgeConfigError("[judge] instructions must be a file name or the text itself")
    path = (base_dir or Path.cwd()) / value
    if "\n" not in value and len(value) < 255 and path_is(path, "is_file"):
        try:
            return path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise JudgeConfigError(f"{path}: cannot read the judge instructions: {e}") from e
    if _looks_like_a_file(value) or path_is(path, "exists"):
        # a file name that names no file: sent as the text, "/tmp" or "judge.txt" would have
        # joined every prompt (and changed the judge id) with no word said
        what = (
            "a folder"
            if path_is(path, "is_dir")
            else "not a file"
            if path_is(path, "exists")
            else ""
        )
        raise JudgeConfigError(
            f"[judge] instructions: {path}: {what or 'no such file'}; name the file of extra "
            "instructions, or give the text itself"
        )
    return value.strip()


#: What a file name of instructions ends with; text given inline has spaces, or no such ending.
_FILE_ENDINGS = (".txt", ".md", ".markdown", ".toml", ".prompt", ".j2", ".jinja")


def _looks_like_a_file(value: str) -> bool:
    """Whether the instructions given look like a file's name rather than the text itself: one word
    with a path separator or a text file's ending."""
    text = value.strip()
    if not text or any(c.isspace() for c in text):
        return False
    return "/" in text or "\\" in text or text.lower().endswith(_FILE_ENDINGS)


def _prices(table: Any) -> dict[str, tuple[float, float]]:
    if not isinstance(table, dict):
        raise JudgeConfigError(
            "[judge.prices] maps a model to {input = USD, output = USD} per MTok"
        )
    out: dict[str, tuple[float, float]] = {}
    for model, entry in table.items():
        ok = isinstance(entry, dict) and all(
            isinstance(entry.get(k), int | float) and not isinstance(entry.get(k), bool)
            for k in ("input", "output")
        )
        if not ok:
            raise JudgeConfigError(
                f"[judge.prices] {model!r} must be {{input = USD, output = USD}} per million tokens"
            )
        prices = (_price(entry["input"]), _price(entry["output"]))
        if not all(0 <= p < math.inf for p in prices):  # a NaN or negative price defeats the cap
            raise JudgeConfigError(
                f"[judge.prices] {model!r}: prices must be numbers of 0 or more USD per million "
                f"tokens, got input {prices[0]:g}, output {prices[1]:g}"
            )
        out[model] = prices
    return out
