"""The live judge's Messages API client: one POST to ``/v1/messages`` over httpx2, nothing else.

The anthropic SDK takes 0.75-1.15 s to import (3,300 modules, every type of every API it covers)
and a few milliseconds of CPU per request; ``reviewer judge`` sends its first request within 0.8 s
of starting and keeps 16 requests in flight on one core only with this client. It speaks the same
wire protocol the SDK does, over the same HTTP library (httpx2, the SDK's own dependency):

- the key from ``ANTHROPIC_API_KEY`` (sent as a bearer token, as the installed SDK sends it, and as
  ``x-api-key``, the header the API's documentation and earlier SDKs use), else ``ANTHROPIC_AUTH_TOKEN`` (a bearer token); the endpoint from
  ``ANTHROPIC_BASE_URL``, else ``https://api.anthropic.com``;
- the request body is the job's parameters as they are (they already are the API's fields);
- extra headers from ``ANTHROPIC_CUSTOM_HEADERS`` (one ``name: value`` a line, as the SDK reads
  them, sent over the others); redirects are followed, as the SDK's client does;
- an answer outside 2xx raises ``APIStatusError`` (its ``status_code``, ``response`` with the
  headers ``judge.retry`` reads, ``body`` parsed when it is JSON, ``message``), a lost connection
  ``APIConnectionError``, a timeout ``APITimeoutError``; no retries of its own (``judge.retry``
  decides every one).

The SDK's clients still work wherever a client is passed in (``Runner(client_factory=...)``):
``status_error`` / ``connection_error`` recognise both families, and the batch API
(``judge.batch``) uses the SDK, where a second of start-up is nothing beside a batch's hours.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import httpx2

#: The Messages API version the installed SDK sends (``anthropic._constants.ANTHROPIC_API_VERSION``).
API_VERSION = "2026-10-21"
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: A reply is read up to this many bytes plus REPLY_TOKEN_BYTES per ``max_tokens`` (``reply_limit``).
REPLY_BASE_BYTES = 1024 * 1024
REPLY_TOKEN_BYTES = 64
#: Connections are made within this many seconds or the request fails (the SDK's connect timeout).
CONNECT_TIMEOUT_S = 5.0


class APIError(Exception):
    """A request that did not get an answer to use."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class APIStatusError(APIError):
    """The API answered with a status of 400 or more."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response
        self.status_code = response.status_code
        # the SDK's body and message: the JSON when the text is JSON, else the text itself
        text = response.text.strip()
        try:
            self.body: Any = json.loads(text)
            message = f"Error code: {self.status_code} - {self.body}"
        except (ValueError, RecursionError):
            self.body = text
            message = text or f"Error code: {self.status_code}"
        super().__init__(message)


class APIReplyTooLarge(APIError):
    """A reply far longer than ``max_tokens`` allows: not read past the limit, never stored whole."""

    def __init__(self, status_code: int, size: int, limit: int) -> None:
        self.status_code = status_code
        self.size = size
        self.limit = limit
        super().__init__(
            f"the reply is over {limit:,} bytes (read {size:,} before stopping), more than "
            "max_tokens allows: not stored"
        )


def reply_limit(body: dict[str, Any]) -> int:
    """The most bytes a reply to ``body`` is read to: REPLY_BASE_BYTES plus REPLY_TOKEN_BYTES per
    ``max_tokens`` (a token is a few characters; JSON escapes make one character at most 12 bytes)."""
    tokens = body.get("max_tokens")
    n = tokens if type(tokens) is int and tokens > 0 else 0
    return REPLY_BASE_BYTES + REPLY_TOKEN_BYTES * n


class APIConnectionError(APIError):
    """No answer: the connection could not be made or was lost."""


class APITimeoutError(APIConnectionError):
    """No answer within the timeout."""


def custom_headers(value: str | None) -> dict[str, str]:
    """``ANTHROPIC_CUSTOM_HEADERS`` as the SDK reads it: ``name: value`` lines, others ignored."""
    parsed: dict[str, str] = {}
    for line in (value or "").split("\n"):
        colon = line.find(":")
        if colon >= 0:
            parsed[line[:colon].strip()] = line[colon + 1 :].strip()
    return parsed


def endpoint_problem(base: str) -> str | None:
    """Why ``base`` (``ANTHROPIC_BASE_URL``) cannot be the API's address, else None: every request
    to it would fail (and be retried) before reaching any server."""
    if base != base.strip() or any(c.isspace() or ord(c) < 32 for c in base):
        return "has spaces or control characters"
    try:
        url = httpx2.URL(base)
    except httpx2.InvalidURL as e:
        return f"is not a URL ({e})"
    if url.scheme not in ("http", "https"):
        return "is not an http:// or https:// address"
    if not url.host:
        return "has no host"
    if url.port is not None and not 0 < url.port < 65536:
        return f"has port {url.port}, outside 1-65535"
    return None


def settings_problem() -> str | None:
    """Why the environment's key or custom headers cannot be sent (every request would fail, each
    retried, before reaching any server), else None: a key pasted with its line end or spaces, a
    character a header cannot hold."""
    key_name = (
        "ANTHROPIC_API_KEY" if os.environ.get("ANTHROPIC_API_KEY") else "ANTHROPIC_AUTH_TOKEN"
    )
    values = [(key_name, os.environ.get(key_name) or "")]
    extra = custom_headers(os.environ.get("ANTHROPIC_CUSTOM_HEADERS"))
    values += [(f"ANTHROPIC_CUSTOM_HEADERS {name!r}", v) for name, v in extra.items()]
    for what, value in values:
        if value != value.strip() or any(ord(c) < 32 or ord(c) == 127 for c in value):
            return f"{what} has spaces or control characters around or in it"
        if not value.isascii():
            return f"{what} is not ASCII"
    for name in extra:
        if not name or not name.isascii() or any(c.isspace() or ord(c) < 32 for c in name):
            return f"ANTHROPIC_CUSTOM_HEADERS has a header name that cannot be sent: {name!r}"
    return None


def _sdk_classes(*names: str) -> tuple[type[BaseException], ...]:
    """The SDK's exception classes of these names, when something already imported the SDK (an
    exception of the SDK can only come from an SDK client, so this never imports it)."""
    sdk = sys.modules.get("anthropic")
    if sdk is None:
        return ()
    return tuple(c for c in (getattr(sdk, n, None) for n in names) if isinstance(c, type))


def status_error(exc: BaseException) -> bool:
    """An answer with an error status, from this client or from the SDK's."""
    return isinstance(exc, (APIStatusError, *_sdk_classes("APIStatusError")))


