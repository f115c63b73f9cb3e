"""Failure clustering speed: 2,000, 10,000 and 50,000 synthetic failures with known modes.

Each size runs in its own process (so peak memory is that size's), limited to 2 BLAS/OpenMP threads.
Prints, per size, the time to gather evidence (signatures + masked text) and to cluster, the resident
memory once the synthetic trials exist and at its peak (ru_maxrss, whole process), the distinct texts,
the groups, the clusters and their adjusted Rand index against the known modes; then the growth of
the times from size to size next to the growth of n and of n log n.

    python bench/cluster_speed.py            # 2000 10000 50000, then the targets
    python bench/cluster_speed.py 1000 5000  # other sizes
    python bench/cluster_speed.py --targets  # the issue-21 targets only

Targets (issue 21), printed after the sizes: the start-up share of ``reviewer cluster`` on a database
of 1,000 failures, medians of 3, target <= 20%, as CPU time over the command's CPU time: every
import (a process that only imports every module the command ends up loading), and the scipy and
scikit-learn imports (that, less a process importing all but the modules ``-X importtime`` shows
scipy and scikit-learn loading); and 50,000 failures clustered
(evidence + clustering, process CPU time and ru_maxrss; targets <= 15 s and <= 600 MB; importing
scikit-learn's k-means, which the command does once on inputs that big, is timed and printed apart,
as the start-up target counts the imports). CPU time,
not wall time: the machine is shared, so wall time measures the other work as much as this.
"""

from __future__ import annotations

import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reviewer.models import Message, ToolCall, Trial, TrialError, Verdict

SIZES = (2000, 10000, 50000)
MODES = 13
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")
SYLLABLES = "ka lo mi re su ta ne vo pi da ru ge fo bi za nu he lu ko sa".split()
FILLER = (
    "let me check that for you",
    "one moment please",
    "I understand your concern",
    "thanks for your patience",
    "I will look into this right away",
    "sure, happy to help with that",
    "please confirm the details",
    "here is what I found",
    "sorry for the trouble",
)


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    return ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(size)]


def _assistant(
    rng: random.Random, vocab: list[str], text: str, calls: list[ToolCall] | None = None
) -> Message:
    noise = " ".join(rng.choice(vocab) for _ in range(rng.randint(4, 10)))
    return Message("assistant", f"{text} {rng.choice(FILLER)}. Notes: {noise}.", calls or [])


def _tool(content: str, name: str, is_error: bool = False) -> Message:
    return Message("tool", content, tool_call_id="c1", name=name, is_error=is_error)


