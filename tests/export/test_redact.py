"""Redaction: every kind of secret is masked and counted; ids, prices, dates and prose are not; keys
and task ids are masked too, the same way every time."""

from __future__ import annotations

import pytest

from reviewer.export.detectors import DETECTORS, is_card, is_iban, is_nanp, is_ssn, luhn
from reviewer.export.redact import KINDS, Redactor
from tests.export.redact_samples import LOOKALIKES, SECRETS

# Fake secrets, assembled at run time so no key-shaped literal is committed: "x" padding only.
ANTHROPIC = "sk-" + "ant-" + "fake-" + "x" * 40
OPENAI = "sk-" + "proj-" + "FAKE" + "x" * 20
GITHUB = "gh" + "p_" + "FAKE" + "x" * 32
AWS = "AK" + "IA" + "FAKE" + "X" * 12


def survives(secret: str, out: str, window: int = 6) -> bool:
    """Whether the secret, or any run of ``window`` of its characters, is still in ``out``."""
    if len(secret) <= window:
        return secret in out
    return any(secret[i : i + window] in out for i in range(len(secret) - window + 1))


@pytest.mark.parametrize(
    ("text", "secret", "kind"), [s[1:] for s in SECRETS], ids=[s[0] for s in SECRETS]
)
def test_every_secret_kind_of_issue_14_is_masked(text: str, secret: str, kind: str) -> None:
    """aws_secret_access_key (env and JSON), passwords with symbols, URL credentials, sk_live_,
    JWTs, Basic auth, PEM blocks, Slack webhooks, hf_/npm_ tokens, Azure AccountKey, cards (Luhn),
    SSNs, IBANs (mod-97) and bare phone numbers were left as they were."""
    r = Redactor()
    out = r.text(text)
    assert not survives(secret, out), out
    assert dict(r.counts) == {kind: 1}, out


def test_no_lookalike_is_changed() -> None:
    """Issue 27: "order 555-123-4567" was masked as a phone number."""
    assert len(LOOKALIKES) >= 57 and len(SECRETS) >= 66
    changed = [(t, out) for t in LOOKALIKES if (out := Redactor().text(t)) != t]
    assert changed == []


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        (f"key {ANTHROPIC} here", "key <redacted:api-key> here", "api key"),
        (f"OPENAI_API_KEY={OPENAI}", "OPENAI_API_KEY=<redacted:api-key>", "api key"),
        (f"aws {AWS}.", "aws <redacted:api-key>.", "api key"),
        (f"token {GITHUB}", "token <redacted:api-key>", "api key"),
        ('api_key = "' + "f4ke" * 8 + '"', 'api_key = "<redacted:credential>"', "credential"),
        (
            '{"access_token": "dGhpcyBpcyBhIHNlY3JldCB0b2tlbjEyMw=="}',
            '{"access_token": "<redacted:credential>"}',
            "credential",
        ),
        ("password: Tr0ub4dor&3-Xyz!9q.", "password: <redacted:credential>.", "credential"),
        (
            "postgres://admin:S3cr3t!Pass@db:5432",
            "postgres://admin:<redacted:password>@db:5432",
            "password",
        ),
        ("call (415) 555-0100", "call <redacted:phone-number>", "phone number"),
        ("tel:415-555-0100", "tel:<redacted:phone-number>", "phone number"),
        # a Redis URL's password has no user before it: it was exported as it was
        (
            "REDIS_URL=redis://:p4ssw0rd-Xq9@cache.internal:6379/0",
            "REDIS_URL=redis://:<redacted:password>@cache.internal:6379/0",
            "password",
        ),
    ],
)
def test_only_the_secret_is_masked(text: str, expected: str, kind: str) -> None:
    r = Redactor()
    assert r.text(text) == expected
    assert dict(r.counts) == {kind: 1}


@pytest.mark.parametrize(
    "text",
    [
        "order W5521 and W9314 (2 orders)",
        "refunded 40.00, expected 25.00",
        "version 1.2.3 at 10.0.0.1",
        "4111 1111 1111 1112",  # fails Luhn
        "1234 5678 9012 3456",  # fails Luhn
        "GB82 WEST 1234 5698 7654 33",  # fails mod-97
        "000-12-3456 and 666-12-3456",  # never assigned
        "phone 1115550132",  # no area code starts with 1
        "Basic information",  # not base64 of user:password
        "Bearer instrument",
        "password=${DB_PASSWORD} and password: [password]",
    ],
)
def test_checked_lookalikes_are_kept(text: str) -> None:
    r = Redactor()
    assert r.text(text) == text
    assert r.total == 0


