"""A fake model server on 127.0.0.1 that answers from a script and records every request.

It speaks whatever the script says: OpenAI chat completions (:func:`completion`) or Anthropic messages
(:func:`anthropic_message`). Each request is answered by the next scripted reply: a response body
(status 200), a :class:`Reply` (any status, headers, a delay before answering), or a function of the
:class:`Recorded` request returning either. With the script used up, the server answers 500 and says so.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])


@dataclass
class Reply:
    """A scripted answer: status, JSON body, headers, and seconds to wait before answering."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def rate_limited(**headers: str) -> Reply:
    """A 429 that asks to be retried after a millisecond."""
    return Reply({"error": {"message": "rate limited", "type": "rate_limit_error"}}, 429, _soon(headers))


def server_error(status: int = 500, **headers: str) -> Reply:
    """A 5xx that asks to be retried after a millisecond."""
    return Reply({"error": {"message": "internal error", "type": "api_error"}}, status, _soon(headers))


def _soon(headers: dict[str, str]) -> dict[str, str]:
    return {"retry-after-ms": "1", **{key.replace("_", "-"): value for key, value in headers.items()}}


Script = Any  # a body, a Reply, or a function of a Recorded request returning one of them


class FakeServer:
    """A threaded HTTP server on 127.0.0.1 (a free port) answering from a script; use it as a context."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._script: list[Script] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server._answer(self)

            def do_GET(self) -> None:
                server._answer(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.01,), name="fake-model-server", daemon=True
        )

    @property
    def root(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def url(self) -> str:
        """The OpenAI-style base URL, ``http://127.0.0.1:<port>/v1``."""
        return f"{self.root}/v1"

    def script(self, *replies: Script) -> FakeServer:
        """Queue replies, answered in order."""
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        request = Recorded(
            handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()}, body
        )
        with self._lock:
            self.requests.append(request)
            item = self._script.pop(0) if self._script else None
        if item is None:
            reply = Reply({"error": {"message": "the fake server has no scripted reply left"}}, 500)
            reply.headers["x-should-retry"] = "false"
        else:
            if callable(item):
                item = item(request)
            reply = item if isinstance(item, Reply) else Reply(item)
        if reply.delay:
            time.sleep(reply.delay)
        payload = json.dumps(reply.body).encode()
        try:
            handler.send_response(reply.status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass


# ----------------------------------------------------------------------------------------------------
# response bodies


def completion(
    content: str | None = None,
    tool_calls: list[tuple[str, Any]] | None = None,
    *,
    model: str = "fake-model",
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """An OpenAI chat completion; ``tool_calls`` are ``(name, arguments)`` (a dict, or raw text)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_fake_{next(_ids)}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
            for name, arguments in tool_calls
        ]
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def json_completion(value: Any, **kwargs: Any) -> dict[str, Any]:
    """A chat completion whose content is ``value`` encoded as JSON (the JSON tool-call mode's reply)."""
    return completion(json.dumps(value), **kwargs)


def anthropic_message(
    text: str | None = None,
    tool_uses: list[tuple[str, dict[str, Any]]] | None = None,
    *,
    model: str = "claude-fake",
    input_tokens: int = 12,
    output_tokens: int = 7,
    stop_reason: str | None = None,
) -> dict[str, Any]:
    """An Anthropic messages API response; ``tool_uses`` are ``(name, input)``."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for name, arguments in tool_uses or ():
        content.append({"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": arguments})
    return {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if tool_uses else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


Responder = Callable[[Recorded], Any]
