"""Secrets that ``--redact`` must mask and look-alikes it must keep (also read by bench/).

Key-shaped values are assembled at run time from pieces, so no literal that looks like a real
credential is committed; all of them are fake. Cards, the SSN and the IBANs are the published test
numbers.
"""

from __future__ import annotations

import base64
import json


def _j(*parts: str) -> str:
    return "".join(parts)


def _b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


_AWS_SECRET = _j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYzFAKEKEY12")
_AZURE = base64.b64encode(b"f" * 64).decode()
_JWT = ".".join([_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": "42"}), "Sfl" * 14])
_PEM_BODY = (
    "MIIEowIBAAKCAQEA7fakefakefakefakefake0123456789abcdefABCDEF\nq1w2e3r4t5y6u7i8o9p0fakefake+/=="
)
_SSH_BODY = (
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDfake"
)
_BASIC = base64.b64encode(b"admin:S3cr3tPassw0rd").decode()
_GH = _j("gh", "p_", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5")

#: (name, text, the secret that must not survive, the kind it is counted as)
SECRETS: list[tuple[str, str, str, str]] = [
    (
        "anthropic",
        "key " + _j("sk-", "ant-api03-", "Fk3x9Qm2Lp7Rt5Vw8Yz1Ab4Cd"),
        "Fk3x9Qm2Lp7Rt5Vw8Yz1Ab4Cd",
        "api key",
    ),
    (
        "openai",
        "OPENAI_API_KEY=" + _j("sk-", "proj-", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9"),
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9",
        "api key",
    ),
    (
        "aws key id",
        "aws id " + _j("AK", "IA", "QW3ERT5YUI7OPAS9"),
        _j("AK", "IA", "QW3ERT5YUI7OPAS9"),
        "api key",
    ),
    ("aws secret env", "AWS_SECRET_ACCESS_KEY=" + _AWS_SECRET, _AWS_SECRET, "credential"),
    (
        "aws secret in escaped json",
        '"{\\"aws_secret_access_key\\": \\"' + _AWS_SECRET + '\\"}"',
        _AWS_SECRET,
        "credential",
    ),
    (
        "aws secret export",
        "export aws_secret_access_key=" + _AWS_SECRET + " # prod",
        _AWS_SECRET,
        "credential",
    ),
    (
        "aws secret json",
        '{"aws_secret_access_key": "' + _AWS_SECRET + '"}',
        _AWS_SECRET,
        "credential",
    ),
    ("github", "token " + _GH, _GH, "api key"),
    (
        "github fine-grained",
        _j("github", "_pat_", "11ABCDEFG0abcdefghijkl_", "mnopqrstuvwxyz0123456789ABCDEFGHIJ"),
        "mnopqrstuvwxyz0123456789",
        "api key",
    ),
    (
        "gitlab",
        "GITLAB_TOKEN " + _j("gl", "pat-", "Ab3Cd5Ef7Gh9Ij1Kl3Mn"),
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn",
        "api key",
    ),
    (
        "slack token",
        "slack " + _j("xo", "xb-", "123456789012-1234567890123-", "AbCdEfGhIjKlMnOpQrStUvWx"),
        "AbCdEfGhIjKlMnOpQrStUvWx",
        "api key",
    ),
    (
        "slack webhook",
        "post to "
        + _j(
            "https://hooks.slack.com/services/",
            "T0A1B2C3D/B0A1B2C3D4E/",
            "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7",
        ),
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7",
        "api key",
    ),
    (
        "google",
        "key=" + _j("AI", "za", "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
        "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        "api key",
    ),
    (
        "stripe live",
        "stripe " + _j("sk", "_live_", "51Hq3Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7"),
        "51Hq3Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7",
        "api key",
    ),
    (
        "stripe restricted",
        "rk=" + _j("rk", "_live_", "51Hq3Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr"),
        "51Hq3Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr",
        "api key",
    ),
    (
        "huggingface",
        "HF_TOKEN " + _j("hf", "_", "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
        "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        "api key",
    ),
    (
        "npm",
        "token " + _j("np", "m_", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Y"),
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Y",
        "api key",
    ),
    (
        "sendgrid",
        "mail key "
        + _j(
            "SG", ".", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5O", ".", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9C"
        ),
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9C",
        "api key",
    ),
    (
        "azure account key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
        + _AZURE
        + ";EndpointSuffix=core.windows.net",
        _AZURE,
        "credential",
    ),
    ("jwt", "session " + _JWT, _JWT, "jwt"),
    ("jwt in a cookie", "cookie: id=" + _JWT + ";", _JWT, "jwt"),
    (
        "bearer",
        "Authorization: Bearer abc123def456ghi789jkl012",
        "abc123def456ghi789jkl012",
        "bearer token",
    ),
    ("basic auth", "Authorization: Basic " + _BASIC, _BASIC, "basic auth"),
    (
        "pem rsa",
        "key:\n"
        + _j("-----BEGIN RSA ", "PRIVATE KEY-----\n")
        + _PEM_BODY
        + _j("\n-----END RSA ", "PRIVATE KEY-----"),
        _PEM_BODY,
        "private key",
    ),
    (
        "pem openssh",
        _j("-----BEGIN OPENSSH ", "PRIVATE KEY-----\n")
        + _SSH_BODY
        + _j("\n-----END OPENSSH ", "PRIVATE KEY-----"),
        _SSH_BODY,
        "private key",
    ),
    (
        "pem cut short",
        _j("-----BEGIN ", "PRIVATE KEY-----\\n")
        + "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\nBKcwggSjAgEAAoIBAQC7",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "private key",
    ),
    (
        "url credentials",
        "DATABASE_URL=postgres://admin:S3cr3t!Pass@db.internal:5432/app",
        "S3cr3t!Pass",
        "password",
    ),
    (
        "url credentials with $",
        "clone https://deploy:gh-Pa$$w0rd@git.example.com/repo.git",
        "gh-Pa$$w0rd",
        "password",
    ),
    ("password with symbols", "password: Tr0ub4dor&3-Xyz!9q", "Tr0ub4dor&3-Xyz!9q", "credential"),
    ("password in json", '{"password": "p@ss W0rd!#2024"}', "p@ss W0rd!#2024", "credential"),
    (
        "password of words",
        "password: correcthorsebatterystaple",
        "correcthorsebatterystaple",
        "credential",
    ),
    ("password stated", "my password is Hunter2024x, please", "Hunter2024x", "credential"),
    ("db password env", "DB_PASSWORD='hunter2!Secret'", "hunter2!Secret", "credential"),
    (
        "client secret",
        "client_secret=Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
        "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
        "credential",
    ),
    ("card visa", "card 4111 1111 1111 1111 exp 12/27", "4111 1111 1111 1111", "card number"),
    ("card mastercard", "paid with 5555555555554444.", "5555555555554444", "card number"),
    ("card amex", "amex 3782-822463-10005", "3782-822463-10005", "card number"),
    ("ssn", "SSN 078-05-1120 on file", "078-05-1120", "ssn"),
    ("ssn digits", "social security number: 078051120", "078051120", "ssn"),
    ("iban spaced", "IBAN GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 32", "iban"),
    ("iban", "to DE89370400440532013000 please", "DE89370400440532013000", "iban"),
    (
        "email",
        "mail jane.doe+eval@mail.example.co.uk now",
        "jane.doe+eval@mail.example.co.uk",
        "email",
    ),
    ("phone spaced", "call me on 415 555 0132", "415 555 0132", "phone number"),
    ("phone international", "reach me at +44 20 7946 0958", "20 7946 0958", "phone number"),
    ("phone dashes", "phone: 415-555-0132", "415-555-0132", "phone number"),
    ("phone bare digits", "my phone number is 4155550132", "4155550132", "phone number"),
    ("phone e164", "+14155550100.", "4155550100", "phone number"),
    # issue 27: kinds and forms that were left as they were
    (
        "key in a run name",
        "prod-" + _j("sk-", "ant-api03-", "Fk3x9Qm2Lp7Rt5Vw8Yz1Ab4Cd"),
        "Fk3x9Qm2Lp7Rt5Vw8Yz1Ab4Cd",
        "api key",
    ),
    (
        "key after an underscore",
        "run_" + _j("gh", "p_", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5"),
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9",
        "api key",
    ),
    ("pgpassword", "PGPASSWORD=Hunter2Secret psql -h db", "Hunter2Secret", "credential"),
    ("mysql password env", "export MYSQL_PWD='s3cr3t-Pw!'", "s3cr3t-Pw!", "credential"),
    ("mysql -p", "mysql -u root -pS3cretPw99 shop", "S3cretPw99", "password"),
    (
        "mysqldump -p quoted",
        "mysqldump -h db -u app -p'Tr0ub4dor&3' app > app.sql",
        "Tr0ub4dor&3",
        "password",
    ),
    ("sshpass", "sshpass -p Hunter2Secret ssh deploy@host", "Hunter2Secret", "password"),
    ("curl -u", "curl -u bob:Pa55word1 https://api.example.com", "Pa55word1", "password"),
    (
        "curl --user",
        "curl -s --user 'ci:xK9-pQ2_mZ7' https://ci.example.com",
        "xK9-pQ2_mZ7",
        "password",
    ),
    (
        "digitalocean",
        "DO token " + _j("do", "p_v1_", "aaaaaaaa", "0123456789abcdef" * 3, "bbbbbbbb"),
        _j("aaaaaaaa", "0123456789abcdef" * 3),
        "api key",
    ),
    (
        "shopify",
        "shop " + _j("shp", "at_", "0123456789abcdef" * 2),
        "0123456789abcdef" * 2,
        "api key",
    ),
    (
        "telegram",
        "bot " + _j("123456789", ":", "AAH", "x1Y2z3W4v5U6t7S8r9Q0p1O2n3M4l5K6"),
        "x1Y2z3W4v5U6t7S8r9Q0p1O2n3M4l5K6",
        "api key",
    ),
    (
        "telegram api url",
        "POST https://api.telegram.org/bot"
        + _j("123456789", ":", "AAH", "x1Y2z3W4v5U6t7S8r9Q0p1O2n3M4l5K6")
        + "/sendMessage",
        "x1Y2z3W4v5U6t7S8r9Q0p1O2n3M4l5K6",
        "api key",
    ),
    (
        "discord webhook",
        "hook "
        + _j(
            "https://discord.com/api/",
            "webhooks/",
            "123456789012345678/",
            "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9Cd1Ef3Gh5Ij7Kl9Mn1Op3Qr5St7",
        ),
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1",
        "api key",
    ),
    (
        "discord bot",
        "DISCORD_BOT "
        + _j("MTk4NjIyNDgzNDcxOTI1MjQ4", ".", "Cl2FMQ", ".", "ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
        "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "api key",
    ),
    (
        "azure sas",
        "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&se=2025-01-01&sig="
        + "Zk9Tb3J0YWxTZWNyZXQ%2BQUJDRA%3D",
        "Zk9Tb3J0YWxTZWNyZXQ",
        "credential",
    ),
    (
        "aws presigned",
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature="
        + "9f" * 32,
        "9f" * 32,
        "credential",
    ),
    (
        "mailchimp",
        "mc " + _j("0123456789abcdef" * 2, "-us", "12"),
        "0123456789abcdef" * 2,
        "api key",
    ),
    (
        "square",
        "sq " + _j("sq0", "csp-", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9"),
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9",
        "api key",
    ),
    (
        "gitlab deploy",
        "GL " + _j("gl", "dt-", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op"),
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op",
        "api key",
    ),
]

#: Text that looks a little like a secret and must survive (at most one may be changed).
LOOKALIKES: list[str] = [
    "I want a refund for order #W2378156",
    "a $1,234.56 charge; 15% off; qty 3; 1,234,567.89 in all",
    "delivered on 2024-05-13, again 13/05/2024",
    "at 2024-05-13T10:30:00+00:00 and 2024-05-13T10:30:00.123456Z",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (short 9fceb02)",
    "version 1.2.3, v2.10.0-rc.1, python 3.11.4",
    "user id mia_li_3668 and raj_sanchez_7340",
    "flight HAT136 on 2024-05-15, seat 12A, gate B22",
    "reservation ABC123 and ZFA04Y",
    "error at main.py:123:45",
    "took 1h23m45s, then 00:12:34.567, PT1H30M",
    "color #ff8800 and #FFF",
    "host 10.0.0.1, 192.168.100.200:8080 and 2001:db8::1",
    "ZIP 94107, 7185 Orchard Pl, Madison, WI",
    "tracking 1Z999AA10123456784",
    "epoch 1715600000 seconds, 1715600000123 ms",
    "payment credit_card_4421486 and gift_card_7302224",
    "item ids 6942297802 and 9228757377",
    "order total 12 345 678",
    "sizes 100 200 300 and 4000 5000 6000 7000",
    "call 555-0100",
    "the token was invalid; ask for a new api key",
    "password: required",
    "a risky-task-id and sk-short",
    "price 1299.99 USD, 3 x 19.99",
    "Basic Economy cabin, 2 bags, the bearer of this ticket",
    "see https://example.com/docs/page?id=42&lang=en",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "card ending in 1111 expired",
    "ISBN 978-3-16-148410-0",
    "the password field is required",
    "response 200 OK in 345 ms",
    "base64 aGVsbG8gd29ybGQ= decoded",
    'api_key: "YOUR_API_KEY", token=${GITHUB_TOKEN}',
    "https://oauth2:${GITLAB_TOKEN}@gitlab.com/user/repo.git",
    "<redacted:email> is already masked",
    # issue 27: numbers shaped like phones that are ids, and more ids, hashes and codes
    "order 555-123-4567 shipped",
    "order 555-223-4567, ticket #415 555 0100, invoice no. 212-555-0199",
    "case 650-253-0000 reopened; ref: 303 555 0142",
    "ids 550e8400-e29b-41d4-a716-446655440000 and 6ba7b810-9dad-11d1-80b4-00c04fd430c8",
    "md5 d41d8cd98f00b204e9800998ecf8427e, sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "sha512 cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff83",
    "trial f1035602354868dbecad and task 08248caae5a5eda34f03 of run airline-v2",
    "request req_011CU4s7Ajdk3n2uXq9vJz5B, message msg_01XFDUDYJgAACzvnptvVoYEL",
    "run gpt-4o-2024-08-06-airline, model claude-sonnet-4-5-20250929",
    "docker sha256:9b2a6e0c1a4f and image python:3.11-slim",
    "at 12:30:45, 1715600000:abcdef and port 8080:80",
    "the signature field is required; sig=short",
    "mysql -p shop asks for the password; curl -u bob https://example.com",
    'usage {"input_tokens": 5120, "output_tokens": 410, "max_tokens": 1024}',
    "token_count 1234567 and next_page_token=2",
    "DigitalOcean droplet do-sfo3-01, Shopify store shop_12345, Discord #general",
    "telegram @support_bot, chat 123456789",
    "run eval-sk-long-descriptive-name-2024-05-13 and locale en-sk-translations-for-slovakia",
    "PWD=~/project OLDPWD=~ SHELL=bash",
    "host Northwind_Traders_Corporat.domain.something_very_long_identifier_here_x",
]