def test_the_checks() -> None:
    assert luhn("79927398713") and not luhn("79927398710")
    assert is_card("4111-1111-1111-1111") and not is_card("4111-11111111-1111")
    assert is_iban("NO9386011117947") and not is_iban("NO9386011117948")
    assert is_ssn("078-05-1120") and not is_ssn("912-05-1120")
    assert is_nanp("+1 (415) 555-0132") and not is_nanp("415 155 0132")


def test_counts_add_up_and_summary_reads_well() -> None:
    r = Redactor()
    r.text(f"{OPENAI} and a@b.io, c@d.io")
    r.text("Bearer abcdefgh12345678")
    assert r.total == 4
    assert r.summary() == "4 secrets (1 api key, 1 bearer token, 2 emails)"
    assert Redactor().summary() == "no secrets"
    assert set(KINDS) == {d.kind for d in DETECTORS} == {s[3] for s in SECRETS}


def test_a_record_counts_a_repeated_secret_once() -> None:
    r = Redactor()
    rec = {
        "note": "write to ana@example.com",
        "text": "write to ana@example.com\nor bob@example.com",
        "nested": [{"content": "ana@example.com"}, 3, None, True],
    }
    out = r.record(rec)
    assert out["note"] == "write to <redacted:email>"
    assert out["nested"] == [{"content": "<redacted:email>"}, 3, None, True]
    assert dict(r.counts) == {"email": 2}
    r.record({"again": "ana@example.com"})
    assert dict(r.counts) == {"email": 3}  # counted once per record


def test_values_under_secret_named_keys_are_masked_whatever_their_shape() -> None:
    """Issue 27: ``{"api_key": "f4ke..."}`` in structured metadata kept its value (the key and
    the value were masked apart, and a bare value does not look like a secret)."""
    r = Redactor()
    rec = {
        "metadata": {
            "api_key": "f4kef4kef4kef4ke",
            "PGPASSWORD": "Hunter2Secret",
            "clientSecret": "Zx9Yw8Vu7Ts6",
            "api_keys": ["k3yOne-12345", "k3yTwo-67890"],
            "credentials": {"user": "ana", "pass": "p@ss-W0rd-99"},
            "pin_token": 48213377,
            "x-api-key": "plain words here and more",  # a sentence, not a key
            "token": "short",
            "input_tokens": 512,
            "max_tokens": 1234567,
            "tokens": ["hello", "internationalization"],
            "password_hint": "first pet",
            "auth": "oauth2",  # a method, not a secret
            "pwd": "/home/ana",  # the working folder
        }
    }
    out = r.record(rec)["metadata"]
    assert out["api_key"] == out["PGPASSWORD"] == out["clientSecret"] == "<redacted:credential>"
    assert out["api_keys"] == ["<redacted:credential>"] * 2
    assert out["credentials"] == {"user": "ana", "pass": "<redacted:credential>"}
    assert out["pin_token"] == "<redacted:credential>"
    kept = (
        "x-api-key",
        "token",
        "input_tokens",
        "max_tokens",
        "tokens",
        "password_hint",
        "auth",
        "pwd",
    )
    for key in kept:
        assert out[key] == rec["metadata"][key], key
    assert dict(r.counts) == {"credential": 7}


def test_json_keys_are_redacted_and_kept_apart() -> None:
    """A secret used as a key (metadata keyed by an email or a token) was never masked."""
    r = Redactor()
    rec = {
        "metadata": {"ana@example.com": 1, "bob@example.com": 2, "plain": "x"},
        "headers": {ANTHROPIC: "key as key"},
        "id": "ana@example.com-abc",
        "provenance": {"trial_id": "ana@example.com"},
    }
    out = r.record(rec, frozenset({("provenance", "trial_id")}))
    assert out["metadata"] == {"<redacted:email>": 1, "<redacted:email> (2)": 2, "plain": "x"}
    assert out["headers"] == {"<redacted:api-key>": "key as key"}
    assert out["id"] == "<redacted:email>-abc"
    assert out["provenance"] == {"trial_id": "ana@example.com"}  # kept by path, not by name
    assert "ana@example.com" not in str({k: v for k, v in out.items() if k != "provenance"})


def test_a_long_string_redacted_again_is_masked_and_counted_as_the_first_time() -> None:
    """Long strings are remembered (an export repeats its system prompt in every task): the
    output and the counts are those of a redactor that remembers nothing."""
    prompt = "Policy. " * 40 + "Escalate to ana@example.com or call 415 555 0132. " + OPENAI
    records = [{"prompt": prompt, "note": f"case {i} for bob@example.com"} for i in range(5)]
    remembering, fresh = Redactor(), Redactor(remember=0)
    assert [remembering.record(r) for r in records] == [fresh.record(r) for r in records]
    assert remembering.counts == fresh.counts == {"email": 10, "phone number": 5, "api key": 5}
    assert remembering.text(prompt) == fresh.text(prompt) and remembering.counts == fresh.counts