def synthetic_trial(mode: int, i: int, rng: random.Random, vocab: list[str]) -> Trial:
    """One failed trial of failure mode ``mode`` (0-12): tool errors, tracebacks, HTTP, terminations,
    failures with no error evidence (9, 10), one kind seen through two tools (11) and one kind spread
    over thousands of signatures (12)."""
    n = rng.randint(1000, 99999)
    who = rng.choice(vocab)
    msgs = [
        Message("system", "You are a support agent."),
        Message("user", f"I am {who}, order #W{n}"),
    ]
    error = termination = reason = None
    rationale = ""

    def call(name: str) -> list[ToolCall]:
        return [ToolCall(name, {"order_id": f"#W{n}"}, "c1")]

    if mode == 0:
        msgs += [
            _assistant(rng, vocab, "Cancelling it now.", call("cancel_order")),
            _tool(
                f"Error: order #W{n} has already been shipped and cannot be cancelled",
                "cancel_order",
            ),
            _assistant(rng, vocab, f"I have cancelled order #W{n} for you."),
        ]
        rationale = f"The agent called cancel_order on shipped order #W{n} and claimed success."
    elif mode == 1:
        total, paid = rng.randint(100, 2000), rng.randint(50, 99)
        msgs += [
            _assistant(rng, vocab, "Booking the flight.", call("book_reservation")),
            _tool(
                f"Error: payment amount does not add up, total price is {total}, but paid {paid}",
                "book_reservation",
            ),
            _assistant(rng, vocab, f"The payment of ${paid} did not cover the total."),
        ]
        rationale = "Booking failed because the payment split was wrong."
    elif mode == 2:
        msgs += [
            _assistant(rng, vocab, "Searching flights.", call("search_direct_flight")),
            _tool(
                f"Error: flight HAT{rng.randint(1, 300):03d} not available on date 2024-05-{rng.randint(10, 28)}",
                "search_direct_flight",
            ),
            _assistant(rng, vocab, "That flight is not available."),
        ]
        rationale = "The agent tried to book an unavailable flight."
    elif mode == 3:
        error = TrialError(
            "requests.exceptions.HTTPError",
            f"503 Server Error: Service Unavailable for url: https://api.shop.example/v1/orders/{n}",
        )
        msgs += [_assistant(rng, vocab, "Fetching your order.", call("get_order"))]
    elif mode == 4:
        tb = (
            "Traceback (most recent call last):\n"
            f'  File "/srv/agent/tools.py", line {rng.randint(10, 90)}, in run_tool\n    return fn(**args)\n'
            f"  File \"/srv/agent/users.py\", line 12, in get_user\n    return USERS[uid]\nKeyError: '{who}_{n}'\n"
        )
        msgs += [
            _assistant(rng, vocab, "Looking up your account.", call("get_user")),
            _tool(tb, "get_user", is_error=True),
            _assistant(rng, vocab, "I could not find your account."),
        ]
    elif mode == 5:
        termination = "max_steps"
        msgs += [
            _assistant(rng, vocab, "Let me search again for the order.", call("search_orders"))
            for _ in range(3)
        ]
        rationale = "The agent looped on search_orders until the step limit."
    elif mode == 6:
        reason = f"refunded {rng.randint(10, 99)}.00, expected {rng.randint(10, 99)}.00"
        msgs += [
            _assistant(rng, vocab, f"Done, I refunded ${rng.randint(10, 99)}.", call("refund")),
            _tool('{"ok": true}', "refund"),
        ]
        rationale = "The refund amount was wrong."
    elif mode == 7:
        msgs += [
            _assistant(
                rng,
                vocab,
                "I am transferring you to a human agent.",
                call("transfer_to_human_agents"),
            )
        ]
        rationale = "The agent transferred although it could have solved the task."
    elif mode == 8:
        msgs += [
            _assistant(rng, vocab, "Updating the address.", call("modify_address")),
            _tool(
                f"ReadTimeout: HTTPSConnectionPool(host='addr.example', port=443): Read timed out. (read timeout={rng.choice([10, 30, 60])})",
                "modify_address",
            ),
        ]
        rationale = "The tool timed out and the agent gave up."
    elif mode == 9:  # no error evidence at all
        msgs += [
            _assistant(
                rng,
                vocab,
                f"Your order #W{n} is on its way and will arrive {rng.choice(['soon', 'tomorrow'])}.",
            )
        ]
        rationale = f"The agent invented a delivery date for {who}; no tool was called."
    elif mode == 10:
        msgs += [
            _assistant(rng, vocab, "Could you tell me your email and zip code again?"),
            _assistant(rng, vocab, "I still need your email address and zip code to continue."),
        ]
        rationale = "The agent kept asking for the email and zip code the user had already given."
    elif mode == 12:  # a long tail: one kind whose signatures differ by a word that escaped masking
        field = rng.choice(vocab)
        msgs += [
            _assistant(rng, vocab, "Saving the profile.", call("update_profile")),
            _tool(
                f"Error: validation failed for field {field}: value is required", "update_profile"
            ),
        ]
        rationale = f"The agent left the required field {field} empty."
    else:  # one kind, two tools: two signatures that read alike
        tool = rng.choice(["book_reservation", "update_reservation_flights"])
        msgs += [
            _assistant(rng, vocab, "Checking seats on that flight.", call(tool)),
            _tool(f"Error: not enough seats on flight HAT{rng.randint(1, 300):03d}", tool),
            _assistant(rng, vocab, "Sorry, that flight has no seats left in your cabin."),
        ]
        rationale = "The agent picked a flight without enough seats."
    return Trial(
        task_id=f"task_{mode}_{rng.randint(0, 9)}",
        messages=msgs,
        passed=False,
        run=f"run-{rng.randint(1, 3)}",
        trial=i,
        reason=reason,
        judge=Verdict("fail", rationale=rationale) if rationale else None,
        error=error,
        termination=termination,
    )


def _rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20


def run_one(n: int, seed: int = 0) -> dict[str, float | str]:
    """Measure one size in this process."""
    from sklearn.metrics import adjusted_rand_score

    from reviewer.clustering.cluster import cluster_failures
    from reviewer.clustering.signature import evidence_of

    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    modes = [rng.randrange(MODES) for _ in range(n)]
    trials = [synthetic_trial(m, i, rng, vocab) for i, m in enumerate(modes)]
    # warm the lazy imports so no size is charged for them (each size runs in a process of its
    # own): numpy and scipy by a small clustering, scikit-learn's k-means (which only inputs of
    # many groups reach) by its import, timed and printed apart: the command pays it once
    cluster_failures(
        [evidence_of(t, trial_id=str(i)) for i, t in enumerate(trials[:50])], seed=seed
    )
    c_import = time.process_time()
    import sklearn.cluster  # noqa: F401

    import_s = time.process_time() - c_import
    rss_input = _rss_mb()
    c0 = time.process_time()
    t0 = time.perf_counter()
    docs = [evidence_of(t, trial_id=f"t{i:07d}") for i, t in enumerate(trials)]
    t1 = time.perf_counter()
    result = cluster_failures(docs, seed=seed)
    t2 = time.perf_counter()
    cpu = time.process_time() - c0
    by_trial = result.by_trial()
    ari = adjusted_rand_score(modes, [by_trial[f"t{i:07d}"] for i in range(n)])
    return {
        "n": n,
        "evidence_s": t1 - t0,
        "cluster_s": t2 - t1,
        "cpu_s": cpu,
        "sklearn_import_s": import_s,
        "rss_input_mb": rss_input,
        "rss_peak_mb": _rss_mb(),
        "clusters": len(result.clusters),
        "groups": result.params["n_groups"],
        "unique_texts": len({d.text for d in docs}),
        "ari": ari,
        "method": f"unsigned: {result.params['unsigned_method']}; merge: {result.params.get('merge_method')}",
    }


