"""The judge stand-in as tests start it: `reviewer.judge.standin.StandIn` (in the package on purpose:
the CLI can start it) on a free port, with the environment the judge's client reads pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from reviewer.judge.standin import Policy, StandIn

#: The API key the stand-in is reached with (tests check no database or file ever holds it).
API_KEY = "fake-test-key-" + "never-stored-0123456789"


@contextmanager
def serving(monkeypatch: pytest.MonkeyPatch, policy: Policy | None = None) -> Iterator[StandIn]:
    """A running stand-in (answering by POLICY when given), ANTHROPIC_BASE_URL and
    ANTHROPIC_API_KEY set for it; stopped on the way out."""
    server = StandIn().start()
    if policy is not None:
        server.policy = policy
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    try:
        yield server
    finally:
        server.stop()
