"""Error lines of many kinds of systems, with their true event groups (issue 16, item 3).

Public-style: each template is written after the shape of real lines of its system (Apache and
nginx, JVM and Python tracebacks, the Linux kernel, Slurm and Kubernetes, PostgreSQL and MySQL,
agent tool errors), with instance fields -- numbers, ids, hosts, users, paths, table names, words
without a digit among them -- filled in by a seeded generator. ``lines(n, seed)`` gives ``n``
(line, template id) pairs, the same every time."""

from __future__ import annotations

import random

_USERS = ["alice", "bob", "carol", "dmitri", "eve", "farah", "gunnar", "hiro", "ines", "jamal"]
_HOSTS = ["web", "db", "cache", "api", "worker", "edge", "batch", "auth"]
_TABLES = ["orders", "customers", "invoices", "sessions", "payments", "shipments", "events"]
_WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
_TOOLS = ["get_order", "cancel_order", "update_address", "search_flights", "book_reservation"]


def _fields(rng: random.Random) -> dict[str, str]:
    return {
        "ts": f"2024-0{rng.randint(1, 9)}-{rng.randint(10, 28)} {rng.randint(10, 23)}:"
        f"{rng.randint(10, 59)}:{rng.randint(10, 59)},{rng.randint(100, 999)}",
        "ip": f"{rng.randint(10, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        "port": str(rng.randint(1024, 65535)),
        "n": str(rng.randint(1, 99999)),
        "ms": str(rng.randint(1, 30000)),
        "pid": str(rng.randint(100, 32000)),
        "hex": f"0x{rng.getrandbits(48):012x}",
        "user": rng.choice(_USERS),
        "host": f"{rng.choice(_HOSTS)}-{rng.randint(1, 40)}.prod.example.com",
        "shorthost": rng.choice(_HOSTS) + rng.choice(["", "-east", "-west"]),
        "path": "/var/www/" + "/".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3))),
        "file": rng.choice(_WORDS) + rng.choice([".conf", ".yaml", ".json"]),
        "table": rng.choice(_TABLES),
        "word": rng.choice(_WORDS),
        "tool": rng.choice(_TOOLS),
        "job": f"{rng.randint(100000, 999999)}",
        "node": f"node{rng.randint(1, 128):03d}",
        "pod": f"{rng.choice(_WORDS)}-{rng.getrandbits(32):08x}-{rng.choice('abcdxyz')}{rng.randint(1, 9)}k",
        "blk": f"blk_{rng.randint(-(2**62), 2**62)}",
        "order": f"W{rng.randint(1000, 9999)}",
        "cls": rng.choice(["OrderService", "PaymentGateway", "InventoryClient", "UserRepository"]),
        "method": rng.choice(["process", "charge", "reserve", "load", "save"]),
        "line": str(rng.randint(10, 900)),
        "key": rng.choice(["user_id", "order_id", "email", "sku"]),
        "val": rng.choice(_WORDS) + str(rng.randint(1, 99)),
    }


