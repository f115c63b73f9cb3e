"""Error signatures: one kind of error -> one signature, two kinds -> two signatures."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.clustering.masking import mask
from reviewer.clustering.signature import (
    evidence_of,
    is_error_text,
    shape_signature,
    signature,
    signatures_of_lines,
    termination_cause,
)
from reviewer.models import Message, ToolCall, Trial, TrialError, Verdict


def traceback(func: str, exc: str, line: int = 17, path: str = "/app/agent/orders.py") -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/app/agent/tools.py", line {line * 3}, in run_tool\n'
        "    return fn(**args)\n"
        "           ^^^^^^^^^^\n"
        f'  File "{path}", line {line}, in {func}\n'
        "    return ORDERS[order_id]\n"
        f"{exc}\n"
    )


# (message a, message b, tool, exception type): the same kind, told with different instances
SAME_KIND = [
    (
        "Error: flight HAT030 not available on date 2024-05-13",
        "Error: flight HAT223 not available on date 2024-05-14",
        "book_reservation",
        None,
    ),
    (
        "Error: payment amount does not add up, total price is 375, but paid 299",
        "Error: payment amount does not add up, total price is 1203, but paid 833",
        "book_reservation",
        None,
    ),
    (
        "Error: payment method certificate_7504069 not found",
        "Error: payment method gift_card_5094406 not found",
        None,
        None,
    ),
    (
        "Error: not enough seats on flight HAT290",
        "Error: not enough seats on flight HAT229",
        "update_reservation_flights",
        None,
    ),
    (
        "Error: not enough balance in payment method gift_card_5094406",
        "Error: not enough balance in payment method gift_card_8190333",
        None,
        None,
    ),
    (
        "order #W5521 already delivered",
        "order #W0012 already delivered",
        "cancel_order",
        "ToolError",
    ),
    (
        traceback("get_order", "KeyError: 'W5521'"),
        traceback("get_order", "KeyError: 'order_77'", line=42, path="/srv/v2/orders.py"),
        None,
        None,
    ),
    (
        "ValueError: invalid literal for int() with base 10: 'abc'",
        "ValueError: invalid literal for int() with base 10: 'x12'",
        None,
        None,
    ),
    (
        "FileNotFoundError: [Errno 2] No such file or directory: '/srv/run_1/out.json'",
        "FileNotFoundError: [Errno 2] No such file or directory: '/var/data/x.csv'",
        None,
        None,
    ),
    (
        "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://api.example.com/v1/orders/123",
        "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: http://localhost:8080/users/abc?x=1",
        None,
        None,
    ),
    (
        "HTTP 503 Service Unavailable (request id 3f1c2ab9-1234-4abc-8def-0123456789ab)",
        "HTTP 503 Service Unavailable (request id 9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b)",
        None,
        None,
    ),
    ("Request timed out after 30s", "Request timed out after 120s", "search_flights", None),
    (
        "ReadTimeout: HTTPSConnectionPool(host='api.x.com', port=443): Read timed out. (read timeout=30)",
        "ReadTimeout: HTTPSConnectionPool(host='maps.y.io', port=8443): Read timed out. (read timeout=10)",
        None,
        None,
    ),
    (
        "ConnectionRefusedError: [Errno 111] Connection refused to 10.0.0.12:5432",
        "ConnectionRefusedError: [Errno 111] Connection refused to 192.168.1.5:6379",
        None,
        None,
    ),
    (
        "081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block blk_38865049064139660 terminating",
        "081110 004005 35 INFO dfs.DataNode$PacketResponder: PacketResponder 2 for block blk_-6952295868487656571 terminating",
        None,
        None,
    ),
    (
        "081109 203807 222 INFO dfs.DataNode$DataXceiver: Receiving block blk_-42 src: /10.250.19.102:54106 dest: /10.250.19.102:50010",
        "081111 101010 9 INFO dfs.DataNode$DataXceiver: Receiving block blk_7 src: /10.251.1.2:1 dest: /10.251.1.2:50010",
        None,
        None,
    ),
    (
        "E0412 10:15:32.123456       1 reflector.go:138] Failed to watch *v1.Pod: connection refused",
        "E0413 11:00:01.000001       7 reflector.go:138] Failed to watch *v1.Pod: connection refused",
        None,
        None,
    ),
    (
        "Back-off restarting failed container web in pod web-7d9f8b6c4-xk2p9_default(3f1c2ab9-1234-4abc-8def-0123456789ab)",
        "Back-off restarting failed container web in pod web-5c6d7e8f9-ab12c_default(0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d)",
        None,
        None,
    ),
    (
        'pods "api-6b7f9c-2xk4z" is forbidden: exceeded quota: compute, requested: cpu=500m, used: cpu=1500m',
        'pods "worker-1" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=7',
        None,
        None,
    ),
    ("User alice@example.com not found", "User bob.smith@corp.io not found", "get_user", None),
    (
        "Order 12345 cannot be cancelled: status is shipped",
        "Order 98 cannot be cancelled: status is shipped",
        "cancel_order",
        None,
    ),
    (
        "Rate limit exceeded: 429 Too Many Requests, retry after 17 seconds",
        "Rate limit exceeded: 429 Too Many Requests, retry after 3 seconds",
        None,
        None,
    ),
    (
        '{"error": {"code": "not_found", "message": "Reservation ZFA04Y not found"}}',
        '{"error": {"code": "not_found", "message": "Reservation 8JX2PL not found"}}',
        "get_reservation_details",
        None,
    ),
    (
        "get_user_details() got an unexpected keyword argument 'user'",
        "get_user_details() got an unexpected keyword argument 'user_name'",
        None,
        "TypeError",
    ),
    (
        traceback("refund", "TypeError: 'NoneType' object is not subscriptable", line=3),
        traceback(
            "refund",
            "TypeError: 'NoneType' object is not subscriptable",
            line=99,
            path="C:\\agent\\refund.py",
        ),
        None,
        None,
    ),
    (
        "AssertionError: expected 25.00, got 40.00",
        "AssertionError: expected 10.50, got 7.25",
        None,
        None,
    ),
    ("refunded 40.00, expected 25.00", "refunded $12, expected $30.5", None, None),
    ("Exceeded max steps (30)", "Exceeded max steps (50)", None, None),
    (
        "Deadline exceeded at 2024-05-13T10:00:00Z",
        "Deadline exceeded at 2025-01-02T23:59:59+02:00",
        None,
        None,
    ),
    ("Commit d41d8cd98f00b204e9800998ecf8427e not found", "Commit 3f1c2ab not found", None, None),
    (
        "Segmentation fault at address 0x7ffd5e8c",
        "Segmentation fault at address 0x0000000000401a2b",
        None,
        None,
    ),
    (
        'could not connect to server: Connection refused\n\tIs the server running on host "db.internal" (10.1.2.3)?',
        'could not connect to server: Connection refused\n\tIs the server running on host "db2" (10.1.2.4)?',
        None,
        "psycopg2.OperationalError",
    ),
    (
        "Permission denied: cannot write to /Users/alice/.cache/x",
        "Permission denied: cannot write to ~/tmp/y.txt",
        None,
        None,
    ),
    (
        "Job 8f14e45f failed on 2024-05-13 at 10:31:07 after 3 retries",
        "Job a87ff679 failed on 12/01/2023 at 9:00 PM after 10 retries",
        None,
        None,
    ),
    ("unknown user_id sara_doe_496", "unknown user_id mia_li_3668", None, None),
    ("no flights on May 13, 2024", "no flights on Jun 2", "search_direct_flight", None),
    (
        "Tool get_order failed with status_code=500 after 3 attempts",
        "Tool get_order failed with status_code=500 after 1 attempts",
        None,
        None,
    ),
    ("[1, 2, 3] items could not be shipped", "[7] items could not be shipped", None, None),
]

# (message a, message b, tool a, tool b, exception type a, exception type b): two kinds
DIFFERENT_KINDS = [
    ("HTTP 404 Not Found", "HTTP 500 Internal Server Error", None, None, None, None),
    ("HTTP Error 429", "HTTP Error 503", None, None, None, None),
    ("request failed, status_code=401", "request failed, status_code=403", None, None, None, None),
    (
        traceback("get_order", "KeyError: 'W5521'"),
        traceback("get_order", "ValueError: 'W5521'"),
        None,
        None,
        None,
        None,
    ),
    (
        traceback("get_user", "KeyError: 'W5521'"),
        traceback("get_order", "KeyError: 'W5521'"),
        None,
        None,
        None,
        None,
    ),
    (
        "Error: flight HAT030 not available on date 2024-05-13",
        "Error: not enough seats on flight HAT030",
        None,
        None,
        None,
        None,
    ),
    ("Connection refused", "Connection reset by peer", None, None, None, None),
    (
        "ReadTimeout: HTTPSConnectionPool(host='a', port=443): Read timed out.",
        "ConnectTimeout: HTTPSConnectionPool(host='a', port=443): Max retries exceeded",
        None,
        None,
        None,
        None,
    ),
    (
        "order W1 is not pending",
        "order W1 is not pending",
        "cancel_pending_order",
        "modify_pending_order_items",
        None,
        None,
    ),
    (
        "Error: gift card balance is not enough",
        "Error: certificate cannot be used to update reservation",
        None,
        None,
        None,
        None,
    ),
    ("process exited with code 137", "process exited with code 1", None, None, None, None),
    ("socket error errno 111", "socket error errno 113", None, None, None, None),
    ("order W5521 already delivered", "order W5521 already cancelled", None, None, None, None),
    (
        "Reservation ZFA04Y not found",
        "Reservation ZFA04Y already cancelled",
        None,
        None,
        None,
        None,
    ),
    (
        "081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block blk_-42 terminating",
        "081109 203615 148 INFO dfs.DataNode$DataXceiver: Receiving block blk_-42 src: /10.0.0.1:1 dest: /10.0.0.1:2",
        None,
        None,
        None,
        None,
    ),
    (
        "081109 204525 512 INFO dfs.FSDataset: Deleting block blk_1 file /mnt/hadoop/dfs/data/current/subdir1/blk_1",
        "081109 204525 512 INFO dfs.DataBlockScanner: Verification succeeded for blk_1",
        None,
        None,
        None,
        None,
    ),
    (
        "E0412 10:15:32.123456 1 reflector.go:138] Failed to watch *v1.Pod: connection refused",
        "E0412 10:15:32.123456 1 reflector.go:138] Failed to list *v1.Node: Unauthorized",
        None,
        None,
        None,
        None,
    ),
    (
        "Back-off restarting failed container web in pod web-7d9f8b6c4-xk2p9",
        "Liveness probe failed: HTTP probe failed with statuscode: 500",
        None,
        None,
        None,
        None,
    ),
    (
        "Container web was OOMKilled",
        'Failed to pull image "nginx:1.2": rpc error: code = NotFound',
        None,
        None,
        None,
        None,
    ),
    (
        "order W1 cannot be changed",
        "order W1 cannot be changed",
        None,
        None,
        "ToolError",
        "ValidationError",
    ),
    (
        "TypeError: 'NoneType' object is not subscriptable",
        "TypeError: 'NoneType' object is not iterable",
        None,
        None,
        None,
        None,
    ),
    (
        "JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        "JSONDecodeError: Unterminated string starting at: line 1 column 5 (char 4)",
        None,
        None,
        None,
        None,
    ),
    ("Error: rate limit exceeded", "Error: quota exceeded", None, None, None, None),
    (
        "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://a.io/x",
        "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: https://a.io/x",
        None,
        None,
        None,
        None,
    ),
    ("timed out after 30s", "cancelled after 30s", None, None, None, None),
    ("refunded 40.00, expected 25.00", "charged 40.00, expected 25.00", None, None, None, None),
    (
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        '{"type":"error","error":{"type":"rate_limit_error","message":"Overloaded"}}',
        None,
        None,
        None,
        None,
    ),
    ("Deadline exceeded", "Context length exceeded", None, None, None, None),
    (
        "NameError: name 'foo' is not defined",
        "UnboundLocalError: local variable 'foo' referenced before assignment",
        None,
        None,
        None,
        None,
    ),
    (
        "Transaction rolled back: deadlock detected",
        "Transaction rolled back: serialization failure",
        None,
        None,
        None,
        None,
    ),
    ("Error: invalid user id", "Error: invalid order id", None, None, None, None),
    ("user not found", "user not found", "get_user", None, None, None),
    (
        "disk quota exceeded on /var/lib/docker",
        "no space left on device /var/lib/docker",
        None,
        None,
        None,
        None,
    ),
    ("HTTP 502 Bad Gateway", "HTTP 504 Gateway Timeout", None, None, None, None),
    ("got 500 from upstream", "got 502 from upstream", None, None, None, None),
    (
        "payment declined: insufficient funds",
        "payment declined: card expired",
        "pay",
        "pay",
        None,
        None,
    ),
]


def test_there_are_enough_hand_written_pairs() -> None:
    assert len(SAME_KIND) >= 30
    assert len(DIFFERENT_KINDS) >= 30


@pytest.mark.parametrize(("a", "b", "tool", "exc"), SAME_KIND)
def test_same_kind_same_signature(a: str, b: str, tool: str | None, exc: str | None) -> None:
    sa, sb = signature(a, tool=tool, exc_type=exc), signature(b, tool=tool, exc_type=exc)
    assert sa == sb
    assert sa  # and not blank


@pytest.mark.parametrize(("a", "b", "tool_a", "tool_b", "exc_a", "exc_b"), DIFFERENT_KINDS)
def test_different_kinds_differ(
    a: str, b: str, tool_a: str | None, tool_b: str | None, exc_a: str | None, exc_b: str | None
) -> None:
    assert signature(a, tool=tool_a, exc_type=exc_a) != signature(b, tool=tool_b, exc_type=exc_b)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("order #W5521 and W123", "order <id> and <id>"),
        ("block blk_-42 and blk_38865049064139660", "block <id> and <id>"),
        ("id 3f1c2ab9-1234-4abc-8def-0123456789ab", "id <uuid>"),
        ("at 0x7ffd5e8c", "at <hex>"),
        ("hash d41d8cd98f00b204e9800998ecf8427e", "hash <id>"),
        ("mail alice@example.com now", "mail <email> now"),
        ("see https://x.io/a?b=1 now", "see <url> now"),
        ("open /var/log/app.log and C:\\Users\\bob\\x.txt", "open <path> and <path>"),
        ("from 10.0.0.12:5432 and ::1", "from <ip> and <ip>"),
        ("on 2024-05-13 at 10:31:07", "on <date> at <time>"),
        ("due May 13, 2024", "due <date>"),
        ("key 'abc' and \"def\"", "key <str> and <str>"),
        ("retry_after=30 user=alice", "retry_after=<v> user=<v>"),
        ("total 1,203.50 of -42", "total <num> of <num>"),
        ('{"status": "delivered"}', '{"status": <str>}'),
        ("HTTP 503 Service Unavailable", "HTTP 503 Service Unavailable"),
        ("it can't find the user's order", "it can't find the user's order"),
        (
            "urllib3.exceptions.ReadTimeoutError and utf8",
            "urllib3.exceptions.ReadTimeoutError and utf8",
        ),
    ],
)
def test_mask(text: str, expected: str) -> None:
    assert mask(text) == expected


def test_signature_shape() -> None:
    assert (
        signature("Error: flight HAT030 not available on date 2024-05-13", tool="book_reservation")
        == "book_reservation: flight <id> not available on date <date>"
    )
    assert signature(traceback("get_order", "KeyError: 'W5521'")) == "KeyError in get_order: <str>"
    assert signature("x", exc_type="reviewer.tools.ToolError") == "ToolError: x"
    assert signature(
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    ) == ("overloaded_error: overloaded")
    assert signature("") == ""
    long = "Error: " + " ".join(f"word{i}x" if i % 2 else "word" for i in range(80))
    assert signature(long).endswith("…")


def test_signatures_of_lines_one_per_line() -> None:
    lines = ["Error: order W1 not found\n", "\n", "HTTP 404 Not Found\r\n"]
    assert list(signatures_of_lines(lines)) == ["order <id> not found", "", "http 404 not found"]
    assert list(signatures_of_lines(iter([]))) == []


@pytest.mark.parametrize(
    "lines",
    [
        ["failed at 0xab", "failed at 1xab"],  # a zero before x makes hex
        ['{"error": "boom", "n": 10}', '{"error": "boom", "n": 01}'],  # 01 is not JSON
        ["upstream said 404 Not Found", "upstream said 704 Not Found"],  # 704 is no status
        ["checksum sha256 failed", "checksum sha356 failed"],  # sha256 is a kind, kept
        ['{"error": "caf\\u00e9 closed"}', '{"error": "caf\\u00e8 closed"}'],  # escapes
        ["code: \\042704", "code: \\042404"],  # an octal quote, then a status
        ["code\ue000704", "code\ue000404"],  # masking's sentinel, read as a space
        [
            '{"type": 1e-300, "code": "QuotaExceeded", "message": "over"}',
            '{"type": 1e-400, "code": "QuotaExceeded", "message": "over"}',  # 0.0: no type
        ],
    ],
)
def test_lines_alike_but_for_a_digit_that_decides_get_each_its_own_signature(
    lines: list[str],
) -> None:
    """Lines whose digits differ share a signature only when no digit decides it: each line
    gets what ``signature`` gives it alone, in either order, in a batch and across calls."""
    for ordered in (lines, lines[::-1]):
        assert list(signatures_of_lines(ordered, templates=False)) == [
            signature(t) for t in ordered
        ]
        assert [shape_signature(t, "tool") for t in ordered] == [
            signature(t, "tool") for t in ordered
        ]


_PIECES = st.sampled_from(
    [
        "HTTP ",
        "status ",
        "exit code ",
        "errno ",
        "0x",
        "sha",
        "int",
        "Error: ",
        "Jan ",
        "-",
        ":",
        ".",
        "/",
        " ",
        "'",
        '"',
        "{",
        "}",
        "=",
        "KB",
        "ms",
        "#",
        "W",
        "abc",
        "\\u00",
        "\\04",
        "\ue000",
        "e-4",
        '{"error": "',
        '{"type": ',
        '"}',
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(_PIECES, st.text("0123456789", min_size=1, max_size=4)), max_size=12),
    st.lists(st.text("0123456789", min_size=1, max_size=1), min_size=1, max_size=40),
)
def test_shape_signature_is_signature_whatever_the_digits(
    parts: list[str], digits: list[str]
) -> None:
    """The same text with other digits: each is signed as ``signature`` signs it alone."""
    text = "".join(parts)
    fill = iter(digits * 40)
    variants = [text, "".join(next(fill) if c.isdigit() else c for c in text)]
    for v in variants + variants[::-1]:
        assert shape_signature(v) == signature(v)
        assert shape_signature(v, "get_order", "KeyError") == signature(v, "get_order", "KeyError")


@pytest.mark.parametrize(
    ("text", "is_error"),
    [
        ("Error: gift card balance is not enough", True),
        ("Traceback (most recent call last):\n  File ...", True),
        ("ValueError: bad", True),
        ('{"error": "not found"}', True),
        ('{"error": null, "ok": true}', False),
        ("upstream returned HTTP 502", True),
        ("404 Not Found", True),
        ("the request timed out", True),
        ('{"status": "delivered", "timeout": 30}', False),
        ("Your flight is booked.", False),
        ("", False),
    ],
)
def test_is_error_text(text: str, is_error: bool) -> None:
    assert is_error_text(text) is is_error


@pytest.mark.parametrize(
    ("termination", "cause"),
    [
        ("max_steps", "max steps"),
        ("MAX_TURNS reached", "max steps"),
        ("user gave up", "user gave up"),
        ("transfer_to_human_agents", "transfer to human"),
        ("transfer to human", "transfer to human"),
        ("context_length exceeded", "max tokens"),
        ("user stop", None),
        ("###STOP###", None),
        (None, None),
        ("", None),
    ],
)
def test_termination_cause(termination: str | None, cause: str | None) -> None:
    assert termination_cause(termination) == cause


def _trial(**extra: object) -> Trial:
    messages = [
        Message("user", "Cancel order #W5521"),
        Message("assistant", "", [ToolCall("cancel_order", {"order_id": "#W5521"}, "c1")]),
        Message("tool", "Error: order #W5521 already shipped", tool_call_id="c1"),
        Message("assistant", "I cancelled order #W5521 for you."),
    ]
    base: dict[str, object] = {
        "task_id": "cancel",
        "messages": messages,
        "passed": False,
        "run": "r1",
        "trial": 2,
    }
    base.update(extra)
    return Trial(**base)  # type: ignore[arg-type]


def test_evidence_priority() -> None:
    full = _trial(
        error=TrialError("ToolError", "order W5521 already shipped"),
        termination="max_steps",
        reason="order still active",
        judge=Verdict("fail", rationale="cancelled a shipped order #W5521"),
    )
    assert evidence_of(full, ["no_cancel_shipped"]).signature == "rule: no_cancel_shipped"
    assert evidence_of(full).signature == "ToolError: order <id> already shipped"
    no_error = _trial(termination="max_steps", reason="order still active")
    assert (
        evidence_of(no_error).signature == "cancel_order: order <id> already shipped"
    )  # tool name from the call id
    quiet = _trial(messages=[Message("assistant", "hi")], termination="max_steps", reason="x")
    assert evidence_of(quiet).signature == "terminated: max steps"
    only_reason = _trial(
        messages=[Message("assistant", "hi")], reason="refunded 40.00, expected 25.00"
    )
    assert evidence_of(only_reason).signature == "refunded <num>, expected <num>"
    nothing = _trial(messages=[Message("assistant", "hi")])
    assert evidence_of(nothing).signature == ""
    transfer = _trial(
        messages=[Message("assistant", "", [ToolCall("transfer_to_human_agents", {}, "t")])]
    )
    assert evidence_of(transfer).signature == "terminated: transfer to human"


def test_evidence_text_is_masked_and_complete() -> None:
    doc = evidence_of(
        _trial(
            reason="refunded 40.00",
            judge=Verdict("fail", rationale="shipped order #W5521 cancelled"),
        ),
        trial_id="abc",
    )
    assert doc.trial_id == "abc" and doc.run == "r1" and doc.task_id == "cancel"
    assert "W5521" not in doc.text
    for piece in (
        "calls cancel_order",
        "already shipped",
        "I cancelled order <id>",
        "refunded <num>",
        "shipped order <id> cancelled",
    ):
        assert piece in doc.text
    assert [e.kind for e in doc.evidence] == ["tool_error", "reason"]
    assert evidence_of(_trial()).trial_id == "r1/cancel/2"


def test_signature_module_stays_light() -> None:
    code = (
        "import sys, reviewer.clustering.signature, reviewer.clustering.templates;"
        "heavy = [m for m in ('numpy', 'sklearn', 'scipy', 'textual') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_mask_never_fails_and_is_idempotent(text: str) -> None:
    once = mask(text)
    assert isinstance(once, str)
    assert mask(once) == once
    assert isinstance(signature(text), str)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["order", "not", "found", "failed", "the", "user", "Cancel"]), max_size=12
    )
)
def test_plain_words_are_kept(words: list[str]) -> None:
    text = " ".join(words)
    assert mask(text) == text


def test_signatures_group_varied_system_logs_well_above_the_digit_mask_baseline() -> None:
    """Issue 16, item 3: error lines of HTTP servers, JVM, Python, kernel, schedulers, databases and
    agent tools (tests/clustering/logs.py) group by event; measured 0.951 and 0.963 (seeds 0, 1)
    against 0.63 (0.94 before issue 28)."""
    from reviewer.clustering.signature import signatures_of_lines
    from tests.clustering.logs import digit_mask, grouping_accuracy, lines

    for seed in (0, 1):
        events = lines(3000, seed)
        texts = [" ".join(line.split()) for line, _ in events]
        truth = [t for _, t in events]
        ours = grouping_accuracy(list(signatures_of_lines(texts)), truth)
        baseline = grouping_accuracy([digit_mask(t) for t in texts], truth)
        assert ours >= 0.945 and ours > baseline + 0.2


def test_words_that_vary_across_otherwise_equal_lines_become_variables() -> None:
    from reviewer.clustering.signature import line_templates

    users = ["alice", "bob", "carol", "dmitri", "eve"]
    sigs = [f"password authentication failed for user {u}" for u in users]
    sigs += ["deadlock detected", "relation orders does not exist"]
    out = line_templates(sigs)
    assert set(out[:5]) == {"password authentication failed for user <*>"}
    assert out[5:] == sigs[5:]
    # two values are not enough to call a word a variable
    assert line_templates(sigs[:2]) == sigs[:2]


def test_batch_signatures_are_the_signatures_of_each_line() -> None:
    """`reviewer signatures` masks each shape of line once; that never changes a signature, even
    where a digit's value shows (status and exit codes, kept words like sha256)."""
    from reviewer.clustering.signature import signature, signatures_of_lines
    from tests.clustering.logs import lines

    texts = [" ".join(line.split()) for line, _ in lines(3000, 7)]
    texts += [
        "GET /a HTTP/1.1 000 x",
        "GET /a HTTP/1.1 404 x",
        "HTTP 500: internal server error",
        "HTTP 503: internal server error",
        "process exited with code 1",
        "process exited with code 2",
        "hash sha256 mismatch",
        "hash sha512 mismatch",
        "needs python3 not python4",
        "needs python2 not python5",
        "killed by signal 9",
        "killed by signal 15",
        "errno 13 on file",
        "errno 2 on file",
        "Error: order W1234 not found",
        "Error: order W9876 not found",
        "",
    ]
    assert list(signatures_of_lines(texts, templates=False)) == [
        signature(t) if t.strip() else "" for t in texts
    ]


@pytest.mark.parametrize(
    "text",
    ["0''", "'a'0", "0#0_", "0.errno 0", "0-errno 0", "/errno 0", "' ''\"'", "0:00www.a"],
)
def test_masking_a_masked_text_changes_nothing_where_a_placeholder_moved_a_boundary(
    text: str,
) -> None:
    """Cases the property test found: a placeholder made a boundary, paired quotes or hid the word a
    number was kept for, so a second masking changed the text."""
    once = mask(text)
    assert mask(once) == once
