"""What ``--redact`` looks for: one ``Detector`` per kind of secret, applied in ``DETECTORS`` order.

Each is a pattern and, where a shape alone would also catch look-alikes (order ids, prices, dates,
item ids), a check of the matched text: Luhn for card numbers, mod-97 for IBANs, a decodable
``user:password`` for Basic auth, a JSON header for JWTs, the assignable ranges for SSNs and North
American phone numbers. The key prefixes follow the plugins of detect-secrets (widened where those
stop inside the token, e.g. Stripe's 24 characters) and the providers' documented formats.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Detector:
    """``pattern`` finds a candidate; the first of ``groups`` that matched is masked (0: all of it)
    when ``check`` (given that text) accepts it and ``kept_after`` does not match the text just
    before it. ``hint`` is a cheap pre-test of the whole string."""

    kind: str
    pattern: re.Pattern[str]
    groups: tuple[int | str, ...] = (0,)
    check: Callable[[str], bool] | None = None
    hint: re.Pattern[str] | None = None
    kept_after: re.Pattern[str] | None = None


# --- checks ---------------------------------------------------------------------------------------


def luhn(digits: str) -> bool:
    """The Luhn checksum every payment card number satisfies."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# card number groupings people write: none, 4-4-4-4(-3), Amex 4-6-5, Diners 4-6-4
_CARD_GROUPS = re.compile(
    r"\d{13,19}|\d{4}(?:([ -])\d{4}){2,3}(?:\1\d{1,4})?|\d{4}([ -])\d{6}\2\d{4,5}"
)
# issuer prefixes: Visa, Mastercard, Amex, Diners, Discover, JCB, UnionPay, Maestro
_CARD_IIN = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3(?:0[0-5]|[68])|6(?:011|5|4[4-9]|2)|35|5[06-9]|6")


def is_card(text: str) -> bool:
    digits = re.sub(r"[ -]", "", text)
    return (
        13 <= len(digits) <= 19
        and _CARD_GROUPS.fullmatch(text) is not None
        and _CARD_IIN.match(digits) is not None
        and luhn(digits)
    )


# IBAN length by country (ISO 13616 registry)
_IBAN_LENGTHS = dict(
    (c[:2], int(c[2:]))
    for c in (
        "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DK18 DO28 "
        "EE20 EG29 ES24 FI18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22 IL23 IQ23 IS26 "
        "IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 MC27 MD24 ME22 MK19 MR27 MT31 MU30 NL18 "
        "NO15 PK24 PL28 PS29 PT25 QA29 RO24 RS22 SA24 SC31 SE24 SI19 SK24 SM27 ST25 SV28 TL23 TN24 "
        "TR26 UA29 VA22 VG24 XK20"
    ).split()
)


