"""Redaction speed: ``Redactor.text`` over every string of a tau-bench run, against the redactor
before issue 14 (read from git) and, when installed, detect-secrets' plugins for the same kinds.

Prints seconds per pass and the ratios (target: well under 10x the old redactor; an export spends
most of its time elsewhere). Run: ``python bench/redact_speed.py [FILE.json] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: The commit whose reviewer/export/redact.py is the redactor before issue 14.
OLD_REV = "c334481e9f5a261f498b0f8e10eaab49eb34e648"
CORPUS = REPO.parent / "shared" / "corpora" / "tau-bench" / "gpt-4o-airline.json"
FIXTURE = REPO / "tests" / "fixtures" / "tau_bench" / "gpt-4o-airline-5-tasks.json"
# the detect-secrets plugins for the kinds of issue 14 (its entropy plugins flag plain words)
DS_PLUGINS = (
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "JwtTokenDetector",
    "KeywordDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "SendGridDetector",
    "SlackDetector",
    "StripeDetector",
)


def strings_of(obj: Any, out: list[str]) -> list[str]:
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, list):
        for v in obj:
            strings_of(v, out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.append(str(k))
            strings_of(v, out)
    return out


def old_redactor() -> ModuleType | None:
    try:
        source = subprocess.run(
            ["git", "show", f"{OLD_REV}:reviewer/export/redact.py"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = ModuleType("old_redact")
    exec(compile(source, "old_redact.py", "exec"), module.__dict__)
    return module


def detect_secrets_pass() -> Callable[[str], int] | None:
    if importlib.util.find_spec("detect_secrets") is None:
        return None
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugins = [
        cls()
        for cls in get_mapping_from_secret_type_to_class().values()
        if cls.__name__ in DS_PLUGINS
    ]

    def run(s: str) -> int:
        # analyze_string never verifies (no network); analyze_line may, depending on settings
        return sum(1 for line in s.split("\n") for p in plugins for _ in p.analyze_string(line))

    return run


def timed(fn: Callable[[str], object], strings: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for s in strings:
            fn(s)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    from reviewer.export.redact import Redactor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "file", nargs="?", type=Path, default=CORPUS if CORPUS.exists() else FIXTURE
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    strings = strings_of(json.loads(args.file.read_text(encoding="utf-8")), [])
    size = sum(map(len, strings))
    print(
        f"{args.file.name}: {len(strings):,} strings, {size / 1e6:.1f} MB of text, best of {args.repeat}"
    )

    t_new = timed(Redactor().text, strings, args.repeat)
    once = Redactor()
    for s in strings:
        once.text(s)
    print(f"redactor now:         {t_new:.3f} s  (masks {once.summary()})")
    old = old_redactor()
    if old is None:
        print("redactor before:      (git or the old revision is not available)")
    else:
        t_old = timed(old.Redactor().text, strings, args.repeat)
        print(f"redactor before:      {t_old:.3f} s")
        print(f"ratio now / before:   {t_new / t_old:.2f}x")
    ds = detect_secrets_pass()
    if ds is None:
        print("detect-secrets:       (not installed)")
    else:
        t_ds = timed(ds, strings, args.repeat)
        print(f"detect-secrets:       {t_ds:.3f} s for {len(DS_PLUGINS)} plugins, finding only")
        if old is not None:
            print(f"ratio d-s / before:   {t_ds / t_old:.2f}x")


if __name__ == "__main__":
    main()