def connection_error(exc: BaseException) -> bool:
    """No answer at all (including a timeout), from this client or from the SDK's."""
    return isinstance(exc, (APIConnectionError, *_sdk_classes("APIConnectionError")))


def timed_out(exc: BaseException) -> bool:
    """No answer in time (the endpoint may be there, only slow), from this client or the SDK's."""
    return isinstance(exc, (APITimeoutError, *_sdk_classes("APITimeoutError")))


class _Raw:
    """What the SDK's ``with_raw_response.create`` returns, as far as the runner reads it."""

    def __init__(self, response: httpx2.Response) -> None:
        self.http_response = response


class MessagesClient:
    """An async Messages API client: ``await client.create(body)`` returns the HTTP response of a
    successful request; ``client.messages.with_raw_response.create(**fields)`` is the same call in
    the SDK's shape (``extra_body`` merged into the body)."""

    #: It never retries by itself: ``judge.retry`` decides every retry (one budget per request).
    max_retries = 0

    def __init__(
        self,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 600.0,
        max_connections: int = 100,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.api_key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        self.auth_token = (
            auth_token if auth_token is not None else os.environ.get("ANTHROPIC_AUTH_TOKEN")
        )
        base = base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        self.url = base.rstrip("/") + "/v1/messages"
        headers = {
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
            "user-agent": "reviewer-judge",
        }
        secret: dict[str, str] = {}
        if self.api_key:
            secret["x-api-key"] = self.api_key
            secret["authorization"] = f"Bearer {self.api_key}"
        elif self.auth_token:
            secret["authorization"] = f"Bearer {self.auth_token}"
        secret.update(custom_headers(os.environ.get("ANTHROPIC_CUSTOM_HEADERS")))
        size = max(1, max_connections)
        self._http = httpx2.AsyncClient(
            headers=headers,
            event_hooks={"request": [_SameOrigin(httpx2.URL(self.url), secret)]},
            timeout=httpx2.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s)),
            limits=httpx2.Limits(max_connections=size, max_keepalive_connections=size),
            transport=transport,
            follow_redirects=True,  # as the SDK's client: an endpoint that moved is followed
        )
        self.messages = _Messages(self)

    async def create(self, body: dict[str, Any]) -> httpx2.Response:
        """POST ``body`` to the Messages API; the response when its status is 2xx (as the SDK,
        any other raises: a 3xx not followed is no reply to store or cache)."""
        content = json.dumps(body).encode("ascii")  # lone surrogates travel as \u escapes
        try:
            response = await self._read(
                self._http.build_request("POST", self.url, content=content), reply_limit(body)
            )
        except httpx2.TimeoutException as e:
            raise APITimeoutError(
                f"Request timed out ({type(e).__name__}){f': {e}' if str(e) else ''}"
            ) from e
        except (httpx2.TransportError, httpx2.DecodingError, httpx2.TooManyRedirects) as e:
            # as the SDK: a reply that cannot be read (a broken gzip body) is a lost connection
            raise APIConnectionError(f"Connection error: {type(e).__name__}: {e}") from e
        if not response.is_success:
            raise APIStatusError(response)
        return response

    async def _read(self, request: httpx2.Request, limit: int) -> httpx2.Response:
        """Send ``request`` and read its reply (decoded) up to ``limit`` bytes; past it the
        connection is dropped and APIReplyTooLarge raised (a broken or hostile endpoint's endless
        reply never fills memory or the database)."""
        response = await self._http.send(request, stream=True)
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise APIReplyTooLarge(response.status_code, int(declared), limit)
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise APIReplyTooLarge(response.status_code, size, limit)
                chunks.append(chunk)
        finally:
            await response.aclose()
        # the body is decoded already: the new response must not decode it again
        headers = [
            (k, v)
            for k, v in response.headers.multi_items()
            if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            content=b"".join(chunks),
            request=response.request,
            extensions=response.extensions,
        )

    async def close(self) -> None:
        await self._http.aclose()


class _SameOrigin:
    """A request hook (run on every hop of a redirect): the key (and ``ANTHROPIC_CUSTOM_HEADERS``)
    on each request to the endpoint's own origin, and never on a redirect to another origin (httpx
    drops only ``authorization`` there, not ``x-api-key``)."""

    def __init__(self, url: httpx2.URL, headers: dict[str, str]) -> None:
        self._origin = _origin(url)
        self._headers = headers

    async def __call__(self, request: httpx2.Request) -> None:
        if _origin(request.url) == self._origin:
            request.headers.update(self._headers)
        else:  # a redirect's request starts from a copy of the last one's headers
            for name in self._headers:
                request.headers.pop(name, None)


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, port


class _Messages:
    def __init__(self, client: MessagesClient) -> None:
        self.with_raw_response = _RawCreate(client)


class _RawCreate:
    def __init__(self, client: MessagesClient) -> None:
        self._client = client

    async def create(self, **fields: Any) -> _Raw:
        extra = fields.pop("extra_body", None) or {}
        return _Raw(await self._client.create({**fields, **extra}))
