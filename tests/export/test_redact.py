"""Redaction: every kind of secret is masked and counted; ids, prices, dates and prose are not."""

from __future__ import annotations

import pytest

from reviewer.export.redact import Redactor

# Fake secrets, assembled at run time so no key-shaped literal is committed: "x" padding only.
ANTHROPIC = "sk-" + "ant-" + "fake-" + "x" * 40
OPENAI = "sk-" + "proj-" + "FAKE" + "x" * 20
GITHUB = "gh" + "p_" + "FAKE" + "x" * 32
AWS = "AK" + "IA" + "FAKE" + "X" * 12
JWT = ".".join(["ey" + "J" + "fakeheader", "ey" + "J" + "fakebody", "fakesig123"])


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        (f"key {ANTHROPIC} here", "key <redacted:api-key> here", "api key"),
        (f"OPENAI_API_KEY={OPENAI}", "OPENAI_API_KEY=<redacted:api-key>", "api key"),
        (f"aws {AWS}.", "aws <redacted:api-key>.", "api key"),
        (f"token {GITHUB}", "token <redacted:api-key>", "api key"),
        (
            f"Authorization: Bearer {JWT}",
            "Authorization: Bearer <redacted:bearer-token>",
            "bearer token",
        ),
        (
            'api_key = "' + "f4ke" * 8 + '"',
            'api_key = "<redacted:secret>"',
            "secret",
        ),
        (
            '{"access_token": "dGhpcyBpcyBhIHNlY3JldCB0b2tlbjEyMw=="}',
            '{"access_token": "<redacted:secret>"}',
            "secret",
        ),
        ("password: hunter2hunter2hunter2", "password: <redacted:secret>", "secret"),
        ("mail jane.doe+eval@mail.example.co.uk now", "mail <redacted:email> now", "email"),
        ("call +1 415 555 0100 today", "call <redacted:phone-number> today", "phone number"),
        ("call (415) 555-0100", "call <redacted:phone-number>", "phone number"),
        ("or 415.555.0100", "or <redacted:phone-number>", "phone number"),
        ("uk +44 20 7946 0958", "uk <redacted:phone-number>", "phone number"),
        ("tel:415-555-0100", "tel:<redacted:phone-number>", "phone number"),
        ("+14155550100.", "<redacted:phone-number>.", "phone number"),
    ],
)
def test_each_kind_is_masked_and_counted(text: str, expected: str, kind: str) -> None:
    r = Redactor()
    assert r.text(text) == expected
    assert dict(r.counts) == {kind: 1}


@pytest.mark.parametrize(
    "text",
    [
        "I want a refund for order #W5521",
        "order W5521 and W9314 (2 orders)",
        "refunded 40.00, expected 25.00",
        "a $1,299.99 charge; 15% off; qty 3",
        "delivered on 2024-05-13, again 13/05/2024 at 10:30:15",
        "2024-05-13T10:30:00+00:00",
        "ZIP 53763, 7185 Orchard Pl, Madison, WI",
        "version 1.2.3 at 10.0.0.1 and 192.168.100.200",
        "flight HAT030 on 2024-05-13, reservation ZFA04Y",
        "tracking 1Z999AA10123456784",
        "order total 12 345 678",
        "sizes 100 200 300 and 4000 5000 6000",
        "call 555-0100",  # too short to be sure
        "the token was invalid; ask for a new api key",
        "password: correcthorsebatterystaple",  # prose, not a token (no digits)
        "sk-short and a risky-task-id",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "<redacted:email> is already masked",
    ],
)
def test_things_that_must_not_be_masked(text: str) -> None:
    r = Redactor()
    assert r.text(text) == text
    assert r.total == 0


def test_counts_add_up_and_summary_reads_well() -> None:
    r = Redactor()
    r.text(f"{OPENAI} and a@b.io, c@d.io")
    r.text("Bearer abcdefgh12345678")
    assert r.total == 4
    assert r.summary() == "4 secrets (1 api key, 1 bearer token, 2 emails)"
    assert Redactor().summary() == "no secrets"


def test_a_record_counts_a_repeated_secret_once_and_keeps_ids() -> None:
    r = Redactor()
    rec = {
        "id": "ana@example.com-like-id",
        "note": "write to ana@example.com",
        "text": "write to ana@example.com\nor bob@example.com",
        "nested": [{"content": "ana@example.com"}, 3, None, True],
    }
    out = r.record(rec, frozenset({"id"}))
    assert out["id"] == rec["id"]
    assert out["note"] == "write to <redacted:email>"
    assert out["nested"] == [{"content": "<redacted:email>"}, 3, None, True]
    assert dict(r.counts) == {"email": 2}
    r.record({"again": "ana@example.com"})
    assert dict(r.counts) == {"email": 3}  # counted once per record
