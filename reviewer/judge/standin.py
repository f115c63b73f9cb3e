"""A local stand-in for the Anthropic Messages API, for tests, benchmarks and trying the judge offline.

It serves ``POST /v1/messages`` and the Message Batches endpoints on 127.0.0.1 with a *policy* that
decides each reply, so tests know what the judge "thinks". Point the SDK at it with
``ANTHROPIC_BASE_URL=http://127.0.0.1:PORT`` and any ``ANTHROPIC_API_KEY``. See DEVELOPERS.md.

    python -m reviewer.judge.standin --port 8765 --delay 0.2

The default policy grades a transcript ``fail`` when it shows a tool error or a rule-breaking
``cancel_order`` after ``shipped``, else ``pass``; in a comparison it prefers the transcript with fewer
tool errors and says ``tie`` when they have as many. It names a failure cluster after the write call
its trials made most, and proposes merging clusters whose names are the same. Tests plant their own
behaviour.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Policy = Callable[[dict[str, Any]], "Reply"]


@dataclass
class Reply:
    """What the stand-in answers: a status, a JSON body (or raw bytes) and headers."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


def prompt_text(params: dict[str, Any]) -> str:
    msgs = params.get("messages") or []
    return "\n".join(str(m.get("content", "")) for m in msgs if isinstance(m, dict))


def message(
    params: dict[str, Any], content: list[dict[str, Any]], output_tokens: int = 60
) -> dict[str, Any]:
    return {
        "id": "msg_standin",
        "type": "message",
        "role": "assistant",
        "model": params.get("model", "claude-standin"),
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": max(1, (len(prompt_text(params)) + len(params.get("system", ""))) // 4),
            "output_tokens": output_tokens,
        },
    }


def tool_reply(
    params: dict[str, Any], name: str, args: dict[str, Any], output_tokens: int = 60
) -> Reply:
    block = {"type": "tool_use", "id": "toolu_standin", "name": name, "input": args}
    return Reply(body=message(params, [block], output_tokens))


def text_reply(params: dict[str, Any], text: str) -> Reply:
    return Reply(body=message(params, [{"type": "text", "text": text}]))


def error_reply(status: int, kind: str, text: str, headers: dict[str, str] | None = None) -> Reply:
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return Reply(status=status, body=body, headers=headers or {})


def forced_tool(params: dict[str, Any]) -> str | None:
    choice = params.get("tool_choice") or {}
    return choice.get("name") if isinstance(choice, dict) else None


def _transcripts(text: str) -> tuple[str, str]:
    a = text.split("<transcript_a>", 1)[-1].split("</transcript_a>", 1)[0]
    b = text.split("<transcript_b>", 1)[-1].split("</transcript_b>", 1)[0]
    return a, b


def _bad(text: str) -> int:
    shipped_cancel = "shipped" in text and "call cancel_order" in text
    return text.count("(error)]") + (1 if shipped_cancel else 0)


_CALL = re.compile(r"-> call (\w+)\(")
_READ_ONLY = re.compile(r"^(get|find|list|search|lookup|calculate|think|read)_?", re.IGNORECASE)
_CLUSTER = re.compile(r'<cluster id="([^"]+)"[^>]*>\s*name: ([^\n]*)')


def cluster_name_of(text: str) -> str:
    """What the stand-in calls a cluster: the write action its trials called most ("called
    cancel_order on shipped orders" when a shipped status was read), else how they ended."""
    writes = [c for c in _CALL.findall(text) if not _READ_ONLY.match(c)]
    if not writes:
        return "ended without taking any action"
    top = max(sorted(set(writes)), key=writes.count)
    if top == "cancel_order" and "shipped" in text:
        return "called cancel_order on shipped orders"
    return f"called {top}"


def cluster_policy(params: dict[str, Any]) -> Reply | None:
    """Answers to the cluster prompts (``reviewer cluster --with-judge``): a name from the trials'
    write calls, and merges of the clusters whose names are the same; None for other prompts."""
    text = prompt_text(params)
    tool = forced_tool(params)
    if tool == "record_cluster_name":
        return tool_reply(params, tool, {"name": cluster_name_of(text)}, output_tokens=20)
    if tool == "propose_merges":
        by_name: dict[str, list[str]] = {}
        for cid, name in _CLUSTER.findall(text):
            by_name.setdefault(name.strip().lower(), []).append(cid)
        merges = [
            {"clusters": ids, "reason": f"both: {name}"}
            for name, ids in by_name.items()
            if len(ids) > 1
        ]
        return tool_reply(params, tool, {"merges": merges}, output_tokens=40 + 30 * len(merges))
    return None


def default_policy(params: dict[str, Any]) -> Reply:
    text = prompt_text(params)
    clusters = cluster_policy(params)
    if clusters is not None:
        return clusters
    if forced_tool(params) == "record_preference":
        a, b = _transcripts(text)
        ea, eb = _bad(a), _bad(b)
        winner = "tie" if ea == eb else ("A" if ea < eb else "B")
        return tool_reply(
            params, "record_preference", {"winner": winner, "rationale": f"errors A={ea} B={eb}"}
        )
    body = text.split("<transcript>", 1)[-1]
    verdict = "fail" if _bad(body) else "pass"
    why = "a tool error or a policy breach is visible" if verdict == "fail" else "no problem seen"
    return tool_reply(params, "record_verdict", {"verdict": verdict, "rationale": why})


