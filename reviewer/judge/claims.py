"""Who is sending which request: claims in the database, so two `reviewer judge` processes on one
database never send the same request. A claim names its owner (host, process id, a random part) and
expires unless renewed; a claim of a process of this host that no longer runs is taken over at once.
Also what a failed write means to the user (``store_problem``)."""

from __future__ import annotations

import os
import socket
import sqlite3
import uuid

#: A claim not renewed for this long is taken to belong to a process that died.
CLAIM_TTL_S = 600.0
#: How often a running process renews its claims.
HEARTBEAT_S = 60.0


def new_owner() -> str:
    """Who holds a claim: host, process and a random part (two runners in one process differ)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_gone(holder: str) -> bool:
    """A claim's holder is a process of this host that no longer runs (killed: it could not let go)."""
    host, _, rest = holder.partition(":")
    pid_text = rest.split(":", 1)[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def store_problem(e: sqlite3.Error) -> str:
    """Why a write failed, as the user would say it."""
    text = str(e)
    low = text.lower()
    if "full" in low:
        return f"disk full ({text})"
    if "locked" in low or "busy" in low:
        return f"the database is locked by another process ({text})"
    if "readonly" in low or "read-only" in low:
        return f"the database is read-only ({text})"
    return text