def is_iban(text: str) -> bool:
    """The registered length for its country and the ISO 7064 mod-97 check."""
    s = text.replace(" ", "")
    if _IBAN_LENGTHS.get(s[:2]) != len(s):
        return False
    moved = s[4:] + s[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def is_ssn(text: str) -> bool:
    """A US social security number in an assignable range (no 000, 666 or 9xx area, no zero parts)."""
    area, group, serial = text[:3], text[4:6], text[7:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def is_nanp(text: str) -> bool:
    """A North American number: area and exchange codes start 2-9 and are not N11."""
    digits = re.sub(r"\D", "", text)
    if len(digits) == 11 and digits[0] == "1":
        digits = digits[1:]
    if len(digits) != 10:
        return False
    area, exchange = digits[:3], digits[3:6]
    return (
        area[0] in "23456789"
        and exchange[0] in "23456789"
        and area[1:] != "11"
        and exchange[1:] != "11"
    )


def _b64(s: str, urlsafe: bool = False) -> bytes | None:
    try:
        pad = "=" * (-len(s) % 4)
        return (base64.urlsafe_b64decode if urlsafe else base64.b64decode)(s + pad)
    except (binascii.Error, ValueError):
        return None


def is_basic_credentials(token: str) -> bool:
    """Base64 of printable ``user:password``: "Basic information" is prose, not a credential."""
    if len(token.rstrip("=")) % 4 == 1:
        return False
    raw = _b64(token)
    if raw is None:
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return ":" in text and text.isprintable()


def is_jwt(token: str) -> bool:
    """A header that decodes to a JSON object (as detect-secrets' JwtTokenDetector checks)."""
    raw = _b64(token.split(".", 1)[0], urlsafe=True)
    if raw is None:
        return False
    try:
        return isinstance(json.loads(raw), dict)
    except (UnicodeDecodeError, ValueError):
        return False


_PLACEHOLDERS = {"null", "none", "true", "false", "undefined", "nil", "empty", "redacted", "n/a"}
# a reference to a secret kept elsewhere or a placeholder: ${GITHUB_TOKEN}, $TOKEN, {{ secrets.KEY }},
# %(pw)s, <token>, [password], YOUR_API_KEY
_REFERENCE = re.compile(
    r"\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|\{\{.*\}\}|%\(\w+\)s|<[\w .-]+>|\[[\w .-]+\]|[A-Z][A-Z_]{2,}"
)


def is_reference(value: str) -> bool:
    return _REFERENCE.fullmatch(value.strip()) is not None


def is_url_password(value: str) -> bool:
    return not is_reference(value)


def is_secret_value(value: str) -> bool:
    """A value after ``password:``/``api_key=``/...: long enough and not a word, a placeholder or a
    mask. A single word of letters counts from 12 characters (``correcthorsebatterystaple``)."""
    v = value.strip()
    if len(v) < 6 or "<redacted:" in v or v.lower() in _PLACEHOLDERS or not v.strip("*x.•-_ "):
        return False
    if is_reference(v) or len(v.split()) > 3:  # a sentence or a command, not a password
        return False
    letters = any(c.isalpha() for c in v)
    digits = any(c.isdigit() for c in v)
    other = any(not c.isalnum() for c in v)
    return digits or (letters and other) or len(v) >= 12


def is_stated_secret(value: str) -> bool:
    """A value after "password is": letters and digits together (prose has no such words)."""
    v = value.strip()
    return (
        len(v) >= 6
        and any(c.isalpha() for c in v)
        and any(c.isdigit() for c in v)
        and "<redacted:" not in v
    )


# --- patterns -------------------------------------------------------------------------------------

_PEM_HEADER = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PEM_FOOTER = r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_NEWLINE = r"(?:\s|\\[rn])+"  # a real line break, or one escaped inside a JSON string
_PRIVATE_KEY = re.compile(
    # the body runs to the first "-----" (atomic, so many headers without a footer stay linear)
    rf"{_PEM_HEADER}(?:(?>[^-]*(?:-(?!----)[^-]*)*){_PEM_FOOTER}"
    # a block cut short (a truncated tool output): the header and the base64 lines after it
    rf"|(?:{_NEWLINE}(?:[A-Za-z-]+: [^\n\\]*|[A-Za-z0-9+/=]{{8,}}))*)"
    r"|PuTTY-User-Key-File-\d: (?:(?!Private-MAC: |PuTTY-User-Key-File-).){0,20000}"
    r"Private-MAC: [0-9a-fA-F]+",
    re.S,
)

_URL_PASSWORD = re.compile(
    # user:password@ or :password@ (a Redis URL has no user)
    r"(?i)\b[a-z][a-z0-9+.-]{1,30}://[^\s:/?#@\"'<>`]{0,128}:([^\s/\"'<>`]{1,256})@(?=[A-Za-z0-9\[])"
)
_BASIC = re.compile(r"(?i)\bbasic\s+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
_BEARER = re.compile(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)")
_JWT = re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?")

# a key is a key wherever it stands, in a run name such as prod-sk-ant-... too: only a letter or a
# digit before it (part of a longer word) keeps it
_API_KEY = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-ant-[A-Za-z0-9_-]{16,}"  # Anthropic
    r"|sk-(?:proj-|svcacct-|admin-|live-|test-)[A-Za-z0-9_-]{20,}"  # OpenAI
    # OpenAI's older keys; after a hyphen or an underscore (inside a name) only as they are issued,
    # so that a slug such as run-sk-long-descriptive-name stays
    r"|(?<![_-])sk-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{32,}"
    r"|[sr]k_(?:live|test)_[0-9A-Za-z]{16,}"  # Stripe secret and restricted keys
    r"|(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"  # GitHub
    # GitLab: personal, deploy, runner, trigger, CI job, incoming mail, agent, OAuth, feed tokens
    r"|gl(?:pat|dt|rt|ptt|cbt|imt|agent|oas|soat|ft|ffct)-[A-Za-z0-9_-]{20,}"
    r"|GR1348941[A-Za-z0-9_-]{20,}"  # GitLab runner registration
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}"  # Slack bot, user, app tokens
    r"|https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+"  # webhooks
    r"|https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+"  # Discord
    r"|\d{8,10}:[A-Za-z0-9_-]{35}"  # Telegram bot
    r"|AIza[0-9A-Za-z_-]{35}"  # Google
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|npm_[A-Za-z0-9]{36,}"  # npm
    r"|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"  # SendGrid
    r"|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"  # PyPI
    r"|(?:AC|SK)[0-9a-f]{32}"  # Twilio
    r"|do[opr]_v1_[a-f0-9]{64}"  # DigitalOcean personal, OAuth and refresh tokens
    r"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"  # Shopify
    r"|[0-9a-f]{32}-us\d{1,2}"  # Mailchimp
    r"|sq0(?:atp|csp|idp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_-]{60}"  # Square
    r")(?![\w-])"
)

# a Telegram bot token in its API URL (https://api.telegram.org/bot<id>:<secret>/sendMessage): the
# letters of "bot" stand right before it, which the key pattern's guard refuses
_TELEGRAM_URL = re.compile(r"(?<=/bot)\d{8,10}:[A-Za-z0-9_-]{35}(?![\w-])")

# a Discord bot token: the bot's id in base64, a time stamp, an HMAC
_DISCORD_BOT = re.compile(
    r"(?<![A-Za-z0-9_-])([MNO][A-Za-z0-9_-]{23,25})\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![\w-])"
)


def is_discord_bot_token(token: str) -> bool:
    """The first part decodes to the bot's numeric id (a dotted name does not)."""
    raw = _b64(token.split(".", 1)[0], urlsafe=True)
    return raw is not None and raw.isdigit() and len(raw) >= 15


# the name of a setting that holds a secret, at the end of an identifier: DB_PASSWORD, "api-key",
# aws_secret_access_key, AccountKey (Azure connection strings), refresh_token
_KEYWORD = (
    r"((?<![A-Za-z0-9])(?:"
    r"secret[_-]?access[_-]?key|access[_-]?key(?:[_-]?id)?|api[_-]?key|apikey|account[_-]?key"
    r"|shared[_-]?access[_-]?(?:key|signature)|client[_-]?secret|secret(?:[_-]?key)?"
    r"|private[_-]?key|(?:access|auth|refresh|session|id|api|bearer)?[_-]?token"
    r"|credentials?|(?:mysql|db|database)[_-]?pwd"
    # a password's name may run on from another word: PGPASSWORD, dbpassword, MYSQLPASSWORD
    r")|[A-Za-z0-9]*?(?:password|passwd|passphrase))(?![A-Za-z0-9_-])"
)
# a JSON key that names a secret: its value is one (structured JSON, where no "=" or ":" is left);
# plurals of the key and password names too ("api_keys": [...]), not "tokens" (a tokenizer's output)
_SECRET_NAME = re.compile(
    r"(?i)(?:(?<![A-Za-z0-9])(?:secret[_-]?access[_-]?key|access[_-]?key(?:[_-]?id)?|api[_-]?key"
    r"|apikey|account[_-]?key|shared[_-]?access[_-]?(?:key|signature)|client[_-]?secret"
    r"|secret(?:[_-]?key)?|private[_-]?key)s?"
    r"|(?<![A-Za-z0-9])(?:(?:access|auth|refresh|session|id|api|bearer)?[_-]?token|credentials?"
    r"|(?:mysql|db|database)[_-]?pwd|authorization)"
    r"|(?:password|passwd|passphrase)s?)$"
)


def is_secret_name(key: str) -> bool:
    """``api_key``, ``PGPASSWORD``, ``clientSecret``, ``x-api-key``, ``Authorization``: not
    ``input_tokens``, ``key``, ``password_hint``, ``auth`` (a method) or ``pwd`` (a folder)."""
    return _SECRET_NAME.search(key) is not None


# key = value, "key": "value", key: value; quotes may be escaped (JSON inside a JSON string)
_ASSIGNED = re.compile(
    rf"(?i){_KEYWORD}(?:\\?[\"'`])?\]?\s*(?:=>|:=|::|=|:)\s*(?:"
    r"\\?([\"'])(?P<quoted>[^\"'`\n\\]{1,256})\\?\2"
    r"|(?P<ref>\$\{[^}\s]*\}|\[[^\]\s]*\]|<[^>\s]*>)"
    r"|(?P<bare>[^\s\"'`,;\\]{1,256}?)(?=[.,;:)\]}>]*(?:\s|$|[\"'`,;\\]))"
    r")"
)
_STATED = re.compile(
    rf"(?i){_KEYWORD}\s+(?:is|was|will be)\s+[\"'`]?(?P<value>[^\s\"'`,;]{{6,256}}?)(?=[.,;:)\]}}>]*(?:\s|$|[\"'`,;]))"
)
_KEYWORD_HINT = re.compile(r"(?i)key|secret|token|passw|passphrase|credential|signature|pwd")
# a signed URL's signature: Azure SAS sig=, AWS X-Amz-Signature=, Google X-Goog-Signature=
_SIGNATURE = re.compile(
    r"(?i)(?<![A-Za-z0-9_-])(?:sig|x-amz-signature|x-goog-signature)=([A-Za-z0-9%+/=._-]{16,512})"
)
# a password given to a command: mysql -pSECRET (attached: "-p db" asks for it), sshpass -p SECRET,
# curl -u user:SECRET / --user user:SECRET
_COMMAND_PASSWORD = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mariadb|mariadb-dump)\b"
    r"[^\n|;&]{0,200}?\s-p(?P<attached>[^\s'\"]+|'[^'\n]+'|\"[^\"\n]+\")"
    r"|\bsshpass\s+-p\s*(?P<sshpass>[^\s'\"]+|'[^'\n]+'|\"[^\"\n]+\")"
    r"|\b(?:curl|wget)\b[^\n|;&]{0,200}?\s(?:-u|--user|-U|--proxy-user)(?:\s+|=)['\"]?"
    r"[^\s:'\"]{1,128}:(?P<user>[^\s'\"@]{1,256})"
)
_COMMAND_HINT = re.compile(r"mysql|mariadb|sshpass|curl|wget")