TEMPLATES: list[str] = [
    # HTTP servers
    '{ip} - - [{ts}] "GET /api/v1/orders/{n} HTTP/1.1" 500 {n}',
    "{ts} [error] {pid}#0: *{n} upstream timed out (110: Connection timed out) while reading response header from upstream, client: {ip}, server: {host}",
    '{ts} [error] {pid}#0: *{n} open() "{path}" failed (2: No such file or directory), client: {ip}',
    "[{ts}] [proxy:error] [pid {pid}] (111)Connection refused: AH00957: HTTP: attempt to connect to {ip}:{port} ({shorthost}) failed",
    "[{ts}] [core:error] [pid {pid}] [client {ip}:{port}] AH00126: Invalid URI in request GET /{word} HTTP/1.1",
    # JVM
    "{ts} ERROR [main] com.example.{cls}: Failed to {method} order {order}",
    'Exception in thread "pool-{n}-thread-{n}" java.lang.NullPointerException: Cannot invoke "String.length()" because "{key}" is null',
    "java.net.SocketTimeoutException: Read timed out after {ms} ms connecting to {host}:{port}",
    "Caused by: java.sql.SQLException: Connection is not available, request timed out after {ms}ms.",
    "{ts} WARN  [{word}-worker-{n}] o.a.k.c.NetworkClient: [Consumer clientId={word}-{n}] Connection to node {n} ({host}/{ip}:{port}) could not be established. Broker may not be available.",
    # Python
    "Traceback (most recent call last):\n  File \"/srv/app/{word}.py\", line {line}, in {method}\n    return self.{method}(x)\nKeyError: '{key}'",
    'Traceback (most recent call last):\n  File "/srv/app/db.py", line {line}, in connect\nConnectionRefusedError: [Errno 111] Connection refused',
    "ValueError: invalid literal for int() with base 10: '{word}'",
    "FileNotFoundError: [Errno 2] No such file or directory: '{path}/{file}'",
    "TimeoutError: order service did not respond after {n}s",
    # kernel
    "[{n}.{n}] Out of memory: Killed process {pid} ({word}) total-vm:{n}kB, anon-rss:{n}kB, file-rss:0kB",
    "[{n}.{n}] EXT4-fs error (device sda{n}): ext4_find_entry:{n}: inode #{n}: comm {word}: reading directory lblock 0",
    "[{n}.{n}] {word}[{pid}]: segfault at {hex} ip {hex} sp {hex} error 4 in libc.so.6[{hex}+{hex}]",
    "[{n}.{n}] INFO: task {word}:{pid} blocked for more than {n} seconds.",
    "[{n}.{n}] nfs: server {shorthost} not responding, still trying",
    # schedulers
    "slurmstepd: error: *** JOB {job} ON {node} CANCELLED AT {ts} DUE TO TIME LIMIT ***",
    "slurmstepd: error: Detected {n} oom-kill event(s) in StepId={job}.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.",
    "srun: error: {node}: task {n}: Exited with exit code {n}",
    "Warning  FailedScheduling  pod/{pod}  0/{n} nodes are available: {n} Insufficient memory.",
    "Back-off restarting failed container {word} in pod {pod}_default({hex})",
    'Failed to pull image "registry.example.com/{word}:{n}": rpc error: code = NotFound desc = manifest unknown',
    # databases
    '{ts} UTC [{pid}] ERROR:  duplicate key value violates unique constraint "{table}_pkey"',
    '{ts} UTC [{pid}] FATAL:  password authentication failed for user "{user}"',
    '{ts} UTC [{pid}] ERROR:  relation "{table}" does not exist at character {n}',
    "{ts} UTC [{pid}] ERROR:  deadlock detected",
    "ERROR 1045 (28000): Access denied for user '{user}'@'{ip}' (using password: YES)",
    "ERROR 1146 (42S02): Table '{word}.{table}' doesn't exist",
    "{ts} {n} [ERROR] InnoDB: Unable to lock ./ibdata1 error: {n}",
    "redis.exceptions.ConnectionError: Error {n} connecting to {shorthost}:{port}. Connection refused.",
    # agent tool errors
    "Error: order {order} not found",
    "{tool}: HTTP 429 Too Many Requests: rate limit exceeded, retry after {n}s",
    "Tool {tool} failed: missing required argument '{key}'",
    "Error executing tool {tool}: {key}={val} is not a valid value",
    '{{"error": {{"type": "invalid_request_error", "message": "user {user} is not authorized to {method} order {order}"}}}}',
    "Permission denied: cannot write to {path}/{file} as {user}",
]


def lines(n: int = 4000, seed: int = 0) -> list[tuple[str, int]]:
    """``n`` (line, template id) pairs: every template at least once, then drawn with skew (a few
    events are common, most are rare, as in real logs)."""
    rng = random.Random(seed)
    weights = [1.0 / (1 + (i * 7) % len(TEMPLATES)) for i in range(len(TEMPLATES))]
    ids = list(range(len(TEMPLATES))) + rng.choices(
        range(len(TEMPLATES)), weights=weights, k=max(0, n - len(TEMPLATES))
    )
    rng.shuffle(ids)
    return [(TEMPLATES[t].format(**_fields(rng)), t) for t in ids]


def grouping_accuracy(predicted: list[str], truth: list[int]) -> float:
    """The share of lines whose predicted group holds exactly the lines of their true group (the
    log-parsing benchmarks' grouping accuracy)."""
    by_pred: dict[str, set[int]] = {}
    by_true: dict[int, set[int]] = {}
    for i, (p, t) in enumerate(zip(predicted, truth, strict=True)):
        by_pred.setdefault(p, set()).add(i)
        by_true.setdefault(t, set()).add(i)
    right = sum(
        len(members) for members in by_pred.values() if members == by_true[truth[min(members)]]
    )
    return right / len(truth) if truth else 1.0


def digit_mask(line: str) -> str:
    """The baseline: every token holding a digit becomes one placeholder."""
    return " ".join("<*>" if any(c.isdigit() for c in tok) else tok for tok in line.split())