STARTUP_FAILURES = 1000
STARTUP_TARGET = 0.20
LARGE_FAILURES = 50000
LARGE_TARGET_S = 15.0
LARGE_TARGET_MB = 600.0
#: Runs a child with ``reviewer cluster``'s command line and writes the modules it loaded, in order.
_LOADED = (
    "import atexit, sys\n"
    "out = sys.argv.pop(1)\n"
    "atexit.register(lambda: open(out, 'w').write('\\n'.join(sys.modules)))\n"
    "from reviewer.cli import main\n"
    "main()\n"
)
#: Imports, in order, every module of a list (the start-up alone, nothing clustered).
_IMPORT_ONLY = (
    "import importlib, sys\n"
    "for name in open(sys.argv[1]).read().split():\n"
    "    if name == '__main__' or name in sys.modules:\n"
    "        continue\n"
    "    try:\n"
    "        importlib.import_module(name)\n"
    "    except Exception:\n"
    "        pass\n"
)


def _child_cpu(cmd: list[str], env: dict[str, str]) -> float:
    """CPU time (user + system) of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _scientific_modules(stderr: str) -> set[str]:
    """The modules that ``-X importtime`` shows loaded by scipy or scikit-learn imports (those and
    everything they pulled in), from one process's stderr."""
    found: set[str] = set()
    stack: list[tuple[int, bool]] = []
    lines = [ln for ln in stderr.splitlines() if ln.startswith("import time:") and "|" in ln]
    for line in reversed(lines[1:] if lines and "cumulative" in lines[0] else lines):
        name = line.split("|", 2)[2]
        level = len(name) - len(name.lstrip())
        while stack and stack[-1][0] >= level:
            stack.pop()
        mine = (bool(stack) and stack[-1][1]) or name.strip().split(".")[0] in ("scipy", "sklearn")
        if mine:
            found.add(name.strip())
        stack.append((level, mine))
    return found


def startup_share(
    env: dict[str, str], n: int = STARTUP_FAILURES, repeats: int = 3
) -> dict[str, float]:
    """Start-up share of ``reviewer cluster`` on a database of ``n`` synthetic failures."""
    from reviewer.record import trial_to_dict
    from reviewer.store import open_store
    from reviewer.workflows.imports import import_paths

    rng = random.Random(0)
    vocab = _vocabulary(rng)
    with tempfile.TemporaryDirectory() as tmp:
        src, db, loaded = Path(tmp, "failures.jsonl"), Path(tmp, "bench.db"), Path(tmp, "modules")
        with src.open("w") as f:
            for i in range(n):
                trial = synthetic_trial(rng.randrange(MODES), i, rng, vocab)
                f.write(json.dumps(trial_to_dict(trial)) + "\n")
        import_paths(open_store(db), [str(src)])
        args = ["--db", str(db), "cluster"]
        traced = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", _LOADED, str(loaded), *args],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        scientific_modules = _scientific_modules(traced.stderr)
        without = Path(tmp, "modules-without-scipy")
        without.write_text(
            "\n".join(
                m
                for m in loaded.read_text().split()
                if m not in scientific_modules and m.split(".")[0] not in ("scipy", "sklearn")
            )
        )
        command, startup, bare, scientific = [], [], [], []
        for _ in range(repeats):
            command.append(
                _child_cpu(
                    [sys.executable, "-c", "from reviewer.cli import main; main()", *args], env
                )
            )
            startup.append(_child_cpu([sys.executable, "-c", _IMPORT_ONLY, str(loaded)], env))
            rest = _child_cpu([sys.executable, "-c", _IMPORT_ONLY, str(without)], env)
            scientific.append(startup[-1] - rest)
            bare.append(_child_cpu([sys.executable, "-c", "pass"], env))
        modules = len(loaded.read_text().split())
    cmd_s, start_s, bare_s = (statistics.median(v) for v in (command, startup, bare))
    return {
        "command_s": cmd_s,
        "startup_s": start_s,
        "python_s": bare_s,
        "modules": modules,
        "scientific_s": statistics.median(scientific),
    }