_CARD = re.compile(r"(?<![\w.#/+-])(?:\d[ -]?){12,18}\d(?![\w-]|[.,]\d)")
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"
)
_SSN = re.compile(r"(?<![\w.-])\d{3}-\d{2}-\d{4}(?![\w-]|\.\d)")
_SSN_STATED = re.compile(r"(?i)\b(?:ssn|social security(?: number| no\.?)?)\b\D{0,20}?(\d{9})\b")
_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"
)
# +1 415 555 0100, +44 20 7946 0958, (415) 555-0100, 415-555-0100, 415.555.0100; bare numbers
# separated by spaces ("sizes 100 200 300") are phone numbers only in North American shape
# a number right after the word for an id is that id: "order 555-223-4567", "ticket #415 555 0100"
_ID_BEFORE = re.compile(
    r"(?i)\b(?:order|ticket|invoice|case|tracking|confirmation|reference|ref|item|sku|booking"
    r"|reservation|po)\s*(?:#|no\.?|number|id)?\s*[:#]?\s*$"
)
_PHONE = re.compile(
    r"(?<![\w.+/-])(?:"
    r"\+\d{1,3}[\s.-]?\d{1,4}(?:[\s.-]?\d{2,4}){2,3}"
    r"|\(\d{2,4}\)\s?\d{3,4}[\s.-]\d{3,4}"
    r"|\d{3}([.-])\d{3,4}\1\d{4}"
    r")(?![\w-]|[.:/]\d)"
)
_PHONE_SPACED = re.compile(r"(?<![\w.+/-])\d{3} \d{3} \d{4}(?![\w-]|[.:/ ]\d)")
# ten digits run together are phone numbers only when named as one (item ids look the same)
_PHONE_NAMED = re.compile(
    r"(?i)\b(?:phone|tel|telephone|mobile|cell|call|sms|text|fax|whatsapp)\b[^\d\n]{0,20}?"
    r"(\+?1?\d{10})(?![\w-]|[.:/]\d)"
)
_DIGITS = re.compile(r"\d")
_LONG_NUMBER = re.compile(r"\d(?:[ -]?\d){12}")
_TEN_DIGITS = re.compile(r"\d{10}")