class _Server(ThreadingHTTPServer):
    """One thread per connection. The listen backlog is raised from socketserver's 5: a client
    opening 16 connections at once would otherwise see refused or dropped connects (a dropped SYN
    is retried after a second), and the stand-in, not the judge, would set the pace."""

    daemon_threads = True
    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up before its reply (a judge's timeout, ^C) is no error of the
        stand-in's: no traceback on its terminal. Anything else is printed as before."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class StandIn:
    """The server, in a background thread. ``script`` replies are used first, in order (for 429/500)."""

    def __init__(
        self,
        policy: Policy = default_policy,
        *,
        delay: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        polls_until_ended: int = 1,
    ) -> None:
        self.policy = policy
        self.delay = delay
        self.script: list[Reply] = []
        #: replies used first, in order, for the Batches endpoints (a 500 while collecting)
        self.batch_script: list[Reply] = []
        #: a batch request's result instead of the policy's (``{"type": "expired"}``); None: default
        self.batch_result: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.batches: dict[str, dict[str, Any]] = {}
        self.polls_until_ended = polls_until_ended
        self._lock = threading.Lock()
        self._server = _Server((host, port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{name}:{port}"

    @property
    def message_requests(self) -> int:
        return sum(1 for r in self.requests if r["path"] == "/v1/messages")

    def start(self) -> StandIn:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- handling -------------------------------------------------------------------------------
    def _next_reply(self, params: dict[str, Any]) -> Reply:
        with self._lock:
            scripted = self.script.pop(0) if self.script else None
        return scripted if scripted is not None else self.policy(params)

    def _batch_view(self, batch_id: str) -> dict[str, Any]:
        b = self.batches[batch_id]
        ended = b["polls"] >= self.polls_until_ended
        n = len(b["requests"])
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n if ended else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": "2026-01-01T00:00:00Z",
            "expires_at": "2026-01-02T00:00:00Z",
            "ended_at": "2026-01-01T00:01:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended else None,
        }

    def _scripted_batch_reply(self) -> Reply | None:
        with self._lock:
            return self.batch_script.pop(0) if self.batch_script else None

    def _batch_results(self, batch_id: str) -> bytes:
        lines = []
        for req in self.batches[batch_id]["requests"]:
            planted = self.batch_result(req) if self.batch_result is not None else None
            if planted is not None:
                lines.append(json.dumps({"custom_id": req["custom_id"], "result": planted}))
                continue
            reply = self.policy(req["params"])
            if reply.status == 200 and reply.raw is None:
                result = {"type": "succeeded", "message": reply.body}
            else:
                result = {"type": "errored", "error": reply.body or {"type": "error"}}
            lines.append(json.dumps({"custom_id": req["custom_id"], "result": result}))
        return ("\n".join(lines) + "\n").encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Without this, a reply's body (written after its headers) waits for the client's
            # delayed ACK: about 40 ms on every request.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(self, reply: Reply) -> None:
                data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                if "content-type" not in reply.headers:
                    ctype = "application/json" if reply.raw is None else "text/plain"
                    self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _record(self, body: Any) -> None:
                with standin._lock:
                    standin.requests.append(
                        {"path": self.path, "body": body, "peer": self.client_address[1]}
                    )
                    standin.headers.append({k.lower(): v for k, v in self.headers.items()})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(error_reply(400, "invalid_request_error", "body is not JSON"))
                    return
                self._record(body)
                if self.path == "/v1/messages":
                    if standin.delay:
                        time.sleep(standin.delay)
                    self._send(standin._next_reply(body))
                elif self.path == "/v1/messages/batches":
                    scripted = standin._scripted_batch_reply()
                    if scripted is not None:
                        self._send(scripted)
                        return
                    with standin._lock:
                        batch_id = f"msgbatch_{len(standin.batches) + 1:04d}"
                        standin.batches[batch_id] = {
                            "requests": body.get("requests", []),
                            "polls": 0,
                        }
                    self._send(Reply(body=standin._batch_view(batch_id)))
                else:
                    self._send(error_reply(404, "not_found_error", f"no route {self.path}"))

            def do_GET(self) -> None:
                self._record(None)
                parts = self.path.split("?", 1)[0].strip("/").split("/")
                if parts[:3] == ["v1", "messages", "batches"] and len(parts) >= 4:
                    batch_id = parts[3]
                    scripted = standin._scripted_batch_reply()
                    if scripted is not None:
                        self._send(scripted)
                    elif batch_id not in standin.batches:
                        self._send(error_reply(404, "not_found_error", f"no batch {batch_id}"))
                    elif len(parts) == 5 and parts[4] == "results":
                        data = standin._batch_results(batch_id)
                        self._send(Reply(raw=data, headers={"content-type": "application/binary"}))
                    else:
                        with standin._lock:
                            standin.batches[batch_id]["polls"] += 1
                        self._send(Reply(body=standin._batch_view(batch_id)))
                else:
                    self._send(error_reply(404, "not_found_error", f"no route {self.path}"))

        return Handler


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="A local stand-in for the Anthropic Messages API.")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before each reply")
    args = ap.parse_args(argv)
    server = StandIn(delay=args.delay, port=args.port)
    print(f"stand-in Messages API on {server.url} (Ctrl-C stops)", flush=True)
    print(
        f"  export ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY=fake-key-for-the-stand-in",
        flush=True,
    )
    with contextlib.suppress(KeyboardInterrupt):
        server._server.serve_forever()


if __name__ == "__main__":
    main()