def targets(env: dict[str, str], large: dict[str, float] | None = None) -> None:
    """Print the issue-21 clustering targets: figures, ratios to the target, met or not."""
    s = startup_share(env)
    share = s["startup_s"] / s["command_s"]
    sci = s["scientific_s"] / s["command_s"]
    print()
    print(
        f"start-up, `reviewer cluster` on {STARTUP_FAILURES} failures (CPU s, median of 3): "
        f"command {s['command_s']:.2f}, imports alone {s['startup_s']:.2f} "
        f"({s['modules']:.0f} modules), bare python {s['python_s']:.2f}"
    )
    print(
        f"  scipy/scikit-learn imports: {s['scientific_s']:.2f} s, {sci:.0%} of the command's CPU "
        f"(target <= {STARTUP_TARGET:.0%}; ratio to target {sci / STARTUP_TARGET:.2f}): "
        f"{'met' if sci <= STARTUP_TARGET else 'NOT met'}"
    )
    print(
        f"  every import (python, click, the store, numpy, scipy): {share:.0%} of the command's CPU "
        f"(ratio to the {STARTUP_TARGET:.0%} target {share / STARTUP_TARGET:.2f}): "
        f"{'met' if share <= STARTUP_TARGET else 'NOT met'}"
    )
    if large is None:
        large = _one_size(LARGE_FAILURES, env)
    cpu, peak = large["cpu_s"], large["rss_peak_mb"]
    print(
        f"{LARGE_FAILURES} failures clustered (evidence + clustering, process CPU s; peak ru_maxrss): "
        f"{cpu:.2f} s (wall {large['evidence_s'] + large['cluster_s']:.2f} s), {peak:.0f} MB; "
        f"importing scikit-learn's k-means, not counted (the command pays it once on inputs this "
        f"big), another {large['sklearn_import_s']:.2f} s"
    )
    print(
        f"  time {cpu:.2f} / {LARGE_TARGET_S:.0f} s = {cpu / LARGE_TARGET_S:.2f} of the target: "
        f"{'met' if cpu <= LARGE_TARGET_S else 'NOT met'}; memory {peak:.0f} / {LARGE_TARGET_MB:.0f} MB "
        f"= {peak / LARGE_TARGET_MB:.2f}: {'met' if peak <= LARGE_TARGET_MB else 'NOT met'}"
    )


def _one_size(n: int, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--one", str(n)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    row: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return row


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(run_one(int(argv[1]))))
        return 0
    env = {**os.environ, **dict.fromkeys(THREAD_VARS, "2")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")]
    )
    if argv[:1] == ["--targets"]:
        targets(env)
        return 0
    sizes = [int(a) for a in argv] or list(SIZES)
    print(
        f"{MODES} known failure modes; each size in its own process, 2 BLAS threads",
        file=sys.stderr,
    )
    print(
        f"{'n':>7} {'evidence s':>10} {'cluster s':>9} {'total s':>8} {'input MB':>8} {'peak MB':>8} "
        f"{'texts':>6} {'groups':>6} {'clusters':>8} {'ARI':>5}  method"
    )
    rows = []
    for n in sizes:
        row = _one_size(n, env)
        rows.append(row)
        total = row["evidence_s"] + row["cluster_s"]
        print(
            f"{n:>7} {row['evidence_s']:>10.2f} {row['cluster_s']:>9.2f} {total:>8.2f} "
            f"{row['rss_input_mb']:>8.0f} {row['rss_peak_mb']:>8.0f} {row['unique_texts']:>6} "
            f"{row['groups']:>6} {row['clusters']:>8} {row['ari']:>5.2f}  {row['method']}",
            flush=True,
        )
    print()
    print(
        f"{'growth':>15} {'n':>6} {'n log n':>8} {'total':>6} {'cluster':>8} {'evidence':>9}  verdict"
    )
    for a, b in zip(rows, rows[1:], strict=False):
        na, nb = a["n"], b["n"]
        nlogn = (nb * math.log(nb)) / (na * math.log(na))
        total = (b["evidence_s"] + b["cluster_s"]) / (a["evidence_s"] + a["cluster_s"])
        clus = b["cluster_s"] / a["cluster_s"]
        evid = b["evidence_s"] / a["evidence_s"]
        verdict = "ok (<= n log n)" if total <= nlogn * 1.1 else "worse than n log n"
        print(
            f"{f'{na}->{nb}':>15} {nb / na:>6.2f} {nlogn:>8.2f} {total:>6.2f} {clus:>8.2f} {evid:>9.2f}  {verdict}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