def _phone_digits(text: str) -> bool:
    """A number of a phone's length; in North American shape (3-3-4) a valid one (``555-123-4567``
    has no exchange 123: an order number)."""
    digits = sum(ch.isdigit() for ch in text)
    if not 9 <= digits <= 15:
        return False
    return text.startswith(("+", "(")) or not _NANP_SHAPE.fullmatch(text) or is_nanp(text)


_NANP_SHAPE = re.compile(r"\d{3}([.-])\d{3}\1\d{4}")


DETECTORS: tuple[Detector, ...] = (
    Detector("private key", _PRIVATE_KEY, hint=re.compile(r"PRIVATE KEY|PuTTY-User-Key")),
    Detector("password", _URL_PASSWORD, (1,), is_url_password, re.compile("://")),
    Detector("basic auth", _BASIC, (1,), is_basic_credentials, re.compile(r"(?i)basic")),
    Detector(
        "bearer token",
        _BEARER,
        (1,),
        lambda t: bool(_DIGITS.search(t)) or len(t) >= 24,
        re.compile(r"(?i)bearer"),
    ),
    Detector("jwt", _JWT, check=is_jwt, hint=re.compile("eyJ")),
    Detector("api key", _API_KEY),
    Detector("api key", _TELEGRAM_URL),
    Detector("api key", _DISCORD_BOT, (0,), is_discord_bot_token, re.compile(r"[MNO]\w{23,25}\.")),
    Detector(
        "password",
        _COMMAND_PASSWORD,
        ("attached", "sshpass", "user"),
        is_url_password,
        _COMMAND_HINT,
    ),
    Detector("credential", _SIGNATURE, (1,), is_url_password, re.compile(r"(?i)sig(?:nature)?=")),
    Detector("credential", _ASSIGNED, ("quoted", "bare"), is_secret_value, _KEYWORD_HINT),
    Detector("credential", _STATED, ("value",), is_stated_secret, _KEYWORD_HINT),
    Detector("card number", _CARD, check=is_card, hint=_LONG_NUMBER),
    Detector("iban", _IBAN, check=is_iban, hint=_DIGITS),
    Detector("ssn", _SSN, check=is_ssn, hint=_DIGITS),
    Detector(
        "ssn",
        _SSN_STATED,
        (1,),
        lambda t: is_ssn(f"{t[:3]}-{t[3:5]}-{t[5:]}"),
        re.compile(r"(?i)ssn|social security"),
    ),
    Detector("email", _EMAIL, hint=re.compile("@")),
    Detector("phone number", _PHONE, check=_phone_digits, hint=_DIGITS, kept_after=_ID_BEFORE),
    Detector("phone number", _PHONE_SPACED, check=is_nanp, hint=_DIGITS, kept_after=_ID_BEFORE),
    Detector("phone number", _PHONE_NAMED, (1,), is_nanp, _TEN_DIGITS),
)

#: Every kind, in the order the summary lists them.
KINDS: tuple[str, ...] = (
    "api key",
    "credential",
    "password",
    "private key",
    "jwt",
    "bearer token",
    "basic auth",
    "card number",
    "iban",
    "ssn",
    "email",
    "phone number",
)
