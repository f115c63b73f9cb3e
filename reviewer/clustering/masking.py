"""Mask what is an instance, not a kind: numbers, ids, uuids, hex, hashes, emails, urls, paths, ips,
dates, times, quoted values and key=value values. Stdlib only, so importing it stays cheap.

Each rule runs only when a cheap substring test says it can match: masking sits on the hot path of
clustering tens of thousands of failures.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["mask"]

# Protected spans (HTTP status codes, exit codes, errno) are swapped for sentinels made of
# private-use characters, so no later rule can see a digit in them, and restored at the end.
_OPEN, _CLOSE = "\ue000", "\ue001"
_SLOT_BASE = 0xE100
_MAX_SLOTS = 0xF8FF - _SLOT_BASE
_SENTINEL = re.compile(f"{_OPEN}(.){_CLOSE}")

# A status code is a kind: "HTTP 404" and "HTTP 503" must not collapse. Candidates are found by
# their digits; the words before or after decide.
_STATUS = re.compile(r"(?<![\w.,])[1-5]\d\d(?![\w.,]\d)(?!\w)")
# a context word starts a token of its own (_TOKEN joins words with - and .; a word inside such a
# token is masked with it, and its number must be masked alike whether or not the word is there)
_ALONE = r"(?<![\w.#-])"
_STATUS_BEFORE = re.compile(
    rf"(?i)(?:{_ALONE}https?(?:/\d(?:\.\d)?)?|{_ALONE}http[ _]?error|{_ALONE}status(?:[ _-]?code)?|"
    rf"{_ALONE}response[ _-]?code|{_ALONE}error[ _-]?code|{_ALONE}returned|{_ALONE}responded with|"
    rf"{_ALONE}got|{_ALONE}code)\s*[:=]?\s*[\"']?$"
)
_STATUS_AFTER = re.compile(
    r"(?i)\s*[:-]?\s*(?:client error|server error|bad request|unauthorized|payment required|forbidden|"
    r"not found|method not allowed|not acceptable|request timeout|conflict|gone|length required|"
    r"precondition failed|payload too large|unsupported media type|unprocessable|too many requests|"
    r"internal server error|not implemented|bad gateway|service unavailable|gateway timeout|"
    r"insufficient storage|network authentication)\b"
)
_EXIT_CODE = re.compile(
    rf"(?i)({_ALONE}exit(?:ed)?(?:\s+with)?\s+(?:code|status)\s*[:=]?\s*|{_ALONE}errno\s*[:=]?\s*"
    rf"|{_ALONE}signal\s+)(-?\d{{1,3}})\b"
)

_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s'\"<>()\[\]{}]+|\bwww\.[^\s'\"<>()\[\]{}]+")
_EMAIL = re.compile(r"[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b")
_UUID_HINT = re.compile(r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-")
_UUID = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_NUMERIC_DATE = re.compile(
    r"(?<![\w/])(?:\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{4}/\d{1,2}/\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4})(?![\w/])"
)
_MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sept sep oct nov dec".split()
)
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH_DATE = re.compile(
    rf"(?i)(?:\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+)?\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH})\.?,?\s+\d{{4}}\b"
    rf"|\b(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
)
_WORD_SPLIT = re.compile(r"[^a-z]+")
# glog / klog header: "E0412 10:15:32.123" keeps its severity, as a word.
_GLOG = re.compile(r"(?m)^([IWEF])\d{4}(?=\s+\d{1,2}:\d{2})")
# (?!\d): "5.36.59.76.dynamic-dsl-ip.example.net" is a host name, not an ip and a "6.dynamic..."
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\d)(?::\d{1,5})?(?![\w.]\w)")
# host:port, a dotted name ending in letters ("proxy.cse.example.hk:5070"), not a file and its line
# (main.go:42)
_HOST_PORT = re.compile(r"(?<![\w.:/-])(?:[A-Za-z0-9-]+\.)+([A-Za-z]{2,}):\d{1,5}(?![\w.:/])")
# a size restated in parentheses ("18846 bytes (18.4 KB)"): the number before it says it already
_SIZE_AGAIN = re.compile(r" ?\(\d+(?:\.\d+)? ?(?:[KMGTP]i?B|B)\)")
# a size with its unit apart ("5.2 KB", "850.0 B"): one quantity, as "64172MB" is
_SIZE = re.compile(r"(?<![\w.])\d+(?:\.\d+)? (?:[KMGTP]i?B|B)\b(?![.\w])")
# a bound on a duration ("<1 sec", "> 5 ms"): a time, as "00:01" beside it is
_DURATION_BOUND = re.compile(
    r"(?<![\w<>])[<>]=? ?\d+(?:\.\d+)? ?(?:ms|s|sec|secs|seconds?|min|mins|minutes?)\b"
)
# octal escapes of quotes that some syslog writers emit (\042 for a double quote)
_OCTAL_QUOTE = re.compile(r"\\04[27]")
_IPV6 = re.compile(
    r"(?<![\w:])(?=[0-9a-fA-F:]*\d)(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}"
    r"|(?:[0-9a-fA-F]{1,4}:){1,7}:(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4}){0,6})?"
    r"|::(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4}){0,6}))(?![\w:])"
)
_TIME = re.compile(
    r"(?i)(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:\s?[ap]m\b)?(?:Z\b|[+-]\d{2}:\d{2})?"
)
_SEG = r"[\w.@%+~-]+"
_FILE_EXT = r"(?:py|pyc|js|ts|go|rs|java|rb|c|h|cc|cpp|json|jsonl|yaml|yml|txt|csv|log|sh|toml|cfg|ini|md|html|xml|sql|db)"
_FILE_EXTS = frozenset(_FILE_EXT[3:-1].split("|")) | {"java", "kt", "scala", "php", "cs", "swift"}
_PATH = re.compile(
    rf"(?<![\w<>/.:])(?:~|\.{{1,2}})?/(?:{_SEG}/)*{_SEG}/?"
    rf"|\b[A-Za-z]:\\(?:[^\\\s'\"]+\\)*[^\\\s'\"]*"
    rf"|(?<![\w./-]){_SEG}(?:/{_SEG}){{2,}}/?"
    rf"|(?<![\w./-])[\w.-]+/[\w.-]+\.{_FILE_EXT}\b"
)
# a value runs to a space, comma or semicolon, through one level of brackets (ws=WorkSource{10113})
# and placeholders masked already (rhost=<ip>): key=value is one kind of pair whatever its value
_KV = re.compile(
    r"\b([A-Za-z_][\w.-]*)=(\"[^\"\n]*\"|'[^'\n]*'"
    r"|(?:<\w+>|[^\s,;()\[\]{}&<>]|\{[^\s{}]*\}|\([^\s()]*\)|\[[^\s\[\]]*\])+)"
)
_QUOTED = re.compile(
    r"\"(?:[^\"\\\n]|\\.){0,300}\""
    r"|'(?<![\w'>]')(?:[^'\\\n]|\\.){0,300}'(?![\w'<])"
    r"|`[^`\n]{0,300}`|“[^”\n]{0,300}”|‘[^’\n]{0,300}’"
)
_HTTP_REQUEST = re.compile(r"[\"'](GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) \S")
_KEY_AFTER = re.compile(r"\s*:")
_KEY_WORD = re.compile(r"^[\"'][\w.-]{1,64}[\"']$")
_TOKEN = re.compile(r"(?<![\w<>])#?[A-Za-z0-9_]+(?:[-.][A-Za-z0-9_]+)*")
_NUMBER = re.compile(
    r"(?:(?<![^\s(\[{=,:])[-+])?[$€£¥]?(?<![\w<])\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w>])"
)
_RUNS = re.compile(r"(<(\w+)>)(?:[\s,;|/-]*<\2>)+")
_SPACES = re.compile(r"[ \t]{2,}|\t")

_HAS_DIGIT = re.compile(r"\d")
# cheap tests that a costly rule can match at all: the digits its pattern needs, side by side
_DATE_HINT = re.compile(r"\d[-/]\d")
_IPV4_HINT = re.compile(r"\d\.\d{1,3}\.\d")
_TIME_HINT = re.compile(r"\d:\d\d")
_HOST_PORT_HINT = re.compile(r"[A-Za-z]:\d")
_HAS_ALPHA = re.compile(r"[A-Za-z]")
_HEX = re.compile(r"(?i)^0x[0-9a-f]+$")
_NUM_UNIT = re.compile(
    r"(?i)^\d+(?:\.\d+)?(?:ms|us|ns|s|sec|secs|m|min|mins|h|hr|hrs|d|k|kb|mb|gb|tb|kib|mib|gib|b|x|st|nd|rd|th)$"
)
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
# Words with digits that name a kind of thing, not an instance.
_KEEP = frozenset(
    """utf8 utf16 utf32 latin1 base64 base32 b64 md5 sha1 sha224 sha256 sha384 sha512 crc32
    ipv4 ipv6 http1 http2 http3 h2 h3 oauth2 s3 ec2 k8s i18n l10n e2e x86 x86_64 amd64 arm64 aarch64
    win32 win64 int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 bfloat16
    python2 python3 py2 py3 urllib2 urllib3 boto3 psycopg2 jinja2 pg8000 http404 x509 pkcs12 tls1
    log4j mp3 mp4 h264 gpt4 3d 2fa""".split()
)


def _mask_token(m: re.Match[str]) -> str:
    tok = m.group(0)
    if tok.startswith("#"):
        return "<id>" if _HAS_DIGIT.search(tok) else tok
    if not _HAS_DIGIT.search(tok):
        return tok  # words stay
    if not _HAS_ALPHA.search(tok):
        # pure numbers are left to the number rule; numbers joined by _ are one id
        return "<id>" if "_" in tok else tok
    if _HEX.match(tok):
        return "<hex>"
    if _NUM_UNIT.match(tok):
        return "<num>"
    if tok.lower() in _KEEP:
        return tok
    segments = tok.split(".")
    if len(segments) > 1 and all(_IDENT.match(s) for s in segments):
        # a dotted name (module.Class, file.go): mask only the segments that are ids
        return ".".join(
            s if not _HAS_DIGIT.search(s) or s.lower() in _KEEP else "<id>" for s in segments
        )
    return "<id>"


def _mask_kv(m: re.Match[str]) -> str:
    return m.group(0) if _OPEN in m.group(2) else f"{m.group(1)}=<v>"


def _mask_quoted(m: re.Match[str]) -> str:
    # a quoted JSON / dict key names a field, so it stays
    if _KEY_AFTER.match(m.string, m.end()) and _KEY_WORD.match(m.group(0)):
        return m.group(0)
    # a quoted HTTP request line keeps its method: a GET and a POST are different requests
    method = _HTTP_REQUEST.match(m.group(0))
    if method:
        return f"{m.group(0)[0]}{method.group(1)} <str>{m.group(0)[-1]}"
    return "<str>"


_SEVERITY = {"I": "info", "W": "warning", "E": "error", "F": "fatal"}


def _mask_host_port(m: re.Match[str]) -> str:
    return m.group(0) if m.group(1).lower() in _FILE_EXTS else "<host>"


def _mask_glog(m: re.Match[str]) -> str:
    return f"{_SEVERITY[m.group(1)]} <date>"


def _has_month(s: str) -> bool:
    low = s.lower()
    # every month name starts with one of these: a dozen substring tests before splitting words
    if not any(p in low for p in _MONTH_STARTS):
        return False
    return not _MONTHS.isdisjoint(_WORD_SPLIT.split(low))


_MONTH_STARTS = tuple(sorted({m[:3] for m in _MONTHS}))
_QUOTE_HINT = re.compile("[\"'`“‘]")


Repl = str | Callable[[re.Match[str]], str]
Rule = tuple[Callable[[str], bool], re.Pattern[str], Repl]


def _digits(s: str) -> bool:
    return _HAS_DIGIT.search(s) is not None


#: The rules in order. Those whose pattern cannot match without a digit come first as a flag:
#: a text with no digit (most of them on the pass that checks a masked text masks to itself) skips
#: them without their hints, and no rule's replacement adds a digit.
_RULES: tuple[tuple[bool, Callable[[str], bool], re.Pattern[str], Repl], ...] = (
    # before urls: www.example.com:443 is a host, as proxy.example.com:443 is
    (
        True,
        lambda s: ":" in s and "." in s and _HOST_PORT_HINT.search(s) is not None,
        _HOST_PORT,
        _mask_host_port,
    ),
    (False, lambda s: "://" in s or "www." in s, _URL, "<url>"),
    (False, lambda s: "@" in s, _EMAIL, "<email>"),
    (False, lambda s: _UUID_HINT.search(s) is not None, _UUID, "<uuid>"),
    (True, lambda s: _DATE_HINT.search(s) is not None, _NUMERIC_DATE, "<date>"),
    (True, _has_month, _MONTH_DATE, "<date>"),
    (True, lambda s: ":" in s, _GLOG, _mask_glog),
    (True, lambda s: _IPV4_HINT.search(s) is not None, _IPV4, "<ip>"),
    (True, lambda s: "::" in s or s.count(":") >= 7, _IPV6, "<ip>"),
    (True, lambda s: "<" in s or ">" in s, _DURATION_BOUND, "<time>"),
    (True, lambda s: _TIME_HINT.search(s) is not None, _TIME, "<time>"),
    (True, lambda s: "B" in s and _digits(s), _SIZE_AGAIN, ""),
    (True, lambda s: "B" in s and _digits(s), _SIZE, "<num>"),
    (False, lambda s: "/" in s or "\\" in s, _PATH, "<path>"),
    (False, lambda s: "=" in s, _KV, _mask_kv),
    (False, lambda s: _QUOTE_HINT.search(s) is not None, _QUOTED, _mask_quoted),
)
_AFTER_DIGITS: tuple[Rule, ...] = (
    (lambda s: "<" in s, _RUNS, r"\1"),
    (lambda s: "  " in s or "\t" in s, _SPACES, " "),
)


def _mask_digit_words(s: str) -> str:
    """Ids and numbers, word by word (words split on spaces): only the few words with a digit are
    visited, found by a scan that never restarts inside a word (linear in the text)."""
    return _DIGIT_WORD.sub(_mask_digit_word, s)


_DIGIT_WORD = re.compile(r"(?<![^ ])[^ \d]*\d[^ ]*")


def _mask_digit_word(m: re.Match[str]) -> str:
    part = m.group(0)
    core = part.lstrip("([{").rstrip(")]},:;.")
    if core and core.isdigit() and core.isascii():
        # a bare number, maybe in brackets or before punctuation: what the number rule makes of
        # it, without a regex
        head = len(part) - len(part.lstrip("([{"))
        return part[:head] + "<num>" + part[head + len(core) :]
    part = _TOKEN.sub(_mask_token, part)
    return _NUMBER.sub("<num>", part) if _HAS_DIGIT.search(part) else part


def mask(text: str) -> str:
    """Replace the instance-specific parts of ``text`` by placeholders (``<num>``, ``<id>``, ``<url>`` …).

    Case and the words that say what happened are kept; runs of the same placeholder collapse to one,
    so "[1, 2, 3]" and "[7]" mask alike. Masking a masked text changes nothing: a placeholder can
    make a boundary or pair quotes that the original text did not have (``0:00www.a`` becomes
    ``<time>www.a``, whose ``www.a`` is then a URL), so the text is masked again until it stops
    changing (at most three more passes; almost every line stops at the first).
    """
    out = _mask_once(text)
    if out in _FIXED or _masks_to_itself(out):
        return out
    for _ in range(3):
        again = _mask_once(out)
        if again == out:
            if len(_FIXED) >= _FIXED_MAX:
                _FIXED.clear()
            _FIXED[out] = None
            break
        out = again
    return out


# What a masked text must hold for a pass over it to change anything: a digit (every rule that
# needs one), a hint of a rule that needs none (a URL, an email, a uuid, a path, key=value, a
# quote), or what the last steps collapse (a run of one placeholder, two spaces, a tab). A text
# with none of them masks to itself, so most texts skip the pass that checks it. (One character
# class and substring tests: an expression of the alternatives took twice as long.)
_CHANGE_CHARS = re.compile(r"[\d@/\\=\"'`“‘\t]")


def _masks_to_itself(out: str) -> bool:
    return (
        _CHANGE_CHARS.search(out) is None
        and "www." not in out
        and "  " not in out
        and _UUID_HINT.search(out) is None
        and _RUNS.search(out) is None
    )


# Masked texts known to mask to themselves: many texts mask alike, so the pass that checks it runs
# once per masked text, not once per text (bounded; a pure function's memo)
_FIXED: dict[str, None] = {}
_FIXED_MAX = 8192


def _mask_once(text: str) -> str:
    if not text:
        return ""
    saved: list[str] = []

    def protect(value: str) -> str:
        if len(saved) >= _MAX_SLOTS:
            return value
        saved.append(value)
        return f"{_OPEN}{chr(_SLOT_BASE + len(saved) - 1)}{_CLOSE}"

    def protect_statuses(s: str) -> str:
        """Each status code with the words that make it one, protected as one piece: the words are
        what decide, so no later rule may mask them (masking again must decide the same)."""
        spans: list[tuple[int, int]] = []
        for m in _STATUS.finditer(s):
            before = _STATUS_BEFORE.search(s, max(0, m.start() - 24), m.start())
            after = None if before else _STATUS_AFTER.match(s, m.end())
            if before or after:
                start = before.start() if before else m.start()
                end = after.end() if after else m.end()
                if spans and start < spans[-1][1]:
                    continue  # inside the piece before it
                spans.append((start, end))
        if not spans:
            return s
        out, at = [], 0
        for start, end in spans:
            out += [s[at:start], protect(s[start:end])]
            at = end
        return "".join(out) + s[at:]

    s = text
    if _OPEN in s or _CLOSE in s:  # the input must not forge a sentinel
        s = s.replace(_OPEN, " ").replace(_CLOSE, " ")
    if "\\04" in s:
        s = _OCTAL_QUOTE.sub(lambda m: '"' if m.group(0).endswith("2") else "'", s)
    digits = _digits(s)
    if digits:
        s = protect_statuses(s)
        low = s.lower()
        if "exit" in low or "errno" in low or "signal" in low:
            s = _EXIT_CODE.sub(lambda m: protect(m.group(0)), s)
    for needs_digit, applies, pattern, repl in _RULES:
        if (digits or not needs_digit) and applies(s):
            s = pattern.sub(repl, s)
    if _digits(s):
        s = _mask_digit_words(s)
    for applies, pattern, repl in _AFTER_DIGITS:
        if applies(s):
            s = pattern.sub(repl, s)
    if saved:
        s = _SENTINEL.sub(lambda m: saved[ord(m.group(1)) - _SLOT_BASE], s)
    return s.strip()
