"""When to retry a failed API request, and how long to wait first: the one place that decides.

The clients make no retries of their own (``judge.api``; the SDK with ``max_retries=0``), so each
request has one budget of ``max_retries`` retries. A response's ``x-should-retry`` header is obeyed (``false``: never retried,
``true``: retried whatever its status); otherwise 408, 409, 429, 5xx, timeouts and lost connections
are retried. The wait is the response's ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP
date) when it has one, else a jittered exponential backoff. A ``retry-after`` longer than
``max_wait_s`` is not waited for: the run stops (see ``TooLongWait``).
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: Waits longer than this are said on stderr (the user should know the run is not stuck).
SAY_WAIT_S = 5.0
#: The backoff never grows past this (the API's retry-after can ask for more, up to max_wait_s).
MAX_BACKOFF_S = 30.0

_RETRY_STATUS = {408, 409, 429}


@dataclass(frozen=True)
class Decision:
    """Retry after ``wait_s`` seconds, or (``wait_s`` None) give up; ``asked`` is the server's
    retry-after when it gave one."""

    wait_s: float | None
    asked: float | None = None


class TooLongWait(Exception):
    """The API asked to wait longer than the run allows: the run stops with this line."""


def status_of(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def headers_of(exc: BaseException) -> Mapping[str, str]:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if headers is not None else {}


def api_message(e: Any) -> str:
    """The API's own error message (from the body when it has one), at most 300 characters."""
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])[:300]
    return str(getattr(e, "message", e))[:300]


def retry_after(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms``, else ``retry-after`` in seconds or as an
    HTTP date; None when it asks nothing (or the value cannot be read)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(0.0, float(email.utils.mktime_tz(parsed)) - now())


def retryable(exc: BaseException) -> bool:
    """Whether this failure may go better on another try (``x-should-retry`` first)."""
    from reviewer.judge.api import connection_error

    said = headers_of(exc).get("x-should-retry")
    if said == "false":
        return False
    if said == "true":
        return True
    if connection_error(exc):  # includes timeouts
        return True
    code = status_of(exc)
    return code is not None and (code in _RETRY_STATUS or code >= 500)


@dataclass
class RetryPolicy:
    """``retries`` per request; waits of ``base_s`` × 2^n with jitter (×0.5–1), or what the server
    asks up to ``max_wait_s``."""

    retries: int = 4
    base_s: float = 1.0
    max_wait_s: float = 60.0
    rand: Callable[[], float] = random.random

    def backoff(self, retry: int) -> float:
        full = min(MAX_BACKOFF_S, self.base_s * 2**retry)
        return full * (0.5 + 0.5 * self.rand())

    def decide(self, exc: BaseException, retry: int) -> Decision:
        """What to do after ``exc`` on the ``retry``-th retry (0 for the first failure). Raises
        TooLongWait when the server asks for a wait over ``max_wait_s``."""
        if not retryable(exc):
            return Decision(None)
        asked = retry_after(headers_of(exc))
        if retry >= self.retries:
            return Decision(None, asked)
        if asked is not None:
            if asked > self.max_wait_s:
                code = status_of(exc)
                raise TooLongWait(
                    f"the API asks to wait {asked:.0f} s before the next request"
                    f"{f' ({code})' if code else ''}, longer than the {self.max_wait_s:g} s "
                    "allowed (--max-wait / [judge] max_wait_s); stopped, run again later"
                )
            return Decision(asked, asked)
        return Decision(self.backoff(retry))


def describe_wait(wait_s: float, exc: BaseException) -> str:
    """The line said before a long wait."""
    code = status_of(exc)
    what = f"the API answered {code}" if code else f"{type(exc).__name__}"
    return f"{what}; waiting {wait_s:.0f} s before trying again"


def is_billing(exc: Any) -> bool:
    return status_of(exc) == 402
