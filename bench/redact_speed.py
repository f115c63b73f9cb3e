"""Redaction speed: ``Redactor.text`` over every string of a tau-bench run, against the redactor
before issue 14 and before issue 27 (both read from git) and, when installed, detect-secrets.

Prints seconds per pass and the ratios (target: well under 10x the old redactor; an export spends
most of its time elsewhere), the time to redact 10,000 exported tasks built from the run (target:
under a minute), and detect-secrets' coverage of the test corpus (tests/export/redact_samples.py):
the secrets its plugins find, those that masking what they report removes whole, and the
look-alikes they flag. Run: ``python bench/redact_speed.py [FILE.json] [--repeat N]``.
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
#: The commit whose redact.py and detectors.py are the redactor before issue 27.
ISSUE_27_REV = "6a5b22cbd5a90f606badbcf2b1bfb2e6ab321d9e"
CORPUS = REPO.parent / "shared" / "corpora" / "tau-bench" / "gpt-4o-airline.json"
FIXTURE = REPO / "tests" / "fixtures" / "tau_bench" / "gpt-4o-airline-5-tasks.json"
# detect-secrets plugins left out of its coverage: the entropy ones flag plain words, and public IP
# addresses are look-alikes here
DS_LEFT_OUT = ("Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector")
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


def redactor_before_issue_27() -> ModuleType | None:
    """redact.py and detectors.py as they were before issue 27, loaded from git."""
    try:
        sources = {
            name: subprocess.run(
                ["git", "show", f"{ISSUE_27_REV}:reviewer/export/{name}.py"],
                cwd=REPO,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for name in ("detectors", "redact")
        }
    except (OSError, subprocess.CalledProcessError):
        return None
    detectors = ModuleType("old27_detectors")
    sys.modules["old27_detectors"] = detectors
    exec(compile(sources["detectors"], "old27_detectors.py", "exec"), detectors.__dict__)
    module = ModuleType("old27_redact")
    source = sources["redact"].replace("reviewer.export.detectors", "old27_detectors")
    exec(compile(source, "old27_redact.py", "exec"), module.__dict__)
    return module


def detect_secrets_finder(every: bool) -> Callable[[str], list[str]] | None:
    """What detect-secrets' plugins report in a text (every plugin but DS_LEFT_OUT, or DS_PLUGINS)."""
    if importlib.util.find_spec("detect_secrets") is None:
        return None
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugins = [
        cls()
        for cls in get_mapping_from_secret_type_to_class().values()
        if (cls.__name__ not in DS_LEFT_OUT if every else cls.__name__ in DS_PLUGINS)
    ]

    def find(s: str) -> list[str]:
        return [v for line in s.split("\n") for p in plugins for v in p.analyze_string(line) if v]

    return find


def detect_secrets_coverage(find: Callable[[str], list[str]]) -> None:
    """How much of the test corpus detect-secrets finds, masks whole, and wrongly flags."""
    sys.path.insert(0, str(REPO))
    from tests.export.redact_samples import LOOKALIKES, SECRETS

    found = whole = 0
    missed: list[str] = []
    for name, text, secret, _kind in SECRETS:
        reported = find(text)
        masked = text
        for v in sorted(reported, key=len, reverse=True):
            masked = masked.replace(v, "<redacted>")
        found += bool(reported)
        if reported and secret not in masked:
            whole += 1
        else:
            missed.append(name)
    flagged = [t for t in LOOKALIKES if find(t)]
    print(
        f"detect-secrets on the {len(SECRETS)} test secrets: finds {found}, masks {whole} whole "
        f"(masking what it reports); flags {len(flagged)} of {len(LOOKALIKES)} look-alikes"
    )
    print(f"  left whole or partly: {', '.join(missed)}")
    print(f"  look-alikes flagged: {flagged}")


def export_like(data: Any, n: int = 10_000) -> list[dict[str, Any]]:
    """``n`` records shaped like exported tasks (system prompt and first user turn, the expected
    text, provenance) made from the run's trials, round-robin."""
    trials = data if isinstance(data, list) else []
    out = []
    for i in range(n):
        t = trials[i % len(trials)] if trials else {}
        traj = t.get("traj") or []
        prompt = [m for m in traj if m.get("role") in ("system", "user")][:2]
        out.append(
            {
                "format": "reviewer-task/1",
                "id": f"task-{i}",
                "input": {
                    "messages": [
                        {"role": m["role"], "content": m.get("content") or ""} for m in prompt
                    ]
                },
                "expected": {"text": f"Should follow the policy (case {i}); see order #W{i:07d}"},
                "provenance": {
                    "run": "gpt-4o-airline",
                    "task_id": str(t.get("task_id")),
                    "trial": i,
                },
            }
        )
    return out


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
    data = json.loads(args.file.read_text(encoding="utf-8"))
    strings = strings_of(data, [])
    size = sum(map(len, strings))
    print(
        f"{args.file.name}: {len(strings):,} strings, {size / 1e6:.1f} MB of text, best of {args.repeat}"
    )

    t_new = timed(Redactor(remember=0).text, strings, args.repeat)
    t_kept = timed(Redactor().text, strings, args.repeat)
    once = Redactor()
    for s in strings:
        once.text(s)
    print(f"redactor now:         {t_new:.3f} s  (masks {once.summary()})")
    print(f"  remembering long strings (an export's repeated prompts): {t_kept:.3f} s")
    old = old_redactor()
    if old is None:
        print("redactor before:      (git or the old revision is not available)")
    else:
        t_old = timed(old.Redactor().text, strings, args.repeat)
        print(f"redactor before:      {t_old:.3f} s")
        print(f"ratio now / before:   {t_new / t_old:.2f}x")
    before_27 = redactor_before_issue_27()
    if before_27 is not None:
        t_27 = timed(before_27.Redactor().text, strings, args.repeat)
        print(f"redactor before 27:   {t_27:.3f} s  (now / that: {t_new / t_27:.2f}x)")
    ds = detect_secrets_pass()
    if ds is None:
        print("detect-secrets:       (not installed)")
    else:
        t_ds = timed(ds, strings, args.repeat)
        print(f"detect-secrets:       {t_ds:.3f} s for {len(DS_PLUGINS)} plugins, finding only")
        if old is not None:
            print(f"ratio d-s / before:   {t_ds / t_old:.2f}x")
        every = detect_secrets_finder(every=True)
        assert every is not None
        t_every = timed(every, strings, 1)
        print(
            f"detect-secrets, every plugin but {', '.join(DS_LEFT_OUT)}: {t_every:.3f} s finding "
            f"only, {t_every / t_new:.2f}x the redactor now"
        )
        detect_secrets_coverage(every)
    tasks = export_like(data)
    size = sum(len(s) for task in tasks for s in strings_of(task, [])) / 1e6
    for remember in (Redactor.REMEMBER, 0):
        start = time.perf_counter()
        redactor = Redactor(remember=remember)
        for task in tasks:
            redactor.record(task)
        spent = time.perf_counter() - start
        how = "remembering long strings" if remember else "nothing remembered"
        print(
            f"10,000 exported tasks ({size:.0f} MB of text) redacted in {spent:.1f} s, {how}"
            + (f" (target: under 60 s): {'met' if spent < 60 else 'NOT MET'}" if remember else "")
        )


if __name__ == "__main__":
    main()
